//! compactsim: the simulated world (conversation shapes, fake summarizer and provider,
//! reference compactors with bug switches), the case engine and the parallel runner.

pub mod agent;
pub mod bug_set;
pub mod bugs;
pub mod cli;
pub mod compactor;
pub mod diff;
pub mod engine;
pub mod external;
pub mod gateway;
pub mod ids;
pub mod mutants;
pub mod profile;
pub mod provider;
pub mod rng;
pub mod runner;
pub mod scenario;
pub mod selftest;
pub mod shapes;
pub mod shrink;
pub mod stories;
pub mod strategy;
pub mod study;
pub mod summarizer;
pub mod sweep;
#[cfg(test)]
mod test_rows;
