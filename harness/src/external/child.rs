//! One adapter child process: started without a shell, written and read by the thread
//! that owns it, through non-blocking pipes and `poll(2)` (JSON lines, bounded length; no
//! helper thread, so an exchange costs the two processes' turns and nothing more); its
//! stderr goes straight to a file of its own ([`StderrLog`]: kept in the output
//! directory, or a temporary file removed with the child), whose last lines are read
//! back, bounded, for messages. Every read has a deadline: the caller polls the pipes in
//! slices of at most [`EXIT_POLL_MS`] and looks after each idle slice whether the child
//! exited (a grandchild holding stdout open cannot hide an exit behind a timeout). Each
//! child leads a process group of its own: ending it (drop, a timeout, an exit) kills
//! the whole group, grandchildren included, and [`super::groups::end_all`] does the same
//! for every child when the process ends early. Each child gets a scratch directory of
//! its own ([`SCRATCH_DIR_ENV`]), which the harness removes once the group is gone,
//! however it ended: an adapter killed before its own cleanup runs leaves nothing behind.

use super::child_io::{Line, Pipes};
use super::error::{FailureKind, Limit};
use super::groups;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
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

/// Longest protocol line (one stdout line of an adapter, without its `\n`) the harness
/// reads, in bytes (adapters/PROTOCOL.md, "Limits"): a transcript of the largest case
/// fits. A longer line ends the adapter as a failure naming the process; the memory a
/// worker spends on one line is bounded by it.
pub const PROTOCOL_LINE_BYTES_MAX: usize = 64 * 1024 * 1024;
/// The longest idle wait of a read for a line, after which it looks whether the child
/// exited.
pub const EXIT_POLL_MS: u64 = 50;
/// Stderr lines quoted in a message (the last ones).
pub const STDERR_KEPT_LINES: usize = 20;
/// Longest stderr line quoted (longer lines are cut).
pub const STDERR_LINE_LIMIT_CHARS: usize = 400;
/// Most bytes of a stderr file read back for a quote (its end): the memory a quote
/// takes is bounded whatever the adapter writes.
pub const STDERR_TAIL_BYTES_MAX: u64 = 64 * 1024;
/// Capacity asked for each pipe to and from a child (Linux's default is 64 KiB, and
/// 1 MiB is its default limit for an unprivileged process): a request of a few hundred
/// KB crosses in one write instead of a writer and a reader taking turns at every 64
/// KiB, each turn two context switches on a shared core.
pub(super) const PIPE_BYTES: usize = 1024 * 1024;
/// How often a child whose stdin failed is polled for its exit.
const STDIN_FAILED_POLL_MS: u64 = 10;
/// After the stdout pipe closes, how long to wait for the exit status.
const EXIT_STATUS_WAIT_MS: u64 = 200;

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
        groups::stderr_kept(n);
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
    pipes: Pipes,
    pub stderr: StderrLog,
    /// This child's number in the process (names its stderr file).
    pub serial: u64,
    /// The child's scratch directory, removed once the child is reaped.
    scratch: Option<PathBuf>,
    /// Whether the child's group was killed and the child reaped (its pid may be
    /// reused: never signalled again).
    ended: bool,
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
        // Held from the first file made to the child's record: an interrupt ends the
        // process either before anything is made or after it is all recorded.
        let making =
            groups::making().ok_or_else(|| FailureKind::Spawn("the harness is ending".into()))?;
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
        // A group of its own: whatever the adapter forks is killed with it, and a
        // terminal's Ctrl-C reaches the harness only, which ends the group itself.
        cmd.process_group(0);
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
        let pipes = match (child.stdin.take(), child.stdout.take()) {
            (Some(stdin), Some(stdout)) => {
                widen_pipe(&stdin);
                widen_pipe(&stdout);
                Pipes::new(stdin, stdout).map_err(|e| format!("non-blocking pipes: {e}"))
            }
            _ => Err("pipes not available".to_string()),
        };
        let pipes = match pipes {
            Ok(pipes) => pipes,
            Err(why) => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = std::fs::remove_dir_all(&scratch);
                log.remove_unless_kept();
                return Err(FailureKind::Spawn(why));
            }
        };
        let temp_stderr = (!log.keep).then(|| log.path.clone());
        making.register(serial, child.id(), scratch.clone(), temp_stderr);
        Ok(AdapterChild {
            child,
            pipes,
            stderr: log,
            serial,
            scratch: Some(scratch),
            ended: false,
        })
    }

    /// Writes one JSON line to the child's stdin as far as the pipe takes it now; the
    /// rest goes while the next read waits. A line that cannot be written shows up on
    /// the next read (an exit, or a stdin the child closed), so this never blocks and
    /// never fails on its own.
    pub fn send(&mut self, line: String) {
        self.pipes.queue(line);
    }

    /// The next stdout line, or why there is none within `timeout_ms` from now (`limit`
    /// names that limit in the failure; the child is killed when it is hit). A child
    /// that exits is reported `exited` with its status within [`EXIT_POLL_MS`], even
    /// when a process it forked keeps its stdout open (the group is killed then).
    pub fn recv(&mut self, timeout_ms: u64, limit: Limit) -> Result<String, FailureKind> {
        let until = Instant::now() + Duration::from_millis(timeout_ms);
        loop {
            if let Some(line) = self.pipes.lines.next() {
                return self.line(line);
            }
            if let Some(why) = self.pipes.take_stdin_failure() {
                return self.after_stdin_failed(&why);
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.kill();
                return Err(FailureKind::Timeout { timeout_ms, limit });
            }
            let slice = left.min(Duration::from_millis(EXIT_POLL_MS));
            // Whole milliseconds, rounded up: a wait never ends before its deadline.
            let slice_ms = slice.as_micros().div_ceil(1000) as u64;
            if !self.pipes.pump(slice_ms) {
                if let Ok(Some(status)) = self.child.try_wait() {
                    return self.after_exit(status);
                }
            }
        }
    }

    /// What a line read from stdout means.
    fn line(&mut self, line: Line) -> Result<String, FailureKind> {
        match line {
            Line::Text(s) => Ok(s),
            Line::TooLong => {
                let pid = self.pid();
                self.kill();
                Err(FailureKind::InvalidJson(format!(
                    "process {pid} wrote a line longer than PROTOCOL_LINE_BYTES_MAX \
                     ({PROTOCOL_LINE_BYTES_MAX} bytes); the process was killed"
                )))
            }
            Line::NotUtf8 => Err(FailureKind::InvalidJson("line is not UTF-8".into())),
            Line::Eof => Err(FailureKind::Exited {
                status: self.exit_status(),
            }),
        }
    }

    /// A request could not be written. A child that is exiting is reported `exited`
    /// with its status (as when its stdout closes); one that lives on with its stdin
    /// closed would never answer: it is killed and the failure names it, at once rather
    /// than at the request limit.
    fn after_stdin_failed(&mut self, why: &str) -> Result<String, FailureKind> {
        let until = Instant::now() + Duration::from_millis(EXIT_STATUS_WAIT_MS);
        while Instant::now() < until {
            if let Ok(Some(status)) = self.child.try_wait() {
                return self.after_exit(status);
            }
            thread::sleep(Duration::from_millis(STDIN_FAILED_POLL_MS));
        }
        let pid = self.pid();
        self.kill();
        Err(FailureKind::Protocol(format!(
            "process {pid} stopped reading its stdin (a request could not be written: \
             {why}); the process was killed"
        )))
    }

    /// The child exited while stdout stayed open (a process it forked holds it): its
    /// group is killed, a line it wrote before exiting is still delivered, else the exit
    /// with its status.
    fn after_exit(&mut self, status: std::process::ExitStatus) -> Result<String, FailureKind> {
        self.kill();
        let until = Instant::now() + Duration::from_millis(EXIT_STATUS_WAIT_MS);
        while !self.pipes.lines.has_ready() && !self.pipes.lines.ended() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            self.pipes.pump(left.as_millis().max(1) as u64);
        }
        match self.pipes.lines.next() {
            Some(Line::Text(s)) => Ok(s),
            _ => Err(FailureKind::Exited {
                status: status.to_string(),
            }),
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
        self.pipes.close_stdin();
        if !self.ended {
            self.ended = true;
            let pid = self.child.id();
            groups::signal_group(pid);
            let _ = self.child.kill();
            let _ = self.child.wait();
            groups::await_group_gone(pid, false);
        }
        if let Some(dir) = self.scratch.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
        if self.stderr.keep {
            groups::unregister(self.serial);
        }
    }

    /// Kills the child and returns the last lines of its stderr (complete: the child is
    /// reaped), removing a temporary stderr file.
    pub fn kill_with_tail(&mut self) -> Vec<String> {
        self.kill();
        let tail = self.stderr.tail();
        self.stderr.remove_unless_kept();
        groups::unregister(self.serial);
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
        groups::unregister(self.serial);
    }
}

