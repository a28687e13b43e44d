//! The world of an agent-loop case (strategies `batch` and `both`): the conversation
//! generator (or a plan's script) feeds turn scripts to the [`AgentLoop`], and every
//! transition it reports is shown to the oracle. The case ends at the first violation,
//! after `passes` passes, at its turn budget, when a script runs out, or — a liveness
//! outcome — when it exceeds its step budget.
//!
//! A [`CasePlan`] is honoured as in the micro world (script, family and window,
//! summarizer configuration and outcome schedule, micro knobs for `both`, turn budget,
//! invariant subset), plus the agent parameters, the provider configuration and the
//! provider's outcome schedule. Process restarts are not modelled here.

use super::agent_setup::AgentSetup;
use super::plan::{CasePlan, Source};
use super::{empty_result, CaseOutcome, CaseResult, CaseSetup, CaseSpec, Record, TraceLine};
use crate::agent::{AgentConfig, AgentLoop, Sink, RECOVERY_WINDOW_MS};
use crate::agent::{AntiThrashPolicy, LoopOptions};
use crate::compactor::micro::MicroCompactor;
use crate::compactor::micro::MicroConfig;
use crate::provider::{Provider, ProviderOutcome};
use crate::strategy::Strategy;
use crate::summarizer::Summarizer;
use compactsim_invariants::{Oracle, OracleConfig, NO_INFINITE_LOOP};
use compactsim_model::{tokens_rough_total, Event, Message, Transition, Violation, Witness};

/// Transitions one turn may take before the case counts as looping. Every loop of the
/// agent is bounded far below this; exceeding it is a liveness failure.
pub const STEPS_PER_TURN_BUDGET: u32 = 512;

/// Reports transitions to the oracle and records the case's result.
struct Observer {
    oracle: Oracle,
    step: u32,
    step_budget: u32,
    work: super::WorkMeter,
    record: Record,
    result: CaseResult,
    /// Rough tokens of the list after the last transition.
    tokens: u64,
}

impl Sink for Observer {
    fn observe(&mut self, event: Event, before: &[Message], after: &[Message]) -> bool {
        let t = Transition {
            step: self.step,
            event: &event,
            before,
            after,
        };
        let violations = self.oracle.observe(&t);
        if self.record.trace {
            self.result
                .trace
                .push(TraceLine::new(self.step, &event, before, after));
        }
        self.step += 1;
        self.result.transitions = self.step;
        if !std::ptr::eq(before, after) {
            let appended =
                std::ptr::eq(before.as_ptr(), after.as_ptr()) && before.len() < after.len();
            self.tokens = if appended {
                self.tokens + tokens_rough_total(&after[before.len()..])
            } else {
                tokens_rough_total(after)
            };
            self.result.tokens_max = self.result.tokens_max.max(self.tokens);
            self.result.messages_max = self.result.messages_max.max(after.len() as u32);
        }
        if !violations.is_empty() {
            self.result.outcome = outcome_of(violations);
            return false;
        }
        if self.step >= self.step_budget {
            self.result.outcome =
                CaseOutcome::Liveness(step_budget_violation(&t, self.step_budget));
            return false;
        }
        if !self.work.charge(before.len(), after.len()) {
            self.result.outcome =
                CaseOutcome::Liveness(super::work_budget_violation(t.event.turn(), t.step));
            return false;
        }
        true
    }

    fn bump(&mut self, counter: &'static str) {
        self.result.coverage.bump(counter);
    }
}

/// Violations of the liveness invariant alone are a liveness outcome (exit 3); any
/// other violation on the same transition makes it a violation (exit 1).
fn outcome_of(violations: Vec<Violation>) -> CaseOutcome {
    if violations.iter().all(|v| v.invariant == NO_INFINITE_LOOP) {
        CaseOutcome::Liveness(violations.into_iter().next().expect("non-empty"))
    } else {
        CaseOutcome::Violation(violations)
    }
}

fn step_budget_violation(t: &Transition<'_>, budget: u32) -> Violation {
    let message = format!("step budget of {budget} transitions exceeded");
    Violation {
        invariant: NO_INFINITE_LOOP.to_string(),
        turn: t.event.turn(),
        step: t.step,
        message: message.clone(),
        witness: Witness::default()
            .fact(message)
            .fact(format!("last event: {:?}", t.event)),
    }
}

