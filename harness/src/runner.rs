//! The runner: many cases in parallel on a bounded number of worker threads. Results are
//! handed to the sink in case-id order, so the output is byte-identical for the same seed
//! whatever the job count, and the workers run at most a bounded window ahead of the
//! sink, so memory does not grow with the case count.

use crate::compactor::CompactorSpec;
use crate::engine::{run_case, CaseResult, CaseSpec, Record};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::profile::Profile;
use compactsim_hermes::strategy::Strategy;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{mpsc, Condvar, Mutex};
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

/// Cases a worker may run ahead of the sink, per worker thread; bounds memory.
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

/// Runs the cases `spec_of(case)` for every case id in `cases` on `jobs` threads, each
/// with its spec's compactor, and hands each result and its wall time (as measured around
/// the case) to `sink` in case-id order until it returns false.
///
/// A worker takes the next case id as soon as it is free, so a long case holds up no
/// other worker (the cases a chunk barrier made wait cost a 0.19.0 batch run a sixth of
/// its `--jobs 2` wall time); a worker may run ahead of the sink by at most
/// [`CHUNK_CASES_PER_JOB`] `* jobs` cases, which bounds the results held.
pub fn run_cases_timed(
    cases: std::ops::Range<u32>,
    jobs: usize,
    record: Record,
    spec_of: impl Fn(u32) -> CaseSpec + Sync,
    mut sink: impl FnMut(CaseResult, Duration) -> bool,
) -> Result<(), String> {
    let jobs = jobs.clamp(1, JOBS_MAX);
    let window = CHUNK_CASES_PER_JOB * jobs as u32;
    let line = Pipeline {
        next: AtomicU32::new(cases.start),
        sunk: Mutex::new(cases.start),
        moved: Condvar::new(),
        stop: AtomicBool::new(false),
    };
    let (tx, rx) = mpsc::channel::<(u32, CaseResult, Duration)>();
    std::thread::scope(|scope| {
        for k in 0..jobs {
            let (tx, line, spec_of) = (tx.clone(), &line, &spec_of);
            std::thread::Builder::new()
                .name(format!("case-worker-{k}"))
                .spawn_scoped(scope, move || {
                    // A worker that panics stops the others (the sink would wait for
                    // its case forever); the scope then passes the panic on.
                    let _halt_on_panic = HaltOnPanic(line);
                    while let Some(case) = line.take(cases.end, window) {
                        let started = Instant::now();
                        let r = run_case(&spec_of(case), record);
                        if tx.send((case, r, started.elapsed())).is_err() {
                            return;
                        }
                    }
                })
                .map_err(|e| {
                    line.halt();
                    format!("cannot start {jobs} worker threads: {e}")
                })?;
        }
        drop(tx);
        // Results arrive in completion order; the sink gets them in case order.
        let mut held = BTreeMap::new();
        let mut want = cases.start;
        for (case, r, wall_time) in rx {
            held.insert(case, (r, wall_time));
            while let Some((r, wall_time)) = held.remove(&want) {
                want += 1;
                if !sink(r, wall_time) {
                    line.halt();
                    return Ok(());
                }
                line.sunk_to(want);
            }
        }
        Ok(())
    })
}

/// Stops the pipeline when the worker holding it unwinds.
struct HaltOnPanic<'a>(&'a Pipeline);

impl Drop for HaltOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.halt();
        }
    }
}

/// What the workers of [`run_cases_timed`] share.
struct Pipeline {
    /// The next case id to take.
    next: AtomicU32,
    /// Cases below this id went to the sink.
    sunk: Mutex<u32>,
    moved: Condvar,
    /// The sink asked to stop: no case is taken any more.
    stop: AtomicBool,
}

impl Pipeline {
    /// The next case to run, once it is within `window` of the sink; `None` when every
    /// case below `end` was taken or the sink stopped.
    fn take(&self, end: u32, window: u32) -> Option<u32> {
        if self.stop.load(Ordering::Acquire) {
            return None;
        }
        let case = self.next.fetch_add(1, Ordering::AcqRel);
        if case >= end {
            return None;
        }
        // The case the sink waits for was taken before this one and is not waiting
        // here (it is within the window), so this wait always ends.
        let mut sunk = self.sunk.lock().unwrap_or_else(|e| e.into_inner());
        while case >= sunk.saturating_add(window) && !self.stop.load(Ordering::Acquire) {
            sunk = self.moved.wait(sunk).unwrap_or_else(|e| e.into_inner());
        }
        (!self.stop.load(Ordering::Acquire)).then_some(case)
    }

    fn sunk_to(&self, case: u32) {
        *self.sunk.lock().unwrap_or_else(|e| e.into_inner()) = case;
        self.moved.notify_all();
    }

    fn halt(&self) {
        self.stop.store(true, Ordering::Release);
        let _guard = self.sunk.lock().unwrap_or_else(|e| e.into_inner());
        self.moved.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(cases: u32) -> Suite {
        Suite {
            root_seed: 11,
            case_first: 3,
            cases,
            passes: 4,
            strategy: Strategy::parse("micro").unwrap(),
            bugs: BugSet::none(),
            compactor: Default::default(),
            profile: None,
        }
    }

    fn collect(suite: &Suite, jobs: usize) -> Vec<CaseResult> {
        let mut out = vec![];
        run_suite(suite, jobs, Record::default(), |r| {
            out.push(r);
            true
        })
        .unwrap();
        out
    }

    /// Cases finish in any order on many workers (more workers than cases, too); the
    /// sink gets every one once, in case order, each as one worker computes it.
    #[test]
    fn results_reach_the_sink_in_case_order_whatever_the_job_count() {
        let s = suite(40);
        let one = collect(&s, 1);
        let ids: Vec<u32> = one.iter().map(|r| r.case).collect();
        assert_eq!(ids, (3..43).collect::<Vec<_>>());
        for jobs in [2, 3, 64] {
            assert!(collect(&s, jobs) == one, "--jobs {jobs}");
        }
    }

    /// A sink that says stop gets no further result, and the run ends (no worker is
    /// left waiting for the sink).
    #[test]
    fn a_sink_that_stops_gets_no_more_results_and_the_run_ends() {
        let s = suite(200);
        for jobs in [1, 4] {
            let mut got = vec![];
            run_suite(&s, jobs, Record::default(), |r| {
                got.push(r.case);
                got.len() < 5
            })
            .unwrap();
            assert_eq!(got, [3, 4, 5, 6, 7], "--jobs {jobs}");
        }
    }

    /// A worker takes a case only within the window ahead of the sink, waits while it is
    /// past it, and takes none once the pipeline halts.
    #[test]
    fn a_worker_runs_at_most_the_window_ahead_of_the_sink() {
        let line = Pipeline {
            next: AtomicU32::new(0),
            sunk: Mutex::new(0),
            moved: Condvar::new(),
            stop: AtomicBool::new(false),
        };
        assert_eq!(line.take(10, 2), Some(0));
        assert_eq!(line.take(10, 2), Some(1));
        std::thread::scope(|s| {
            let third = s.spawn(|| line.take(10, 2));
            std::thread::sleep(Duration::from_millis(50));
            assert!(!third.is_finished(), "case 2 was taken with the sink at 0");
            line.sunk_to(1);
            assert_eq!(third.join().unwrap(), Some(2));
            let fourth = s.spawn(|| line.take(10, 2));
            line.halt();
            assert_eq!(fourth.join().unwrap(), None);
        });
        assert_eq!(line.take(10, 2), None);
    }
}
