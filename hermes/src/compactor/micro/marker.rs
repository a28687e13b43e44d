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

/// Asserts the contract of a superseding micro commit: one micro marker is left. O(n),
/// as the supersede itself, which walks the whole list.
pub fn assert_one(messages: &[Message]) {
    let n = count(messages);
    assert!(
        n == 1,
        "CONTRACT: one micro marker after a superseding micro commit, not {n}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_fakes::test_rows::row;

    fn marker(id: u32) -> Message {
        build(MsgId(id), Role::Assistant, &RollingSummary::default(), 10)
    }

    #[test]
    fn one_marker_passes() {
        assert_one(&[row(0, Role::User, 10), marker(1), row(2, Role::User, 10)]);
    }

    #[test]
    #[should_panic(expected = "CONTRACT: one micro marker after a superseding micro commit, not 2")]
    fn two_markers_fire() {
        assert_one(&[marker(0), row(1, Role::User, 10), marker(2)]);
    }
}