/// The oracle's contract parameters for an agent case.
/// Every invariant id of the catalogue.
fn all_ids() -> Vec<&'static str> {
    compactsim_invariants::catalogue()
        .iter()
        .map(|i| i.id)
        .collect()
}

pub fn oracle_config(config: &AgentConfig) -> OracleConfig {
    OracleConfig {
        protect_first_n: config.batch.protect_first_n,
        trigger_tokens: config.trigger_tokens(),
        max_attempts: config.max_attempts,
        request_overhead_tokens: config.overhead_rough_tokens,
        recovery_window_ms: (config.policy() == AntiThrashPolicy::V2_2)
            .then_some(RECOVERY_WINDOW_MS),
    }
}

/// One line describing an agent-loop case's drawn setup (for `replay`); `None` for
/// other strategies.
pub fn describe(spec: &CaseSpec) -> Option<String> {
    let options = spec.strategy.loop_options()?;
    let setup = CaseSetup::draw(spec);
    let (agent, _) = AgentSetup::draw_for(spec);
    let provider = agent.provider.clone();
    let c = AgentConfig::new(
        options,
        &spec.bugs,
        setup.shape.context_length,
        agent.params,
    );
    Some(format!(
        "agent: era={} anti_thrash={} trigger={} tail_budget={} overhead={}t rough/{}t real \
         in_place={} think={}..{}ms resume_fill={}permille overflow_shape={:?} \
         disconnect={}permille server_error={}permille bugs={}",
        options.era,
        options.anti_thrash,
        c.trigger_tokens(),
        c.thresholds.tail_budget_tokens,
        c.overhead_rough_tokens,
        c.overhead_real_tokens,
        c.in_place,
        c.params.think_ms.0,
        c.params.think_ms.1,
        c.params.resume_fill_per_mille,
        provider.overflow_shape,
        provider.disconnect_per_mille,
        provider.server_error_per_mille,
        if c.bugs.is_empty() {
            "none".to_string()
        } else {
            c.bugs.ids().join(",")
        }
    ))
}

/// Runs one agent-loop case.
pub(super) fn run(spec: &CaseSpec, record: Record) -> CaseResult {
    run_logged(spec, record).0
}

/// The turn budget that sets the step budget: the plan's or the suite's, whatever the
/// length of a script (so a shorter script does not tighten the liveness bound).
fn budget_turns(spec: &CaseSpec) -> u32 {
    let suite = CaseSpec {
        plan: None,
        ..spec.clone()
    }
    .turns_max();
    spec.plan
        .as_ref()
        .and_then(|p| p.turns_max)
        .unwrap_or(suite)
}

/// The agent loop of `spec`, with the plan's overrides and schedules applied.
fn build_agent(spec: &CaseSpec, options: LoopOptions) -> (AgentLoop, CaseSetup) {
    let (setup, streams) = CaseSetup::draw_with_streams(spec);
    let plan = spec.plan.as_deref();
    let (agent_setup, provider_rng) = AgentSetup::draw_for(spec);
    let config = AgentConfig::new(
        options,
        &spec.bugs,
        setup.shape.context_length,
        agent_setup.params,
    );
    let micro = both_micro(spec, &config, &setup)
        .map(|micro| MicroCompactor::new(micro, config.bugs.clone()));
    let summarizer = Summarizer::new(setup.summarizer.clone(), streams.summarizer)
        .with_schedule(plan.and_then(|p| p.summary_outcomes.clone()));
    let provider = Provider::new(agent_setup.provider, provider_rng)
        .with_schedule(plan.and_then(|p| p.provider_outcomes.clone()));
    let agent = AgentLoop::new(config, summarizer, provider, micro);
    (agent, setup)
}

