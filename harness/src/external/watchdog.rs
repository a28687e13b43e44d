//! The stall watchdog: every exchange with an adapter (a hello, a request with its
//! `summarize` calls) is watched from its first message to its last. Progress is a
//! message crossing the pipes, either way. An exchange without progress for its bound
//! (`AdapterSpec::watchdog_bound_ms`) is a stall, wherever the harness's thread is
//! stuck: in a read the timeouts did not end, between two messages, in a lock. The
//! watchdog then writes what both sides were doing (the case, the request in flight, what
//! the harness last sent and waits for, what the adapter last said, whether its process
//! is alive and the last lines of its stderr) and ends the process with exit 4: a stall
//! never hangs a run, and never leaves a half-written report (reports are written after
//! the cases).
//!
//! The bound exceeds the timeouts by default, so a silent adapter ends in its timeout
//! (the case fails, the run goes on) and the watchdog only fires when the timeouts could
//! not.

use super::child::StderrLog;
use super::record::CaseKey;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The exit code of a stall (the CLI's internal-failure code).
pub const STALL_EXIT_CODE: i32 = 4;
/// Shortest and longest pause between two looks of the watchdog (a quarter of the
/// smallest bound watched, within these).
pub const WATCHDOG_TICK_MS_MIN: u64 = 10;
pub const WATCHDOG_TICK_MS_MAX: u64 = 1_000;
/// Longest message excerpt quoted in a stall report.
pub const STALL_EXCERPT_CHARS: usize = 200;

/// Which side owes the next message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The harness sent a message and waits for the adapter's next one.
    AwaitingAdapter,
    /// The adapter's last message reached the harness, which has not answered yet (a
    /// `summarize` answer being computed, or the harness stuck outside the pipes).
    HarnessHolds,
}

/// One watched exchange: what a stall report says about it.
#[derive(Clone, Debug)]
pub struct Watched {
    pub case: Option<CaseKey>,
    pub command: String,
    /// The request in flight (`micro_pass 3`, `hello`).
    pub request: String,
    /// The harness's last message to the adapter (an excerpt).
    pub last_sent: String,
    /// The adapter's last message (an excerpt; empty: none yet in this exchange).
    pub last_heard: String,
    pub phase: Phase,
    pub pid: Option<u32>,
    pub stderr: Option<StderrLog>,
    /// When the last message crossed.
    pub progress_at: Instant,
    pub bound_ms: u64,
}

/// The watched exchanges of the process, by ticket.
static WATCHED: Mutex<BTreeMap<u64, Watched>> = Mutex::new(BTreeMap::new());
static TICKETS: AtomicU64 = AtomicU64::new(0);
static THREAD: OnceLock<()> = OnceLock::new();

fn watched() -> std::sync::MutexGuard<'static, BTreeMap<u64, Watched>> {
    WATCHED.lock().unwrap_or_else(|e| e.into_inner())
}

/// An exchange under watch: unwatched when dropped.
#[derive(Debug)]
pub struct Watch {
    ticket: u64,
}

impl Watch {
    /// Starts watching `w` (and the watchdog thread, the first time).
    pub fn start(w: Watched) -> Watch {
        THREAD.get_or_init(|| {
            // Without its thread the watchdog is off; the timeouts still bound each read.
            let _ = std::thread::Builder::new()
                .name("adapter-watchdog".into())
                .spawn(watch_forever);
        });
        let ticket = TICKETS.fetch_add(1, Ordering::Relaxed);
        watched().insert(ticket, w);
        Watch { ticket }
    }

    fn update(&self, f: impl FnOnce(&mut Watched)) {
        if let Some(w) = watched().get_mut(&self.ticket) {
            f(w);
            w.progress_at = Instant::now();
        }
    }

    /// The harness sent `line`: the adapter owes the next message.
    pub fn sent(&self, line: &str) {
        self.update(|w| {
            w.last_sent = excerpt(line);
            w.phase = Phase::AwaitingAdapter;
        });
    }

    /// The adapter said `line`: the harness owes the next move.
    pub fn heard(&self, line: &str) {
        self.update(|w| {
            w.last_heard = excerpt(line);
            w.phase = Phase::HarnessHolds;
        });
    }

    /// The child serving the exchange (a new one after a hello).
    pub fn child(&self, pid: u32, stderr: StderrLog) {
        self.update(|w| {
            w.pid = Some(pid);
            w.stderr = Some(stderr);
        });
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        watched().remove(&self.ticket);
    }
}

