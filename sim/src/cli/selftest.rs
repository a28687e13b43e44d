//! `compactsim selftest`: every bug switch of the catalogue under several root seeds,
//! under its own strategy and under `both`: catch rates per seed, their minimum, and one
//! shrunk repro per switch.

use super::exit::{Exit, Failure};
use crate::selftest::{self, per_mille, CatchRates, SelftestSuite, CATCH_RATE_MIN_PER_MILLE};
use crate::shrink::{self, Budget, Shrunk, Stop};
use std::path::PathBuf;
use std::time::Instant;

/// A validated `selftest` request.
#[derive(Clone, Debug)]
pub struct SelftestRequest {
    pub suite: SelftestSuite,
    pub jobs: usize,
    /// The bound of each switch's shrink.
    pub shrink: Budget,
    /// Shrunk repros go to `<out>/failures/`.
    pub out: PathBuf,
}

/// Outer wall-time cap of each switch's shrink: a safety limit, reported when hit (the
/// attempts budget is the bound that decides the result).
pub const SELFTEST_SHRINK_TIME_CAP_S: f64 = 180.0;

/// Width of a per-seed cell.
const SEED_CELL_WIDTH: usize = 5;

/// The catch-table header: one column per seed.
pub fn header(suite: SelftestSuite) -> String {
    let seeds: String = suite
        .seeds
        .iter()
        .map(|s| format!("{:>w$}", s, w = SEED_CELL_WIDTH))
        .collect();
    format!("{:<12} {:<6}{seeds}  {:>6}  verdict", "bug", "strat", "min")
}

/// One line of the catch table: cases caught by an expected invariant on every seed, the
/// minimum rate, the verdict; failing cases caught only by other invariants at the end.
pub fn line(r: &CatchRates) -> String {
    let seeds: String = r
        .per_seed
        .iter()
        .map(|t| format!("{:>w$}", t.credited, w = SEED_CELL_WIDTH))
        .collect();
    let min = r.min_per_mille();
    let verdict = match (r.deep_enough(), r.exempt) {
        (true, None) => "ok".to_string(),
        (true, Some(_)) => "ok (no longer needs its exemption)".to_string(),
        (false, Some(why)) => format!("exempt, {why}"),
        (false, None) => "TOO LOW".to_string(),
    };
    let other: u32 = r.per_seed.iter().map(|t| t.failing() - t.credited).sum();
    let mut line = format!(
        "{:<12} {:<6}{seeds}  {:>3}.{}%  {verdict}",
        r.info.id,
        r.strategy.name(),
        min / 10,
        min % 10
    );
    if other > 0 {
        line.push_str(&format!(" (+{other} failing by other invariants)"));
    }
    if !r.info.requires.is_empty() {
        let with: Vec<&str> = r.info.requires.iter().map(|b| b.id()).collect();
        line.push_str(&format!(" [with {}]", with.join(", ")));
    }
    line
}

/// The shrink line of a switch.
fn shrink_line(r: &CatchRates, suite: SelftestSuite, shrunk: &Result<Shrunk, String>) -> String {
    let (seed, case) = r.first_credited(suite.seeds).unwrap_or_default();
    let what = match shrunk {
        Ok(s) => format!(
            "{:<24} {:>4} -> {:>2} turns, {:>3} rows, {} faults ({} attempts, {})",
            s.invariant,
            s.before.turns,
            s.after.turns,
            s.after.rows,
            s.after.faults,
            s.attempts,
            match s.stop {
                Stop::Fixpoint => "fixpoint",
                Stop::Attempts(_) => "attempt bound",
                Stop::Time(_) => "TIME BOUND",
            }
        ),
        Err(e) => format!("not shrunk: {e}"),
    };
    format!(
        "{:<12} {:<6} seed {seed:<3} case {case:<4} {what}",
        r.info.id,
        r.strategy.name()
    )
}

