//! The progress bar of long commands (`run`, `scenario`): indicatif on stderr, shown
//! only when stderr is a terminal and `--quiet` is off, so CI logs and pipes stay clean
//! and stdout (the report) is never touched.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// Redraws per second at most.
const DRAW_HZ: u8 = 8;

/// A bar over `len` items labelled `what`; hidden unless stderr is a terminal and not
/// `quiet`.
pub fn bar(len: u64, what: &'static str, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(
        Some(len),
        indicatif::ProgressDrawTarget::stderr_with_hz(DRAW_HZ),
    );
    let style = ProgressStyle::with_template("{prefix} [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_prefix(what);
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_bar_is_hidden() {
        assert!(bar(10, "cases", true).is_hidden());
    }
}
