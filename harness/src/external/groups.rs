//! Every adapter child alive in this process, each the leader of a process group of its
//! own (whatever it forks joins that group), with the files the harness made for it:
//! its scratch directory and its temporary stderr file. A child's group is killed when
//! the child ends ([`signal_group`]), and [`end_all`] kills every group and removes every
//! such file when the process ends early (SIGINT, SIGTERM, the stall watchdog), so no
//! process and no temporary file outlives the harness, however it exits.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The longest [`await_group_gone`] waits for a killed group's processes to be
/// gone before removing their files (SIGKILL cannot be caught: they go at once).
pub const GROUP_EXIT_WAIT_MS: u64 = 500;
/// How often that wait looks.
const GROUP_EXIT_POLL_MS: u64 = 2;

/// What the harness must undo for one child.
struct Live {
    /// The child's process id, which is also its process group id.
    pid: u32,
    scratch: PathBuf,
    /// The stderr file, when it is temporary (not kept in an output directory).
    stderr_temp: Option<PathBuf>,
}

struct Registry {
    live: BTreeMap<u64, Live>,
    /// Directories that outlive a child but not the case: a gateway store's durable
    /// directory (`store::dir`), by a serial of their own.
    dirs: BTreeMap<u64, PathBuf>,
    next_dir: u64,
    /// Set by [`end_all`]: no child may start after it.
    closed: bool,
}

static LIVE: Mutex<Registry> = Mutex::new(Registry {
    live: BTreeMap::new(),
    dirs: BTreeMap::new(),
    next_dir: 0,
    closed: false,
});

fn registry() -> MutexGuard<'static, Registry> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The registry held while a child's files and process (or a durable directory) are
/// made, so [`end_all`] runs wholly before them (then nothing is made) or wholly after
/// (then it undoes them): an interrupt can never fall between making a file or a
/// process and recording it. Made by [`making`]; hold it only for the making (it keeps
/// every other worker's start, and `end_all`, waiting).
pub struct Making(MutexGuard<'static, Registry>);

/// The registry for making one child or directory; `None` when the process is ending
/// ([`end_all`] ran): the caller makes nothing.
pub fn making() -> Option<Making> {
    let r = registry();
    (!r.closed).then_some(Making(r))
}

impl Making {
    /// Records child `serial` (process `pid`, its group leader) and its files.
    pub fn register(
        mut self,
        serial: u64,
        pid: u32,
        scratch: PathBuf,
        stderr_temp: Option<PathBuf>,
    ) {
        self.0.live.insert(
            serial,
            Live {
                pid,
                scratch,
                stderr_temp,
            },
        );
    }

    /// Records a directory [`end_all`] must remove; its serial.
    pub fn register_dir(mut self, dir: PathBuf) -> u64 {
        let serial = self.0.next_dir;
        self.0.next_dir += 1;
        self.0.dirs.insert(serial, dir);
        serial
    }
}

/// Updates where child `serial`'s stderr is: `None` once it is kept (moved into an
/// output directory), so no early end removes it.
pub fn stderr_kept(serial: u64) {
    if let Some(l) = registry().live.get_mut(&serial) {
        l.stderr_temp = None;
    }
}

/// Forgets directory `serial` (its owner removed it).
pub fn unregister_dir(serial: u64) {
    registry().dirs.remove(&serial);
}

/// Forgets child `serial` (its owner cleaned up after it).
pub fn unregister(serial: u64) {
    registry().live.remove(&serial);
}

/// Sends SIGKILL to the process group `pgid`: the child and everything it forked that
/// stayed in its group.
pub fn signal_group(pgid: u32) {
    if let Some(pgid) = group_id(pgid) {
        // SAFETY: kill(2) with a negative pid signals the group; it touches no memory.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// Waits up to [`GROUP_EXIT_WAIT_MS`] until group `pgid` has no process left, reaping
/// its leader when `reap_leader` (a caller that does not own the `Child`).
pub fn await_group_gone(pgid: u32, reap_leader: bool) {
    let Some(pgid) = group_id(pgid) else {
        return;
    };
    let until = Instant::now() + Duration::from_millis(GROUP_EXIT_WAIT_MS);
    // Signal 0 only asks whether the group has a process left (a zombie counts).
    // SAFETY: as in `signal_group`.
    while unsafe { libc::kill(-pgid, 0) } == 0 && Instant::now() < until {
        if reap_leader {
            let mut status = 0;
            // SAFETY: waitpid(2) on one pid without blocking; `status` is a valid out
            // pointer.
            unsafe {
                libc::waitpid(pgid, &mut status, libc::WNOHANG);
            }
        }
        std::thread::sleep(Duration::from_millis(GROUP_EXIT_POLL_MS));
    }
}

/// `pgid` as a process group id to signal (never 0 or 1: those would reach this
/// process's own group or every process).
fn group_id(pgid: u32) -> Option<libc::pid_t> {
    libc::pid_t::try_from(pgid).ok().filter(|&p| p > 1)
}

/// Kills every live child's group and removes the files the harness made for them;
/// no child starts after it. Returns how many children it ended. For the ends of the
/// process (a signal, the watchdog): the owners of the children never run again.
pub fn end_all() -> usize {
    let (live, dirs) = {
        let mut r = registry();
        r.closed = true;
        (std::mem::take(&mut r.live), std::mem::take(&mut r.dirs))
    };
    for l in live.values() {
        signal_group(l.pid);
    }
    for l in live.values() {
        await_group_gone(l.pid, true);
        let _ = std::fs::remove_dir_all(&l.scratch);
        if let Some(f) = &l.stderr_temp {
            let _ = std::fs::remove_file(f);
        }
    }
    for d in dirs.values() {
        let _ = std::fs::remove_dir_all(d);
    }
    live.len()
}
