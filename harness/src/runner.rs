//! The runner: many cases in parallel on a bounded thread pool. Cases are processed in
//! chunks and handed to the sink in case-id order, so the output is byte-identical for
//! the same seed whatever the job count, and memory does not grow with the case count.

use crate::compactor::CompactorSpec;
use crate::engine::{run_case, CaseResult, CaseSpec, Record};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::profile::Profile;
use compactsim_hermes::strategy::Strategy;
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// Default root seed: fixed, so a bare `compactsim run` is reproducible; printed first.
pub const SEED_DEFAULT: u64 = 20_260_731;
pub const CASES_DEFAULT: u32 = 480;
pub const PASSES_DEFAULT: u32 = 25;
pub const STRATEGY_DEFAULT: &str = "micro";
/// Upper bounds on what one run may ask for.
pub const CASES_MAX: u32 = 10_000_000;
pub const PASSES_MAX: u32 = 10_000;
/// Worker threads one command may start (`--jobs`).
pub const JOBS_MAX: usize = 256;

/// Cases in flight per worker thread; bounds memory.
pub const CHUNK_CASES_PER_JOB: u32 = 32;

/// A suite of cases: `cases` consecutive case ids from one root seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suite {
    pub root_seed: u64,
    /// First case id (a shard starts later than 0).
    pub case_first: u32,
    pub cases: u32,
    pub passes: u32,
    pub strategy: Strategy,
    pub bugs: BugSet,
    /// The compactor under test every case of the suite runs.
    pub compactor: CompactorSpec,
    /// `--profile`: the real release the model follows (`None`: the default model).
    pub profile: Option<Profile>,
}

impl Suite {
    pub fn spec(&self, case: u32) -> CaseSpec {
        CaseSpec {
            root_seed: self.root_seed,
            case,
            passes: self.passes,
            strategy: self.strategy,
            bugs: self.bugs.clone(),
            plan: None,
            profile: self.profile,
            compactor: self.compactor.clone(),
        }
    }
}

/// Runs every case of `suite` on `jobs` threads and hands each result to `sink` in
/// case-id order. `sink` returns false to stop early (after the current chunk).
pub fn run_suite(
    suite: &Suite,
    jobs: usize,
    record: Record,
    mut sink: impl FnMut(CaseResult) -> bool,
) -> Result<(), String> {
    run_suite_timed(suite, jobs, record, |r, _| sink(r))
}

/// [`run_suite`] with each case's wall time as measured around it (for junit.xml only:
/// no deterministic report may hold it).
pub fn run_suite_timed(
    suite: &Suite,
    jobs: usize,
    record: Record,
    sink: impl FnMut(CaseResult, Duration) -> bool,
) -> Result<(), String> {
    let end = suite.case_first + suite.cases;
    run_cases_timed(
        suite.case_first..end,
        jobs,
        record,
        |case| suite.spec(case),
        sink,
    )
}

/// Runs the cases `spec_of(case)` for every case id in `cases` on `jobs` threads, in
/// chunks, each with its spec's compactor, and hands each result and its wall time (as
/// measured around the case) to `sink` in case-id order until it returns false.
pub fn run_cases_timed(
    cases: std::ops::Range<u32>,
    jobs: usize,
    record: Record,
    spec_of: impl Fn(u32) -> CaseSpec + Sync,
    mut sink: impl FnMut(CaseResult, Duration) -> bool,
) -> Result<(), String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| format!("cannot start {jobs} worker threads: {e}"))?;
    let chunk = CHUNK_CASES_PER_JOB * jobs.max(1) as u32;
    let mut first = cases.start;
    while first < cases.end {
        let last = (first + chunk).min(cases.end);
        let results: Vec<(CaseResult, Duration)> = pool.install(|| {
            (first..last)
                .into_par_iter()
                .map(|case| {
                    let started = Instant::now();
                    let r = run_case(&spec_of(case), record);
                    (r, started.elapsed())
                })
                .collect()
        });
        for (r, wall_time) in results {
            if !sink(r, wall_time) {
                return Ok(());
            }
        }
        first = last;
    }
    Ok(())
}
