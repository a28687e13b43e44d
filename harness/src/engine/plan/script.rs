//! A fixed script of turns: rows described by role, kind, size, facts and tool calls.
//! Playing a script allocates ids in the order the shape generator does (per row: the
//! message id, then its call ids, then its facts), so a script recorded from a
//! generated case replays with the same message, call and fact ids. Text seeds are
//! derived from the message id: a script's materialized text does not depend on the seed.

use crate::shapes::arguments;
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::rng::mix64;
use compactsim_model::{CallId, Content, ContentKind, Message, Role, Segment, ToolCall};
use serde::Serialize;
use std::collections::VecDeque;

/// Mixed into a message id to derive its text seeds.
pub const CONTENT_SEED_SALT: u64 = 0x5C21_97ED_0000_0000;

/// A script: an optional system row, rows present before the first turn, and turns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Script {
    pub system: Option<RowPlan>,
    /// Turns appended as one transition before turn 0, with no compaction pass between
    /// them (the history a story starts from).
    pub history: Vec<TurnPlan>,
    /// Turn `i` of the case appends `turns[i]`; the case ends when they run out.
    pub turns: Vec<TurnPlan>,
}

/// The rows of one turn, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TurnPlan {
    pub rows: Vec<RowPlan>,
}

/// One row. A tool row answers the oldest unanswered call of the latest assistant row
/// with calls in the same turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RowPlan {
    pub role: Role,
    pub kind: ContentKind,
    /// Characters of text; 0 is a row without content (a silent tool-call row).
    pub chars: u32,
    /// Fresh facts the text mentions.
    pub facts: u32,
    pub calls: Vec<CallPlan>,
}

/// One tool call of an assistant row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CallPlan {
    pub tool: String,
    /// Characters of the JSON arguments (at least the empty object's length).
    pub args_chars: u32,
}

impl RowPlan {
    /// A row of `role` without calls.
    pub fn new(role: Role, kind: ContentKind, chars: u32, facts: u32) -> Self {
        RowPlan {
            role,
            kind,
            chars,
            facts,
            calls: Vec::new(),
        }
    }

    /// The description of an existing row (what a recording writes down).
    pub fn of(m: &Message) -> Self {
        RowPlan {
            role: m.role,
            kind: m
                .content
                .segments
                .first()
                .map_or(ContentKind::Prose, |s| s.kind),
            chars: m.content.chars(),
            facts: m.content.facts().len() as u32,
            calls: m
                .tool_calls
                .iter()
                .map(|c| CallPlan {
                    tool: c.name.clone(),
                    args_chars: c.arguments.len() as u32,
                })
                .collect(),
        }
    }
}

impl TurnPlan {
    pub fn of(rows: &[Message]) -> Self {
        TurnPlan {
            rows: rows.iter().map(RowPlan::of).collect(),
        }
    }
}

fn seed(id: compactsim_model::MsgId, part: u64) -> u64 {
    mix64(CONTENT_SEED_SALT ^ ((id.0 as u64) << 8) ^ part)
}

/// Builds the rows of one turn (or of the system prompt) with fresh ids.
pub fn build_rows(rows: &[RowPlan], ids: &mut IdAlloc) -> Vec<Message> {
    let mut pending: VecDeque<CallId> = VecDeque::new();
    rows.iter()
        .map(|row| {
            let id = ids.msg();
            let calls: Vec<ToolCall> = row
                .calls
                .iter()
                .enumerate()
                .map(|(i, c)| ToolCall {
                    id: ids.call(),
                    name: c.tool.clone(),
                    arguments: arguments(&c.tool, c.args_chars, seed(id, i as u64 + 1)),
                })
                .collect();
            let facts = (0..row.facts).map(|_| ids.fact()).collect();
            let content = if row.chars == 0 {
                Content::empty()
            } else {
                Content::single(Segment {
                    kind: row.kind,
                    chars: row.chars,
                    seed: seed(id, 0),
                    origin: id,
                    facts,
                })
            };
            let mut m = Message::new(id, row.role, content);
            if !calls.is_empty() {
                pending = calls.iter().map(|c| c.id).collect();
                m = m.with_tool_calls(calls);
            }
            if row.role == Role::Tool {
                if let Some(call) = pending.pop_front() {
                    m = m.with_tool_call_id(call);
                }
            }
            m
        })
        .collect()
}

/// Characters a spelled-out fact needs (`FACT-000001` and a space), as the shape
/// generator counts them.
pub const FACT_CHARS: u32 = 12;

/// Facts a row of `chars` characters can mention: one per [`FACT_CHARS`], and at least
/// one when it has any text.
pub fn facts_room(chars: u32) -> u32 {
    (chars / FACT_CHARS).max(u32::from(chars > 0))
}

impl Script {
    /// Number of rows in history and turns.
    pub fn rows(&self) -> usize {
        self.history
            .iter()
            .chain(&self.turns)
            .map(|t| t.rows.len())
            .sum()
    }

    /// The script's contract: a system row only as `system`, calls only on assistant
    /// rows, every tool row answers a pending call of its turn, no facts without text.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(system) = &self.system {
            if system.role != Role::System || !system.calls.is_empty() {
                return Err("the system row must have role system and no calls".into());
            }
        }
        for (n, turn) in self.history.iter().enumerate() {
            check_turn(turn).map_err(|e| format!("history turn {n}: {e}"))?;
        }
        for (n, turn) in self.turns.iter().enumerate() {
            check_turn(turn).map_err(|e| format!("turn {n}: {e}"))?;
        }
        Ok(())
    }
}

impl Script {
    /// What the agent loop needs on top of [`Script::validate`]: every turn starts with
    /// its user row and has no other (the loop appends the user row, then each provider
    /// call produces the next assistant row with its tool rows).
    pub fn check_agent_turns(&self) -> Result<(), String> {
        for (n, turn) in self.turns.iter().enumerate() {
            if turn.rows.first().map(|r| r.role) != Some(Role::User) {
                return Err(format!(
                    "turn {n}: an agent-loop turn starts with its user row"
                ));
            }
            if let Some(i) = turn.rows.iter().skip(1).position(|r| r.role == Role::User) {
                return Err(format!(
                    "turn {n}: row {}: an agent-loop turn has one user row, its first",
                    i + 1
                ));
            }
        }
        Ok(())
    }
}

fn check_turn(turn: &TurnPlan) -> Result<(), String> {
    let mut pending = 0usize;
    for (i, row) in turn.rows.iter().enumerate() {
        let bad = |e: &str| Err(format!("row {i}: {e}"));
        match row.role {
            Role::System => return bad("role system is only allowed as the script's system row"),
            Role::Tool if pending == 0 => return bad("tool row without a pending call"),
            Role::Tool => pending -= 1,
            Role::User | Role::Assistant => {}
        }
        if !row.calls.is_empty() {
            if row.role != Role::Assistant {
                return bad("only assistant rows make tool calls");
            }
            pending = row.calls.len();
        }
        if row.chars == 0 && row.facts > 0 {
            return bad("a row without text cannot mention facts");
        }
        if row.facts > facts_room(row.chars) {
            return bad("more facts than the text has room for (one per 12 characters)");
        }
    }
    Ok(())
}
