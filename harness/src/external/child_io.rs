//! The pipes to and from one adapter child, driven by the thread that owns the child:
//! both parent ends are non-blocking, a request is written as far as the pipe takes it
//! and the rest whenever the caller waits for a reply, and stdout is cut into lines
//! bounded by [`PROTOCOL_LINE_BYTES_MAX`]. One `poll(2)` waits for either pipe, so an
//! exchange wakes the harness once (no writer or reader thread to hand the bytes over:
//! on a shared core each hand-over was two more context switches per message).

use super::child::{PIPE_BYTES, PROTOCOL_LINE_BYTES_MAX};
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::process::{ChildStdin, ChildStdout};

/// Bytes read from stdout at a time (the pipe's capacity: a reply in one call).
const STDOUT_READ_BYTES: usize = PIPE_BYTES;
/// Reads of stdout in one [`Pipes::pump`] at most: a child that writes without end
/// cannot keep its caller from its deadline.
const READS_PER_PUMP_MAX: usize = 64;

/// What stdout gave.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Line {
    Text(String),
    /// A line past the limit; nothing after it is read.
    TooLong,
    NotUtf8,
    /// The pipe closed.
    Eof,
}

/// Stdout cut into lines: each `\n` ends one (trailing `\r`s dropped), a line past
/// `limit` bytes is [`Line::TooLong`] and ends the stream, and the unterminated rest at
/// the end of the stream is a last line.
pub(super) struct Lines {
    limit: usize,
    /// The line being read (no `\n` yet); never past `limit` bytes.
    partial: Vec<u8>,
    ready: VecDeque<Line>,
    /// A [`Line::TooLong`] or [`Line::Eof`] was queued: nothing more is taken.
    ended: bool,
}

impl Lines {
    pub(super) fn new(limit: usize) -> Lines {
        Lines {
            limit,
            partial: Vec::new(),
            ready: VecDeque::new(),
            ended: false,
        }
    }

    /// Takes the bytes read next.
    pub(super) fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && !self.ended {
            // `memchr`: the line's bytes are scanned a vector at a time.
            let Some(at) = memchr::memchr(b'\n', bytes) else {
                self.extend_partial(bytes);
                return;
            };
            if self.partial.len() + at > self.limit {
                self.end(Line::TooLong);
                return;
            }
            let line = if self.partial.is_empty() {
                bytes[..at].to_vec()
            } else {
                self.partial.extend_from_slice(&bytes[..at]);
                std::mem::take(&mut self.partial)
            };
            self.push_text(line);
            bytes = &bytes[at + 1..];
        }
    }

    /// The end of the stream: the unterminated rest is a last line, then [`Line::Eof`].
    pub(super) fn finish(&mut self) {
        if self.ended {
            return;
        }
        if !self.partial.is_empty() {
            let rest = std::mem::take(&mut self.partial);
            self.push_text(rest);
        }
        self.end(Line::Eof);
    }

    pub(super) fn next(&mut self) -> Option<Line> {
        self.ready.pop_front()
    }

    pub(super) fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    pub(super) fn ended(&self) -> bool {
        self.ended
    }

    /// Grows the partial line by a chunk without a newline. The buffer grows only when
    /// the chunk does not fit, doubling up to the limit: a line of n bytes is copied O(n)
    /// times in all, whatever its chunks.
    fn extend_partial(&mut self, bytes: &[u8]) {
        let len = self.partial.len() + bytes.len();
        if len > self.limit {
            self.end(Line::TooLong);
            return;
        }
        if self.partial.capacity() < len {
            let want = len
                .max(self.partial.capacity().saturating_mul(2))
                .min(self.limit);
            self.partial.reserve_exact(want - self.partial.len());
        }
        self.partial.extend_from_slice(bytes);
    }

    fn push_text(&mut self, mut line: Vec<u8>) {
        while line.last() == Some(&b'\r') {
            line.pop();
        }
        self.ready
            .push_back(String::from_utf8(line).map_or(Line::NotUtf8, Line::Text));
    }

    fn end(&mut self, last: Line) {
        self.partial = Vec::new();
        self.ready.push_back(last);
        self.ended = true;
    }
}

