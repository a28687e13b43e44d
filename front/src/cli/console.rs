//! The process's ends: standard output that may be a closed pipe or a full disk, and
//! SIGINT/SIGTERM. Either ends the process at once, with a one-line message on stderr,
//! after removing every temporary file of the reports; never with a panic.
//!
//! Commands print through [`out!`](crate::out) and [`outln!`](crate::outln) instead of
//! `print!`/`println!`, whose failure is a panic.

use super::exit::Exit;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the first thread that ends the process: any other that would end it too (a
/// worker's closed pipe, `main` returning while a signal is handled) waits for it.
static ENDING: AtomicBool = AtomicBool::new(false);

/// Claims the end of the process; a thread that finds it claimed parks for good (the
/// claiming thread exits the process).
fn claim_end() {
    if ENDING.swap(true, Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// The exit code `main` returns, unless another thread is ending the process (a signal
/// being handled): then `main` waits for that thread's exit and its message.
pub fn exit_code(code: u8) -> std::process::ExitCode {
    claim_end();
    std::process::ExitCode::from(code)
}

/// Exit code of a process ended by SIGINT (128 + the signal number, as shells report it).
pub const EXIT_INTERRUPTED_SIGINT: u8 = 130;
/// Exit code of a process ended by SIGTERM.
pub const EXIT_INTERRUPTED_SIGTERM: u8 = 143;

/// Writes `args` to standard output, control characters but newline and tab escaped
/// ([`crate::printable::text`]); a failed write (closed pipe, full disk) ends the
/// process with [`Exit::Internal`] after a message on stderr.
pub fn write_out(args: std::fmt::Arguments<'_>) {
    let composed = std::fmt::format(args);
    let text = crate::printable::text(&composed);
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        drop(stdout);
        end(
            &format!("cannot write to standard output: {e}"),
            Exit::Internal.code() as u8,
        );
    }
}

/// Kills every adapter child's process group and removes its scratch directory and
/// temporary stderr file, removes the reports' temporary files, says `message` on
/// stderr (control characters escaped; a stderr that cannot be written is ignored) and
/// exits with `code`.
pub fn end(message: &str, code: u8) -> ! {
    claim_end();
    finish(message, code)
}

/// [`end`] once the end is claimed.
fn finish(message: &str, code: u8) -> ! {
    // Reports closed first: a worker that sees its adapter die commits nothing after.
    compactsim_reports::remove_pending_files();
    compactsim_harness::external::groups::end_all();
    let _ = writeln!(std::io::stderr(), "{}", crate::printable::text(message));
    std::process::exit(i32::from(code))
}

/// Starts the thread that turns SIGINT and SIGTERM into [`end`]: adapter processes
/// killed (with everything they forked), temporary files removed, "interrupted" on
/// stderr, exit 130 or 143. Without the thread (it could not be
/// started) the signals keep their default action.
pub fn handle_interrupts() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    compactsim_harness::external::watchdog::before_stall_exit(close_for_stall);
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("interrupts".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                claim_end();
                let (name, code) = if signal == SIGTERM {
                    ("SIGTERM", EXIT_INTERRUPTED_SIGTERM)
                } else {
                    ("SIGINT", EXIT_INTERRUPTED_SIGINT)
                };
                compactsim_reports::remove_pending_files();
                let children = compactsim_harness::external::groups::end_all();
                let killed = match children {
                    0 => String::new(),
                    n => format!("{n} adapter process group(s) killed, "),
                };
                finish(
                    &format!("interrupted ({name}): {killed}temporary files removed"),
                    code,
                );
            }
        });
    drop(spawned);
}

/// What the stall watchdog does before it ends the adapters and the process: claims the
/// end (so `main` cannot return its own code) and closes the reports, so no report is
/// written by a worker that sees its adapter killed.
fn close_for_stall() {
    claim_end();
    compactsim_reports::remove_pending_files();
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
