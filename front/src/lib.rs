//! compactsim, the front: the command line, scenario files and their gate, the
//! shrinker, the bug-catalogue self-test and strategy studies, over the harness
//! (`compactsim_harness`) that judges Hermes as modelled (`compactsim_hermes`).

/// mimalloc instead of the system allocator (feature `mimalloc`, on by default), for the
/// binary and for everything that links this library (the benches, the tests): a case
/// allocates and frees many small rows, segments and per-transition sets, and glibc's
/// malloc and free cost about 18 % of all instructions of the micro default suite.
/// Allocation addresses reach no report. The cost is peak RSS (docs/performance.md).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod cli;
pub mod printable;
pub mod scenario;
pub mod selftest;
pub mod shrink;
pub mod study;