/// Strategy `both`: the micro configuration of its micro passes (the agent's tail
/// budget, the drawn cadence, the plan's micro knobs); `None` for other strategies.
fn both_micro(spec: &CaseSpec, config: &AgentConfig, setup: &CaseSetup) -> Option<MicroConfig> {
    matches!(spec.strategy, Strategy::Both(_)).then(|| {
        let mut micro = MicroConfig::with_tail_budget(config.thresholds.tail_budget_tokens);
        micro.every_n_turns = setup.micro.every_n_turns;
        if let Some(plan) = spec.plan.as_deref() {
            plan.micro.apply(&mut micro);
        }
        micro
    })
}

/// The micro configuration of `spec`'s micro passes (strategy `both`), as a case run
/// uses it.
pub(crate) fn micro_config(spec: &CaseSpec) -> Option<MicroConfig> {
    let options = spec.strategy.loop_options()?;
    let setup = CaseSetup::draw(spec);
    let (agent, _) = AgentSetup::draw_for(spec);
    let config = AgentConfig::new(
        options,
        &spec.bugs,
        setup.shape.context_length,
        agent.params,
    );
    both_micro(spec, &config, &setup)
}

/// What a recording needs from an agent-loop run beyond its [`CaseResult`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct AgentLog {
    /// The outcome every provider call injected, in call order.
    pub provider_calls: Vec<ProviderOutcome>,
    /// Turns of the conversation a resumed session loaded by its fill (after a script's
    /// history), before the first turn ran.
    pub resumed_turns: u32,
}

/// How a session opened: the turns loaded before the first one ran.
#[derive(Clone, Copy, Debug, Default)]
struct Opened {
    /// A script's history turns.
    history_turns: u32,
    /// Turns of the conversation a resumed session loaded by its fill.
    resumed_turns: u32,
}

/// Runs one agent-loop case; also returns what a recording needs (see [`AgentLog`]).
pub(crate) fn run_logged(spec: &CaseSpec, record: Record) -> (CaseResult, AgentLog) {
    let options: LoopOptions = spec
        .strategy
        .loop_options()
        .expect("an agent-loop strategy");
    let (mut agent, setup) = build_agent(spec, options);
    let turns_max = spec.turns_max();
    let mut observer = Observer {
        oracle: Oracle::with_only(
            oracle_config(&agent.config),
            &CasePlan::narrow(spec.plan.as_deref(), all_ids()),
        )
        .expect("catalogue ids"),
        step: 0,
        step_budget: budget_turns(spec)
            .saturating_add(1)
            .saturating_mul(STEPS_PER_TURN_BUDGET),
        work: super::WorkMeter::default(),
        record,
        result: empty_result(spec, setup.family()),
        tokens: 0,
    };
    let mut source = Source::new(spec, &setup.shape);
    let opened = open_session(&mut agent, &mut source, &mut observer, turns_max);
    let first = opened.history_turns + opened.resumed_turns;
    for turn in first..first + turns_max {
        if observer.result.outcome != CaseOutcome::Clean {
            break;
        }
        let script = source.next_turn(turn - opened.history_turns, &mut agent.ids);
        if script.is_empty() {
            // A plan's script ran out.
            break;
        }
        observer.result.turns = turn + 1;
        let stopped = agent.run_turn(&mut observer, turn, script).is_err();
        observer.result.passes = agent.passes;
        let tokens = observer.tokens;
        observer.result.tokens_per_turn.push(tokens);
        if stopped || agent.passes >= spec.passes {
            break;
        }
    }
    let mut result = observer.result;
    result.checked = observer.oracle.checked();
    result.summary_calls = agent.summarizer.log().to_vec();
    let log = AgentLog {
        provider_calls: agent.provider.log().to_vec(),
        resumed_turns: opened.resumed_turns,
    };
    (result, log)
}

/// The session before the first turn: the system row; a script's history, loaded as a
/// resumed session (one append at its last turn; the script's turns are numbered after
/// it); then the turns a resumed session's fill loads.
fn open_session(
    agent: &mut AgentLoop,
    source: &mut Source,
    observer: &mut Observer,
    turns_max: u32,
) -> Opened {
    if let Some(system) = source.system_prompt(&mut agent.ids) {
        agent.msgs.push(system);
    }
    observer.tokens = tokens_rough_total(&agent.msgs);
    let mut opened = Opened::default();
    let history = source.history(&mut agent.ids);
    let history_turns = source.history_turns();
    if history_turns > 0 {
        opened.history_turns = history_turns;
        if load(agent, observer, history_turns, history).is_err() {
            return opened;
        }
    }
    let fill = agent.config.params.resume_fill_per_mille;
    opened.resumed_turns = resume(agent, source, observer, fill, turns_max, history_turns);
    opened
}