fn excerpt(line: &str) -> String {
    let cut: String = line.chars().take(STALL_EXCERPT_CHARS).collect();
    if cut.len() < line.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// Run by the watchdog at a stall before it kills any adapter (set once, by the front:
/// it closes the reports, so a worker that sees its adapter die writes none).
static BEFORE_STALL_EXIT: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Sets what the watchdog runs at a stall before it ends the adapters and the process
/// (the first call wins).
pub fn before_stall_exit(f: fn()) {
    let _ = BEFORE_STALL_EXIT.set(f);
}

/// The watchdog thread: looks at the watched exchanges every tick and ends the process
/// at the first stall.
fn watch_forever() {
    loop {
        let (stalled, tick_ms) = {
            let all = watched();
            let now = Instant::now();
            let stalled = all.values().find(|w| is_stalled(w, now)).cloned();
            let smallest = all.values().map(|w| w.bound_ms).min().unwrap_or(u64::MAX);
            (
                stalled,
                (smallest / 4).clamp(WATCHDOG_TICK_MS_MIN, WATCHDOG_TICK_MS_MAX),
            )
        };
        if let Some(w) = stalled {
            if let Some(close) = BEFORE_STALL_EXIT.get() {
                close();
            }
            eprintln!("{}", stall_report(&w, Instant::now()));
            // Every adapter group killed, its scratch files removed, before the exit.
            super::groups::end_all();
            std::process::exit(STALL_EXIT_CODE);
        }
        std::thread::sleep(Duration::from_millis(tick_ms));
    }
}

/// Whether `w` made no progress for its bound at `now`.
pub fn is_stalled(w: &Watched, now: Instant) -> bool {
    now.saturating_duration_since(w.progress_at) >= Duration::from_millis(w.bound_ms)
}

/// What a stall report says: the case, the request, both sides' state.
pub fn stall_report(w: &Watched, now: Instant) -> String {
    let silent_ms = now.saturating_duration_since(w.progress_at).as_millis();
    let case = match w.case {
        Some(k) => format!("seed {} case {}", k.root_seed, k.case),
        None => "none (outside a case)".into(),
    };
    let harness = match w.phase {
        Phase::AwaitingAdapter => format!(
            "waits for the adapter's next message of {} (a summarize call or its result) \
             since it sent: {}",
            w.request, w.last_sent
        ),
        Phase::HarnessHolds => format!(
            "holds the adapter's last message without answering (its answer to a summarize \
             call, or the harness stuck outside the pipes); it last sent: {}",
            w.last_sent
        ),
    };
    let heard = if w.last_heard.is_empty() {
        "nothing yet in this exchange".to_string()
    } else {
        w.last_heard.clone()
    };
    let mut out = format!(
        "adapter stall: no message crossed the pipes of `{}` for {silent_ms} ms (the \
         watchdog bound is {} ms; --adapter-watchdog-ms raises it)\n  case: {case}\n  \
         request in flight: {}\n  harness: {harness}\n  adapter: last said: {heard}\n  \
         adapter process: {}",
        w.command,
        w.bound_ms,
        w.request,
        w.pid.map_or("not started".into(), process_state),
    );
    let tail = w.stderr.as_ref().map(StderrLog::tail).unwrap_or_default();
    if tail.is_empty() {
        out.push_str("\n  adapter stderr: (empty)");
    } else {
        out.push_str("\n  adapter stderr, last lines:");
        for line in tail {
            out.push_str("\n    | ");
            out.push_str(&line);
        }
    }
    out
}

/// Process `pid` as the system shows it: alive (with its scheduler state) or gone.
fn process_state(pid: u32) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
    // The state is the first field after the parenthesised command name.
    let state = stat
        .as_deref()
        .and_then(|s| s.rsplit_once(')'))
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .map(str::to_string);
    match state.as_deref() {
        Some("Z") => format!("{pid}, exited (a zombie not reaped yet)"),
        Some("S") => format!("{pid}, alive, sleeping (waiting to read or write a pipe, or idle)"),
        Some("R") => format!("{pid}, alive, running"),
        Some("D") => format!("{pid}, alive, in uninterruptible sleep (disk)"),
        Some("T" | "t") => format!("{pid}, alive, stopped"),
        Some(other) => format!("{pid}, state {other}"),
        None if std::path::Path::new("/proc/self").exists() => format!("{pid}, gone"),
        None => format!("{pid} (state unknown: no /proc)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watched_at(progress_at: Instant, phase: Phase) -> Watched {
        Watched {
            case: Some(CaseKey {
                root_seed: 7,
                case: 3,
            }),
            command: "python3 stall.py".into(),
            request: "micro_pass 2".into(),
            last_sent: r#"{"type":"summary","id":2,"call":0}"#.into(),
            last_heard: r#"{"type":"summarize","id":2,"call":0}"#.into(),
            phase,
            pid: Some(std::process::id()),
            stderr: None,
            progress_at,
            bound_ms: 50,
        }
    }

    /// Progress older than the bound is a stall; newer is not (instants built, no clock
    /// waited on).
    #[test]
    fn a_stall_is_no_progress_for_the_bound() {
        let now = Instant::now();
        let fresh = watched_at(now, Phase::AwaitingAdapter);
        assert!(!is_stalled(&fresh, now));
        let old = now + Duration::from_millis(50);
        assert!(is_stalled(&fresh, old));
    }

    /// The report names the case, the request, the bound and its flag, and both sides.
    #[test]
    fn the_report_names_the_case_the_request_and_both_sides() {
        let now = Instant::now();
        let w = watched_at(now, Phase::HarnessHolds);
        let r = stall_report(&w, now + Duration::from_millis(60));
        for want in [
            "adapter stall",
            "`python3 stall.py`",
            "for 60 ms",
            "bound is 50 ms",
            "--adapter-watchdog-ms",
            "case: seed 7 case 3",
            "request in flight: micro_pass 2",
            "holds the adapter's last message",
            r#"last said: {"type":"summarize","id":2,"call":0}"#,
            "alive",
            "adapter stderr: (empty)",
        ] {
            assert!(r.contains(want), "{want:?} missing from:\n{r}");
        }
    }

    /// A watch registers while it lives and moves the progress clock on each message.
    #[test]
    fn a_watch_lives_until_dropped() {
        let w = watched_at(Instant::now(), Phase::AwaitingAdapter);
        let watch = Watch::start(Watched {
            bound_ms: u64::MAX / 4,
            ..w
        });
        watch.heard(r#"{"type":"result","id":2}"#);
        let phase = watched().get(&watch.ticket).map(|w| w.phase);
        assert_eq!(phase, Some(Phase::HarnessHolds));
        let ticket = watch.ticket;
        drop(watch);
        assert!(!watched().contains_key(&ticket));
    }
}
