//! End-to-end tests of the agent loop: scripted sessions against the oracle, and the
//! default-suite cases that catch each agent-loop bug switch.

use crate::engine::{oracle_config, run_case, CaseOutcome, CaseSpec, Record};
use crate::runner::{run_suite, Suite};
use crate::stories::ScriptBuilder;
use compactsim_fakes::provider::Provider;
use compactsim_fakes::provider::{OverflowShape, ProviderConfig};
use compactsim_fakes::rng::{stream, Stream};
use compactsim_fakes::summarizer::Summarizer;
use compactsim_fakes::summarizer::SummarizerConfig;
use compactsim_hermes::agent::*;
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::bugs::{Bug, CATALOGUE};
use compactsim_hermes::compactor::reference::Reference;
use compactsim_hermes::strategy::Strategy;
use compactsim_invariants::Oracle;
use compactsim_model::{BatchTrigger, Event, Message};
use compactsim_model::{PreflightDecision, Violation};

/// Records every transition and what the oracle says about it; never stops the case.
struct Recorder {
    oracle: Oracle,
    events: Vec<Event>,
    violations: Vec<Violation>,
    served: Vec<compactsim_model::ServedCall>,
}

impl Sink for Recorder {
    fn observe(&mut self, event: Event, before: &[Message], after: &[Message]) -> bool {
        let served = std::mem::take(&mut self.served);
        let t = compactsim_model::Transition::new(
            self.events.len() as u32,
            &event,
            before,
            after,
            &served,
        );
        self.violations.extend(self.oracle.observe(&t));
        self.events.push(event);
        true
    }

    fn bump(&mut self, _counter: &'static str) {}

    fn add(&mut self, _counter: &'static str, _n: u64) {}

    fn served(&mut self, calls: Vec<compactsim_model::ServedCall>) {
        self.served = calls;
    }
}

fn params(overhead_per_mille: u32) -> AgentParams {
    AgentParams {
        overhead_per_mille_of_trigger: overhead_per_mille,
        overhead_real_per_mille: 1_000,
        in_place: true,
        think_ms: (5_000, 5_000),
        think_seed: 1,
        resume_fill_per_mille: 0,
    }
}

/// An agent on a `window`-token model with a reliable summarizer and `provider`.
fn agent(
    window: u32,
    bugs: &[Bug],
    provider: ProviderConfig,
    overhead: u32,
) -> (AgentLoop, Recorder) {
    let config = AgentConfig::new(
        LoopOptions::default(),
        &BugSet::of(bugs),
        window,
        params(overhead),
    );
    let config_batch = config.batch.clone();
    let recorder = Recorder {
        oracle: Oracle::new(oracle_config(&config)),
        events: vec![],
        violations: vec![],
        served: vec![],
    };
    let agent = AgentLoop::new(
        config,
        Summarizer::new(SummarizerConfig::reliable(), stream(1, Stream::Summarizer)),
        Provider::new(provider, stream(1, Stream::Provider)),
        Box::new(Reference::new(config_batch, None)),
        false,
    );
    (agent, recorder)
}

/// A turn script built with the agent's own ids.
fn script(a: &mut AgentLoop, user_chars: u32, tool_chars: u32, reply_chars: u32) -> Vec<Message> {
    let mut b = ScriptBuilder {
        ids: std::mem::take(&mut a.ids),
    };
    let rows = b.turn(user_chars, tool_chars, reply_chars);
    a.ids = b.ids;
    rows
}

fn decisions(events: &[Event]) -> Vec<PreflightDecision> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Preflight(p) => Some(p.decision),
            _ => None,
        })
        .collect()
}

fn passes(events: &[Event], trigger: BatchTrigger) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::BatchPass(p) if p.trigger == trigger))
        .count()
}

