//! compactsim: the simulated world (conversation shapes, fake summarizer and provider,
//! reference compactors with bug switches), the case engine and the parallel runner.

/// mimalloc instead of the system allocator (feature `mimalloc`, on by default), for the
/// binary and for everything that links this library (the benches, the tests): a case
/// allocates and frees many small rows, segments and per-transition sets, and glibc's
/// malloc and free cost about 18 % of all instructions of the micro default suite.
/// Allocation addresses reach no report. The cost is peak RSS (docs/performance.md).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
