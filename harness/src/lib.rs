//! What judges: the engine that draws a case from its seed and runs it turn by turn
//! (the micro, agent-loop and gateway worlds), showing every transition to the oracle;
//! the conversation shapes; external compactors over the stdio protocol; the mutants;
//! the parallel runner, sweeps, scripted stories and the pass-by-pass diff.

#[cfg(test)]
mod agent_tests;
pub mod compactor;
pub mod diff;
pub mod engine;
pub mod external;
pub mod mutants;
pub mod runner;
pub mod shapes;
pub mod stories;
pub mod sweep;
