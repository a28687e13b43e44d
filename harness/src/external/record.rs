//! `--record DIR`: every message between the harness and an adapter, one file per case,
//! as JSON lines `{"dir":"to_adapter","msg":<the wire line>}` /
//! `{"dir":"from_adapter","msg":<the wire line>}` (the wire line byte for byte; a line
//! that is not JSON is kept as a string under `raw`) and `{"dir":"failure",...}` when the
//! adapter failed. A case's file starts with the hello exchange of the child that serves
//! it, so a fresh adapter process fed the file's `to_adapter` lines in order replays the
//! case (adapters/PROTOCOL.md, "Recording").
//!
//! A case is named by the thread-local key [`within_case`] sets while the engine runs
//! it: `seed-<root seed>-case-<case>.jsonl`; a second run of the same case in one
//! command (a shrink attempt, a self-test mutant) gets `.run-<k>` before `.jsonl`.

use std::cell::Cell;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Which case of a command is running: its root seed and case id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CaseKey {
    pub root_seed: u64,
    pub case: u32,
}

impl CaseKey {
    /// The record file name stem: `seed-<root seed>-case-<case>`.
    pub fn stem(&self) -> String {
        format!("seed-{}-case-{}", self.root_seed, self.case)
    }
}

thread_local! {
    static CURRENT: Cell<Option<CaseKey>> = const { Cell::new(None) };
}

/// Runs `f` with `key` as the current case of this thread (compactors built inside
/// record under its name).
pub fn within_case<R>(key: CaseKey, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<CaseKey>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace(Some(key))));
    f()
}

/// The case this thread is running, if the engine named one.
pub fn current_case() -> Option<CaseKey> {
    CURRENT.with(Cell::get)
}

/// The directory of one command's recordings and the names given so far.
#[derive(Debug)]
pub struct Recorder {
    dir: PathBuf,
    runs: Mutex<HashMap<String, u32>>,
}

impl Recorder {
    pub fn new(dir: PathBuf) -> Recorder {
        Recorder {
            dir,
            runs: Mutex::new(HashMap::new()),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A new record file for `key` (`unnamed` when the engine named no case).
    pub fn open(&self, key: Option<CaseKey>) -> Option<Recording> {
        let stem = key.map_or_else(|| "unnamed".to_string(), |k| k.stem());
        let k = {
            let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
            let n = runs.entry(stem.clone()).or_insert(0);
            *n += 1;
            *n
        };
        let name = if k == 1 {
            format!("{stem}.jsonl")
        } else {
            format!("{stem}.run-{k}.jsonl")
        };
        let path = self.dir.join(name);
        match File::create(&path) {
            Ok(f) => Some(Recording {
                out: BufWriter::new(f),
                path,
            }),
            Err(e) => {
                eprintln!("compactsim: cannot record to {}: {e}", path.display());
                None
            }
        }
    }
}

/// One open record file.
pub struct Recording {
    out: BufWriter<File>,
    pub path: PathBuf,
}

/// Direction of a recorded line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    ToAdapter,
    FromAdapter,
}

impl Dir {
    fn name(self) -> &'static str {
        match self {
            Dir::ToAdapter => "to_adapter",
            Dir::FromAdapter => "from_adapter",
        }
    }
}

/// The record line of one wire line: the line itself when it is JSON, else a string.
pub fn record_line(dir: Dir, wire: &str, is_json: bool) -> String {
    if is_json {
        format!("{{\"dir\":\"{}\",\"msg\":{}}}", dir.name(), wire)
    } else {
        let raw = serde_json::to_string(wire).unwrap_or_else(|_| "\"\"".into());
        format!("{{\"dir\":\"{}\",\"raw\":{raw}}}", dir.name())
    }
}

/// The record line of an adapter failure.
pub fn failure_line(kind: &str, request: &str, message: &str) -> String {
    serde_json::json!({"dir": "failure", "kind": kind, "request": request, "message": message})
        .to_string()
}

impl Recording {
    pub fn write(&mut self, line: &str) {
        let _ = self
            .out
            .write_all(line.as_bytes())
            .and_then(|_| self.out.write_all(b"\n"));
    }

    pub fn flush(&mut self) {
        let _ = self.out.flush();
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.flush();
    }
}
