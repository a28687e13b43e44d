//! Violations and their witnesses: the few messages or events that prove an invariant
//! failed, small enough to print in a terminal and to store in report.json.

use crate::ids::MsgId;
use crate::message::{Message, Role};
use crate::tokens::Tokens;
use serde::{Deserialize, Serialize};

/// One message as a witness shows it.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct WitnessRow {
    /// Position in the list the witness speaks of (`before` or `after`).
    pub index: u32,
    pub id: MsgId,
    pub role: Role,
    pub marker: bool,
    pub micro_marker: bool,
    pub tokens: Tokens,
    pub segments: u32,
    pub tool_calls: u32,
    pub note: String,
}

impl WitnessRow {
    pub fn of(index: usize, message: &Message, note: impl Into<String>) -> Self {
        WitnessRow {
            index: index as u32,
            id: message.id,
            role: message.role,
            marker: message.is_summary(),
            micro_marker: message.is_micro_marker(),
            tokens: message.tokens(),
            segments: message.content.segments.len() as u32,
            tool_calls: message.tool_calls.len() as u32,
            note: note.into(),
        }
    }
}

/// Evidence for a violation.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct Witness {
    pub rows: Vec<WitnessRow>,
    /// Free-form facts: counts, token totals, event lines.
    pub facts: Vec<String>,
}

impl Witness {
    pub fn row(mut self, index: usize, message: &Message, note: impl Into<String>) -> Self {
        self.rows.push(WitnessRow::of(index, message, note));
        self
    }

    pub fn fact(mut self, fact: impl Into<String>) -> Self {
        self.facts.push(fact.into());
        self
    }
}

/// An invariant that failed on one transition.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Violation {
    pub invariant: String,
    pub turn: u32,
    pub step: u32,
    pub message: String,
    pub witness: Witness,
}

impl Violation {
    /// Whether the violation says `text`: a plain, case-sensitive substring of its
    /// message or of one of its witness facts (how `shrink --witness` and the matrix's
    /// findings tell one kind of witness of an invariant from another).
    pub fn says(&self, text: &str) -> bool {
        self.message.contains(text) || self.witness.facts.iter().any(|f| f.contains(text))
    }

    /// A stable digest of what the violation says: FNV-1a 64 over its message, its
    /// witness facts and its witness rows as printed, one per line, as 16 lowercase hex
    /// digits. Two verdicts of one invariant at one step with the same digest say the
    /// same thing; a different digest, that the evidence differs (report.json keeps it
    /// per verdict so two runs can be compared verdict by verdict).
    pub fn witness_digest(&self) -> String {
        let rows = self.witness.rows.iter().map(WitnessRow::describe);
        let lines = std::iter::once(self.message.clone())
            .chain(self.witness.facts.iter().cloned())
            .chain(rows);
        let h = lines.fold(FNV1A64_OFFSET_BASIS, |h, line| {
            fnv1a64_from(fnv1a64_from(h, line.as_bytes()), b"\n")
        });
        format!("{h:016x}")
    }
}

/// FNV-1a 64's start value.
pub const FNV1A64_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a 64 of `bytes` continued from `h` ([`FNV1A64_OFFSET_BASIS`] to start).
pub fn fnv1a64_from(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn violation(fact: &str) -> Violation {
        Violation {
            invariant: "marker-pristine".into(),
            turn: 2,
            step: 5,
            message: "a micro marker is not worded as declared".into(),
            witness: Witness::default().fact(fact),
        }
    }

    #[test]
    fn the_witness_digest_is_stable_and_tells_evidence_apart() {
        assert_eq!(
            fnv1a64_from(FNV1A64_OFFSET_BASIS, b"a"),
            0xaf63_dc4c_8601_ec8c
        );
        let a = violation("m9 lacks the prefix");
        assert_eq!(
            a.witness_digest(),
            violation("m9 lacks the prefix").witness_digest()
        );
        assert_eq!(a.witness_digest().len(), 16);
        assert_ne!(
            a.witness_digest(),
            violation("m10 lacks the prefix").witness_digest()
        );
        // A line break counts: one fact is not the same as two that read alike.
        let mut split = violation("m9 lacks");
        split.witness = split.witness.fact(" the prefix");
        assert_ne!(a.witness_digest(), split.witness_digest());
    }
}