/// A child's stdin and stdout as the harness holds them.
pub(super) struct Pipes {
    /// `None` once a write failed or the child was ended.
    stdin: Option<ChildStdin>,
    /// Bytes queued for stdin, from `pending_at` on.
    pending: Vec<u8>,
    pending_at: usize,
    /// Why a write failed (the request is lost: no reply will come); taken by the reader.
    stdin_failed: Option<String>,
    /// `None` once it closed or a line passed the limit.
    stdout: Option<ChildStdout>,
    chunk: Vec<u8>,
    pub(super) lines: Lines,
}

impl Pipes {
    /// Both parent ends made non-blocking (the child's ends are other open files and
    /// stay blocking).
    pub(super) fn new(stdin: ChildStdin, stdout: ChildStdout) -> std::io::Result<Pipes> {
        set_nonblocking(&stdin)?;
        set_nonblocking(&stdout)?;
        Ok(Pipes {
            stdin: Some(stdin),
            pending: Vec::new(),
            pending_at: 0,
            stdin_failed: None,
            stdout: Some(stdout),
            chunk: vec![0; STDOUT_READ_BYTES],
            lines: Lines::new(PROTOCOL_LINE_BYTES_MAX),
        })
    }

    /// Queues `line` and its `\n` and writes what the pipe takes now. A write that
    /// fails shows up through [`Pipes::take_stdin_failure`]; after one, lines are dropped.
    pub(super) fn queue(&mut self, line: String) {
        if self.stdin.is_none() {
            return;
        }
        if self.pending_at == self.pending.len() {
            self.pending = line.into_bytes();
            self.pending_at = 0;
        } else {
            self.pending.extend_from_slice(line.as_bytes());
        }
        self.pending.push(b'\n');
        self.flush();
    }

    /// Why a request could not be written, once.
    pub(super) fn take_stdin_failure(&mut self) -> Option<String> {
        self.stdin_failed.take()
    }

    /// Closes stdin (the child sees its end) and drops what was queued.
    pub(super) fn close_stdin(&mut self) {
        self.stdin = None;
        self.pending = Vec::new();
        self.pending_at = 0;
    }

    /// Waits up to `timeout_ms` for either pipe, then writes what stdin takes and reads
    /// what stdout holds. True when a byte crossed or a pipe ended; false after an idle
    /// wait (or an interrupted one).
    pub(super) fn pump(&mut self, timeout_ms: u64) -> bool {
        let want_write = self.stdin.is_some() && self.pending_at < self.pending.len();
        let mut fds = [
            pollfd(self.stdout.as_ref().map(AsRawFd::as_raw_fd), libc::POLLIN),
            pollfd(
                self.stdin
                    .as_ref()
                    .filter(|_| want_write)
                    .map(AsRawFd::as_raw_fd),
                libc::POLLOUT,
            ),
        ];
        let timeout = libc::c_int::try_from(timeout_ms).unwrap_or(libc::c_int::MAX);
        // SAFETY: `fds` is a live array of two pollfd for the length given; a negative
        // fd is ignored by poll.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
        if ready <= 0 {
            return false;
        }
        let mut moved = false;
        if fds[1].revents != 0 {
            moved |= self.flush();
        }
        if fds[0].revents != 0 {
            moved |= self.read_available();
        }
        moved
    }

    /// Writes queued bytes until the pipe is full; true when any crossed or the write
    /// failed.
    fn flush(&mut self) -> bool {
        let Some(stdin) = self.stdin.as_mut() else {
            return false;
        };
        let mut moved = false;
        while self.pending_at < self.pending.len() {
            match stdin.write(&self.pending[self.pending_at..]) {
                Ok(0) => break,
                Ok(n) => {
                    self.pending_at += n;
                    moved = true;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    self.stdin_failed = Some(e.to_string());
                    self.close_stdin();
                    return true;
                }
            }
        }
        if self.pending_at == self.pending.len() && self.pending.capacity() > PIPE_BYTES {
            // A very long request is not kept around once written.
            self.pending = Vec::new();
            self.pending_at = 0;
        }
        moved
    }

