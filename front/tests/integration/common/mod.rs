//! Helpers for the CLI integration tests: run the built binary, fresh scratch dirs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (the workspace), where `scenarios/` lives.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Scenarios that run an external adapter: over real packages (`scenarios/hermes/`,
/// `scenarios/langchain/`, `scenarios/adk/`, whose venvs `.ci/run` creates first) and over
/// the planted-fault fixture adapters
/// (`scenarios/fixtures/`, whose command lines are relative to the repository root).
/// `cargo test` leaves them to the scenario gate.
pub const EXTERNAL_SCENARIOS_DIRS: [&str; 4] = [
    "scenarios/hermes",
    "scenarios/langchain",
    "scenarios/adk",
    "scenarios/fixtures",
];

/// The committed scenario files that run the reference compactor (every file below
/// `scenarios/` but [`EXTERNAL_SCENARIOS_DIRS`]).
pub fn reference_scenarios() -> Vec<PathBuf> {
    let external = EXTERNAL_SCENARIOS_DIRS.map(|d| repo().join(d));
    compactsim::scenario::discover(&[repo().join("scenarios")])
        .unwrap()
        .into_iter()
        .filter(|f| !external.iter().any(|d| f.starts_with(d)))
        .collect()
}

/// An empty scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Output of `compactsim args...` run in the repository root.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn compactsim(args: &[&str]) -> Run {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_compactsim"))
        .args(args)
        .current_dir(repo())
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("compactsim runs");
    Run {
        code: out.status.code().expect("exit code"),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

impl Run {
    /// Panics with the whole output unless the exit code is `code`.
    pub fn expect_code(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "exit {} (wanted {code})\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }
}

/// `p` as a command-line argument.
pub fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// How a process started by a test ended: its exit code (None: killed by a signal).
pub struct Ended {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Waits for `child`, killing it and failing the test as a hang after `guard` (a guard
/// against hangs, not a speed test).
pub fn wait_guarded(mut child: std::process::Child, guard: std::time::Duration) -> Ended {
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > guard {
            let _ = child.kill();
            panic!("compactsim hung (killed after {guard:?})");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    Ended {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
