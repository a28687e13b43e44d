//! What a finding's scenario says about one release (caught, masked, clean, cannot
//! run), and the bisect answer over the releases in order. Pure functions of what the
//! harness observed: the case's outcome and every verdict of a `--verdicts all` run.

use compactsim_harness::engine::{CaseOutcome, CaseResult};
use compactsim_model::Violation;
use schemars::JsonSchema;
use serde::Serialize;

/// One cell of the finding × release table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Cell {
    /// The finding's invariant fires, and nothing fired before it: a judge that stops
    /// at the first violation reports this finding.
    Caught { step: u32 },
    /// The finding's invariant fires (judged by it alone), but `by` fired at an earlier
    /// step: a first-violation judge reports `by` and hides the finding.
    Masked { step: u32, by: String, by_step: u32 },
    /// The finding's invariant fires, but its witness lacks the text the finding names
    /// (`witness` in the matrix file): another fault fired the same invariant. `message`
    /// is what the violation says instead.
    OtherWitness { step: u32, message: String },
    /// The finding's invariant does not fire; `fired` lists the invariants that did.
    Clean { fired: Vec<String> },
    /// The scenario could not be judged on this release.
    CannotRun { reason: String },
}

impl Cell {
    /// Whether the release has the finding (caught or masked).
    pub fn affected(&self) -> bool {
        matches!(self, Cell::Caught { .. } | Cell::Masked { .. })
    }

    /// Whether the cell is a verdict about the release (not "cannot run").
    pub fn ran(&self) -> bool {
        !matches!(self, Cell::CannotRun { .. })
    }

    /// The short word the tables show.
    pub fn word(&self) -> &'static str {
        match self {
            Cell::Caught { .. } => "caught",
            Cell::Masked { .. } => "masked",
            Cell::OtherWitness { .. } => "other witness",
            Cell::Clean { .. } => "clean",
            Cell::CannotRun { .. } => "cannot run",
        }
    }

    /// The cell as the tables show it: the word and its detail.
    pub fn text(&self) -> String {
        match self {
            Cell::Caught { .. } => "caught".into(),
            Cell::Masked { by, .. } => format!("masked by {by}"),
            Cell::OtherWitness { .. } => "fired, other witness".into(),
            Cell::Clean { fired } if fired.is_empty() => "clean".into(),
            Cell::Clean { fired } => format!("clean ({} fired)", fired.join(", ")),
            Cell::CannotRun { reason } => format!("cannot run: {reason}"),
        }
    }
}

/// The cell of a case judged past its first violation, for the finding `invariant`
/// whose violation shows `witness` (any violation of it, when `None`).
pub fn classify(invariant: &str, witness: Option<&str>, result: &CaseResult) -> Cell {
    if let Some(cell) = fired_cell(invariant, witness, &result.verdicts) {
        return cell;
    }
    match &result.outcome {
        CaseOutcome::Internal(what) => Cell::CannotRun {
            reason: first_line(what),
        },
        _ => Cell::Clean {
            fired: result
                .verdicts
                .iter()
                .map(|v| v.invariant.clone())
                .collect(),
        },
    }
}

/// The cell when `invariant` is among `verdicts` (each invariant's first violation):
/// other witness, masked or caught. `None` when it did not fire.
fn fired_cell(invariant: &str, witness: Option<&str>, verdicts: &[Violation]) -> Option<Cell> {
    let own = verdicts.iter().find(|v| v.invariant == invariant)?;
    let first = verdicts.iter().min_by_key(|v| v.step)?;
    Some(if !witness.is_none_or(|w| own.says(w)) {
        Cell::OtherWitness {
            step: own.step,
            message: own.message.clone(),
        }
    } else if first.step < own.step {
        Cell::Masked {
            step: own.step,
            by: first.invariant.clone(),
            by_step: first.step,
        }
    } else {
        Cell::Caught { step: own.step }
    })
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}

/// Where a finding starts and ends over the releases in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Bisect {
    pub first_affected: Option<String>,
    pub last_affected: Option<String>,
    /// Releases before the first affected one whose case failed on other invariants
    /// only, or on the finding's invariant with another witness: the finding may sit
    /// behind them in a way this scenario does not show.
    pub failed_otherwise_before: Vec<String>,
    /// Affected releases whose cell is `masked`.
    pub masked: Vec<String>,
    /// One sentence: introduced between which runnable releases, fixed between which.
    pub answer: String,
}

