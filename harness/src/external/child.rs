//! One adapter child process: started without a shell, fed by a writer thread, read by
//! a stdout thread (JSON lines, bounded length); its stderr goes straight to a file of
//! its own ([`StderrLog`]: kept in the output directory, or a temporary file removed
//! with the child), whose last lines are read back, bounded, for messages. Every read has a deadline: the caller waits on a channel with
//! `recv_timeout`, never on the pipe. Dropping the child kills and reaps it; the reader
//! threads end when the pipes close and are never joined (a grandchild could keep a
//! pipe open). Each child gets a scratch directory of its own ([`SCRATCH_DIR_ENV`]),
//! which the harness removes once the child is reaped, however it ended: an adapter
//! killed before its own cleanup runs leaves nothing behind.

use super::error::{FailureKind, Limit};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

/// The `PYTHONHASHSEED` every adapter child gets (its environment may override it).
pub const PYTHONHASHSEED: &str = "0";

/// The environment variable naming the child's scratch directory (adapters/PROTOCOL.md).
pub const SCRATCH_DIR_ENV: &str = "COMPACTSIM_SCRATCH_DIR";

/// Children started by this process so far: makes each scratch directory's and stderr
/// file's name unique.
static CHILDREN_STARTED: AtomicU64 = AtomicU64::new(0);