    /// Reads stdout until it is empty, a line is ready, or it ends; true when any byte
    /// came or the pipe ended.
    fn read_available(&mut self) -> bool {
        let mut moved = false;
        for _ in 0..READS_PER_PUMP_MAX {
            let Some(stdout) = self.stdout.as_mut() else {
                break;
            };
            match stdout.read(&mut self.chunk) {
                Ok(0) => {
                    self.lines.finish();
                    moved = true;
                }
                Ok(n) => {
                    self.lines.feed(&self.chunk[..n]);
                    moved = true;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                // A read error ends the stream as its close does.
                Err(_) => {
                    self.lines.finish();
                    moved = true;
                }
            }
            if self.lines.ended() {
                self.stdout = None;
            }
            if self.lines.has_ready() {
                break;
            }
        }
        moved
    }
}

/// A pollfd asking `events` of `fd` (`None`: an entry poll ignores).
fn pollfd(fd: Option<std::os::fd::RawFd>, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd: fd.unwrap_or(-1),
        events,
        revents: 0,
    }
}

fn set_nonblocking(pipe: &impl AsRawFd) -> std::io::Result<()> {
    let fd = pipe.as_raw_fd();
    // SAFETY: F_GETFL and F_SETFL on a descriptor this process owns; no memory is read.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(lines: &mut Lines) -> Vec<Line> {
        std::iter::from_fn(|| lines.next()).collect()
    }

    fn text(s: &str) -> Line {
        Line::Text(s.into())
    }

    /// A line is read whole up to the limit, a longer one is refused and ends the
    /// stream, and `\r\n` ends a line as `\n` does.
    #[test]
    fn a_line_is_bounded_by_the_protocol_line_limit() {
        let mut l = Lines::new(4);
        l.feed(b"abc\r\ndefgh\nij\n");
        assert_eq!(all(&mut l), [text("abc"), Line::TooLong]);
        l.feed(b"more\n");
        l.finish();
        assert!(
            l.next().is_none(),
            "nothing is read after a line past the limit"
        );

        let mut l = Lines::new(1000);
        for chunk in [b'x'; 1000].chunks(3) {
            l.feed(chunk);
        }
        l.finish();
        assert_eq!(all(&mut l), [text(&"x".repeat(1000)), Line::Eof]);

        let mut l = Lines::new(999);
        l.feed(&[b'x'; 1000]);
        assert_eq!(all(&mut l), [Line::TooLong]);

        let mut l = Lines::new(8);
        l.feed(b"1234");
        l.feed(b"5678\n");
        l.feed(b"\xff\n");
        l.finish();
        assert_eq!(all(&mut l), [text("12345678"), Line::NotUtf8, Line::Eof]);
    }

    /// A line read in many small chunks takes at most twice its length, however far the
    /// limit is: the buffer grows when a chunk does not fit, not once per chunk.
    #[test]
    fn a_line_read_in_small_chunks_grows_its_buffer_only_as_needed() {
        let mut l = Lines::new(1 << 30);
        for chunk in [b'x'; 1000].chunks(7) {
            l.feed(chunk);
            assert!(
                l.partial.capacity() <= 2 * 1000,
                "capacity {}",
                l.partial.capacity()
            );
        }
        l.feed(b"\n");
        assert_eq!(all(&mut l), [text(&"x".repeat(1000))]);
    }

    /// Several lines in one read are each delivered, in order; an empty line is a line.
    #[test]
    fn one_read_of_several_lines_gives_each() {
        let mut l = Lines::new(64);
        l.feed(b"a\n\nb\nc");
        assert_eq!(all(&mut l), [text("a"), text(""), text("b")]);
        l.finish();
        assert_eq!(all(&mut l), [text("c"), Line::Eof]);
    }

    /// Through real pipes: a request larger than the pipe is written in turns while
    /// its echo is read back, with neither side blocking the other.
    #[test]
    fn a_request_past_the_pipe_capacity_crosses_while_replies_are_read() {
        let mut child = std::process::Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("cat starts");
        let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        let mut pipes = Pipes::new(stdin, stdout).expect("non-blocking");
        let long = "y".repeat(3 * PIPE_BYTES);
        pipes.queue(long.clone());
        pipes.queue("short".into());
        let mut got = Vec::new();
        for _ in 0..10_000 {
            if got.len() == 2 {
                break;
            }
            pipes.pump(1_000);
            got.extend(std::iter::from_fn(|| pipes.lines.next()));
        }
        assert_eq!(got, [Line::Text(long), text("short")]);
        pipes.close_stdin();
        for _ in 0..10_000 {
            if pipes.lines.ended() {
                break;
            }
            pipes.pump(1_000);
        }
        assert_eq!(pipes.lines.next(), Some(Line::Eof));
        let _ = child.wait();
    }
}
