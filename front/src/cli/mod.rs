//! The commands behind the `compactsim` binary. `main.rs` dispatches to these;
//! `flags` and `requests` hold the flags and their checks.

pub mod args;
pub mod caps;
pub mod console;
pub mod diff;
pub mod exit;
pub mod failures;
pub mod flags;
pub mod list;
pub mod matrix;
pub mod merge;
pub mod outdir;
pub mod progress;
pub mod replay;
pub mod requests;
pub mod run;
pub mod scenario;
pub mod selftest;
pub mod selftest_external;
pub mod selftest_junit;
pub mod shrink;
pub mod study;
pub mod sweep;