/// A new empty scratch directory for child `n`, under the system's temporary directory.
fn new_scratch_dir(n: u64) -> Result<PathBuf, FailureKind> {
    let dir = std::env::temp_dir().join(format!("compactsim-adapter-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| FailureKind::Spawn(format!("scratch directory {}: {e}", dir.display())))?;
    Ok(dir)
}

/// Why `program` did not start, with the hint a missing relative path needs.
fn spawn_error(program: &str, e: &std::io::Error) -> String {
    let relative = program.contains('/') && !program.starts_with('/');
    if e.kind() == std::io::ErrorKind::NotFound && relative {
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_else(|_| "?".into());
        let hint = if program.contains("hermes-venvs") {
            "; the Hermes venvs come from `bash adapters/hermes/setup-venv.sh`"
        } else {
            ""
        };
        return format!("{program}: not found (relative to the current directory {cwd}{hint})");
    }
    format!("{program}: {e}")
}

/// Longest stdout line accepted from an adapter (a transcript of a huge case fits).
pub const LINE_LIMIT_BYTES: usize = 64 * 1024 * 1024;
/// Stderr lines quoted in a message (the last ones).
pub const STDERR_KEPT_LINES: usize = 20;
/// Longest stderr line quoted (longer lines are cut).
pub const STDERR_LINE_LIMIT_CHARS: usize = 400;
/// Most bytes of a stderr file read back for a quote (its end): the memory a quote
/// takes is bounded whatever the adapter writes.
pub const STDERR_TAIL_BYTES_MAX: u64 = 64 * 1024;
/// After the stdout pipe closes, how long to wait for the exit status.
const EXIT_STATUS_WAIT_MS: u64 = 200;

/// What the stdout thread saw.
enum Line {
    Text(String),
    TooLong,
    NotUtf8,
    Eof,
}

/// Where a child's stderr goes: a file the child writes itself (so every line it wrote
/// before replying is there when the reply is read), kept when it is in an output
/// directory, else removed with the child.
#[derive(Clone, Debug)]
pub struct StderrLog {
    pub path: PathBuf,
    keep: bool,
}

impl StderrLog {
    /// Child `n`'s stderr file: `DIR/child-<n>.log`, or a temporary file without `dir`.
    fn new(dir: Option<&std::path::Path>, n: u64) -> StderrLog {
        match dir {
            Some(d) => StderrLog {
                path: d.join(format!("child-{n}.log")),
                keep: true,
            },
            None => StderrLog {
                path: std::env::temp_dir().join(format!(
                    "compactsim-adapter-{}-{n}.stderr",
                    std::process::id()
                )),
                keep: false,
            },
        }
    }

    /// Bytes written so far (0 when the file is gone).
    pub fn len(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The last lines written at or after byte `from`, oldest first: at most
    /// [`STDERR_KEPT_LINES`], each cut at [`STDERR_LINE_LIMIT_CHARS`], read from at most
    /// the last [`STDERR_TAIL_BYTES_MAX`] bytes.
    pub fn tail_since(&self, from: u64) -> Vec<String> {
        use std::io::{Seek, SeekFrom};
        let Ok(mut f) = std::fs::File::open(&self.path) else {
            return Vec::new();
        };
        let len = f.metadata().map_or(0, |m| m.len());
        let start = from.max(len.saturating_sub(STDERR_TAIL_BYTES_MAX));
        if start >= len || f.seek(SeekFrom::Start(start)).is_err() {
            return Vec::new();
        }
        let mut buf = Vec::new();
        if f.take(len - start).read_to_end(&mut buf).is_err() {
            return Vec::new();
        }
        let text = String::from_utf8_lossy(&buf);
        let mut lines: Vec<&str> = text.lines().collect();
        if start > from && !lines.is_empty() {
            // The first line was cut by the byte limit.
            lines.remove(0);
        }
        let skip = lines.len().saturating_sub(STDERR_KEPT_LINES);
        lines[skip..]
            .iter()
            .map(|l| {
                let l = l.trim_end_matches('\r');
                let mut kept: String = l.chars().take(STDERR_LINE_LIMIT_CHARS).collect();
                if kept.len() < l.len() {
                    kept.push('…');
                }
                kept
            })
            .collect()
    }

    /// The last lines of the whole file.
    pub fn tail(&self) -> Vec<String> {
        self.tail_since(0)
    }

    /// Moves the stderr file into `dir` as `child-<n>.log` (the child keeps writing to
    /// it); false when it cannot be moved (another file system).
    pub fn keep_in(&mut self, dir: &std::path::Path, n: u64) -> bool {
        let to = dir.join(format!("child-{n}.log"));
        if self.path == to {
            return true;
        }
        if std::fs::rename(&self.path, &to).is_err() {
            return false;
        }
        self.path = to;
        self.keep = true;
        true
    }

    fn remove_unless_kept(&self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A running adapter.
pub struct AdapterChild {
    child: Child,
    to_writer: Option<Sender<Vec<u8>>>,
    lines: Receiver<Line>,
    pub stderr: StderrLog,
    /// This child's number in the process (names its stderr file).
    pub serial: u64,
    /// The child's scratch directory, removed once the child is reaped.
    scratch: Option<PathBuf>,
}

impl AdapterChild {
    /// Starts `argv[0]` with the rest as arguments and `env` added to the environment,
    /// [`SCRATCH_DIR_ENV`] naming a new empty directory that outlives the child by nothing,
    /// its stderr written to `stderr_dir/child-<n>.log` (or a temporary file).
    pub fn spawn(
        argv: &[String],
        env: &[(String, String)],
        stderr_dir: Option<&std::path::Path>,
    ) -> Result<Self, FailureKind> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| FailureKind::Spawn("empty command".into()))?;
        let serial = CHILDREN_STARTED.fetch_add(1, Ordering::Relaxed);
        let log = StderrLog::new(stderr_dir, serial);
        let stderr_file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log.path)
            .map_err(|e| FailureKind::Spawn(format!("stderr file {}: {e}", log.path.display())))?;
        let scratch = match new_scratch_dir(serial) {
            Ok(dir) => dir,
            Err(e) => {
                log.remove_unless_kept();
                return Err(e);
            }
        };
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr_file));
        // Python randomizes str hashes per process (set iteration order): pinned, so a
        // Python adapter answers the same case the same way in every run.
        cmd.env("PYTHONHASHSEED", PYTHONHASHSEED);
        cmd.env(SCRATCH_DIR_ENV, &scratch);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&scratch);
                log.remove_unless_kept();
                return Err(FailureKind::Spawn(spawn_error(program, &e)));
            }
        };
        let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
            (Some(i), Some(o)) => (i, o),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = std::fs::remove_dir_all(&scratch);
                log.remove_unless_kept();
                return Err(FailureKind::Spawn("pipes not available".into()));
            }
        };
        let (line_tx, lines) = mpsc::channel();
        let (to_writer, writer_rx) = mpsc::channel();
        let spawned = spawn_thread("adapter-stdout", move || read_lines(stdout, line_tx))
            .and_then(|_| spawn_thread("adapter-stdin", move || write_lines(stdin, writer_rx)));
        let mut me = AdapterChild {
            child,
            to_writer: Some(to_writer),
            lines,
            stderr: log,
            serial,
            scratch: Some(scratch),
        };
        spawned.map_err(|e| {
            me.kill();
            FailureKind::Spawn(format!("thread: {e}"))
        })?;
        Ok(me)
    }

    /// Queues one JSON line for the child's stdin. A closed stdin shows up as an exit
    /// on the next read, so this never blocks and never fails on its own.
    pub fn send(&mut self, line: String) {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        if let Some(tx) = &self.to_writer {
            let _ = tx.send(bytes);
        }
    }

    /// The next stdout line, or why there is none within `timeout_ms` from now (`limit`
    /// names that limit in the failure; the child is killed when it is hit).
    pub fn recv(&mut self, timeout_ms: u64, limit: Limit) -> Result<String, FailureKind> {
        match self.lines.recv_timeout(Duration::from_millis(timeout_ms)) {
            Ok(Line::Text(s)) => Ok(s),
            Ok(Line::TooLong) => Err(FailureKind::InvalidJson(format!(
                "line longer than {LINE_LIMIT_BYTES} bytes"
            ))),
            Ok(Line::NotUtf8) => Err(FailureKind::InvalidJson("line is not UTF-8".into())),
            Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => Err(FailureKind::Exited {
                status: self.exit_status(),
            }),
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                Err(FailureKind::Timeout { timeout_ms, limit })
            }
        }
    }

    /// The exit status after stdout closed, waiting briefly for the process to end.
    fn exit_status(&mut self) -> String {
        let until = Instant::now() + Duration::from_millis(EXIT_STATUS_WAIT_MS);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return status.to_string(),
                Ok(None) if Instant::now() < until => thread::sleep(Duration::from_millis(5)),
                Ok(None) => return "stdout closed, still running".into(),
                Err(e) => return format!("status unknown: {e}"),
            }
        }
    }

    /// Kills and reaps the child, then removes its scratch directory (idempotent).
    pub fn kill(&mut self) {
        self.to_writer = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(dir) = self.scratch.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    /// Kills the child and returns the last lines of its stderr (complete: the child is
    /// reaped), removing a temporary stderr file.
    pub fn kill_with_tail(&mut self) -> Vec<String> {
        self.kill();
        let tail = self.stderr.tail();
        self.stderr.remove_unless_kept();
        tail
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The child's scratch directory while it runs.
    pub fn scratch_dir(&self) -> Option<&std::path::Path> {
        self.scratch.as_deref()
    }
}

impl Drop for AdapterChild {
    fn drop(&mut self) {
        self.kill();
        self.stderr.remove_unless_kept();
    }
}

fn spawn_thread(name: &str, f: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map(|_| ())
}

fn read_lines(stdout: impl Read, tx: Sender<Line>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut buf = Vec::new();
        let limit = LINE_LIMIT_BYTES as u64 + 1;
        let line = match (&mut reader).take(limit).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => Line::Eof,
            Ok(_) if buf.last() != Some(&b'\n') && buf.len() as u64 == limit => Line::TooLong,
            Ok(_) => {
                while matches!(buf.last(), Some(b'\n' | b'\r')) {
                    buf.pop();
                }
                String::from_utf8(buf).map_or(Line::NotUtf8, Line::Text)
            }
        };
        let stop = matches!(line, Line::Eof | Line::TooLong);
        if tx.send(line).is_err() || stop {
            return;
        }
    }
}

