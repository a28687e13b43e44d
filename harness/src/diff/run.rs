//! Runs the cases of a suite with the differential compactor ([`Tee`]) on a bounded
//! thread pool, in chunks, and hands each case's log to a sink in case-id order, so
//! the result does not depend on the job count.

use super::tee::{CaseLog, Tee};
use crate::compactor::CompactorSpec;
use crate::engine::plan::CasePlan;
use crate::engine::{run_case_with, CaseOutcome, CaseSpec, Record};
use crate::runner::{Suite, CHUNK_CASES_PER_JOB};
use crate::shapes::Family;
use compactsim_fakes::seam::Compactor;
use compactsim_hermes::compactor::reference::Reference;
use rayon::prelude::*;
use std::sync::{Arc, Mutex};

/// One case of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseDiff {
    pub case: u32,
    pub family: Family,
    /// How the world (driven by the reference) ended: clean, or cut short.
    pub outcome: CaseOutcome,
    pub log: CaseLog,
}

/// Runs every case of `suite` on `jobs` threads, the reference against the suite's
/// compactor (`suite.compactor`), and hands each case's diff to `sink` in case-id order.
pub fn diff_suite(suite: &Suite, jobs: usize, sink: impl FnMut(CaseDiff)) -> Result<(), String> {
    let ids: Vec<u32> = (suite.case_first..suite.case_first + suite.cases).collect();
    diff_cases(suite, &ids, jobs, sink)
}

/// Runs the cases `ids` of `suite` (each a case id of the suite's seed) on `jobs`
/// threads and hands each case's diff to `sink` in the order of `ids`, whatever `jobs`.
pub fn diff_cases(
    suite: &Suite,
    ids: &[u32],
    jobs: usize,
    mut sink: impl FnMut(CaseDiff),
) -> Result<(), String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| format!("cannot start {jobs} worker threads: {e}"))?;
    let chunk = CHUNK_CASES_PER_JOB as usize * jobs.max(1);
    for slice in ids.chunks(chunk) {
        let diffs: Vec<CaseDiff> =
            pool.install(|| slice.par_iter().map(|&c| diff_case(suite, c)).collect());
        diffs.into_iter().for_each(&mut sink);
    }
    Ok(())
}

/// `spec` without an oracle when bug switches are on (a profile's release bugs): the
/// oracle would end the world at the first symptom of a bug the release has too, and
/// the diff compares passes, not verdicts. A clean model keeps its oracle, so a case
/// it fails is still reported cut short.
fn verdictless(spec: CaseSpec) -> CaseSpec {
    if spec.bugs.is_empty() {
        return spec;
    }
    spec.with_plan(CasePlan {
        invariants: Some(Vec::new()),
        ..CasePlan::default()
    })
}

/// `spec` as the oracle judges the world of a diff: the reference drives it (the other's
/// transcripts are thrown away), so the reference's declarations judge it — every Hermes
/// policy and the reference's trigger — not what the other's hello declares. (Judged by
/// an adapter that declares no `tool_output_prune`, the reference's pruned tool results
/// read as silent drops and rewritten kept rows: a cut short the reference's own `run`
/// does not show.)
fn judged_as_reference(spec: &CaseSpec) -> CaseSpec {
    CaseSpec {
        compactor: CompactorSpec::Reference,
        ..spec.clone()
    }
}

/// One case: the world runs with a [`Tee`] of the reference and the case's compactor.
pub fn diff_case(suite: &Suite, case: u32) -> CaseDiff {
    let log = Arc::new(Mutex::new(CaseLog::default()));
    let spec = verdictless(suite.spec(case));
    let make = |r: Reference| -> Box<dyn Compactor> {
        let theirs = spec.compactor.make(r.clone());
        Box::new(Tee::new(r, theirs, log.clone()))
    };
    let result = run_case_with(&judged_as_reference(&spec), Record::default(), &make);
    // The adapter's stderr of the case, quoted in the witnesses of its own runs, has no
    // place in a world it did not make: dropped, so the pool keeps no lines per case.
    if let CompactorSpec::External(pool) = &spec.compactor {
        pool.take_case_stderr(crate::external::record::CaseKey {
            root_seed: spec.root_seed,
            case: spec.case,
        });
    }
    let log = std::mem::take(&mut *log.lock().unwrap_or_else(|e| e.into_inner()));
    CaseDiff {
        case,
        family: result.family,
        outcome: result.outcome,
        log,
    }
}
