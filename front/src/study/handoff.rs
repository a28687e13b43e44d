//! Fresh-session handoff (hermes-domain §5, #20372 / PR #29293): the session ends and
//! a new one starts from the system prompt and a bounded handoff packet summarizing
//! everything before it.

use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::summarizer::{RollingSummary, Summarizer};
use compactsim_model::tokens::chars_for_rough_tokens;
use compactsim_model::{Content, ContentKind, Flags, Message, Role, Segment};

/// The packet for a session whose rows (system prompt excluded) are `body`, at most
/// `tokens_max` tokens, and the summarizer's time in ms. None when the summary failed:
/// the session continues and the next turn tries again.
pub fn packet(
    body: &[Message],
    summarizer: &mut Summarizer,
    ids: &mut IdAlloc,
    tokens_max: u32,
) -> (Option<Message>, u64) {
    let facts: Vec<_> = body.iter().flat_map(|m| m.content.facts()).collect();
    let tokens: u32 = body.iter().map(|m| m.tokens().rough).sum();
    let call = summarizer.summarize(&RollingSummary::default(), &facts, tokens);
    let summary = match call.result {
        Ok(s) if !call.expanded => s,
        _ => return (None, call.latency_ms),
    };
    let id = ids.msg();
    let segment = Segment {
        kind: ContentKind::Summary,
        chars: chars_for_rough_tokens(summary.tokens.min(tokens_max)),
        seed: id.0 as u64,
        origin: id,
        facts: summary.facts,
    };
    let flags = Flags {
        summary_marker: true,
        ..Flags::default()
    };
    let row = Message::new(id, Role::User, Content::single(segment)).with_flags(flags);
    (Some(row), call.latency_ms)
}