fn write_lines(mut stdin: ChildStdin, rx: Receiver<Vec<u8>>) {
    while let Ok(bytes) = rx.recv() {
        if stdin.write_all(&bytes).and_then(|_| stdin.flush()).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child that reports its scratch directory, writes into it and then waits to be
    /// killed: the kill must reap it and leave no directory behind.
    #[test]
    fn a_killed_child_leaves_no_scratch_directory() {
        let script = format!(
            "echo \"${SCRATCH_DIR_ENV}\"; mkdir \"${SCRATCH_DIR_ENV}/home\" && echo made; sleep 30"
        );
        let argv = ["sh".to_string(), "-c".to_string(), script];
        let mut child = AdapterChild::spawn(&argv, &[], None).expect("sh starts");
        let dir = PathBuf::from(child.recv(20_000, Limit::Request).expect("the directory"));
        assert_eq!(Some(dir.as_path()), child.scratch_dir());
        assert_eq!(child.recv(20_000, Limit::Request).expect("made"), "made");
        assert!(
            dir.join("home").is_dir(),
            "the child could write its scratch directory"
        );
        drop(child);
        assert!(!dir.exists(), "{} outlived its child", dir.display());
    }

    /// Two children never share a scratch directory.
    #[test]
    fn each_child_has_its_own_scratch_directory() {
        let argv = ["sh".to_string(), "-c".to_string(), "sleep 30".to_string()];
        let a = AdapterChild::spawn(&argv, &[], None).expect("sh starts");
        let b = AdapterChild::spawn(&argv, &[], None).expect("sh starts");
        assert_ne!(a.scratch_dir(), b.scratch_dir());
        assert!(a.scratch_dir().is_some_and(|d| d.is_dir()));
    }
}
