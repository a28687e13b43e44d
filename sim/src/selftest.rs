//! The catalogue self-test: for every bug switch, run the default suite of the switch's
//! own strategy with that switch (and the switches it requires) until the first failing
//! case, check that an invariant the catalogue expects caught it, and shrink that case.
//! The measure of the harness's power.

use crate::bugs::{BugInfo, CATALOGUE};
use crate::engine::plan::CasePlan;
use crate::engine::{CaseOutcome, CaseResult, CaseSpec, Record};
use crate::runner::run_cases;
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

/// What became of the first failing case's shrink.
#[derive(Clone, Debug)]
pub enum Repro {
    /// Nothing failed, so nothing was shrunk.
    NotCaught,
    Shrunk(Box<Shrunk>),
    /// The shrink failed; the switch still counts as caught.
    Failed(String),
}

/// What the self-test found for one bug switch.
#[derive(Clone, Debug)]
pub struct BugReport {
    pub info: &'static BugInfo,
    pub strategy: Strategy,
    /// The oracle checked only the bug's expected invariants (a switch that shows only
    /// with others, whose own symptoms would stop the case first).
    pub narrowed: bool,
    /// Cases run up to and including the first failing one (all of them if none failed).
    pub cases: u32,
    /// Passes with work over those cases.
    pub passes: u64,
    /// Cases that ended in a harness failure before the first violation.
    pub internal: u32,
    pub caught: Option<Caught>,
    pub repro: Repro,
}

impl BugReport {
    /// Caught by an invariant the catalogue expects.
    pub fn passed(&self) -> bool {
        self.caught.as_ref().is_some_and(|c| c.expected)
    }
}

/// The case `case` as the self-test runs it for `info`.
pub fn spec(info: &BugInfo, suite: SelftestSuite, case: u32) -> Result<CaseSpec, String> {
    let plan = CasePlan {
        invariants: (!info.requires.is_empty())
            .then(|| info.expected.iter().map(|i| i.to_string()).collect()),
        ..CasePlan::default()
    };
    Ok(CaseSpec {
        root_seed: info.selftest_seed.unwrap_or(suite.seed),
        case,
        passes: suite.passes,
        strategy: Strategy::parse(info.strategy)?,
        bugs: info.switches(),
        plan: None,
    }
    .with_plan(plan))
}

/// Runs cases `0..cases` of `spec_of` on `jobs` threads, in chunks, handing results to
/// `sink` in case order until it returns false.
fn scan(
    cases: u32,
    jobs: usize,
    spec_of: impl Fn(u32) -> CaseSpec + Sync,
    sink: impl FnMut(CaseResult) -> bool,
) -> Result<(), String> {
    run_cases(0..cases, jobs, Record::default(), spec_of, sink)
}

/// Runs the suite with `info`'s switches until the first violation; shrinks it within
/// `shrink_budget`.
pub fn check_bug(
    info: &'static BugInfo,
    suite: SelftestSuite,
    jobs: usize,
    shrink_budget: Budget,
) -> Result<BugReport, String> {
    let first = spec(info, suite, 0)?;
    let mut report = BugReport {
        info,
        strategy: first.strategy,
        narrowed: first.plan.is_some(),
        cases: 0,
        passes: 0,
        internal: 0,
        caught: None,
        repro: Repro::NotCaught,
    };
    let spec_of = |case| CaseSpec {
        case,
        ..first.clone()
    };
    scan(suite.cases, jobs, spec_of, |r| {
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
        report.repro = match shrink::shrink(&spec_of(c.case), shrink_budget, &mut |_| {}) {
            Ok(s) => Repro::Shrunk(Box::new(s)),
            Err(e) => Repro::Failed(e.to_string()),
        };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bugs::Bug;
    use crate::cli::args::{CASES_DEFAULT, PASSES_DEFAULT, SEED_DEFAULT};
    use std::time::Duration;

    const SUITE: SelftestSuite = SelftestSuite {
        seed: SEED_DEFAULT,
        cases: CASES_DEFAULT,
        passes: PASSES_DEFAULT,
    };

    #[test]
    fn each_switch_runs_under_its_own_strategy_with_what_it_requires() {
        for info in CATALOGUE {
            let s = spec(info, SUITE, 3).unwrap();
            assert_eq!(s.strategy.name(), info.strategy, "{}", info.id);
            assert_eq!(s.bugs, info.switches(), "{}", info.id);
            let only = s.plan.as_ref().and_then(|p| p.invariants.clone());
            if info.requires.is_empty() {
                assert_eq!(s.plan, None, "{}: the drawn case, every invariant", info.id);
            } else {
                assert_eq!(only.unwrap(), info.expected, "{}", info.id);
            }
        }
    }

    #[test]
    fn a_required_switch_is_caught_with_its_partner_and_its_agent_case_shrunk() {
        let r = check_bug(
            Bug::H58753.info(),
            SUITE,
            2,
            Budget::timed(Duration::from_secs(1)),
        )
        .unwrap();
        assert!(r.passed() && r.narrowed, "{r:?}");
        assert_eq!(r.caught.as_ref().unwrap().invariant, "api-valid");
        let Repro::Shrunk(shrunk) = &r.repro else {
            panic!("{:?}", r.repro);
        };
        assert!(shrunk.after.turns <= shrunk.before.turns, "{shrunk:?}");
    }
}
