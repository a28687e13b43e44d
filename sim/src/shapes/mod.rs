//! Conversation shapes: generators of agent turns. A family fixes the character of a
//! conversation (chatty, tool-heavy, ...); its parameters are drawn per case from the
//! `Params` stream with swarm-style feature switches (some features off, skewed
//! weights), and the content of every turn is drawn from the `Shape` stream.
//!
//! CONTRACT (used by the engine and the compactors):
//! - `ShapeParams::draw(family, rng)` draws parameters from the Params stream only.
//! - `Conversation::new(params, shape_rng)`; `system_prompt()` is called once first;
//!   `next_turn(turn, ids)` returns the rows of one agent turn, in order:
//!   one real user row, then zero or more rounds of (assistant row with 1..k tool calls,
//!   then exactly one tool row per call in call order), then one final assistant reply
//!   with text and no tool calls. Tool-call arguments are valid JSON.
//! - Every row gets fresh ids from `IdAlloc`; content is lazy (`Segment`s) and every
//!   segment's `origin` is the row's own id; facts are planted with `ids.fact()`.

use crate::ids::IdAlloc;
use crate::rng::SimRng;
use compactsim_model::Message;
use serde::Serialize;

/// The conversation families.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    Chatty,
    ToolHeavy,
    LongToolOutputs,
    HugePrompts,
    CodeReview,
    MultiAgentRoom,
    Cron,
    TinyWindow,
}

impl Family {
    pub const ALL: [Family; 8] = [
        Family::Chatty,
        Family::ToolHeavy,
        Family::LongToolOutputs,
        Family::HugePrompts,
        Family::CodeReview,
        Family::MultiAgentRoom,
        Family::Cron,
        Family::TinyWindow,
    ];

    /// Stable kebab-case name (CLI, reports, scenario files).
    pub fn name(self) -> &'static str {
        todo!()
    }

    pub fn parse(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }

    /// One line for `compactsim list shapes`.
    pub fn description(self) -> &'static str {
        todo!()
    }
}

/// Parameters of one conversation, drawn per case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ShapeParams {
    pub family: Family,
    /// The main model's context window in tokens.
    pub context_length: u32,
    /// System prompt present (the gateway `/compress` path) or not (live agent list).
    pub system_prompt: bool,
    // further fields are the generator's own
}

impl ShapeParams {
    pub fn draw(family: Family, rng: &mut SimRng) -> ShapeParams {
        let _ = rng;
        todo!("{family:?}")
    }
}

/// A conversation generator.
pub struct Conversation {
    pub params: ShapeParams,
}

impl Conversation {
    pub fn new(params: ShapeParams, rng: SimRng) -> Self {
        let _ = rng;
        Conversation { params }
    }

    /// The system row, if the shape has one.
    pub fn system_prompt(&mut self, ids: &mut IdAlloc) -> Option<Message> {
        let _ = ids;
        todo!()
    }

    /// The rows of turn `turn` (0-based).
    pub fn next_turn(&mut self, turn: u32, ids: &mut IdAlloc) -> Vec<Message> {
        let _ = (turn, ids);
        todo!()
    }
}
