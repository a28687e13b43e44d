//! Hermes as modelled: the reference batch and micro compactors with their 45 bug
//! switches, the agent turn loop around them, the release profiles and the loop
//! strategies. This is what is judged; it reaches the world only through the seam
//! (`compactsim_fakes::seam`) and never imports the harness or the oracle.

pub mod agent;
pub mod bug_set;
pub mod bugs;
pub mod compactor;
pub mod profile;
pub mod strategy;
pub mod strategy_kind;
