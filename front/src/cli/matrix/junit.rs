//! junit.xml of `matrix`: one test case per release × finding, with the wall time its
//! scenario took. A release that has the finding (caught or masked) fails it: `type` the
//! finding's invariant, the text every witness and the replay line; a release that
//! cannot run it skips it.

use super::file::Finding;
use super::judge::Cell;
use super::Judged;
use crate::scenario::Scenario;
use compactsim_reports::{JunitCase, JunitOutcome};

/// Name of the `<testsuite>` of a matrix's junit.xml.
pub const JUNIT_SUITE: &str = "compactsim matrix";

/// The test case of finding `finding` on release `release`.
pub fn finding_case(release: &str, finding: &(Finding, Scenario), judged: &Judged) -> JunitCase {
    let (f, s) = finding;
    let invariant = match &s.expect {
        crate::scenario::Expect::Violated { invariant, .. } => invariant.clone(),
        _ => String::new(),
    };
    let outcome = match &judged.cell {
        Cell::CannotRun { reason } => JunitOutcome::Skipped {
            message: reason.clone(),
        },
        Cell::Clean { .. } | Cell::OtherWitness { .. } => JunitOutcome::Passed,
        cell @ (Cell::Caught { .. } | Cell::Masked { .. }) => JunitOutcome::Failed {
            kind: invariant,
            message: format!("{} on {release}: {}", f.id, cell.text()),
            detail: format!("{}repro: {}\n", judged.witness, judged.repro),
        },
    };
    JunitCase {
        name: f.id.clone(),
        classname: format!("matrix.{release}"),
        outcome,
        wall_time: judged.wall_time,
    }
}
