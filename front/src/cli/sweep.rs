//! `compactsim sweep --seeds A..B`: the suite under many root seeds, one line per seed and
//! a total; the exit code is the worst outcome of any case.

use super::args::CaseParams;
use super::exit::{Exit, Failure};
use compactsim_harness::sweep::{tally_seed, SeedRange, Tally};
use std::time::Instant;

/// A validated `sweep` request; `params.seed` is replaced by every seed of `seeds`.
#[derive(Clone, Debug)]
pub struct SweepRequest {
    pub params: CaseParams,
    pub seeds: SeedRange,
    pub cases: u32,
    pub jobs: usize,
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

/// Runs the sweep; prints the parameters first, a line per seed, the total, the first
/// failure of each failing seed with its repro, and the wall time last.
pub fn sweep(req: &SweepRequest) -> Result<Exit, Failure> {
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
    for seed in req.seeds.iter() {
        let params = CaseParams {
            seed,
            ..req.params.clone()
        };
        let suite = params.suite(0, req.cases);
        let t = tally_seed(req.cases, req.jobs, |case| suite.spec(case), |_| false)
            .map_err(Failure::internal)?;
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
    let wall_s = started.elapsed().as_secs_f64();
    crate::outln!(
        "\nwall {wall_s:.2} s, {} seeds, {} passes, {:.0} passes/s",
        req.seeds.len(),
        total.passes,
        total.passes as f64 / wall_s.max(1e-9)
    );
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
