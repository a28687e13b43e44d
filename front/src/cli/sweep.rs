//! `compactsim sweep --seeds A..B`: the suite under many root seeds, one line per seed and
//! a total; the exit code is the worst outcome of any case.

use super::args::CaseParams;
use super::exit::{Exit, Failure};
use compactsim_harness::engine::{run_case, Record};
use compactsim_harness::sweep::{par_cases, tally_of, CaseTallied, SeedRange, Tally};
use compactsim_reports::{self as reports, JunitCases};
use std::path::PathBuf;
use std::time::Instant;

/// Default output directory of `compactsim sweep` (junit.xml).
pub const OUT_DEFAULT: &str = "target/compactsim/sweep";
/// Name of the `<testsuite>` of a sweep's junit.xml.
pub const JUNIT_SUITE: &str = "compactsim sweep";

/// A validated `sweep` request; `params.seed` is replaced by every seed of `seeds`.
#[derive(Clone, Debug)]
pub struct SweepRequest {
    pub params: CaseParams,
    pub seeds: SeedRange,
    pub cases: u32,
    pub jobs: usize,
    /// junit.xml goes here: a test case per seed x case, with its wall time.
    pub out: PathBuf,
}

/// The exit a tally deserves: internal failures first, then violations, then liveness.
pub fn exit_of(t: &Tally) -> Exit {
    let mut exit = Exit::Clean;
    if t.liveness > 0 {
        exit = exit.worst(Exit::Liveness);
    }
    if t.violations > 0 {
        exit = exit.worst(Exit::Violation);
    }
    if t.internal > 0 {
        exit = exit.worst(Exit::Internal);
    }
    exit
}

/// One line of the sweep table (a seed, or `total`).
pub fn line(label: &str, t: &Tally) -> String {
    format!(
        "{label:>10} {:>7} {:>9} {:>10} {:>8} {:>8}",
        t.cases, t.passes, t.violations, t.liveness, t.internal
    )
}

/// The table header.
pub fn header() -> String {
    format!(
        "{:>10} {:>7} {:>9} {:>10} {:>8} {:>8}",
        "seed", "cases", "passes", "violations", "liveness", "internal"
    )
}

/// Runs every case of one seed (`params.seed`) on `jobs` threads: its tally, and its
/// JUnit test cases added to `junit` in case order.
fn run_seed(
    params: &CaseParams,
    cases: u32,
    jobs: usize,
    junit: &mut JunitCases,
) -> Result<Tally, Failure> {
    let suite = params.suite(0, cases);
    let ran = par_cases(
        SeedRange::of_count(params.seed, 1),
        cases,
        jobs,
        |_, case| {
            let started = Instant::now();
            let r = run_case(&suite.spec(case), Record::default());
            let junit_case = super::run::junit_case(params, &r, started.elapsed());
            let tallied = CaseTallied {
                passes: r.passes,
                outcome: r.outcome,
                credited: false,
            };
            (tallied, junit_case)
        },
    )
    .map_err(Failure::internal)?;
    let (tallied, junit_cases): (Vec<CaseTallied>, Vec<_>) = ran.into_iter().unzip();
    junit_cases.into_iter().for_each(|c| junit.push(c));
    Ok(tally_of(&tallied))
}

/// Runs the sweep; prints the parameters first, a line per seed, the total, the first
/// failure of each failing seed with its repro, and the wall time last; writes
/// junit.xml.
pub fn sweep(req: &SweepRequest) -> Result<Exit, Failure> {
    super::outdir::prepare(&req.out)?;
    crate::outln!(
        "SEEDS={} cases={} {} jobs={}",
        req.seeds,
        req.cases,
        req.params.flags_but_seed(),
        req.jobs
    );
    crate::outln!("{}", header());
    let started = Instant::now();
    let mut total = Tally::default();
    let mut repros = Vec::new();
    let mut junit = JunitCases::new();
    for seed in req.seeds.iter() {
        let params = CaseParams {
            seed,
            ..req.params.clone()
        };
        let t = run_seed(&params, req.cases, req.jobs, &mut junit)?;
        crate::outln!("{}", line(&seed.to_string(), &t));
        if let Some(f) = &t.first_failure {
            repros.push(format!(
                "seed {seed}: {} failing, first case {} ({} at turn {}): {}",
                t.failing(),
                f.case,
                f.invariants.join(", "),
                f.turn,
                params.repro(f.case)
            ));
        }
        total.absorb(&t);
    }
    crate::outln!("{}", line("total", &total));
    for r in &repros {
        crate::outln!("{r}");
    }
    let junit = reports::write_junit(&req.out, JUNIT_SUITE, &junit.into_cases())
        .map_err(|e| Failure::internal(e.to_string()))?;
    let wall_s = started.elapsed().as_secs_f64();
    crate::outln!(
        "\nwall {wall_s:.2} s, {} seeds, {} passes, {:.0} passes/s",
        req.seeds.len(),
        total.passes,
        total.passes as f64 / wall_s.max(1e-9)
    );
    crate::outln!("junit: {}", junit.display());
    Ok(exit_of(&total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_outcome_decides_the_exit() {
        let mut t = Tally::default();
        assert_eq!(exit_of(&t), Exit::Clean);
        t.liveness = 1;
        assert_eq!(exit_of(&t), Exit::Liveness);
        t.violations = 2;
        assert_eq!(exit_of(&t), Exit::Violation);
        t.internal = 1;
        assert_eq!(exit_of(&t), Exit::Internal);
    }
}
