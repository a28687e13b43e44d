//! Plans must not change the cases that have none: the default run's report.json is
//! byte-identical to the one written before case plans existed.

mod common;
use common::{arg, compactsim, scratch};

/// FNV-1a 64 of `report.json` of `compactsim run --cases 64`, written at the commit before
/// case plans, scenario files and shrinking were added (12,509 bytes). Update it only for
/// an intended change of what the default suite does. Updated by the compactor seam: the
/// one micro driver reports the repair only when it changed something, so the micro
/// suite has fewer transitions (9,466 -> 6,324) and checks; every verdict is the same.
const REPORT_64_FNV1A: u64 = 0x5c32_67bb_6306_69d5;
const REPORT_64_BYTES: usize = 12_509;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[test]
fn the_default_run_report_is_unchanged() {
    let out = scratch("default-64");
    compactsim(&["run", "--cases", "64", "--out", arg(&out)]).expect_code(0);
    let report = std::fs::read(out.join("report.json")).unwrap();
    assert_eq!(report.len(), REPORT_64_BYTES);
    assert_eq!(fnv1a(&report), REPORT_64_FNV1A);
}

#[test]
fn an_empty_plan_changes_no_case_of_the_default_suite() {
    use compactsim::engine::plan::CasePlan;
    use compactsim::engine::{run_case, Record};
    use std::sync::Arc;
    let params = compactsim::cli::args::CaseParams::parse(20_260_731, 25, "micro", &[]).unwrap();
    let suite = params.suite(0, 96);
    for case in 0..96 {
        let spec = suite.spec(case);
        let planned = compactsim::engine::CaseSpec {
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
