//! Shrinking agent-loop failures (issue 4 must-show): a shrunk repro of H-35054 has at
//! most 10 turns, still fails bounded-compaction, and its written scenario file
//! reproduces it (and no longer fails that way with the bug removed); liveness outcomes
//! shrink too.

use crate::common;
use common::{arg, compactsim, scratch};

use compactsim::cli::args::SEED_DEFAULT;
use compactsim::cli::failures::render_failure;
use compactsim::scenario;
use compactsim::shrink::{shrink, Budget, SHRINK_ATTEMPTS_MAX};
use compactsim_harness::engine::{run_case, CaseOutcome, CaseSpec, Record};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::bugs::Bug;
use compactsim_hermes::strategy::Strategy;
use std::path::Path;

/// Cases of the default suite scanned for the first failure of a switch.
const SCAN_CASES: u32 = 40;
/// The most turns the must-show allows a shrunk H-35054 repro.
const H35054_TURNS_MAX: usize = 10;
/// Attempts of the liveness shrink (a long case: every attempt runs up to 130 turns).
const LIVENESS_ATTEMPTS: u32 = 400;

fn batch_spec(case: u32, bug: Bug) -> CaseSpec {
    CaseSpec {
        root_seed: SEED_DEFAULT,
        case,
        passes: 25,
        strategy: Strategy::parse("batch").unwrap(),
        bugs: BugSet::of(&[bug]),
        plan: None,
        profile: None,
        compactor: Default::default(),
    }
}

/// The first case of the default suite (batch, `bug` alone) that fails.
fn first_failing(bug: Bug) -> CaseSpec {
    (0..SCAN_CASES)
        .map(|case| batch_spec(case, bug))
        .find(|s| {
            !run_case(s, Record::default())
                .outcome
                .violations()
                .is_empty()
        })
        .unwrap_or_else(|| panic!("{bug:?} fails in none of the first {SCAN_CASES} cases"))
}

fn untimed(attempts_max: u32) -> Budget {
    Budget {
        attempts_max,
        time_max: None,
    }
}

#[test]
fn h_35054_shrinks_to_at_most_10_turns_and_its_file_reproduces_it() {
    let original = first_failing(Bug::H35054);
    let s = shrink(&original, untimed(SHRINK_ATTEMPTS_MAX), &mut |_| {}).unwrap();
    let history = s
        .spec
        .plan
        .as_ref()
        .unwrap()
        .script
        .as_ref()
        .unwrap()
        .history
        .len();
    println!(
        "H-35054 case {}: {} -> {} (+{history} history turns), {} attempts, {}",
        original.case, s.before, s.after, s.attempts, s.stop
    );
    assert_eq!(s.invariant, "bounded-compaction");
    assert!(s.after.turns <= H35054_TURNS_MAX, "{}", s.after);
    assert!(s.after.rows < s.before.rows && s.after.chars < s.before.chars);
    assert!(matches!(s.result.outcome, CaseOutcome::Violation(_)));

    // The written file parses back to the shrunk case and reproduces it.
    let dir = scratch("agent-shrink-h35054");
    let file = dir.join("h-35054.toml");
    let text = render_failure("h-35054", &s);
    std::fs::write(&file, &text).unwrap();
    let back = scenario::parse(Path::new("h-35054.toml"), &text).unwrap();
    assert_eq!(back.spec, s.spec);
    let r = run_case(&back.spec, Record::default());
    assert!(back.expect.holds(&r), "{:?}\n{text}", r.outcome);
    let out = dir.join("out");
    compactsim(&["scenario", arg(&file), "--out", arg(&out)]).expect_code(0);

    // With the bug removed the same case no longer fails that way.
    let fixed = CaseSpec {
        bugs: BugSet::none(),
        ..back.spec.clone()
    };
    let r = run_case(&fixed, Record::default());
    assert!(
        r.outcome
            .violations()
            .iter()
            .all(|v| v.invariant != "bounded-compaction"),
        "{:?}",
        r.outcome
    );
    let unbugged = dir.join("h-35054-fixed.toml");
    std::fs::write(&unbugged, text.replace("bugs = [\"H-35054\"]", "bugs = []")).unwrap();
    let run = compactsim(&["scenario", arg(&unbugged), "--out", arg(&out)]).expect_code(1);
    assert!(run.stdout.contains("FAILED"), "{}", run.stdout);
}

#[test]
fn a_liveness_failure_shrinks_and_its_file_expects_the_liveness_invariant() {
    let original = first_failing(Bug::H11529);
    let first = run_case(&original, Record::default());
    assert!(
        matches!(first.outcome, CaseOutcome::Liveness(_)),
        "{:?}",
        first.outcome
    );
    let s = shrink(&original, untimed(LIVENESS_ATTEMPTS), &mut |_| {}).unwrap();
    println!(
        "H-11529 case {}: {} -> {}",
        original.case, s.before, s.after
    );
    assert_eq!(s.invariant, "no-infinite-loop");
    assert!(matches!(s.result.outcome, CaseOutcome::Liveness(_)));
    assert!(
        s.after.turns < s.before.turns,
        "{} -> {}",
        s.before,
        s.after
    );
    let dir = scratch("agent-shrink-liveness");
    let file = dir.join("h-11529.toml");
    std::fs::write(&file, render_failure("h-11529", &s)).unwrap();
    let out = dir.join("out");
    compactsim(&["scenario", arg(&file), "--out", arg(&out)]).expect_code(0);
}
