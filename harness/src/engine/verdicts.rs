//! Verdicts: which invariants a case broke, and whether it stops at the first.
//!
//! In [`Verdicts::All`] a case goes on after its first violation (within its own
//! limits: the turn, step and work budgets still end it) and every invariant that
//! fires is recorded once, with its first violation; a later violation of an invariant
//! already recorded is not recorded again. In [`Verdicts::First`] the case stops at the
//! first transition that breaks an invariant. The case's outcome (its first violation,
//! the exit code) is the same in both modes: the first mode is the all mode cut short.

use compactsim_model::Violation;
use std::fmt;

/// Whether a case is judged past its first violation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verdicts {
    /// Stop at the first violation (the library default: shrinking, sweeps and
    /// selftests credit a case by its first violation).
    #[default]
    First,
    /// Go on after it and record every invariant that fires (the CLI `run` default).
    All,
}

impl Verdicts {
    /// The CLI value: `all` or `first`.
    pub fn parse(s: &str) -> Result<Verdicts, String> {
        match s {
            "all" => Ok(Verdicts::All),
            "first" => Ok(Verdicts::First),
            other => Err(format!("--verdicts must be all or first, got `{other}`")),
        }
    }
}

impl fmt::Display for Verdicts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdicts::All => "all",
            Verdicts::First => "first",
        })
    }
}

/// Adds to `fired` each violation of `new` whose invariant is not in it yet (the first
/// violation of every invariant, in the order they fired). `fired` holds at most one
/// entry per invariant of the catalogue, so it stays small whatever the case's length.
pub fn note(fired: &mut Vec<Violation>, new: &[Violation]) {
    for v in new {
        if !fired.iter().any(|f| f.invariant == v.invariant) {
            fired.push(v.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_model::Witness;

    fn v(id: &str, step: u32) -> Violation {
        Violation {
            invariant: id.to_string(),
            turn: 0,
            step,
            message: String::new(),
            witness: Witness::default(),
        }
    }

    #[test]
    fn an_invariant_is_noted_once_with_its_first_step() {
        let mut fired = Vec::new();
        note(&mut fired, &[v("api-valid", 3)]);
        note(&mut fired, &[v("api-valid", 5), v("no-silent-drop", 5)]);
        let got: Vec<(&str, u32)> = fired
            .iter()
            .map(|f| (f.invariant.as_str(), f.step))
            .collect();
        assert_eq!(got, [("api-valid", 3), ("no-silent-drop", 5)]);
    }

    #[test]
    fn the_mode_parses_and_prints_its_cli_value() {
        for m in [Verdicts::All, Verdicts::First] {
            assert_eq!(Verdicts::parse(&m.to_string()), Ok(m));
        }
        assert!(Verdicts::parse("some")
            .unwrap_err()
            .contains("all or first"));
    }
}
