//! `compactsim shrink`: reduce one failing case (drawn, or a scenario file) to a small
//! scenario file under the run directory's `failures/`.

use super::args::CaseParams;
use super::exit::{Exit, Failure};
use super::failures::shrunk_case_name;
use crate::scenario;
use crate::shrink::{self, Budget, ShrinkError, SHRINK_ATTEMPTS_MAX};
use compactsim_harness::compactor::{CompactorSpec, Pools};
use compactsim_harness::engine::CaseSpec;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Default wall-time cap of `compactsim shrink`.
pub const SHRINK_TIME_DEFAULT_S: f64 = 60.0;

/// What to shrink.
#[derive(Clone, Debug)]
pub enum Target {
    /// Case `case` of the suite these parameters describe.
    Drawn { params: CaseParams, case: u32 },
    /// The case a scenario file describes, under the compactor `chosen` (see
    /// [`scenario::Scenario::under`]).
    File {
        path: PathBuf,
        chosen: CompactorSpec,
    },
}

/// A validated `shrink` request.
#[derive(Clone, Debug)]
pub struct ShrinkRequest {
    pub target: Target,
    pub time: Duration,
    /// The invariant to shrink for (`--invariant`); `None`: the case's first.
    pub invariant: Option<String>,
    /// Text the kept violation must say (`--witness`; clap lets it through only with
    /// `invariant`, and a shrink without an invariant ignores it).
    pub witness: Option<String>,
    /// Run directory; the result goes to its `failures/`.
    pub out: PathBuf,
}

/// Largest `--shrink-time`, seconds (one day).
pub const SHRINK_TIME_MAX_S: f64 = 86_400.0;

/// Parses `--shrink-time` seconds (0 allowed: no shrinking).
pub fn shrink_time(seconds: f64) -> Result<Duration, Failure> {
    if !(0.0..=SHRINK_TIME_MAX_S).contains(&seconds) {
        return Err(Failure::bad_input(format!(
            "--shrink-time must be between 0 and {SHRINK_TIME_MAX_S} seconds, got {seconds}"
        )));
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| {
        Failure::bad_input(format!(
            "--shrink-time must be a number of seconds >= 0, got {seconds}"
        ))
    })
}

/// Runs the request: prints the bounds, progress after every accepted reduction, the
/// result and the written path. Exit 0 when a file was written.
pub fn shrink(req: &ShrinkRequest) -> Result<Exit, Failure> {
    super::outdir::prepare(&req.out)?;
    let (spec, name): (CaseSpec, String) = match &req.target {
        Target::Drawn { params, case } => {
            (params.suite(*case, 1).spec(*case), shrunk_case_name(*case))
        }
        Target::File { path, chosen } => {
            let s = scenario::load(path)
                .map_err(|e| Failure::bad_input(e.to_string()))?
                .under(chosen, &Pools::default());
            let stem = path
                .file_stem()
                .map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
            (s.spec, format!("{stem}.shrunk"))
        }
    };
    crate::outln!(
        "shrinking seed {} case {} (bounds: {SHRINK_ATTEMPTS_MAX} attempts, {:.1} s)",
        spec.root_seed,
        spec.case,
        req.time.as_secs_f64()
    );
    let started = Instant::now();
    let mut progress = |p: &shrink::Progress| {
        crate::outln!(
            "  attempt {:>4}  {:<7} {:<44} -> {}",
            p.attempts,
            p.phase.name(),
            p.change,
            p.size
        );
    };
    let budget = Budget::timed(req.time);
    let result = match &req.invariant {
        None => shrink::shrink(&spec, budget, &mut progress),
        Some(id) => {
            shrink::shrink_invariant(&spec, id, req.witness.as_deref(), budget, &mut progress)
        }
    };
    let s = match result {
        Ok(s) => s,
        Err(
            e @ (ShrinkError::Clean | ShrinkError::NotFired(_) | ShrinkError::WitnessAbsent { .. }),
        ) => return Err(Failure::bad_input(e.to_string())),
        Err(e) => return Err(Failure::internal(e.to_string())),
    };
    crate::outln!(
        "shrunk {}: {} -> {}; {} attempts, {} accepted, {:.2} s, stopped by {}",
        s.invariant,
        s.before,
        s.after,
        s.attempts,
        s.accepted,
        started.elapsed().as_secs_f64(),
        s.stop
    );
    let path = super::failures::write_failure(&req.out, &name, &s).map_err(Failure::internal)?;
    crate::outln!("wrote {}", path.display());
    crate::outln!("rerun: compactsim scenario {}", path.display());
    Ok(Exit::Clean)
}
