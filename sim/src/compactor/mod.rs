//! The systems under test: reference Hermes-style compactors with bug switches.

pub mod batch;
pub mod boundaries;
pub mod micro;
pub mod repair;
pub mod threshold;