#[test]
fn a_prompt_larger_than_the_window_exhausts_recovery_and_resets_the_session() {
    let (mut a, mut rec) = agent(16_384, &[], ProviderConfig::reliable(), 20);
    for _ in 0..6 {
        let turn = script(&mut a, 1_200, 2_000, 800);
        a.run_turn(&mut rec, 0, turn).unwrap();
    }
    let huge = script(&mut a, 80_000, 0, 400);
    let end = a.run_turn(&mut rec, 6, huge).unwrap();
    assert_eq!(end, TurnEnd::Failed { exhausted: true });
    let overflow = passes(&rec.events, BatchTrigger::Overflow);
    assert!(
        (1..=MAX_ATTEMPTS_DEFAULT as usize).contains(&overflow),
        "{overflow}"
    );
    let tail: Vec<&Event> = rec.events.iter().rev().take(2).collect();
    assert!(matches!(tail[0], Event::SessionReset { .. }), "{tail:?}");
    assert!(matches!(
        tail[1],
        Event::TurnFailed {
            exhausted: true,
            ..
        }
    ));
    assert!(a.msgs.is_empty(), "the transcript restarts empty");
    assert!(rec.violations.is_empty(), "{:?}", rec.violations);
    let next = script(&mut a, 400, 0, 400);
    assert_eq!(a.run_turn(&mut rec, 7, next).unwrap(), TurnEnd::Finished);
}

#[test]
fn preflight_runs_at_most_three_passes_defers_to_real_usage_and_rotates_on_progress() {
    // Heavy schemas: the rough request stays over the trigger after compaction, while
    // the real count (schemas counted at half) is below it.
    let (mut a, mut rec) = agent(128_000, &[], ProviderConfig::reliable(), 700);
    a.config.overhead_real_tokens /= 2;
    a.config.in_place = false;
    for turn in 0..40 {
        // Every fourth user pastes a large file: growth past the deferral tolerance.
        let user = if turn % 4 == 3 { 40_000 } else { 2_000 };
        let rows = script(&mut a, user, 6_000, 2_000);
        a.run_turn(&mut rec, turn, rows).unwrap();
    }
    assert!(rec
        .events
        .iter()
        .any(|e| matches!(e, Event::Rotation { .. })));
    let d = decisions(&rec.events);
    assert_eq!(d.len(), 40, "one preflight decision per turn");
    let ran: Vec<u32> = d
        .iter()
        .filter_map(|d| match d {
            PreflightDecision::Compress { passes } => Some(*passes),
            _ => None,
        })
        .collect();
    assert!(!ran.is_empty() && ran.iter().all(|&p| (1..=PREFLIGHT_PASSES_MAX).contains(&p)));
    assert!(d.contains(&PreflightDecision::Deferred), "{d:?}");
    assert!(rec.violations.is_empty(), "{:?}", rec.violations);
}

#[test]
fn h35054_recompacts_from_the_rough_estimate_before_any_reading() {
    // Heavy schemas counted at half by the provider: the rough estimate stays over the
    // trigger after a compaction while real usage proves the prompt fits.
    let run = |bugs: &[Bug]| {
        let (mut a, mut rec) = agent(128_000, bugs, ProviderConfig::reliable(), 700);
        a.config.overhead_real_tokens /= 2;
        for turn in 0..40 {
            let rows = script(&mut a, 2_000, 6_000, 2_000);
            a.run_turn(&mut rec, turn, rows).unwrap();
        }
        rec.violations
    };
    assert!(run(&[]).is_empty());
    let buggy = run(&[Bug::H35054]);
    assert!(
        buggy.iter().any(|v| v.invariant == "bounded-compaction"),
        "{buggy:?}"
    );
}

