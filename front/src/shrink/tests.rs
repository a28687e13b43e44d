use super::*;
use crate::cli::failures::render_failure;
use crate::scenario;
use compactsim_harness::engine::run_case;
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::bugs::Bug;
use compactsim_hermes::strategy::Strategy;
use std::path::Path;

/// Whether `r` breaks `invariant` (any witness).
fn fails(r: &CaseResult, invariant: &str) -> bool {
    Keep {
        invariant: invariant.into(),
        witness: None,
    }
    .kept_by(r)
}

fn spec(case: u32, bug: Bug) -> CaseSpec {
    CaseSpec {
        root_seed: compactsim_harness::runner::SEED_DEFAULT,
        case,
        passes: 25,
        strategy: Strategy::Micro,
        bugs: BugSet::of(&[bug]),
        plan: None,
        profile: None,
        compactor: Default::default(),
    }
}

fn untimed(attempts_max: u32) -> Budget {
    Budget {
        attempts_max,
        time_max: None,
    }
}

#[test]
fn a_clean_case_is_not_shrunk() {
    let mut s = spec(0, Bug::H75345B);
    s.bugs = BugSet::none();
    assert_eq!(
        shrink(&s, untimed(10), &mut |_| {}).unwrap_err(),
        ShrinkError::Clean
    );
}

/// A gateway case is recorded with its fault schedule and shrinks like the rest: the
/// seed scenario of H-29335 (case 3 of the default seed) to at most 10 turns, still
/// failing session-id-persisted, and the written file reads back to the same case.
#[test]
fn a_gateway_case_shrinks_with_its_fault_schedule_to_at_most_10_turns() {
    let mut s = spec(3, Bug::H29335);
    s.strategy = Strategy::parse("gateway").unwrap();
    let shrunk = shrink(&s, untimed(SHRINK_ATTEMPTS_MAX), &mut |_| {}).unwrap();
    assert_eq!(shrunk.invariant, "session-id-persisted");
    assert!(shrunk.after.turns <= 10, "{}", shrunk.after);
    let plan = shrunk.spec.plan.as_deref().expect("a plan");
    assert!(plan.gateway.schedule.is_some() && plan.gateway.topic.is_some());
    let written = scenario::render(
        &scenario::Header::default(),
        &shrunk.spec,
        &scenario::Expect::Clean,
    );
    let back = scenario::parse(Path::new("g.toml"), &written).expect("reads back");
    assert_eq!(back.spec, shrunk.spec, "{written}");
    let again = run_case(&back.spec, Record::default());
    assert!(fails(&again, "session-id-persisted"));
}

#[test]
fn h_75345_b_shrinks_to_at_most_10_turns_and_still_fails_one_marker_max() {
    let original = spec(0, Bug::H75345B);
    let mut seen = Vec::new();
    let s = shrink(&original, untimed(SHRINK_ATTEMPTS_MAX), &mut |p| {
        seen.push(p.clone())
    })
    .unwrap();
    println!(
        "{} -> {} in {} attempts, {}",
        s.before, s.after, s.attempts, s.stop
    );
    assert_eq!(s.invariant, "one-marker-max");
    assert!(s.after.turns <= 10, "{}", s.after);
    assert!(s.after.turns < s.before.turns && s.after.rows < s.before.rows);
    assert!(!seen.is_empty() && seen.windows(2).all(|w| w[0].attempts < w[1].attempts));
    assert_eq!(seen.last().unwrap().size, s.after);
    assert!(fails(&s.result, "one-marker-max"));
    // The written file reproduces it.
    let text = render_failure("case-0", &s);
    let back = scenario::parse(Path::new("case-0.toml"), &text).unwrap();
    let r = run_case(&back.spec, Record::default());
    assert!(back.expect.holds(&r), "{:?}\n{text}", r.outcome);
    // The comment lines rerun the case as it ran: its compactor and the kept witness
    // text, quoted for the shell.
    let mut chosen = s.clone();
    chosen.original.compactor = compactsim_harness::compactor::CompactorSpec::in_process(
        "twin",
        compactsim_harness::engine::reference,
    );
    chosen.chosen = true;
    chosen.witness = Some("it's".into());
    let text = render_failure("case-0", &chosen);
    let comment = |head: &str| text.lines().find(|l| l.starts_with(head)).unwrap();
    assert!(
        comment("# Original:").ends_with("--compactor twin --case 0"),
        "{text}"
    );
    assert!(
        comment("# Shrunk by:")
            .ends_with("--compactor twin --case 0 --invariant one-marker-max --witness 'it'\\''s'"),
        "{text}"
    );
}

