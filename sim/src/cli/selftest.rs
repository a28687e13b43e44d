//! `compactsim selftest`: every bug switch of the catalogue against the default suite.

use super::exit::{Exit, Failure};
use crate::selftest::{self, BugReport, Repro, SelftestSuite};
use crate::shrink::{self, Budget};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Default wall-time cap of each switch's shrink.
pub const SELFTEST_SHRINK_TIME_DEFAULT_S: f64 = 5.0;

/// A validated `selftest` request.
#[derive(Clone, Debug)]
pub struct SelftestRequest {
    pub suite: SelftestSuite,
    pub jobs: usize,
    pub shrink_time: Duration,
    /// Shrunk repros go to `<out>/failures/`.
    pub out: PathBuf,
}

/// The shrunk-repro cell of a switch's line.
fn repro(r: &BugReport) -> String {
    match &r.repro {
        Repro::NotCaught => "-".to_string(),
        Repro::Shrunk(s) => format!(
            "{} -> {} turns, {} rows ({} attempts, {})",
            s.before.turns,
            s.after.turns,
            s.after.rows,
            s.attempts,
            match s.stop {
                shrink::Stop::Fixpoint => "fixpoint",
                shrink::Stop::Attempts(_) => "attempt bound",
                shrink::Stop::Time(_) => "time bound",
            }
        ),
        Repro::Failed(e) => format!("- (not shrunk: {e})"),
    }
}

/// One table line for a switch; a switch that needs others says so at the end.
pub fn line(r: &BugReport) -> String {
    let (caught, invariant, expected, first) = match &r.caught {
        None => ("NO", "-".to_string(), "-", "-".to_string()),
        Some(c) => (
            "yes",
            c.invariant.clone(),
            if c.expected { "yes" } else { "NO" },
            format!("case {} turn {}", c.case, c.turn),
        ),
    };
    let mut line = format!(
        "{:<12} {:<6} {:<6} {:<24} {:<8} {:>5} {:>6}  {:<18} {}",
        r.info.id,
        r.strategy.name(),
        caught,
        invariant,
        expected,
        r.cases,
        r.passes,
        first,
        repro(r)
    );
    if !r.info.requires.is_empty() {
        let with: Vec<&str> = r.info.requires.iter().map(|b| b.id()).collect();
        line.push_str(&format!("  [caught with {}", with.join(", ")));
        if r.narrowed {
            line.push_str(&format!("; oracle: {}", r.info.expected.join(", ")));
        }
        line.push(']');
    }
    line
}

/// The table header.
pub fn header() -> String {
    format!(
        "{:<12} {:<6} {:<6} {:<24} {:<8} {:>5} {:>6}  {:<18} shrunk repro",
        "bug", "strat", "caught", "invariant", "expected", "cases", "passes", "first failure"
    )
}

/// Runs the self-test; exit 0 only if every switch is caught by an expected invariant.
pub fn selftest(req: &SelftestRequest) -> Result<Exit, Failure> {
    super::outdir::prepare(&req.out)?;
    super::outdir::clear_stale(&req.out, &[], &[shrink::FAILURES_DIR])?;
    crate::outln!(
        "SEED={} cases={} passes={} jobs={} shrink-time={:.1}s per switch",
        req.suite.seed,
        req.suite.cases,
        req.suite.passes,
        req.jobs,
        req.shrink_time.as_secs_f64()
    );
    crate::outln!("{}", header());
    let started = Instant::now();
    let mut written = Vec::new();
    let mut write_error = None;
    let reports = selftest::selftest(req.suite, req.jobs, Budget::timed(req.shrink_time), |r| {
        crate::outln!("{}", line(r));
        if let Repro::Shrunk(s) = &r.repro {
            let name = format!("{}-case-{}", r.info.id.to_lowercase(), s.original.case);
            match shrink::write_failure(&req.out, &name, s) {
                Ok(path) => written.push(path),
                Err(e) => {
                    write_error.get_or_insert(e);
                }
            }
        }
    })
    .map_err(Failure::internal)?;
    if let Some(e) = write_error {
        return Err(Failure::internal(e));
    }
    let passed = reports.iter().filter(|r| r.passed()).count();
    crate::outln!(
        "\nselftest: {passed} of {} bug switches caught by an expected invariant, {:.1} s",
        reports.len(),
        started.elapsed().as_secs_f64()
    );
    for r in reports.iter().filter(|r| !r.passed()) {
        crate::outln!(
            "NOT CAUGHT as expected: {} (expected: {})",
            r.info.id,
            r.info.expected.join(", ")
        );
    }
    for path in &written {
        crate::outln!("repro: {}", path.display());
    }
    Ok(if passed == reports.len() {
        Exit::Clean
    } else {
        Exit::Violation
    })
}
