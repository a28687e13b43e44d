//! junit.xml of `selftest`: one test case per switch × strategy row (or, for an external
//! compactor, per clean row and mutant row), each with the time the table prints for it.
//! A row fails when its catch rate is below the minimum (its `type`: the invariants
//! expected to catch the switch) or, for a clean row, when a case of the unmutated
//! adapter failed (its `type`: the first invariant that failed).

use crate::selftest::external::{CleanRow, ExternalSuite, MutantRow};
use crate::selftest::{CatchRates, SelftestSuite, CATCH_RATE_MIN_PER_MILLE};
use compactsim_hermes::strategy::Strategy;
use compactsim_reports::{JunitCase, JunitOutcome};
use std::time::Duration;

/// Name of the `<testsuite>` of a selftest's junit.xml.
pub const JUNIT_SUITE: &str = "compactsim selftest";

fn rate(per_mille: u64) -> String {
    format!("{}.{}%", per_mille / 10, per_mille % 10)
}

/// The failure of a row whose lowest catch rate is below the minimum: its `type` the
/// invariants expected to catch `what`, its text the table row and `repro`.
fn too_low(
    what: &str,
    strategy: Strategy,
    expected: &[&str],
    min_per_mille: u64,
    line: &str,
    repro: String,
) -> JunitOutcome {
    JunitOutcome::Failed {
        kind: expected.join(", "),
        message: format!(
            "{what} under {}: lowest catch rate {}, below the minimum {}",
            strategy.name(),
            rate(min_per_mille),
            rate(CATCH_RATE_MIN_PER_MILLE)
        ),
        detail: format!("{line}\nrepro: {repro}\n"),
    }
}

/// The test case of one switch row of the bug-catalogue self-test; `line` is its row of
/// the printed table.
pub fn switch_row(r: &CatchRates, suite: SelftestSuite, line: &str, time: Duration) -> JunitCase {
    let bugs: String = std::iter::once(r.info.id)
        .chain(r.info.requires.iter().map(|b| b.id()))
        .map(|id| format!(" --bug {id}"))
        .collect();
    let outcome = if r.passed() {
        JunitOutcome::Passed
    } else {
        let repro = format!(
            "compactsim sweep --seeds {} --cases {} --passes {} --strategy {}{bugs}",
            suite.seeds,
            suite.cases,
            suite.passes,
            r.strategy.name()
        );
        too_low(
            r.info.id,
            r.strategy,
            r.info.expected,
            r.min_per_mille(),
            line,
            repro,
        )
    };
    JunitCase {
        name: format!("{} {}", r.info.id, r.strategy.name()),
        classname: format!("selftest.{}", r.strategy.name()),
        outcome,
        wall_time: time,
    }
}

/// The test case of the unmutated adapter's clean row under one strategy.
pub fn clean_row(r: &CleanRow, suite: &ExternalSuite, line: &str, time: Duration) -> JunitCase {
    let first = suite
        .seeds
        .iter()
        .zip(&r.per_seed)
        .find_map(|(seed, t)| t.first_failure.as_ref().map(|f| (seed, f)));
    let outcome = match first {
        None => JunitOutcome::Passed,
        Some((seed, f)) => JunitOutcome::Failed {
            kind: f.invariants.first().cloned().unwrap_or_default(),
            message: format!(
                "{} failing case(s) of the unmutated adapter under {}; first: seed {seed} case {} \
                 ({}) at turn {}",
                r.failing(),
                r.strategy.name(),
                f.case,
                f.invariants.join(", "),
                f.turn
            ),
            detail: format!(
                "{line}\nrepro: compactsim replay --seed {seed} --case {} --passes {} --strategy {}{}\n",
                f.case,
                suite.passes,
                r.strategy.name(),
                suite.compactor.repro_flags()
            ),
        },
    };
    JunitCase {
        name: format!("clean {}", r.strategy.name()),
        classname: "selftest.external".into(),
        outcome,
        wall_time: time,
    }
}

/// The test case of one mutant row around an external adapter.
pub fn mutant_row(r: &MutantRow, suite: &ExternalSuite, line: &str, time: Duration) -> JunitCase {
    let outcome = if r.deep_enough() {
        JunitOutcome::Passed
    } else {
        let repro = format!(
            "compactsim selftest --seeds {} --cases {} --passes {}{}",
            suite.seeds,
            suite.cases,
            suite.passes,
            suite.compactor.repro_flags()
        );
        too_low(
            &format!("mutant {}", r.info.id),
            r.strategy,
            r.info.expected,
            r.min_per_mille(),
            line,
            repro,
        )
    };
    JunitCase {
        name: format!("{} {}", r.info.id, r.strategy.name()),
        classname: "selftest.external".into(),
        outcome,
        wall_time: time,
    }
}
