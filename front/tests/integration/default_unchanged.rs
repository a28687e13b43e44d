//! What the default suite does is pinned by a readable snapshot of its summary (totals,
//! invariants checked and violated, families, coverage counters): a change shows as the
//! lines that moved. Update the snapshots (`INSTA_UPDATE=always`) only for an intended
//! change of what the default suite does. Plans must not change the cases that have none.

use crate::common;
use common::{arg, compactsim, scratch};

/// `summary.md` of `compactsim run --cases 64 --strategy <strategy>`.
fn summary_64(strategy: &str) -> String {
    let out = scratch(&format!("default-64-{strategy}"));
    compactsim(&[
        "run",
        "--cases",
        "64",
        "--strategy",
        strategy,
        "--shrink-time",
        "0",
        "--out",
        arg(&out),
    ])
    .expect_code(0);
    std::fs::read_to_string(out.join("summary.md")).unwrap()
}

#[test]
fn the_default_micro_summary_is_unchanged() {
    insta::assert_snapshot!(summary_64("micro"));
}

#[test]
fn the_default_batch_summary_is_unchanged() {
    insta::assert_snapshot!(summary_64("batch"));
}

#[test]
fn an_empty_plan_changes_no_case_of_the_default_suite() {
    use compactsim_harness::engine::plan::CasePlan;
    use compactsim_harness::engine::{run_case, Record};
    use std::sync::Arc;
    let params = compactsim::cli::args::CaseParams::parse(20_260_731, 25, "micro", &[]).unwrap();
    let suite = params.suite(0, 96);
    for case in 0..96 {
        let spec = suite.spec(case);
        let planned = compactsim_harness::engine::CaseSpec {
            plan: Some(Arc::new(CasePlan::default())),
            ..spec.clone()
        };
        assert_eq!(
            run_case(&spec, Record::default()),
            run_case(&planned, Record::default()),
            "case {case}"
        );
    }
}
