//! compactsim-invariants: the oracle. Each invariant is a small struct with a stable id
//! that observes every transition of a case and returns a violation with a witness.
//! This crate depends on the model only: an invariant that shared code with the
//! compactor it judges could not catch that compactor's bugs.

use compactsim_model::{Transition, Violation, Witness};

mod one_marker_max;
mod testkit;

pub use one_marker_max::OneMarkerMax;

/// Contract parameters the oracle needs to know about the system under test. They are
/// statements of the specification, never computed by the compactor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OracleConfig {
    /// Non-system head rows protected from compaction (`protect_first_n`).
    pub protect_first_n: u32,
}

impl Default for OracleConfig {
    fn default() -> Self {
        OracleConfig { protect_first_n: 3 }
    }
}

/// Catalogue entry of an invariant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvariantInfo {
    /// Stable id, as used on the command line, in reports and in scenario files.
    pub id: &'static str,
    /// One-line statement.
    pub statement: &'static str,
    /// Bug ids this invariant exists for.
    pub catches: &'static [&'static str],
}

/// One checker. `observe` sees every transition of a case in order, from the first.
pub trait Invariant: Send {
    fn info(&self) -> InvariantInfo;

    /// Checks one transition; returns the evidence when the invariant fails on it.
    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness>;
}

/// Builds a violation of `info` on transition `t`.
pub fn violation(
    info: InvariantInfo,
    t: &Transition<'_>,
    message: impl Into<String>,
    witness: Witness,
) -> Violation {
    Violation {
        invariant: info.id.to_string(),
        turn: t.event.turn(),
        step: t.step,
        message: message.into(),
        witness,
    }
}
