//! compactsim: the simulated world (conversation shapes, fake summarizer and provider,
//! reference compactors with bug switches), the case engine and the parallel runner.

pub mod bugs;
pub mod compactor;
pub mod ids;
pub mod provider;
pub mod rng;
pub mod shapes;
pub mod summarizer;
