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

/// How long a reproducer may take before it counts as a hang (a guard, not a speed test).
pub const HANG_GUARD: std::time::Duration = std::time::Duration::from_secs(300);

/// The compactsim binary, without backtraces.
pub fn bin() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_compactsim"));
    c.env("RUST_BACKTRACE", "0");
    c
}

/// Runs `compactsim args` in `dir` with no stdin and waits (guarded by [`HANG_GUARD`]).
pub fn run_in(dir: &Path, args: &[&str]) -> Ended {
    use std::process::Stdio;
    let child = bin()
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_guarded(child, HANG_GUARD)
}

impl Ended {
    /// Asserts the exit code, a piece of stderr and no panic.
    pub fn check(&self, code: i32, stderr_has: &str) {
        assert_eq!(
            self.code,
            Some(code),
            "wanted exit {code}\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        assert!(
            self.stderr.contains(stderr_has),
            "stderr lacks `{stderr_has}`:\n{}",
            self.stderr
        );
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
    }

    /// [`Self::check`], then the same value back.
    pub fn expect(self, code: i32, stderr_has: &str) -> Ended {
        self.check(code, stderr_has);
        self
    }
}

/// Starts `compactsim args` in `dir` with stdout and stderr piped, reads its first line of
/// stdout and drops the reader (the next write goes to a closed pipe): the child and the
/// line.
pub fn spawn_first_line(dir: &Path, args: &[&str]) -> (std::process::Child, String) {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = bin()
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    (child, first)
}
