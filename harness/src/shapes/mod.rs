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
//! - Sizes: rows are sized from the window's tail budget (`threshold::derive` with the
//!   0.19.0 defaults) so the transcript outgrows it after about `fill_turns` turns (under
//!   50 on average for every family); no row — content plus call envelopes — exceeds
//!   `MESSAGE_CAP_PER_MILLE` of the budget, except the user rows of `huge-prompts`.

mod args;
mod chatty;
mod code_review;
mod conversation;
mod cron;
mod huge_prompts;
mod long_tool_outputs;
mod multi_agent_room;
mod params;
mod recipe;
mod swarm;
#[cfg(test)]
mod tests;
mod tiny_window;
mod tool_heavy;

pub use args::{argument_key, arguments};
pub use conversation::{assert_turn_shape, Conversation};
pub use params::{Burst, Features, HugePrompt, KindMix, Marathon, OpeningPaste, SizeRange};
pub use recipe::{message_cap_chars, tail_chars, MESSAGE_CAP_PER_MILLE};
pub use swarm::{
    giant_pastes, marathon, GIANT_PASTE_HI_PER_MILLE, GIANT_PASTE_ON_PER_MILLE,
    MARATHON_ON_PER_MILLE, MARATHON_TAIL_PER_MILLE, MARATHON_TURN_PER_MILLE,
};

use compactsim_fakes::rng::{weighted, SimRng};
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
        match self {
            Family::Chatty => "chatty",
            Family::ToolHeavy => "tool-heavy",
            Family::LongToolOutputs => "long-tool-outputs",
            Family::HugePrompts => "huge-prompts",
            Family::CodeReview => "code-review",
            Family::MultiAgentRoom => "multi-agent-room",
            Family::Cron => "cron",
            Family::TinyWindow => "tiny-window",
        }
    }

    pub fn parse(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }

    /// One line for `compactsim list shapes`.
    pub fn description(self) -> &'static str {
        match self {
            Family::Chatty => "mostly talk: prose questions and replies, rare tool calls",
            Family::ToolHeavy => {
                "agentic work: many rounds of often parallel tool calls, medium outputs"
            }
            Family::LongToolOutputs => {
                "few tool calls returning large outputs (logs, web pages, whole files)"
            }
            Family::HugePrompts => {
                "users paste very large prompts (logs, files, specs) between normal turns"
            }
            Family::CodeReview => {
                "long code-review session: file reads that grow, code content, patches"
            }
            Family::MultiAgentRoom => {
                "busy multi-agent room: short messages arriving in bursts (50+ a minute)"
            }
            Family::Cron => "gateway cron traffic: the same prompt and tool plan on every run",
            Family::TinyWindow => "small models with 8K-32K windows: short rows, few calls",
        }
    }

    /// Relative frequency of the family when a case draws one.
    pub const fn weight(self) -> u32 {
        match self {
            Family::ToolHeavy => 4,
            Family::Chatty | Family::CodeReview => 3,
            Family::LongToolOutputs
            | Family::HugePrompts
            | Family::MultiAgentRoom
            | Family::Cron
            | Family::TinyWindow => 2,
        }
    }
}

/// Draws a family, weighted over all of them.
pub fn draw_family(rng: &mut SimRng) -> Family {
    let weights = Family::ALL.map(Family::weight);
    Family::ALL[weighted(rng, &weights)]
}

/// Parameters of one conversation, drawn per case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ShapeParams {
    pub family: Family,
    /// The main model's context window in tokens.
    pub context_length: u32,
    /// System prompt present (the gateway `/compress` path) or not (live agent list).
    pub system_prompt: bool,
    pub system_chars: u32,
    /// Turns after which the transcript was sized to outgrow the tail budget.
    pub fill_turns: u32,
    /// Tools the agent calls (uniformly).
    pub tools: Vec<&'static str>,
    pub user_chars: SizeRange,
    /// Text of an assistant row that carries tool calls.
    pub call_text_chars: SizeRange,
    pub tool_chars: SizeRange,
    /// Text of the final reply of a turn.
    pub reply_chars: SizeRange,
    pub args_chars: SizeRange,
    /// Arguments when the long-args feature fires (> 500 characters).
    pub long_args_chars: SizeRange,
    /// No row but a huge prompt is larger than this (content plus call envelopes).
    pub message_chars_max: u32,
    /// Chance a turn calls tools at all.
    pub tool_turn_per_mille: u32,
    /// A tool turn has 1..=rounds_max rounds.
    pub rounds_max: u32,
    pub parallel_calls: bool,
    /// A round has 1..=calls_max calls (1 without parallel calls).
    pub calls_max: u32,
    /// Kinds of user and reply text.
    pub text_kinds: KindMix,
    pub tool_kinds: KindMix,
    /// A row mentions 0..=facts_max facts (a user row at least one).
    pub facts_max: u32,
    pub features: Features,
}

impl ShapeParams {
    /// Draws the parameters of one case of `family` from the Params stream.
    pub fn draw(family: Family, rng: &mut SimRng) -> ShapeParams {
        match family {
            Family::Chatty => chatty::draw(rng),
            Family::ToolHeavy => tool_heavy::draw(rng),
            Family::LongToolOutputs => long_tool_outputs::draw(rng),
            Family::HugePrompts => huge_prompts::draw(rng),
            Family::CodeReview => code_review::draw(rng),
            Family::MultiAgentRoom => multi_agent_room::draw(rng),
            Family::Cron => cron::draw(rng),
            Family::TinyWindow => tiny_window::draw(rng),
        }
    }

    /// Draws code-review parameters for a fixed window (studies); None for the other
    /// families, whose windows are part of their character.
    pub fn draw_for_window(
        family: Family,
        context_length: u32,
        rng: &mut SimRng,
    ) -> Option<ShapeParams> {
        (family == Family::CodeReview).then(|| code_review::draw_for_window(context_length, rng))
    }
}