/// Asks the kernel for a pipe of [`PIPE_BYTES`]; a refusal (an older kernel, a lower
/// limit) leaves the pipe as it was, which only costs more turns.
fn widen_pipe(pipe: &impl std::os::fd::AsRawFd) {
    #[cfg(target_os = "linux")]
    // SAFETY: F_SETPIPE_SZ on a descriptor this process owns; it reads no memory.
    unsafe {
        libc::fcntl(
            pipe.as_raw_fd(),
            libc::F_SETPIPE_SZ,
            PIPE_BYTES as libc::c_int,
        );
    }
    #[cfg(not(target_os = "linux"))]
    let _ = pipe;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pipe widened holds a request of several hundred KB at once.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_widened_pipe_has_the_asked_capacity() {
        use std::os::fd::AsRawFd;
        let (reader, writer) = std::io::pipe().unwrap();
        // SAFETY: F_GETPIPE_SZ on a descriptor this test owns.
        let size = |fd: i32| unsafe { libc::fcntl(fd, libc::F_GETPIPE_SZ) };
        assert!(size(writer.as_raw_fd()) < PIPE_BYTES as i32);
        widen_pipe(&writer);
        assert_eq!(size(writer.as_raw_fd()), PIPE_BYTES as i32);
        assert_eq!(size(reader.as_raw_fd()), PIPE_BYTES as i32);
    }

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