/// Loads turns `..loaded` of a resumed session as one append at turn `loaded - 1`.
fn load(
    agent: &mut AgentLoop,
    observer: &mut Observer,
    loaded: u32,
    rows: Vec<Message>,
) -> crate::agent::Flow<()> {
    observer.bump("session.resumed");
    observer.result.turns = loaded;
    agent.resume(observer, loaded - 1, rows)
}

/// A resumed session: whole turns of the conversation are loaded (one append) until the
/// rough request estimate reaches `fill_per_mille` of the trigger. `before` turns are
/// loaded already. Returns the number of turns loaded.
fn resume(
    agent: &mut AgentLoop,
    source: &mut Source,
    observer: &mut Observer,
    fill_per_mille: u32,
    turns_max: u32,
    before: u32,
) -> u32 {
    if fill_per_mille == 0 || observer.result.outcome != CaseOutcome::Clean {
        return 0;
    }
    let target = agent.config.trigger_tokens() as u64 * fill_per_mille as u64 / 1000;
    let overhead = agent.config.overhead_rough_tokens as u64;
    let mut rows = Vec::new();
    let mut rough = tokens_rough_total(&agent.msgs) + overhead;
    let mut turn = 0;
    while rough < target && turn < turns_max {
        let script = source.next_turn(turn, &mut agent.ids);
        if script.is_empty() {
            break;
        }
        rough += tokens_rough_total(&script);
        rows.extend(script);
        turn += 1;
    }
    if turn > 0 {
        let _ = load(agent, observer, before + turn, rows);
    }
    turn
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bugs::BugSet;
    use crate::shapes::Family;
    use compactsim_model::{MsgId, Role};

    fn observer(step_budget: u32) -> Observer {
        let spec = CaseSpec {
            root_seed: 1,
            case: 0,
            passes: 1,
            strategy: Strategy::parse("batch").unwrap(),
            bugs: BugSet::none(),
            plan: None,
        };
        Observer {
            oracle: Oracle::new(OracleConfig::default()),
            step: 0,
            step_budget,
            work: super::super::WorkMeter::default(),
            record: Record::default(),
            result: empty_result(&spec, Family::Chatty),
            tokens: 0,
        }
    }

    #[test]
    fn exceeding_the_step_budget_is_a_liveness_outcome_naming_no_infinite_loop() {
        let rows = vec![Message::new(
            MsgId(0),
            Role::User,
            compactsim_model::Content::empty(),
        )];
        let mut o = observer(3);
        let ev = Event::Preflight(compactsim_model::Preflight {
            turn: 0,
            now_ms: 0,
            messages: 1,
            messages_rough_tokens: 0,
            request_rough_tokens: 0,
            trigger_tokens: 1_000,
            decision: compactsim_model::PreflightDecision::BelowTrigger,
        });
        assert!(o.observe(ev.clone(), &rows, &rows));
        assert!(o.observe(ev.clone(), &rows, &rows));
        assert!(!o.observe(ev, &rows, &rows));
        let CaseOutcome::Liveness(v) = &o.result.outcome else {
            panic!("{:?}", o.result.outcome)
        };
        assert_eq!(v.invariant, NO_INFINITE_LOOP);
        assert_eq!(o.result.transitions, 3);
    }

    #[test]
    fn only_liveness_violations_alone_make_a_liveness_outcome() {
        let v = |id: &str| Violation {
            invariant: id.to_string(),
            turn: 1,
            step: 2,
            message: String::new(),
            witness: Witness::default(),
        };
        assert!(matches!(
            outcome_of(vec![v(NO_INFINITE_LOOP)]),
            CaseOutcome::Liveness(_)
        ));
        assert!(matches!(
            outcome_of(vec![v("api-valid"), v(NO_INFINITE_LOOP)]),
            CaseOutcome::Violation(_)
        ));
    }
}
