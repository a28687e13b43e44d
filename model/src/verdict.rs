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