#[test]
fn shrinking_is_a_function_of_the_attempt_budget() {
    let original = spec(2, Bug::HMCursor);
    let a = shrink(&original, untimed(60), &mut |_| {}).unwrap();
    let b = shrink(&original, untimed(60), &mut |_| {}).unwrap();
    assert_eq!(a.spec, b.spec);
    assert_eq!(a.stop, Stop::Attempts(60));
    assert_eq!(a.attempts, 60);
    let timed = shrink(
        &original,
        Budget {
            attempts_max: 1_000,
            time_max: Some(Duration::ZERO),
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(timed.stop, Stop::Time(Duration::ZERO));
    assert_eq!(timed.attempts, 0);
    assert_eq!(timed.after, timed.before);
}

#[test]
fn faults_and_restarts_go_when_the_bug_does_not_need_them() {
    // H-M-resume needs a restart: shrinking keeps one and drops every summarizer fault.
    let original = spec(4, Bug::HMResume);
    let s = shrink(&original, untimed(SHRINK_ATTEMPTS_MAX), &mut |_| {}).unwrap();
    assert_eq!(s.invariant, "marker-contained");
    let plan = s.spec.plan.as_ref().unwrap();
    assert_eq!(plan.restarts.as_ref().map(Vec::len), Some(1), "{}", s.after);
    assert_eq!(plan.summary_outcomes.as_deref(), Some(&[][..]));
    println!("{} -> {} ({})", s.before, s.after, s.stop);
}

/// Every gateway switch shrinks to at most 10 turns from the case of its seed scenario
/// (and from the first case selftest credits it on seed 1), still failing the invariant
/// that caught it.
#[test]
fn every_gateway_switch_shrinks_to_at_most_10_turns() {
    let cases: [(Bug, u64, u32, &str); 12] = [
        (Bug::H29335, 20_260_731, 3, "session-id-persisted"),
        (Bug::H35809, 20_260_731, 6, "exhausted-resets-clean"),
        (Bug::H9893, 20_260_731, 3, "exhausted-resets-clean"),
        (Bug::H4095, 20_260_731, 0, "persisted-equals-live"),
        (Bug::GNoDedupe, 20_260_731, 0, "idempotent-delivery"),
        (Bug::GAckEarly, 20_260_731, 0, "persist-before-ack"),
        (Bug::GLoadArchived, 20_260_731, 1, "loaded-is-compacted"),
        (Bug::GLoadArchived, 1, 1, "loaded-is-compacted"),
        (Bug::H48584, 20_260_731, 0, "persisted-equals-live"),
        (Bug::H1630, 20_260_731, 6, "failed-turn-not-persisted"),
        (Bug::H85145, 20_260_731, 3, "exhausted-resets-clean"),
        (Bug::GHygieneUnsaved, 20_260_731, 0, "persisted-equals-live"),
    ];
    for (bug, seed, case, invariant) in cases {
        let mut s = spec(case, bug);
        s.root_seed = seed;
        s.strategy = Strategy::parse("gateway").unwrap();
        let shrunk = shrink(&s, untimed(SHRINK_ATTEMPTS_MAX), &mut |_| {}).unwrap();
        assert_eq!(shrunk.invariant, invariant, "{bug:?}");
        assert!(shrunk.after.turns <= 10, "{bug:?}: {}", shrunk.after);
    }
}

/// The switches whose repros were over 10 turns before turns could be merged, a defrag
/// threshold lowered and faults moved sooner: shrunk from the case the selftest
/// shrinks (its first credited case), each is at most [`SHRUNK_TURNS_MAX`] turns, still
/// fails an invariant the switch is expected to break, and its file reads back and
/// reproduces it. (`compactsim selftest` checks every switch, in release.)
#[test]
fn long_repros_shrink_to_at_most_10_turns_with_their_own_invariant() {
    use crate::selftest::{first_credited_case, shrink_case, SelftestSuite};
    use compactsim_hermes::bugs::CATALOGUE;
    let suite = SelftestSuite {
        seeds: compactsim_harness::sweep::SeedRange::parse("1").unwrap(),
        cases: 480,
        passes: 25,
    };
    let long = [
        Bug::HMCursor,
        Bug::HMDefrag,
        Bug::IotM2,
        Bug::IotM3,
        Bug::H29559,
        Bug::H52160,
    ];
    for bug in long {
        let info = CATALOGUE.iter().find(|i| i.bug == bug).unwrap();
        let strategy = Strategy::of_kind(info.strategy);
        let at = first_credited_case(info, strategy, suite).expect("a credited case");
        let s = shrink_case(info, strategy, suite, at, untimed(SHRINK_ATTEMPTS_MAX)).unwrap();
        assert!(
            info.expected.contains(&s.invariant.as_str()),
            "{bug:?}: {}",
            s.invariant
        );
        assert!(s.after.turns <= SHRUNK_TURNS_MAX, "{bug:?}: {}", s.after);
        assert!(
            s.after.rows < s.before.rows,
            "{bug:?}: {} -> {}",
            s.before,
            s.after
        );
        let text = render_failure("repro", &s);
        let back = scenario::parse(Path::new("repro.toml"), &text).unwrap();
        let r = run_case(&back.spec, Record::default());
        assert!(back.expect.holds(&r), "{bug:?}: {:?}\n{text}", r.outcome);
    }
}

/// `shrink --invariant`: case 9 of the default batch suite with H-29559 breaks
/// summary-failure-safe first and api-valid too (`run --verdicts all`); shrinking for
/// api-valid judges the case by api-valid alone, writes `invariants = ["api-valid"]`
/// and a repro line naming it, and the file holds. An invariant the case never breaks
/// is a clear error.
#[test]
fn a_chosen_invariant_is_shrunk_for_and_named_in_the_repro_line() {
    let mut s = spec(9, Bug::H29559);
    s.strategy = Strategy::parse("batch").unwrap();
    let first = shrink(&s, untimed(1), &mut |_| {}).unwrap();
    assert_eq!(first.invariant, "summary-failure-safe");
    let chosen = shrink_invariant(
        &s,
        "api-valid",
        None,
        untimed(SHRINK_ATTEMPTS_MAX),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(
        (chosen.invariant.as_str(), chosen.chosen),
        ("api-valid", true)
    );
    assert_eq!(chosen.original, s);
    let written = render_failure("case-9", &chosen);
    assert!(
        written.contains("--case 9 --invariant api-valid"),
        "{written}"
    );
    assert!(
        written.contains("invariants = [\"api-valid\"]"),
        "{written}"
    );
    let back = scenario::parse(Path::new("c.toml"), &written).expect("reads back");
    assert!(fails(&run_case(&back.spec, Record::default()), "api-valid"));
    assert_eq!(
        shrink_invariant(&s, "kept-rows-intact", None, untimed(10), &mut |_| {}).unwrap_err(),
        ShrinkError::NotFired("kept-rows-intact".into())
    );
}
