use super::*;
use crate::bugs::{Bug, BugSet};
use crate::engine::run_case;
use crate::scenario;
use crate::strategy::Strategy;
use std::path::Path;

fn spec(case: u32, bug: Bug) -> CaseSpec {
    CaseSpec {
        root_seed: crate::cli::args::SEED_DEFAULT,
        case,
        passes: 25,
        strategy: Strategy::Micro,
        bugs: BugSet::of(&[bug]),
        plan: None,
        profile: None,
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

#[test]
fn a_gateway_case_says_it_cannot_be_recorded_instead_of_claiming_it_is_clean() {
    let mut s = spec(0, Bug::H29335);
    s.strategy = Strategy::parse("gateway").unwrap();
    let e = shrink(&s, untimed(10), &mut |_| {}).unwrap_err();
    assert_eq!(e, ShrinkError::Unsupported(GATEWAY_NOT_RECORDED));
    assert!(e.to_string().contains("[gateway]"), "{e}");
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
    // The drawn case fails early (7 turns): the shrink keeps its turns and cuts rows and
    // characters.
    assert!(s.after.turns <= s.before.turns);
    assert!(s.after.rows < s.before.rows && s.after.chars < s.before.chars);
    assert!(!seen.is_empty() && seen.windows(2).all(|w| w[0].attempts < w[1].attempts));
    assert_eq!(seen.last().unwrap().size, s.after);
    assert!(fails(&s.result, "one-marker-max"));
    // The written file reproduces it.
    let text = render_failure("case-0", &s);
    let back = scenario::parse(Path::new("case-0.toml"), &text).unwrap();
    let r = run_case(&back.spec, Record::default());
    assert!(back.expect.holds(&r), "{:?}\n{text}", r.outcome);
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
