//! The mutants that rewrite a micro pass's result.

use super::Mutant;
use compactsim_invariants::text::{chars_to_spell, spelled_facts};
use compactsim_model::{
    Content, ContentKind, FactId, Message, MicroOutcome, MicroPass, MsgId, Role, Segment,
};

/// Characters the lying marker's summary text is cut to (too few to spell a fact).
const LYING_SUMMARY_CHARS: u32 = 8;

/// `content` with every summary segment's text cut to `chars`, its fact list kept.
fn cut_summary_text(content: &Content, chars: u32) -> Content {
    let segments = content
        .segments
        .iter()
        .map(|s| match s.kind {
            ContentKind::Summary => Segment {
                chars: chars.min(s.chars),
                ..s.clone()
            },
            ContentKind::Prose | ContentKind::Code | ContentKind::Json | ContentKind::Scaffold => {
                s.clone()
            }
        })
        .collect();
    Content::from_segments(segments)
}

/// `content` with one more summary segment spelling `facts`.
fn with_spelled(content: &Content, facts: Vec<FactId>, seed: u64) -> Content {
    let mut segments = content.segments.to_vec();
    segments.push(Segment {
        kind: ContentKind::Summary,
        chars: chars_to_spell(ContentKind::Summary, &facts),
        seed,
        origin: MsgId(0),
        facts,
    });
    Content::from_segments(segments)
}

/// The first run of assistant/tool rows (from an assistant row) after index `from`
/// that follows a user row.
fn next_exchange(msgs: &[Message], from: usize) -> Option<(usize, usize)> {
    let agent = |m: &Message| matches!(m.role, Role::Assistant | Role::Tool) && !m.is_summary();
    let start = (from..msgs.len()).find(|&i| {
        msgs[i].role == Role::Assistant
            && !msgs[i].is_summary()
            && i > 0
            && msgs[i - 1].is_real_user()
    })?;
    let end = (start..msgs.len())
        .find(|&i| !agent(&msgs[i]))
        .unwrap_or(msgs.len());
    (end < msgs.len()).then_some((start, end))
}

/// Rewrites `msgs`, the result of the micro pass `pass` over `old`, as `mutant` does.
pub(super) fn apply(mutant: Mutant, old: &[Message], msgs: &mut Vec<Message>, pass: &MicroPass) {
    if pass.outcome == MicroOutcome::NoExchange && mutant == Mutant::DropsWithoutSummaryCall {
        if let Some((s, e)) = next_exchange(msgs, 1) {
            msgs.drain(s..e);
        }
        return;
    }
    if pass.outcome != MicroOutcome::Absorbed {
        return;
    }
    let marker_at = msgs.iter().rposition(|m| m.is_micro_marker());
    match mutant {
        Mutant::DeletesFreshMarker => {
            let before: Vec<MsgId> = old.iter().map(|m| m.id).collect();
            msgs.retain(|m| !m.is_micro_marker() || before.contains(&m.id));
        }
        Mutant::AbsorbsTwoReportsOne => {
            if let Some((s, e)) = next_exchange(msgs, marker_at.map_or(0, |i| i + 1)) {
                msgs.drain(s..e);
            }
        }
        Mutant::RewritesUserRow => {
            let user = msgs.iter().position(|m| m.is_real_user() && m.id.0 > 0);
            if let (Some(u), Some(k)) = (user, marker_at) {
                let extra = msgs[k].content.clone();
                msgs[u].merge_content(&extra);
            }
        }
        Mutant::ExchangeEndOffByOne => {
            if let Some(k) =
                marker_at.filter(|&k| msgs.get(k + 1).is_some_and(Message::is_real_user))
            {
                msgs.remove(k + 1);
            }
        }
        Mutant::ExchangeStartOffByOne => {
            let first = pass
                .exchange
                .first()
                .and_then(|id| old.iter().find(|m| m.id == *id));
            if let (Some(k), Some(row)) = (marker_at, first) {
                msgs.insert(k, row.clone());
            }
        }
        Mutant::StaleNewestMarker => {
            let previous = old.iter().rev().find(|m| m.is_micro_marker());
            if let (Some(k), Some(p)) = (marker_at, previous) {
                msgs[k].set_content(p.content.clone());
            }
        }
        Mutant::StripsMarkerFlag => {
            if let Some(k) = marker_at {
                msgs[k].flags.micro_marker = false;
            }
        }
        Mutant::MarkerListsWhatItsTextDropped => {
            let superseded = old.iter().any(Message::is_micro_marker);
            if let (Some(k), true) = (marker_at, superseded) {
                let cut = cut_summary_text(&msgs[k].content, LYING_SUMMARY_CHARS);
                msgs[k].set_content(cut);
            }
        }
        Mutant::SwallowsUnsummarizedExchange => swallow_next(msgs, marker_at),
        // Handled above (no exchange) or batch mutants.
        Mutant::DropsWithoutSummaryCall
        | Mutant::UnchangedPassDropsWindow
        | Mutant::BatchDropsUnsummarizedRow
        | Mutant::UnchangedPassRewritesToolOutput => {}
    }
}

/// Removes the exchange after the marker at `marker_at` and spells its facts in the
/// marker, though no summary call saw them.
fn swallow_next(msgs: &mut Vec<Message>, marker_at: Option<usize>) {
    let next = next_exchange(msgs, marker_at.map_or(0, |i| i + 1));
    let (Some(k), Some((s, e))) = (marker_at, next) else {
        return;
    };
    let facts: Vec<_> = msgs[s..e]
        .iter()
        .flat_map(|m| spelled_facts(&m.content.materialize()))
        .collect();
    // An exchange that spells no fact loses nothing a reader could name.
    if !facts.is_empty() {
        let seed = msgs[k].id.0 as u64 ^ 0x5A11_0000;
        let grown = with_spelled(&msgs[k].content, facts, seed);
        msgs[k].set_content(grown);
        msgs.drain(s..e);
    }
}
