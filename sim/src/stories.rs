//! Built-in scripted sessions that reproduce the stories of the seed documents.
//!
//! `seed-004-six-turns` (seeds/004): a tool-heavy conversation of about 4,100 tokens
//! gets six more short turns with a micro pass after each. With stale markers never
//! superseded (H-75345-B) the transcript grows turn after turn (the post measured
//! 4,104 → 4,797); with the supersede fix it shrinks (4,104 → 2,572).

use crate::bugs::BugSet;
use crate::compactor::micro::{MicroCompactor, MicroConfig};
use crate::compactor::repair::repair;
use crate::ids::IdAlloc;
use crate::rng::{stream, Stream};
use crate::summarizer::{Summarizer, SummarizerConfig};
use compactsim_model::{
    tokens_rough_total, CallId, Content, ContentKind, Message, Role, Segment, ToolCall,
};

/// Turns of history before the measured six.
pub const SEED_004_HISTORY_TURNS: u32 = 8;
/// The measured turns.
pub const SEED_004_MEASURED_TURNS: u32 = 6;
/// Tail budget of the story: the newest few turns stay verbatim.
pub const SEED_004_TAIL_BUDGET_TOKENS: u32 = 800;

/// Builds rows with fresh ids and one planted fact each.
pub struct ScriptBuilder {
    pub ids: IdAlloc,
}

impl ScriptBuilder {
    pub fn row(&mut self, role: Role, kind: ContentKind, chars: u32) -> Message {
        let id = self.ids.msg();
        let fact = self.ids.fact();
        let seg = Segment {
            kind,
            chars,
            seed: id.0 as u64,
            origin: id,
            facts: vec![fact],
        };
        Message::new(id, role, Content::single(seg))
    }

    /// A turn: user, then (if `tool_chars` > 0) one tool call and its result, then a reply.
    pub fn turn(&mut self, user_chars: u32, tool_chars: u32, reply_chars: u32) -> Vec<Message> {
        let mut rows = vec![self.row(Role::User, ContentKind::Prose, user_chars)];
        if tool_chars > 0 {
            let call: CallId = self.ids.call();
            let tool_call = ToolCall {
                id: call,
                name: "read_file".into(),
                arguments: "{\"path\":\"src/lib.rs\"}".into(),
            };
            rows.push(
                self.row(Role::Assistant, ContentKind::Prose, 60)
                    .with_tool_calls(vec![tool_call]),
            );
            rows.push(
                self.row(Role::Tool, ContentKind::Code, tool_chars)
                    .with_tool_call_id(call),
            );
        }
        rows.push(self.row(Role::Assistant, ContentKind::Prose, reply_chars));
        rows
    }
}

/// Transcript tokens at the start and after each of the six measured turns.
pub fn seed_004_six_turns(bugs: BugSet) -> Vec<u64> {
    let mut b = ScriptBuilder {
        ids: IdAlloc::default(),
    };
    let mut msgs: Vec<Message> = Vec::new();
    for _ in 0..SEED_004_HISTORY_TURNS {
        msgs.extend(b.turn(120, 1_600, 200));
    }
    let mut micro = MicroCompactor::new(
        MicroConfig::with_tail_budget(SEED_004_TAIL_BUDGET_TOKENS),
        bugs,
    );
    let mut summarizer =
        Summarizer::new(SummarizerConfig::reliable(), stream(4, Stream::Summarizer));
    let mut series = vec![tokens_rough_total(&msgs)];
    for turn in 0..SEED_004_MEASURED_TURNS {
        msgs.extend(b.turn(120, 0, 160));
        micro.pass(&mut msgs, turn, &mut summarizer, &mut b.ids);
        repair(&mut msgs);
        series.push(tokens_rough_total(&msgs));
    }
    series
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bugs::Bug;

    #[test]
    fn seed_004_grows_with_stale_markers_and_shrinks_with_supersede() {
        let buggy = seed_004_six_turns(BugSet::of(&[Bug::H75345B]));
        let fixed = seed_004_six_turns(BugSet::none());
        println!("H-75345-B on : {buggy:?}");
        println!("H-75345-B off: {fixed:?}");
        assert_eq!(buggy[0], fixed[0]);
        assert_eq!(buggy.len(), 7);
        assert!(
            buggy[6] > buggy[0],
            "stale markers must grow the transcript: {buggy:?}"
        );
        assert!(fixed[6] < fixed[0], "supersede must shrink it: {fixed:?}");
        assert!(
            fixed.windows(2).skip(1).all(|w| w[1] <= w[0] + 200),
            "{fixed:?}"
        );
    }
}
