//! The commands behind the `compactsim` binary. `main.rs` parses flags and calls these.

pub mod args;
pub mod exit;
pub mod list;
pub mod replay;
pub mod run;
pub mod scenario;
pub mod selftest;
pub mod shrink;
pub mod sweep;
