//! The catalogue self-test: for every bug switch, run the default suite with that switch
//! alone until the first failing case, check that an invariant the catalogue expects
//! caught it, and shrink that case. The measure of the harness's power.

use crate::bugs::{BugInfo, BugSet, CATALOGUE};
use crate::engine::CaseOutcome;
use crate::engine::Record;
use crate::runner::{run_suite, Suite};
use crate::shrink::{self, Budget, Shrunk};
use crate::strategy::Strategy;

/// The suite each switch runs (the default suite's parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SelftestSuite {
    pub seed: u64,
    pub cases: u32,
    pub passes: u32,
}

/// The first case that failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caught {
    pub case: u32,
    pub invariant: String,
    pub turn: u32,
    /// The invariant is one the catalogue lists for the bug.
    pub expected: bool,
}

/// What the self-test found for one bug switch.
#[derive(Clone, Debug)]
pub struct BugReport {
    pub info: &'static BugInfo,
    /// Cases run up to and including the first failing one (all of them if none failed).
    pub cases: u32,
    /// Passes with work over those cases.
    pub passes: u64,
    /// Cases that ended in a harness failure before the first violation.
    pub internal: u32,
    pub caught: Option<Caught>,
    /// The first failure, shrunk (or why it could not be).
    pub shrunk: Option<Result<Shrunk, String>>,
}

impl BugReport {
    /// Caught by an invariant the catalogue expects.
    pub fn passed(&self) -> bool {
        self.caught.as_ref().is_some_and(|c| c.expected)
    }
}

/// Runs the suite with `info`'s switch alone until the first violation; shrinks it
/// within `shrink_budget`.
pub fn check_bug(
    info: &'static BugInfo,
    suite: SelftestSuite,
    jobs: usize,
    shrink_budget: Budget,
) -> Result<BugReport, String> {
    let strategy = Strategy::parse(info.strategy)?;
    let s = Suite {
        root_seed: suite.seed,
        case_first: 0,
        cases: suite.cases,
        passes: suite.passes,
        strategy,
        bugs: BugSet::of(&[info.bug]),
    };
    let mut report = BugReport {
        info,
        cases: 0,
        passes: 0,
        internal: 0,
        caught: None,
        shrunk: None,
    };
    run_suite(&s, jobs, Record::default(), |r| {
        report.cases += 1;
        report.passes += r.passes as u64;
        match &r.outcome {
            CaseOutcome::Clean => true,
            CaseOutcome::Internal(_) => {
                report.internal += 1;
                true
            }
            CaseOutcome::Violation(_) | CaseOutcome::Liveness(_) => {
                let vs = r.outcome.violations();
                report.caught = Some(Caught {
                    case: r.case,
                    invariant: vs[0].invariant.clone(),
                    turn: vs[0].turn,
                    expected: vs
                        .iter()
                        .any(|v| info.expected.contains(&v.invariant.as_str())),
                });
                false
            }
        }
    })?;
    if let Some(c) = &report.caught {
        let spec = s.spec(c.case);
        report.shrunk =
            Some(shrink::shrink(&spec, shrink_budget, &mut |_| {}).map_err(|e| e.to_string()));
    }
    Ok(report)
}

/// [`check_bug`] for every switch in the catalogue, in catalogue order.
pub fn selftest(
    suite: SelftestSuite,
    jobs: usize,
    shrink_budget: Budget,
    mut each: impl FnMut(&BugReport),
) -> Result<Vec<BugReport>, String> {
    let mut out = Vec::new();
    for info in CATALOGUE {
        let report = check_bug(info, suite, jobs, shrink_budget)?;
        each(&report);
        out.push(report);
    }
    Ok(out)
}
