//! The single micro marker: scaffolding plus the rolling summary.

use compactsim_fakes::summarizer::RollingSummary;
use compactsim_model::tokens::chars_for_rough_tokens;
use compactsim_model::{Content, ContentKind, Flags, Message, MsgId, Role, Segment};

/// Builds a marker row carrying `summary` behind `scaffold_tokens` of wrapper text.
pub fn build(id: MsgId, role: Role, summary: &RollingSummary, scaffold_tokens: u32) -> Message {
    let scaffold = Segment {
        kind: ContentKind::Scaffold,
        chars: chars_for_rough_tokens(scaffold_tokens),
        seed: 0x5CAF_F01D,
        origin: id,
        facts: Vec::new(),
    };
    let body = Segment {
        kind: ContentKind::Summary,
        chars: chars_for_rough_tokens(summary.tokens),
        seed: id.0 as u64,
        origin: id,
        facts: summary.facts.clone(),
    };
    let flags = Flags {
        summary_marker: true,
        micro_marker: true,
        has_user_turn: false,
        persisted: false,
    };
    Message::new(id, role, Content::from_segments(vec![scaffold, body])).with_flags(flags)
}

/// Reads the rolling summary back out of a summary row (rehydration after a restart):
/// the facts it carries and the size of its summary text.
pub fn rehydrate(marker: &Message) -> RollingSummary {
    let tokens = marker
        .content
        .segments
        .iter()
        .filter(|s| s.kind == ContentKind::Summary)
        .map(|s| s.chars.div_ceil(4))
        .sum();
    RollingSummary {
        facts: marker.content.facts(),
        tokens,
    }
}

/// Count of live micro markers.
pub fn count(messages: &[Message]) -> usize {
    messages.iter().filter(|m| m.is_micro_marker()).count()
}