/// The bisect answer of one finding: `cells[i]` is the cell of `releases[i]`.
pub fn bisect(releases: &[&str], cells: &[Cell]) -> Bisect {
    let ran: Vec<(usize, &Cell)> = cells.iter().enumerate().filter(|(_, c)| c.ran()).collect();
    let first = ran.iter().position(|(_, c)| c.affected());
    let last = ran.iter().rposition(|(_, c)| c.affected());
    let name = |k: usize| releases[ran[k].0].to_string();
    let failed_otherwise_before = match first {
        Some(f) => ran[..f]
            .iter()
            .filter(|(_, c)| {
                matches!(c, Cell::OtherWitness { .. })
                    || matches!(c, Cell::Clean { fired } if !fired.is_empty())
            })
            .map(|(i, _)| releases[*i].to_string())
            .collect(),
        None => Vec::new(),
    };
    let masked = cells
        .iter()
        .zip(releases)
        .filter(|(c, _)| matches!(c, Cell::Masked { .. }))
        .map(|(_, r)| r.to_string())
        .collect();
    let answer = match (first, last) {
        (None, _) | (_, None) if ran.is_empty() => "no release could run it".to_string(),
        (None, _) | (_, None) => "no release tested is affected".to_string(),
        (Some(f), Some(l)) => {
            let start = if f == 0 {
                format!("affected since the oldest release that ran ({})", name(f))
            } else {
                format!("introduced between {} and {}", name(f - 1), name(f))
            };
            let end = if l + 1 == ran.len() {
                format!("still affected in the newest ({})", name(l))
            } else {
                format!("gone between {} and {}", name(l), name(l + 1))
            };
            let gaps = ran[f..=l].iter().filter(|(_, c)| !c.affected()).count();
            let gaps = if gaps > 0 {
                format!("; {gaps} release(s) in between are not affected")
            } else {
                String::new()
            };
            format!("{start}; {end}{gaps}")
        }
    };
    Bisect {
        first_affected: first.map(name),
        last_affected: last.map(name),
        failed_otherwise_before,
        masked,
        answer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caught() -> Cell {
        Cell::Caught { step: 3 }
    }
    fn clean() -> Cell {
        Cell::Clean { fired: vec![] }
    }
    fn cannot() -> Cell {
        Cell::CannotRun {
            reason: "no venv".into(),
        }
    }

    #[test]
    fn bisect_names_the_neighbours_across_releases_that_cannot_run() {
        let names = ["r1", "r2", "r3", "r4", "r5"];
        let cells = [clean(), cannot(), caught(), caught(), clean()];
        let b = bisect(&names, &cells);
        assert_eq!(b.first_affected.as_deref(), Some("r3"));
        assert_eq!(b.last_affected.as_deref(), Some("r4"));
        assert_eq!(
            b.answer,
            "introduced between r1 and r3; gone between r4 and r5"
        );
    }

    #[test]
    fn bisect_of_a_finding_in_every_release_and_in_none() {
        let names = ["r1", "r2"];
        let all = bisect(&names, &[caught(), caught()]);
        assert_eq!(
            all.answer,
            "affected since the oldest release that ran (r1); still affected in the newest (r2)"
        );
        assert_eq!(
            bisect(&names, &[clean(), clean()]).answer,
            "no release tested is affected"
        );
        assert_eq!(
            bisect(&names, &[cannot(), cannot()]).answer,
            "no release could run it"
        );
    }

    fn violation(invariant: &str, step: u32, fact: &str) -> Violation {
        Violation {
            invariant: invariant.into(),
            turn: 1,
            step,
            message: fact.into(),
            witness: compactsim_model::Witness::default().fact(fact),
        }
    }

    const SUMMARY_ROW: &str = "a summary row written with no answered summarizer call";

    #[test]
    fn a_finding_is_caught_only_with_the_witness_it_names() {
        let own = violation(
            "summary-failure-safe",
            4,
            "a summary row written with no answered summarizer call (1 served, 0 answered)",
        );
        let caught = fired_cell(
            "summary-failure-safe",
            Some(SUMMARY_ROW),
            std::slice::from_ref(&own),
        );
        assert_eq!(caught, Some(Cell::Caught { step: 4 }));
        // No witness named: any violation of the invariant is the finding's.
        let b6 = violation(
            "summary-failure-safe",
            4,
            "0 rows removed and 23 rewritten with no summary written (the pass reported aborted)",
        );
        assert_eq!(
            fired_cell("summary-failure-safe", None, std::slice::from_ref(&b6)),
            Some(Cell::Caught { step: 4 })
        );
        // The same invariant fired by another fault: neither caught nor affected.
        let other = fired_cell("summary-failure-safe", Some(SUMMARY_ROW), &[b6]).unwrap();
        assert!(
            matches!(&other, Cell::OtherWitness { step: 4, message } if message.starts_with("0 rows removed"))
        );
        assert!(!other.affected() && other.ran());
        assert_eq!(other.text(), "fired, other witness");
        assert_eq!(
            fired_cell("summary-failure-safe", Some(SUMMARY_ROW), &[]),
            None
        );
    }

    #[test]
    fn bisect_ends_where_only_another_witness_fires() {
        let other = Cell::OtherWitness {
            step: 4,
            message: "0 rows removed".into(),
        };
        let names = ["r1", "r2", "r3", "r4"];
        let b = bisect(&names, &[other.clone(), caught(), clean(), other]);
        assert_eq!(b.first_affected.as_deref(), Some("r2"));
        assert_eq!(b.last_affected.as_deref(), Some("r2"));
        assert_eq!(b.failed_otherwise_before, vec!["r1".to_string()]);
        assert_eq!(
            b.answer,
            "introduced between r1 and r2; gone between r2 and r3"
        );
    }

    #[test]
    fn masked_cells_are_affected_and_listed() {
        let masked = Cell::Masked {
            step: 9,
            by: "head-protected".into(),
            by_step: 2,
        };
        let b = bisect(&["r1", "r2"], &[masked.clone(), caught()]);
        assert_eq!(b.masked, vec!["r1".to_string()]);
        assert_eq!(b.first_affected.as_deref(), Some("r1"));
        assert_eq!(masked.text(), "masked by head-protected");
    }
}
