//! Writing shrunk cases to a run's `failures/` directory, and shrinking the first
//! failures of a run automatically.

use super::args::CaseParams;
use crate::scenario::{self, Expect, Header};
use crate::shrink::{shrink, Budget, Shrunk};
use compactsim_harness::engine::CaseSpec;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Failing cases `compactsim run` shrinks after a run, at most.
pub const AUTO_SHRINK_CASES_MAX: usize = 3;
/// Candidate runs each of them may make: the deterministic bound.
pub const AUTO_SHRINK_ATTEMPTS_MAX: u32 = 500;
/// Directory of a run's shrunk failures, below the run directory.
pub const FAILURES_DIR: &str = "failures";

/// The command that replays the original of `s` (a drawn case), if it had no plan.
fn replay_command(spec: &CaseSpec) -> Option<String> {
    spec.plan.is_none().then(|| {
        CaseParams {
            seed: spec.root_seed,
            passes: spec.passes,
            strategy: spec.strategy,
            bugs: spec.bugs.clone(),
            // The compactor the case ran (an external one's `--compactor external
            // --adapter '…'` included), so the line reruns the same case.
            compactor: spec.compactor.clone(),
            profile: spec.profile,
        }
        .repro(spec.case)
    })
}

/// The scenario file of a shrunk case, named `name`: it expects the same invariant to
/// fail (at any turn of its script; the turn it failed at is in the description).
pub fn render_failure(name: &str, s: &Shrunk) -> String {
    let turn = s
        .result
        .outcome
        .violations()
        .first()
        .map_or(s.result.turns.saturating_sub(1), |v| v.turn);
    let mut comments = vec![format!(
        "Shrunk failure: {} (seed {} case {}). Rerun: compactsim scenario <this file>",
        s.invariant, s.original.root_seed, s.original.case
    )];
    if let Some(cmd) = replay_command(&s.original) {
        if s.chosen {
            let again = cmd.replacen("compactsim replay", "compactsim shrink", 1);
            let witness = s.witness.as_ref().map_or(String::new(), |t| {
                format!(
                    " --witness {}",
                    compactsim_harness::external::argv::quote(t)
                )
            });
            comments.push(format!(
                "Shrunk by: {again} --invariant {}{witness}",
                s.invariant
            ));
        }
        comments.push(format!("Original: {cmd}"));
    }
    comments.push(format!(
        "Shrink: {} -> {}; {} attempts, {} accepted, stopped by {}",
        s.before, s.after, s.attempts, s.accepted, s.stop
    ));
    let bugs = s.spec.bugs.ids();
    let header = Header {
        name: name.to_string(),
        description: Some(format!(
            "{} fails {} at turn {turn}{}",
            s.spec.strategy,
            s.invariant,
            if bugs.is_empty() {
                String::new()
            } else {
                format!(" with {}", bugs.join(", "))
            }
        )),
        comments,
    };
    // No `within_turns`: the failure turn is an observation, not a rule the bug
    // implies; the shrunk case is a script, so its last turn already bounds it.
    let expect = Expect::Violated {
        invariant: s.invariant.clone(),
        within_turns: None,
    };
    scenario::render(&header, &s.spec, &expect)
}

/// Writes `run_dir/failures/<name>.toml` atomically; returns its path.
pub fn write_failure(run_dir: &Path, name: &str, s: &Shrunk) -> Result<PathBuf, String> {
    let path = run_dir.join(FAILURES_DIR).join(format!("{name}.toml"));
    compactsim_reports::atomic_write(&path, render_failure(name, s).as_bytes())
        .map_err(|e| e.to_string())?;
    Ok(path)
}

/// The file name (without `.toml`) of a case `run` shrank: `case-<id>`.
pub fn case_name(case: u32) -> String {
    format!("case-{case}")
}

/// The file name (without `.toml`) of a drawn case `shrink` shrank:
/// `case-<id>.shrunk`, a name no `run` writes or clears.
pub fn shrunk_case_name(case: u32) -> String {
    format!("case-{case}.shrunk")
}

/// Whether `name` is a file `run` writes into `failures/` (`case-<digits>.toml`): the
/// only files of `failures/` a later run clears.
pub fn written_by_run(name: &str) -> bool {
    name.strip_prefix("case-")
        .and_then(|n| n.strip_suffix(".toml"))
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// The `failures/` files `run` writes, for [`super::outdir::clear_stale`].
pub const RUN_FAILURES: super::outdir::OwnFiles<'static> = (FAILURES_DIR, written_by_run);

/// Shrinks the first [`AUTO_SHRINK_CASES_MAX`] of `failing`, each within
/// [`AUTO_SHRINK_ATTEMPTS_MAX`] attempts and, as an outer cap, `time` in all (each gets
/// an equal share of what is left; a shrink the cap ended says so), writes each under `run_dir/failures/`, prints
/// one line per case, and returns the written paths.
pub fn auto(failing: &[CaseSpec], time: Duration, run_dir: &Path) -> Vec<PathBuf> {
    let started = Instant::now();
    let cases = &failing[..failing.len().min(AUTO_SHRINK_CASES_MAX)];
    let mut written = Vec::new();
    for (i, spec) in cases.iter().enumerate() {
        let left = time.saturating_sub(started.elapsed());
        let share = left / (cases.len() - i) as u32;
        let budget = Budget {
            attempts_max: AUTO_SHRINK_ATTEMPTS_MAX,
            time_max: Some(share),
        };
        match shrink(spec, budget, &mut |_| {}) {
            Ok(s) => match write_failure(run_dir, &case_name(spec.case), &s) {
                Ok(path) => {
                    crate::outln!(
                        "shrunk case {}: {} -> {} ({} attempts, stopped by {}): {}",
                        spec.case,
                        s.before,
                        s.after,
                        s.attempts,
                        s.stop,
                        path.display()
                    );
                    written.push(path);
                }
                Err(e) => crate::outln!("shrunk case {}: cannot write: {e}", spec.case),
            },
            Err(e) => crate::outln!("case {} not shrunk: {e}", spec.case),
        }
    }
    written
}
