//! Verdicts that do not mask: a case with two faults reports both (each with its first
//! step) when judged past its first violation, and only the first when it stops there.

use super::{run_case, CaseOutcome, CaseSpec, Record, Verdicts};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::bugs::Bug;

/// Cases searched for one where both faults fire.
const CASES_SEARCHED_MAX: u32 = 64;

fn record(verdicts: Verdicts) -> Record {
    Record {
        trace: false,
        verdicts,
    }
}

/// The first case under `strategy` with `bugs` whose all-mode verdicts name two
/// invariants first fired at different steps; both results of that case.
fn two_faults(strategy: &str, bugs: &[Bug]) -> (super::CaseResult, super::CaseResult) {
    (0..CASES_SEARCHED_MAX)
        .map(|case| CaseSpec {
            bugs: BugSet::of(bugs),
            ..CaseSpec::drawn(case, strategy)
        })
        .find_map(|spec| {
            let all = run_case(&spec, record(Verdicts::All));
            let steps: Vec<u32> = all.verdicts.iter().map(|v| v.step).collect();
            (steps.len() >= 2 && steps[0] < steps[steps.len() - 1])
                .then(|| (all, run_case(&spec, record(Verdicts::First))))
        })
        .unwrap_or_else(|| panic!("no case of {CASES_SEARCHED_MAX} fires two invariants"))
}

fn check(strategy: &str, bugs: &[Bug]) {
    let (all, first) = two_faults(strategy, bugs);
    // The same outcome either way: the first violation.
    assert_eq!(all.outcome, first.outcome);
    let CaseOutcome::Violation(at) = &first.outcome else {
        panic!("{:?}", first.outcome)
    };
    // First mode: the invariants of the first failing transition, nothing later.
    assert!(first.verdicts.iter().all(|v| v.step == at[0].step));
    assert_eq!(first.verdicts.len(), at.len());
    // All mode: those, then every later invariant once, in the order they fired.
    assert_eq!(all.verdicts[..first.verdicts.len()], first.verdicts[..]);
    assert!(all.verdicts.windows(2).all(|w| w[0].step <= w[1].step));
    let mut ids: Vec<&str> = all.verdicts.iter().map(|v| v.invariant.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all.verdicts.len(), "an invariant noted twice");
    assert!(all.transitions >= first.transitions);
}

#[test]
fn a_micro_case_with_two_faults_reports_both_in_all_and_one_in_first() {
    check("micro", &[Bug::H75345A, Bug::HMDefrag]);
}

#[test]
fn a_batch_case_with_two_faults_reports_both_in_all_and_one_in_first() {
    check("batch", &[Bug::H10896, Bug::H29559, Bug::H52160]);
}

#[test]
fn judging_past_the_first_violation_is_deterministic() {
    let spec = CaseSpec {
        bugs: BugSet::of(&[Bug::H75345A, Bug::HMDefrag]),
        ..CaseSpec::drawn(3, "micro")
    };
    let a = run_case(&spec, record(Verdicts::All));
    let b = run_case(&spec, record(Verdicts::All));
    assert_eq!(a, b);
}

#[test]
fn a_gateway_case_with_two_faults_reports_both_in_all_and_one_in_first() {
    check("gateway", &[Bug::H29335, Bug::H4095, Bug::H10896]);
}
