//! The compactor under test of this process: `--compactor reference` (the default) or
//! `--compactor external --adapter 'CMD ARGS'`. The CLI chooses once, before any case
//! runs; `engine::run_case` builds every case's compactor from that choice, so every
//! command (run, replay, shrink, scenario) runs the same compactor without a second
//! copy of its driver. A choice is configuration, not state: it never changes while
//! cases run, so results stay deterministic.

use super::compactor::Pool;
use super::error::AdapterFailure;
use super::session::AdapterSpec;
use std::sync::{Arc, Mutex, OnceLock};

static EXTERNAL: OnceLock<Arc<Pool>> = OnceLock::new();

/// Chooses the external compactor for the rest of the process. Choosing twice keeps
/// the first choice and says so.
pub fn select_external(spec: AdapterSpec) -> Result<(), String> {
    let pool = Pool::new(spec.clone()).map_err(|e: AdapterFailure| e.to_string())?;
    if EXTERNAL.set(pool).is_err() && selected().map(|p| p.spec()) != Some(&spec) {
        return Err("the external compactor was already chosen".into());
    }
    Ok(())
}

/// The external compactor's pool, if one was chosen.
pub fn selected() -> Option<&'static Arc<Pool>> {
    EXTERNAL.get()
}

/// The flags that choose the compactor, for repro lines (empty for the reference).
pub fn repro_flags() -> String {
    match selected() {
        None => String::new(),
        Some(pool) => {
            let spec = pool.spec();
            let mut s = format!(" --compactor external --adapter {}", quote(&spec.command));
            if spec.timeout_ms != super::DEFAULT_TIMEOUT_MS {
                s.push_str(&format!(" --adapter-timeout-ms {}", spec.timeout_ms));
            }
            s
        }
    }
}

/// Single-quotes a word for a POSIX shell (and for the adapter command splitter).
pub fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Adapters named by scenario files (`[compactor]`), one pool per command line, for the
/// rest of the process. A scenario's choice is part of its case, so it never changes
/// while the case runs.
static DECLARED: Mutex<Vec<Arc<Pool>>> = Mutex::new(Vec::new());

/// The pool of the adapter `spec` a scenario file declares (created on first use). A
/// command line that cannot be split (parsing refuses it first) gives a pool whose
/// cases end in an adapter failure naming it.
pub fn declared(spec: &AdapterSpec) -> Arc<Pool> {
    let mut pools = DECLARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(pool) = pools.iter().find(|p| p.spec() == spec) {
        return pool.clone();
    }
    let pool = Pool::unchecked(spec.clone());
    pools.push(pool.clone());
    pool
}

/// Ends the idle children of every pool of the process (the chosen one and the
/// scenarios' ones): the pools live in statics, which are never dropped, so the process
/// calls this before it exits to leave no child and no scratch directory behind.
pub fn close_adapters() {
    if let Some(pool) = selected() {
        pool.close_idle();
    }
    let pools = DECLARED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for pool in pools {
        pool.close_idle();
    }
}
