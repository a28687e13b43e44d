//! Properties of recorded plans, over drawn seeds, cases and bug switches (proptest):
//! a recorded case replays to the same outcome, trace and tokens; written as a scenario
//! file it reads back as the same case; shrinking it keeps the same invariant failing.

use compactsim::bugs::{BugSet, CATALOGUE};
use compactsim::engine::plan::record;
use compactsim::engine::{run_case, CaseOutcome, CaseSpec, Record};
use compactsim::scenario::{self, Expect, Header};
use compactsim::shrink::{shrink, Budget};
use compactsim::strategy::Strategy;
use proptest::prelude::*;
use std::path::Path;

/// Attempts each property shrink may make (keeps the test quick).
const SHRINK_ATTEMPTS: u32 = 40;

/// Catalogue indexes of the bug switches whose strategy the plans record.
fn recordable_bugs() -> Vec<usize> {
    (0..CATALOGUE.len())
        .filter(|&i| Strategy::parse(CATALOGUE[i].strategy) == Ok(Strategy::Micro))
        .collect()
}

fn spec(root_seed: u64, case: u32, bug: Option<usize>) -> CaseSpec {
    CaseSpec {
        root_seed,
        case,
        passes: 25,
        strategy: Strategy::Micro,
        bugs: bug.map_or_else(BugSet::none, |i| BugSet::of(&[CATALOGUE[i].bug])),
        plan: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_recorded_case_replays_and_round_trips_through_a_file(
        root_seed in any::<u64>(),
        case in 0u32..10_000,
        bug in proptest::option::of(proptest::sample::select(recordable_bugs())),
    ) {
        let original = spec(root_seed, case, bug);
        let rec = record(&original);
        let planned = original.clone().with_plan(rec.plan);
        let replay = run_case(&planned, Record { trace: true });
        prop_assert_eq!(&replay.outcome, &rec.result.outcome);
        prop_assert_eq!(&replay.tokens_per_turn, &rec.result.tokens_per_turn);
        prop_assert_eq!(&replay.trace, &rec.result.trace);
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
        let original = spec(root_seed, case, Some(bug));
        let first = run_case(&original, Record::default());
        let CaseOutcome::Violation(vs) = &first.outcome else {
            return Ok(());
        };
        let budget = Budget { attempts_max: SHRINK_ATTEMPTS, time_max: None };
        let s = shrink(&original, budget, &mut |_| {}).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&s.invariant, &vs[0].invariant);
        prop_assert!(s.after.turns <= s.before.turns && s.attempts <= SHRINK_ATTEMPTS);
        let again = run_case(&s.spec, Record::default());
        prop_assert_eq!(&again.outcome, &s.result.outcome);
        let CaseOutcome::Violation(ws) = &again.outcome else {
            return Err(TestCaseError::fail("the shrunk case no longer fails"));
        };
        prop_assert!(ws.iter().any(|w| w.invariant == s.invariant));
    }
}
