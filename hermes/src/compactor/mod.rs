//! The systems under test: reference Hermes-style compactors with bug switches.

pub mod batch;
pub mod boundaries;
pub mod micro;
pub mod reference;
pub mod repair;
pub mod tail_iot;
pub mod threshold;
