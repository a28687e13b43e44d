use crate::common;

use common::*;
use compactsim_reports::*;

fn clean(case: u32, family: &str, turns: u32, passes: u32) -> CaseRow {
    CaseRow {
        case,
        case_seed: u64::from(case) * 31,
        family: family.to_string(),
        turns,
        passes,
        outcome: Outcome::Clean,
        verdicts: Vec::new(),
        tokens_max: 0,
        messages_max: 0,
    }
}

#[test]
fn counts_cases_outcomes_checks_and_coverage() {
    let mut agg = Aggregator::new()
        .with_invariants(["a", "b", "never-checked"])
        .with_coverage(["hit", "missed"]);
    let r0 = clean(0, "chatty", 5, 2);
    let mut r1 = clean(1, "cron", 7, 3);
    r1.outcome = Outcome::Violation {
        invariant: "b".into(),
        turn: 4,
    };
    let mut r2 = clean(2, "chatty", 9, 1);
    r2.outcome = Outcome::Liveness {
        reason: "step budget".into(),
    };
    agg.add_case(&r0, 11, [("a", 5), ("b", 5)], [("hit", 1)]);
    agg.add_case(&r1, 13, [("a", 7), ("b", 4)], [("hit", 2), ("missed", 0)]);
    agg.add_case(&r2, 17, [("a", 9)], []);
    let s = agg.into_summary();

    assert_eq!(
        s.totals,
        Totals {
            cases: 3,
            cases_failed: 1,
            cases_liveness: 1,
            cases_internal: 0,
            turns: 21,
            passes: 6,
            transitions: 41,
        }
    );
    let inv: Vec<(&str, u64, u64)> = s
        .invariants
        .iter()
        .map(|r| (r.id.as_str(), r.checked, r.violated))
        .collect();
    assert_eq!(
        inv,
        vec![("a", 21, 0), ("b", 9, 1), ("never-checked", 0, 0)]
    );
    assert_eq!(
        s.families,
        vec![
            FamilyRow {
                family: "chatty".into(),
                cases: 2,
                failed: 0,
                liveness: 1,
                turns: 14,
                passes: 3,
            },
            FamilyRow {
                family: "cron".into(),
                cases: 1,
                failed: 1,
                liveness: 0,
                turns: 7,
                passes: 3,
            },
        ]
    );
    assert_eq!(s.coverage.get("hit"), Some(&3));
    assert_eq!(s.coverage.get("missed"), Some(&0));
    assert!(s.failures.is_empty());
    assert_eq!(s.failures_omitted, 0);
}

#[test]
fn violation_of_an_unregistered_invariant_gets_a_row() {
    let mut agg = Aggregator::new();
    let mut r = clean(0, "chatty", 1, 1);
    r.outcome = Outcome::Violation {
        invariant: "route-durable".into(),
        turn: 1,
    };
    agg.add_case(&r, 1, [], []);
    let s = agg.summary();
    assert_eq!(s.invariants.len(), 1);
    assert_eq!(s.invariants[0].id, "route-durable");
    assert_eq!(s.invariants[0].violated, 1);
    assert_eq!(s, agg.into_summary());
}

#[test]
fn failures_keep_the_lowest_case_ids_and_count_the_rest() {
    let extra = 25;
    let n = (FAILURES_KEPT_MAX + extra) as u32;
    // Every row of the fixture with case % 7 == 3 fails; offer them newest first.
    let failing: Vec<Failure> = (0..n * 7).filter_map(|c| failure(&row(c))).collect();
    assert_eq!(failing.len(), n as usize);
    let mut agg = Aggregator::new();
    for f in failing.iter().rev() {
        agg.add_failure(f.clone());
    }
    let s = agg.into_summary();
    assert_eq!(s.failures.len(), FAILURES_KEPT_MAX);
    assert_eq!(s.failures_omitted, extra as u64);
    assert_eq!(s.failures, failing[..FAILURES_KEPT_MAX].to_vec());
}

#[test]
fn merged_failures_equal_sequential_failures_past_the_bound() {
    let rows = rows(7 * (FAILURES_KEPT_MAX as u32 + 40));
    let mut sequential = Aggregator::new();
    rows.iter().for_each(|r| add(&mut sequential, r));

    let (even, odd): (Vec<&CaseRow>, Vec<&CaseRow>) = rows.iter().partition(|r| r.case % 2 == 0);
    let mut a = Aggregator::new();
    let mut b = Aggregator::new();
    odd.iter().for_each(|r| add(&mut b, r));
    even.iter().for_each(|r| add(&mut a, r));
    b.merge(a);

    let s = sequential.into_summary();
    assert_eq!(s.failures_omitted, 40);
    assert_eq!(b.into_summary(), s);
}

#[test]
fn failures_of_one_case_keep_arrival_order() {
    let base = failure(&row(3)).unwrap();
    let mut second = base.clone();
    second.violation.invariant = "zzz-second".into();
    let mut agg = Aggregator::new();
    agg.add_failure(failure(&row(10)).unwrap());
    agg.add_failure(base.clone());
    agg.add_failure(second.clone());
    let s = agg.into_summary();
    let order: Vec<(u32, &str)> = s
        .failures
        .iter()
        .map(|f| (f.case, f.violation.invariant.as_str()))
        .collect();
    assert_eq!(
        order,
        vec![
            (3, base.violation.invariant.as_str()),
            (3, "zzz-second"),
            (10, "count-non-growing")
        ]
    );
}

#[test]
fn counts_cases_per_invariant_over_every_verdict_beside_the_first() {
    let verdict = |invariant: &str, step| Verdict {
        invariant: invariant.into(),
        step,
        turn: step / 2,
        witness: String::new(),
    };
    let mut r0 = clean(0, "chatty", 5, 2);
    r0.outcome = Outcome::Violation {
        invariant: "a".into(),
        turn: 1,
    };
    r0.verdicts = vec![verdict("a", 3), verdict("b", 9)];
    let mut r1 = clean(1, "chatty", 5, 2);
    r1.outcome = Outcome::Violation {
        invariant: "b".into(),
        turn: 2,
    };
    r1.verdicts = vec![verdict("b", 4)];
    let mut r2 = clean(2, "cron", 5, 2);
    r2.outcome = Outcome::Liveness {
        reason: "step budget".into(),
    };
    r2.verdicts = vec![verdict("no-infinite-loop", 7)];
    let mut whole = Aggregator::new().with_invariants(["a", "b", "c"]);
    let (mut left, mut right) = (Aggregator::new(), Aggregator::new());
    for (i, r) in [&r0, &r1, &r2].into_iter().enumerate() {
        whole.add_case(r, 1, [], []);
        if i == 0 { &mut left } else { &mut right }.add_case(r, 1, [], []);
    }
    let rows: Vec<(String, u64, u64)> = whole
        .summary()
        .invariants
        .into_iter()
        .map(|r| (r.id, r.violated, r.fired))
        .collect();
    assert_eq!(
        rows,
        [
            ("a".to_string(), 1, 1),
            ("b".to_string(), 1, 2),
            ("c".to_string(), 0, 0),
            ("no-infinite-loop".to_string(), 0, 1),
        ]
    );
    left.merge(right);
    let merged = left.with_invariants(["a", "b", "c"]).into_summary();
    assert_eq!(merged.invariants, whole.into_summary().invariants);
}