#[test]
fn a_failed_turn_is_rolled_back_and_a_death_spiral_is_caught_under_h2153() {
    let disconnects = ProviderConfig {
        overflow_shape: OverflowShape::Disconnect,
        ..ProviderConfig::reliable()
    };
    let run = |bugs: &[Bug]| {
        let (mut a, mut rec) = agent(16_384, bugs, disconnects.clone(), 20);
        let mut ends = vec![];
        for turn in 0..30 {
            // A large tool output pushes the next request past the window at once.
            let rows = script(&mut a, 1_500, 12_000, 1_500);
            ends.push(a.run_turn(&mut rec, turn, rows).unwrap());
        }
        (ends, rec)
    };
    let (ends, rec) = run(&[]);
    assert!(ends.iter().all(|e| *e == TurnEnd::Finished), "{ends:?}");
    assert!(rec.events.iter().any(|e| e.is_committed_compaction()));
    assert!(rec.violations.is_empty(), "{:?}", rec.violations);
    let (ends, rec) = run(&[Bug::H2153]);
    let failed = ends
        .iter()
        .filter(|e| **e == TurnEnd::Failed { exhausted: false })
        .count();
    assert!(failed >= 4, "{ends:?}");
    let rolled_back = rec
        .events
        .iter()
        .any(|e| matches!(e, Event::TurnFailed { removed, .. } if *removed > 0));
    assert!(rolled_back);
    assert!(rec
        .violations
        .iter()
        .any(|v| v.invariant == "no-infinite-loop"));
}

#[test]
fn h27404_gates_a_few_huge_messages_away() {
    let run = |bugs: &[Bug]| {
        let (mut a, mut rec) = agent(128_000, bugs, ProviderConfig::reliable(), 20);
        // The first turn's prompt alone is over the trigger: nothing to wait for.
        for turn in 0..2 {
            let rows = script(&mut a, 420_000, 0, 400);
            a.run_turn(&mut rec, turn, rows).unwrap();
        }
        rec
    };
    let fixed = run(&[]);
    assert!(!decisions(&fixed.events).contains(&PreflightDecision::Gated));
    assert!(fixed.violations.is_empty(), "{:?}", fixed.violations);
    let buggy = run(&[Bug::H27404]);
    assert!(decisions(&buggy.events).contains(&PreflightDecision::Gated));
    assert!(buggy
        .violations
        .iter()
        .any(|v| v.invariant == "preflight-evaluated"));
}

#[test]
fn rotation_without_progress_is_caught_under_h57771() {
    // Schemas alone over the trigger (real count): every post-response check fires,
    // and on a short transcript the pass is a no-op.
    let run = |bugs: &[Bug]| {
        let (mut a, mut rec) = agent(32_768, bugs, ProviderConfig::reliable(), 1_050);
        a.config.in_place = false;
        for turn in 0..40 {
            let rows = script(&mut a, 400, 800, 400);
            a.run_turn(&mut rec, turn, rows).unwrap();
        }
        rec
    };
    let fixed = run(&[]);
    assert!(passes(&fixed.events, BatchTrigger::PostResponse) > 0);
    assert!(!fixed
        .events
        .iter()
        .any(|e| matches!(e, Event::Rotation { .. })));
    assert!(fixed.violations.is_empty(), "{:?}", fixed.violations);
    let buggy = run(&[Bug::H57771]);
    assert!(buggy
        .violations
        .iter()
        .any(|v| v.invariant == "bounded-compaction"));
}

/// A default-suite case of the batch strategy.
fn spec(case: u32, bugs: &[Bug]) -> CaseSpec {
    CaseSpec {
        root_seed: crate::runner::SEED_DEFAULT,
        case,
        passes: crate::runner::PASSES_DEFAULT,
        strategy: Strategy::parse("batch").unwrap(),
        bugs: BugSet::of(bugs),
        plan: None,
        profile: None,
        compactor: Default::default(),
    }
}