/// Runs the self-test; exit 0 only if every switch is deep enough under every strategy
/// (or a known blind spot).
pub fn selftest(req: &SelftestRequest) -> Result<Exit, Failure> {
    super::outdir::prepare(&req.out)?;
    super::outdir::clear_stale(&req.out, &[], &[shrink::FAILURES_DIR])?;
    crate::outln!(
        "SEEDS={} cases={} passes={} jobs={} shrink: {} attempts, time cap {}",
        req.suite.seeds,
        req.suite.cases,
        req.suite.passes,
        req.jobs,
        req.shrink.attempts_max,
        req.shrink
            .time_max
            .map_or("none".to_string(), |t| format!("{:.0} s", t.as_secs_f64()))
    );
    crate::outln!(
        "\ncases caught by an expected invariant, of {} per seed (minimum: {}.{}%)",
        req.suite.cases,
        CATCH_RATE_MIN_PER_MILLE / 10,
        CATCH_RATE_MIN_PER_MILLE % 10
    );
    crate::outln!("{}", header(req.suite));
    let started = Instant::now();
    let clean = selftest::clean_runs(req.suite, req.jobs).map_err(Failure::internal)?;
    let clean_s = started.elapsed().as_secs_f64();
    let mut row_started = Instant::now();
    let all = selftest::selftest(req.suite, req.jobs, &clean, |r| {
        // Wall time of the row (the table's only number that is not deterministic) and
        // the cases it ran (the others were their shared clean runs).
        crate::outln!(
            "{}  {:.1} s, {} run",
            line(r),
            row_started.elapsed().as_secs_f64(),
            r.ran
        );
        row_started = Instant::now();
    })
    .map_err(Failure::internal)?;
    let rates_s = started.elapsed().as_secs_f64();
    crate::outln!("\nshrunk repro of each switch (its own strategy, first credited case)");
    let mut written = Vec::new();
    for r in all.iter().filter(|r| r.strategy.name() == r.info.strategy) {
        let Some(shrunk) = selftest::shrink_first(r, req.suite, req.shrink) else {
            continue;
        };
        crate::outln!("{}", shrink_line(r, req.suite, &shrunk));
        if let Ok(s) = &shrunk {
            let name = format!(
                "{}-seed-{}-case-{}",
                r.info.id.to_lowercase(),
                s.original.root_seed,
                s.original.case
            );
            let path = shrink::write_failure(&req.out, &name, s).map_err(Failure::internal)?;
            written.push(path);
        }
    }
    let failed: Vec<&CatchRates> = all.iter().filter(|r| !r.passed()).collect();
    let ran: u64 = all.iter().map(|r| r.ran).sum();
    let cases = all.len() as u64 * req.suite.seeds.len() * req.suite.cases as u64;
    crate::outln!(
        "\nshared clean runs {clean_s:.1} s: {ran} of {cases} switched cases run, the others \
         never asked about their switches and ran as their clean run"
    );
    let lowest = all
        .iter()
        .filter(|r| r.exempt.is_none())
        .flat_map(|r| r.per_seed.iter().map(per_mille))
        .min()
        .unwrap_or(0);
    crate::outln!(
        "\nselftest: {} of {} switch x strategy rows deep enough, {} exempt, {} too low \
         (lowest rate of a row not exempt {}.{}%), catch rates {:.1} s, total {:.1} s",
        all.iter().filter(|r| r.deep_enough()).count(),
        all.len(),
        all.iter()
            .filter(|r| !r.deep_enough() && r.exempt.is_some())
            .count(),
        failed.len(),
        lowest / 10,
        lowest % 10,
        rates_s,
        started.elapsed().as_secs_f64()
    );
    for r in &failed {
        crate::outln!(
            "TOO LOW: {} under {} (expected: {})",
            r.info.id,
            r.strategy.name(),
            r.info.expected.join(", ")
        );
    }
    for path in &written {
        crate::outln!("repro: {}", path.display());
    }
    Ok(if failed.is_empty() {
        Exit::Clean
    } else {
        Exit::Violation
    })
}
