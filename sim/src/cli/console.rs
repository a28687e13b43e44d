//! The process's ends: standard output that may be a closed pipe or a full disk, and
//! SIGINT/SIGTERM. Either ends the process at once, with a one-line message on stderr,
//! after removing every temporary file of the reports; never with a panic.
//!
//! Commands print through [`out!`](crate::out) and [`outln!`](crate::outln) instead of
//! `print!`/`println!`, whose failure is a panic.

use super::exit::Exit;
use std::io::Write;

/// Exit code of a process ended by SIGINT (128 + the signal number, as shells report it).
pub const EXIT_INTERRUPTED_SIGINT: u8 = 130;
/// Exit code of a process ended by SIGTERM.
pub const EXIT_INTERRUPTED_SIGTERM: u8 = 143;

/// Writes `args` to standard output; a failed write (closed pipe, full disk) ends the
/// process with [`Exit::Internal`] after a message on stderr.
pub fn write_out(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        drop(stdout);
        end(
            &format!("cannot write to standard output: {e}"),
            Exit::Internal.code() as u8,
        );
    }
}

/// Removes the reports' temporary files, says `message` on stderr (ignoring a stderr
/// that cannot be written either) and exits with `code`.
pub fn end(message: &str, code: u8) -> ! {
    compactsim_reports::remove_pending_files();
    let _ = writeln!(std::io::stderr(), "{message}");
    std::process::exit(i32::from(code))
}

/// Starts the thread that turns SIGINT and SIGTERM into [`end`]: temporary files
/// removed, "interrupted" on stderr, exit 130 or 143. Without the thread (it could not be
/// started) the signals keep their default action.
pub fn handle_interrupts() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("interrupts".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let (name, code) = if signal == SIGTERM {
                    ("SIGTERM", EXIT_INTERRUPTED_SIGTERM)
                } else {
                    ("SIGINT", EXIT_INTERRUPTED_SIGINT)
                };
                end(
                    &format!("interrupted ({name}): temporary files removed"),
                    code,
                );
            }
        });
    drop(spawned);
}

/// Progress of a long run on stderr, only when stderr is a terminal (logs and pipes get
/// nothing): `done/total cases` at every [`PROGRESS_STEPS`]th of the run, on one line.
pub struct Progress {
    total: u64,
    done: u64,
    shown: u64,
    on: bool,
}

/// How many times a run updates its progress line.
pub const PROGRESS_STEPS: u64 = 100;
/// Runs with fewer cases show no progress.
pub const PROGRESS_CASES_MIN: u64 = 1_000;

impl Progress {
    pub fn new(total: u64) -> Progress {
        use std::io::IsTerminal;
        Progress {
            total,
            done: 0,
            shown: 0,
            on: total >= PROGRESS_CASES_MIN && std::io::stderr().is_terminal(),
        }
    }

    /// One more case done.
    pub fn tick(&mut self) {
        self.done += 1;
        let step = self.done * PROGRESS_STEPS / self.total.max(1);
        if step > self.shown {
            self.shown = step;
            if !self.on {
                return;
            }
            let end = if self.done == self.total { "\n" } else { "" };
            let _ = write!(
                std::io::stderr(),
                "\r{}/{} cases{end}",
                self.done,
                self.total
            );
        }
    }
}

/// `print!` that ends the process quietly when standard output is gone.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::console::write_out(format_args!($($arg)*))
    };
}

/// `println!` that ends the process quietly when standard output is gone.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::cli::console::write_out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::console::write_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_updates_at_most_progress_steps_times_and_ends_at_the_total() {
        let mut p = Progress {
            total: 12_345,
            done: 0,
            shown: 0,
            on: false,
        };
        let mut updates = 0;
        for _ in 0..p.total {
            let before = p.shown;
            p.tick();
            updates += u64::from(p.shown != before);
        }
        assert_eq!(
            (p.done, p.shown, updates),
            (12_345, PROGRESS_STEPS, PROGRESS_STEPS)
        );
        assert!(!Progress::new(PROGRESS_CASES_MIN - 1).on);
    }
}
