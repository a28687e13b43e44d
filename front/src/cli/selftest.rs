//! `compactsim selftest`: every bug switch of the catalogue under several root seeds,
//! under its own strategy and under `both`: catch rates per seed, their minimum, and one
//! shrunk repro per switch.

use super::exit::{Exit, Failure};
use crate::selftest::{self, per_mille, CatchRates, SelftestSuite, CATCH_RATE_MIN_PER_MILLE};
use crate::shrink::{Budget, Shrunk, Stop, SHRUNK_TURNS_MAX};
use compactsim_hermes::bugs::{BugInfo, CATALOGUE};
use compactsim_hermes::strategy::Strategy;
use compactsim_reports::{self as reports, JunitCases};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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

/// The shrink line of switch `info` under `strategy`, shrunk from case `case` of seed
/// `seed`; it ends in `TOO LONG` past [`SHRUNK_TURNS_MAX`] turns and in `WRONG
/// INVARIANT` when the kept invariant is not one the switch is expected to break.
fn shrink_line(
    info: &BugInfo,
    strategy: Strategy,
    (seed, case): (u64, u32),
    shrunk: &Result<Shrunk, String>,
) -> String {
    let what = match shrunk {
        Ok(s) => format!(
            "{:<24} {:>4} -> {:>2} turns, {:>3} -> {:>3} rows, {} faults ({} attempts, {}){}",
            s.invariant,
            s.before.turns,
            s.after.turns,
            s.before.rows,
            s.after.rows,
            s.after.faults,
            s.attempts,
            match s.stop {
                Stop::Fixpoint => "fixpoint",
                Stop::Attempts(_) => "attempt bound",
                Stop::Time(_) => "TIME BOUND",
            },
            shrunk_problem(info, s).map_or(String::new(), |p| format!("  {p}"))
        ),
        Err(e) => format!("not shrunk: {e}"),
    };
    format!(
        "{:<12} {:<6} seed {seed:<3} case {case:<4} {what}",
        info.id,
        strategy.name()
    )
}

/// What is wrong with the shrunk repro `s` of switch `info`, if anything: more than
/// [`SHRUNK_TURNS_MAX`] turns, or an invariant the switch is not expected to break.
pub fn shrunk_problem(info: &BugInfo, s: &Shrunk) -> Option<&'static str> {
    if !info.expected.contains(&s.invariant.as_str()) {
        Some("WRONG INVARIANT")
    } else if s.after.turns > SHRUNK_TURNS_MAX {
        Some("TOO LONG")
    } else {
        None
    }
}

/// Whether `name` is a repro [`write_repro`] writes: `<id>-seed-<n>-case-<n>.toml`.
fn written_by_selftest(name: &str) -> bool {
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    name.strip_suffix(".toml")
        .and_then(|n| n.rsplit_once("-case-"))
        .and_then(|(head, case)| digits(case).then_some(head))
        .and_then(|head| head.rsplit_once("-seed-"))
        .is_some_and(|(id, seed)| !id.is_empty() && digits(seed))
}

/// The `failures/` files a selftest writes, for [`super::outdir::clear_stale`].
const SELFTEST_FAILURES: super::outdir::OwnFiles<'static> =
    (super::failures::FAILURES_DIR, written_by_selftest);

/// Writes the shrunk repro of `info` to `<out>/failures/`, named after the switch and
/// the case it was shrunk from.
fn write_repro(out: &Path, info: &BugInfo, s: &Shrunk) -> Result<PathBuf, Failure> {
    let name = format!(
        "{}-seed-{}-case-{}",
        info.id.to_lowercase(),
        s.original.root_seed,
        s.original.case
    );
    super::failures::write_failure(out, &name, s).map_err(Failure::internal)
}

