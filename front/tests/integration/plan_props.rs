//! Properties of recorded plans, over drawn seeds, cases and bug switches (proptest),
//! every switch of the catalogue with its own strategy (agent-loop switches run
//! `batch`) and cases without a switch on every strategy: a recorded case replays to
//! the same outcome, trace and tokens; written as a scenario file it reads back as the
//! same case; shrinking it keeps the same invariant failing.

use compactsim::scenario::{self, Expect, Header};
use compactsim::shrink::{shrink, Budget};
use compactsim_harness::engine::plan::record;
use compactsim_harness::engine::{run_case, CaseOutcome, CaseSpec, Record};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::bugs::CATALOGUE;
use compactsim_hermes::strategy::{Strategy, StrategyKind};
use proptest::prelude::*;
use std::path::Path;

/// Attempts each property shrink may make (keeps the test quick).
const SHRINK_ATTEMPTS: u32 = 40;
/// Cases the shrinking property scans, from the drawn one, for a failing case (the
/// agent-loop switches fail in a few cases of a hundred).
const SCAN_CASES: u32 = 12;

/// Catalogue indexes of the bug switches the plans record: every one (a gateway case
/// is recorded with its `[gateway]` fault schedule).
fn recordable_bugs() -> Vec<usize> {
    (0..CATALOGUE.len()).collect()
}

/// Case `case` of `root_seed` with catalogue switch `bug` on its own strategy, or with
/// no switch on `Strategy::ALL[strategy]`.
fn spec(root_seed: u64, case: u32, bug: Option<usize>, strategy: usize) -> CaseSpec {
    let strategy = match bug {
        Some(i) => Strategy::of_kind(CATALOGUE[i].strategy),
        None => Strategy::ALL[strategy % Strategy::ALL.len()],
    };
    CaseSpec {
        root_seed,
        case,
        passes: 25,
        strategy,
        bugs: bug.map_or_else(BugSet::none, |i| BugSet::of(&[CATALOGUE[i].bug])),
        plan: None,
        profile: None,
        compactor: Default::default(),
    }
}

#[test]
fn every_catalogued_switch_is_recordable_on_its_own_strategy() {
    let strategies: Vec<Strategy> = recordable_bugs()
        .into_iter()
        .map(|i| spec(1, 0, Some(i), 0).strategy)
        .collect();
    assert!(strategies.contains(&Strategy::Micro));
    assert!(strategies.iter().any(|s| s.loop_options().is_some()));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_recorded_case_replays_and_round_trips_through_a_file(
        root_seed in any::<u64>(),
        case in 0u32..10_000,
        bug in proptest::option::of(proptest::sample::select(recordable_bugs())),
        strategy in 0usize..4,
    ) {
        let original = spec(root_seed, case, bug, strategy);
        let rec = record(&original);
        let planned = original.clone().with_plan(rec.plan);
        let replay = run_case(&planned, Record { trace: true, ..Record::default() });
        prop_assert_eq!(&replay.outcome, &rec.result.outcome);
        prop_assert_eq!(&replay.tokens_per_turn, &rec.result.tokens_per_turn);
        prop_assert_eq!(&replay.trace, &rec.result.trace);
        prop_assert_eq!(&replay.gateway_trace, &rec.result.gateway_trace);
        let text = scenario::render(&Header::default(), &planned, &Expect::Clean);
        let back = scenario::parse(Path::new("p.toml"), &text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(back.spec, planned);
    }

    #[test]
    fn shrinking_keeps_the_same_invariant_failing(
        root_seed in any::<u64>(),
        case in 0u32..10_000,
        bug in proptest::sample::select(recordable_bugs()),
    ) {
        // The first failing case of the scan; violations and liveness outcomes alike.
        let failing = (case..case + SCAN_CASES).find_map(|c| {
            let original = spec(root_seed, c, Some(bug), 0);
            let first = run_case(&original, Record::default());
            let v = first.outcome.violations().first()?.clone();
            Some((original, v))
        });
        let Some((original, v)) = failing else {
            return Ok(());
        };
        let budget = Budget { attempts_max: SHRINK_ATTEMPTS, time_max: None };
        let s = shrink(&original, budget, &mut |_| {}).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&s.invariant, &v.invariant);
        prop_assert!(s.after.turns <= s.before.turns && s.attempts <= SHRINK_ATTEMPTS);
        prop_assert!(s.after.faults <= s.before.faults);
        let again = run_case(&s.spec, Record::default());
        prop_assert_eq!(&again.outcome, &s.result.outcome);
        prop_assert!(
            again.outcome.violations().iter().any(|w| w.invariant == s.invariant),
            "the shrunk case no longer fails {}", s.invariant
        );
        prop_assert!(matches!(again.outcome, CaseOutcome::Violation(_) | CaseOutcome::Liveness(_)));
    }
}

/// Gateway cases replay from their recording (schedule, topic, the conversation turns
/// taken around redeliveries), over a run of drawn cases with and without each gateway
/// switch: the drawn suite has retries, crashes and duplicates in most of them.
#[test]
fn recorded_gateway_cases_replay_turn_for_turn() {
    let gateway = Strategy::parse("gateway").unwrap();
    let switches: Vec<Option<usize>> = std::iter::once(None)
        .chain(
            (0..CATALOGUE.len())
                .filter(|i| CATALOGUE[*i].strategy == StrategyKind::Gateway)
                .map(Some),
        )
        .collect();
    for bug in switches {
        for case in 0..12 {
            let mut original = spec(7, case, bug, 0);
            original.strategy = gateway;
            let rec = record(&original);
            let planned = original.clone().with_plan(rec.plan);
            let replay = run_case(
                &planned,
                Record {
                    trace: true,
                    ..Record::default()
                },
            );
            let what = format!("case {case} bug {bug:?}");
            assert_eq!(replay.outcome, rec.result.outcome, "{what}");
            assert_eq!(replay.tokens_per_turn, rec.result.tokens_per_turn, "{what}");
            assert_eq!(replay.gateway_trace, rec.result.gateway_trace, "{what}");
        }
    }
}
