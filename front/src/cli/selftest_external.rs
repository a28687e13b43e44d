//! `compactsim selftest --compactor external --adapter CMD`: the adapter's clean runs
//! over the self-test's seeds (per strategy its `hello` allows) and, per mutant that
//! rewrites a pass it implements, the share of cases the oracle catches around it (see
//! `selftest::external`). Exit 0 only when every clean row is clean and every mutant row
//! is deep enough; an adapter failure is exit 4, naming the adapter.

use super::exit::{Exit, Failure};
use crate::selftest::external::{
    clean_row, mutant_row, mutants_for, CleanRow, ExternalSuite, MutantRow, Passes,
    EXTERNAL_CASES_DEFAULT, EXTERNAL_SEEDS_DEFAULT,
};
use crate::selftest::CATCH_RATE_MIN_PER_MILLE;
use compactsim_harness::compactor::CompactorSpec;
use compactsim_harness::sweep::Tally;
use compactsim_reports::{self as reports, JunitCases};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A validated external `selftest` request.
#[derive(Clone, Debug)]
pub struct ExternalRequest {
    pub suite: ExternalSuite,
    pub jobs: usize,
    /// junit.xml goes here (a test case per row).
    pub out: PathBuf,
}

/// Width of a per-seed cell.
const SEED_CELL_WIDTH: usize = 5;

fn seed_cells(per_seed: &[Tally], value: impl Fn(&Tally) -> u32) -> String {
    per_seed
        .iter()
        .map(|t| format!("{:>w$}", value(t), w = SEED_CELL_WIDTH))
        .collect()
}

fn header(suite: &ExternalSuite, first: &str) -> String {
    let seeds: String = suite
        .seeds
        .iter()
        .map(|s| format!("{:>w$}", s, w = SEED_CELL_WIDTH))
        .collect();
    format!("{first:<16} {:<6}{seeds}  verdict", "strat")
}

/// One clean row: failing cases per seed, and what failed first.
pub fn clean_line(r: &CleanRow) -> String {
    let total = r.per_seed.iter().fold(Tally::default(), |mut a, t| {
        a.absorb(t);
        a
    });
    let verdict = match &total.first_failure {
        None => format!("clean ({} passes)", total.passes),
        Some(f) => format!(
            "FAILING: {} violations, {} liveness, {} internal; first: case {} ({})",
            total.violations,
            total.liveness,
            total.internal,
            f.case,
            f.invariants.join(", ")
        ),
    };
    format!(
        "{:<16} {:<6}{}  {verdict}",
        "clean",
        r.strategy.name(),
        seed_cells(&r.per_seed, Tally::failing)
    )
}

/// One mutant row: cases caught per seed, the minimum rate, the verdict, the expected
/// invariants.
pub fn mutant_line(r: &MutantRow) -> String {
    let min = r.min_per_mille();
    let verdict = if r.deep_enough() { "ok" } else { "TOO LOW" };
    let internal: u32 = r.per_seed.iter().map(|t| t.internal).sum();
    let mut line = format!(
        "{:<16} {:<6}{}  {:>3}.{}%  {verdict} [{}]",
        r.info.id,
        r.strategy.name(),
        seed_cells(&r.per_seed, |t| t.credited),
        min / 10,
        min % 10,
        r.info.expected.join(", ")
    );
    if internal > 0 {
        line.push_str(&format!(" ({internal} adapter failures)"));
    }
    line
}

/// The capabilities of the chosen adapter, after its `hello`.
fn passes_of_adapter(compactor: &CompactorSpec) -> Result<(String, Passes), Failure> {
    let CompactorSpec::External(pool) = compactor else {
        return Err(Failure::internal(
            "selftest: no external compactor was chosen",
        ));
    };
    let info = pool.hello().map_err(|e| Failure::internal(e.to_string()))?;
    let passes = Passes {
        micro: info.capabilities.micro_pass,
        batch: info.capabilities.batch_pass,
    };
    Ok((format!("{} {}", info.name, info.version), passes))
}