/// `selftest --shrink-only`: every switch's shrunk repro without the catch rates. The
/// first credited case of each switch under its own strategy is found by running the
/// suite's cases in order (the case the full selftest shrinks: its tallies are those of
/// running every case); exit 0 only if every repro is at most [`SHRUNK_TURNS_MAX`]
/// turns and fails an expected invariant of its switch.
pub fn shrink_only(req: &SelftestRequest) -> Result<Exit, Failure> {
    super::outdir::prepare(&req.out)?;
    super::outdir::clear_stale(&req.out, &[], &[SELFTEST_FAILURES])?;
    crate::outln!(
        "SEEDS={} cases={} passes={} shrink: {} attempts",
        req.suite.seeds,
        req.suite.cases,
        req.suite.passes,
        req.shrink.attempts_max
    );
    crate::outln!("shrunk repro of each switch (its own strategy, first credited case)");
    let started = Instant::now();
    let mut bad = 0usize;
    for info in CATALOGUE {
        let strategy = Strategy::of_kind(info.strategy);
        let Some(at) = selftest::first_credited_case(info, strategy, req.suite) else {
            crate::outln!("{:<12} {:<6} no credited case", info.id, strategy.name());
            bad += 1;
            continue;
        };
        let shrunk = selftest::shrink_case(info, strategy, req.suite, at, req.shrink);
        crate::outln!("{}", shrink_line(info, strategy, at, &shrunk));
        match &shrunk {
            Ok(s) => {
                bad += usize::from(shrunk_problem(info, s).is_some());
                write_repro(&req.out, info, s)?;
            }
            Err(_) => bad += 1,
        }
    }
    crate::outln!(
        "\nshrink-only: {} of {} switches shrink to at most {SHRUNK_TURNS_MAX} turns with an \
         expected invariant, {:.1} s",
        CATALOGUE.len() - bad,
        CATALOGUE.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(if bad == 0 {
        Exit::Clean
    } else {
        Exit::Violation
    })
}

/// Runs the self-test; exit 0 only if every switch is deep enough under every strategy
/// (or a known blind spot).
pub fn selftest(req: &SelftestRequest) -> Result<Exit, Failure> {
    super::outdir::prepare(&req.out)?;
    super::outdir::clear_stale(&req.out, &[reports::JUNIT_XML], &[SELFTEST_FAILURES])?;
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
    let mut junit = JunitCases::new();
    let all = selftest::selftest(req.suite, req.jobs, &clean, |r| {
        // Time of the row (the table's only number that is not deterministic: wall
        // time, or for the rows of an agent-loop strategy measured in one pass the
        // workers' seconds on the row's own forks and runs) and the cases it ran (the
        // others were their shared clean runs).
        let (row_s, clock) = match r.cpu_s {
            Some(cpu_s) => (cpu_s, " cpu"),
            None => (row_started.elapsed().as_secs_f64(), ""),
        };
        crate::outln!("{}  {:.1} s{clock}, {} run", line(r), row_s, r.ran);
        junit.push(super::selftest_junit::switch_row(
            r,
            req.suite,
            &line(r),
            Duration::from_secs_f64(row_s),
        ));
        row_started = Instant::now();
    })
    .map_err(Failure::internal)?;
    let rates_s = started.elapsed().as_secs_f64();
    crate::outln!("\nshrunk repro of each switch (its own strategy, first credited case)");
    let mut written = Vec::new();
    let mut bad_shrinks = Vec::new();
    let targets: Vec<selftest::ShrinkTarget> = all
        .iter()
        .filter(|r| r.strategy.kind() == r.info.strategy)
        .filter_map(|r| Some((r.info, r.strategy, r.first_credited(req.suite.seeds)?)))
        .collect();
    let shrunk_all = selftest::shrink_cases(&targets, req.suite, req.shrink, req.jobs)
        .map_err(Failure::internal)?;
    for (&(info, strategy, at), shrunk) in targets.iter().zip(&shrunk_all) {
        crate::outln!("{}", shrink_line(info, strategy, at, shrunk));
        match shrunk {
            Ok(s) => {
                if let Some(problem) = shrunk_problem(info, s) {
                    bad_shrinks.push(format!("{problem}: the repro of {}", info.id));
                }
                written.push(write_repro(&req.out, info, s)?);
            }
            Err(e) => bad_shrinks.push(format!("NOT SHRUNK: {}: {e}", info.id)),
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
    for problem in &bad_shrinks {
        crate::outln!("{problem}");
    }
    for path in &written {
        crate::outln!("repro: {}", path.display());
    }
    let junit = reports::write_junit(
        &req.out,
        super::selftest_junit::JUNIT_SUITE,
        &junit.into_cases(),
    )
    .map_err(|e| Failure::internal(e.to_string()))?;
    crate::outln!("junit: {}", junit.display());
    Ok(if failed.is_empty() && bad_shrinks.is_empty() {
        Exit::Clean
    } else {
        Exit::Violation
    })
}