/// For each agent-loop and batch bug switch, a case of the default batch suite that
/// catches it with an expected invariant and is clean without it.
#[test]
fn each_batch_bug_switch_is_caught_in_the_default_suite() {
    let cases = [
        (Bug::H35054, 4),
        (Bug::H40803, 1),
        (Bug::H11529, 9),
        (Bug::H2153, 39),
        (Bug::H14694, 45),
        (Bug::H57771, 3),
        (Bug::H11996, 0),
        (Bug::H10896, 1),
        (Bug::H29559, 9),
        (Bug::H52160, 0),
        (Bug::H11762, 2),
    ];
    for (bug, case) in cases {
        let r = run_case(&spec(case, &[bug]), Record::default());
        let named = match &r.outcome {
            CaseOutcome::Violation(v) => v[0].invariant.clone(),
            CaseOutcome::Liveness(v) => v.invariant.clone(),
            other => panic!("{bug} case {case}: {other:?}"),
        };
        let info = CATALOGUE.iter().find(|b| b.bug == bug).unwrap();
        assert!(info.expected.contains(&named.as_str()), "{bug}: {named}");
        let clean = run_case(&spec(case, &[]), Record::default());
        assert_eq!(
            clean.outcome,
            CaseOutcome::Clean,
            "{bug} case {case} without it"
        );
    }
}

/// H-58753 alone is unreachable (the last-user anchor keeps a real user row in the
/// tail); with the anchor off too, the summary-as-assistant leaves zero user rows.
#[test]
fn h58753_shows_only_without_the_last_user_anchor() {
    let alone = run_case(&spec(15, &[Bug::H58753]), Record::default());
    assert_eq!(alone.outcome, CaseOutcome::Clean);
    let both = run_case(&spec(15, &[Bug::H10896, Bug::H58753]), Record::default());
    let CaseOutcome::Violation(v) = both.outcome else {
        panic!("{:?}", both.outcome)
    };
    assert!(v.iter().any(|v| v.invariant == "api-valid"), "{v:?}");
    let anchor_only = run_case(&spec(15, &[Bug::H10896]), Record::default());
    let CaseOutcome::Violation(v) = anchor_only.outcome else {
        panic!()
    };
    assert!(v.iter().all(|v| v.invariant != "api-valid"), "{v:?}");
}

#[test]
fn agent_suites_are_identical_whatever_the_job_count() {
    for strategy in ["batch", "both"] {
        let suite = Suite {
            root_seed: 7,
            case_first: 0,
            cases: 16,
            passes: 6,
            strategy: Strategy::parse(strategy).unwrap(),
            bugs: BugSet::none(),
            compactor: Default::default(),
            profile: None,
        };
        let collect = |jobs| {
            let mut out = vec![];
            run_suite(&suite, jobs, Record::default(), |r| {
                out.push(r);
                true
            })
            .unwrap();
            out
        };
        assert_eq!(collect(1), collect(2), "{strategy}");
    }
}

#[test]
fn an_armed_stop_interrupts_a_turn_only_after_a_compaction_and_keeps_it() {
    let (mut a, mut rec) = agent(16_384, &[], ProviderConfig::reliable(), 20);
    let mut stopped = None;
    for turn in 0..40 {
        a.stop = StopRequest {
            armed: true,
            fired: false,
        };
        // Three responses (two tool calls, then the reply): a compaction after the
        // first leaves an answered call and one more call for the stop to interrupt.
        let mut rows = script(&mut a, 1_200, 2_000, 800);
        rows.truncate(3);
        rows.extend(script(&mut a, 1_200, 2_000, 800).into_iter().skip(1));
        let user = rows[0].id;
        let end = a.run_turn(&mut rec, turn, rows).unwrap();
        let fired = std::mem::take(&mut a.stop).fired;
        let failed = end == TurnEnd::Failed { exhausted: false };
        assert_eq!(fired, failed, "turn {turn}: {end:?}");
        if fired {
            assert!(a.compacted_this_turn(), "turn {turn}");
            assert!(
                a.msgs.iter().any(|m| m.id == user),
                "the stopped turn keeps its compaction and is not rolled back"
            );
            stopped = Some(turn);
            break;
        }
    }
    assert!(stopped.is_some_and(|t| t > 0), "{stopped:?}");
    assert!(rec.violations.is_empty(), "{:?}", rec.violations);
}
