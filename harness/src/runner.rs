//! The runner: many cases in parallel on a bounded thread pool. Cases are processed in
//! chunks and handed to the sink in case-id order, so the output is byte-identical for
//! the same seed whatever the job count, and memory does not grow with the case count.

use crate::compactor::CompactorSpec;
use crate::engine::{run_case, CaseResult, CaseSpec, Record};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::profile::Profile;
use compactsim_hermes::strategy::Strategy;
use rayon::prelude::*;

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
    sink: impl FnMut(CaseResult) -> bool,
) -> Result<(), String> {
    let end = suite.case_first + suite.cases;
    run_cases(
        suite.case_first..end,
        jobs,
        record,
        |case| suite.spec(case),
        sink,
    )
}

/// Runs the cases `spec_of(case)` for every case id in `cases` on `jobs` threads, in
/// chunks, each with its spec's compactor, and hands each result to `sink` in case-id
/// order until it returns false.
pub fn run_cases(
    cases: std::ops::Range<u32>,
    jobs: usize,
    record: Record,
    spec_of: impl Fn(u32) -> CaseSpec + Sync,
    mut sink: impl FnMut(CaseResult) -> bool,
) -> Result<(), String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| format!("cannot start {jobs} worker threads: {e}"))?;
    let chunk = CHUNK_CASES_PER_JOB * jobs.max(1) as u32;
    let mut first = cases.start;
    while first < cases.end {
        let last = (first + chunk).min(cases.end);
        let results: Vec<CaseResult> = pool.install(|| {
            (first..last)
                .into_par_iter()
                .map(|case| run_case(&spec_of(case), record))
                .collect()
        });
        for r in results {
            if !sink(r) {
                return Ok(());
            }
        }
        first = last;
    }
    Ok(())
}
