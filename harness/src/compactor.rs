//! `--compactor`: which compactor the engine drives behind the seam — an axis separate
//! from the loop (`--strategy`). Other compactors (an external program over the stdio
//! protocol) join here.

use compactsim_fakes::seam::Compactor;
use compactsim_hermes::compactor::reference::Reference;
use std::fmt;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CompactorChoice {
    /// The Rust reference models with their bug switches.
    #[default]
    Reference,
    /// The adapter the process chose with `--compactor external --adapter 'CMD'`
    /// (`external::select`), speaking adapters/PROTOCOL.md.
    External,
}

impl CompactorChoice {
    pub const NAMES: &[&str] = &["reference", "external"];

    pub fn name(&self) -> &'static str {
        match self {
            CompactorChoice::Reference => "reference",
            CompactorChoice::External => "external",
        }
    }

    /// Parses a `--compactor` value.
    pub fn parse(name: &str) -> Result<CompactorChoice, String> {
        match name {
            "reference" => Ok(CompactorChoice::Reference),
            "external" => Ok(CompactorChoice::External),
            _ => Err(format!(
                "unknown compactor `{name}` (known: {})",
                Self::NAMES.join(", ")
            )),
        }
    }

    /// The compactor of one case, given the reference compactor its configuration
    /// describes (an external adapter is told the same window and configuration).
    pub fn make(&self, reference: Reference) -> Box<dyn Compactor> {
        match self {
            CompactorChoice::Reference => Box::new(reference),
            CompactorChoice::External => crate::engine::selected(reference),
        }
    }
}

impl fmt::Display for CompactorChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_unknown_ones_are_refused() {
        for name in CompactorChoice::NAMES {
            assert_eq!(CompactorChoice::parse(name).unwrap().name(), *name);
        }
        assert!(CompactorChoice::parse("python")
            .unwrap_err()
            .contains("known: reference, external"));
    }
}