/// Runs the external self-test.
pub fn selftest_external(req: &ExternalRequest) -> Result<Exit, Failure> {
    let (adapter, passes) = passes_of_adapter(&req.suite.compactor)?;
    let strategies = passes.strategies();
    crate::outln!(
        "SEEDS={} cases={} passes={} jobs={}{}",
        req.suite.seeds,
        req.suite.cases,
        req.suite.passes,
        req.jobs,
        req.suite.compactor.repro_flags()
    );
    crate::outln!(
        "adapter {adapter}: strategies {}; bug switches do not apply, the rows are its clean \
         runs and the mutants around it (defaults for an external compactor: {} seeds, {} \
         cases per seed; --seeds and --cases change them)",
        strategies
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", "),
        EXTERNAL_SEEDS_DEFAULT,
        EXTERNAL_CASES_DEFAULT
    );
    if strategies.is_empty() {
        return Err(Failure::bad_input(
            "the adapter's hello declares neither micro_pass nor batch_pass",
        ));
    }
    super::outdir::prepare(&req.out)?;
    super::outdir::clear_stale(&req.out, &[reports::JUNIT_XML], &[])?;
    let mut junit = JunitCases::new();
    let started = Instant::now();
    crate::outln!(
        "\nfailing cases of the unmutated adapter, of {} per seed",
        req.suite.cases
    );
    crate::outln!("{}", header(&req.suite, "row"));
    let mut clean = Vec::new();
    for strategy in strategies {
        let row_started = Instant::now();
        let row = clean_row(&req.suite, strategy, req.jobs).map_err(Failure::internal)?;
        let time = row_started.elapsed();
        crate::outln!("{}  {:.1} s", clean_line(&row), time.as_secs_f64());
        junit.push(super::selftest_junit::clean_row(
            &row,
            &req.suite,
            &clean_line(&row),
            time,
        ));
        clean.push(row);
    }
    if clean.iter().any(|r| r.internal() > 0) {
        crate::outln!("\nselftest: the adapter failed (exit 4); the mutant rows were not run");
        write_junit(&req.out, junit)?;
        return Ok(Exit::Internal);
    }
    crate::outln!(
        "\nmutants around the adapter: cases caught by an expected invariant the unmutated run \
         did not break, of {} per seed (minimum: {}.{}%)",
        req.suite.cases,
        CATCH_RATE_MIN_PER_MILLE / 10,
        CATCH_RATE_MIN_PER_MILLE % 10
    );
    crate::outln!("{}", header(&req.suite, "mutant"));
    let mut rows = Vec::new();
    for info in mutants_for(passes) {
        let Some(unmutated) = clean.iter().find(|r| r.strategy.kind() == info.strategy) else {
            continue;
        };
        let row_started = Instant::now();
        let row = mutant_row(&req.suite, info, unmutated, req.jobs).map_err(Failure::internal)?;
        let time = row_started.elapsed();
        crate::outln!("{}  {:.1} s", mutant_line(&row), time.as_secs_f64());
        junit.push(super::selftest_junit::mutant_row(
            &row,
            &req.suite,
            &mutant_line(&row),
            time,
        ));
        rows.push(row);
    }
    let exit = verdict(&clean, &rows, started.elapsed().as_secs_f64());
    write_junit(&req.out, junit)?;
    Ok(exit)
}

fn write_junit(out: &Path, junit: JunitCases) -> Result<(), Failure> {
    let path = reports::write_junit(out, super::selftest_junit::JUNIT_SUITE, &junit.into_cases())
        .map_err(|e| Failure::internal(e.to_string()))?;
    crate::outln!("junit: {}", path.display());
    Ok(())
}

/// Prints the summary line; the exit: adapter failures first, then failing rows.
fn verdict(clean: &[CleanRow], rows: &[MutantRow], total_s: f64) -> Exit {
    let failing_clean = clean.iter().filter(|r| r.failing() > 0).count();
    let too_low: Vec<&MutantRow> = rows.iter().filter(|r| !r.deep_enough()).collect();
    let lowest = rows.iter().map(MutantRow::min_per_mille).min().unwrap_or(0);
    let internal: u32 = rows
        .iter()
        .flat_map(|r| r.per_seed.iter().map(|t| t.internal))
        .sum();
    crate::outln!(
        "\nselftest: {} of {} clean rows clean, {} of {} mutant rows deep enough (lowest \
         {}.{}%), total {total_s:.1} s",
        clean.len() - failing_clean,
        clean.len(),
        rows.len() - too_low.len(),
        rows.len(),
        lowest / 10,
        lowest % 10
    );
    for r in &too_low {
        crate::outln!(
            "TOO LOW: {} under {} (expected: {})",
            r.info.id,
            r.strategy.name(),
            r.info.expected.join(", ")
        );
    }
    if internal > 0 {
        Exit::Internal
    } else if failing_clean > 0 || !too_low.is_empty() {
        Exit::Violation
    } else {
        Exit::Clean
    }
}
