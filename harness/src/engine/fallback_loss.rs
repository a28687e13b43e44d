//! What a static fallback loses, counted as such in the report
//! (`batch.facts_lost_static_fallback`): read from the transition, as the oracle reads
//! it, never from the compactor's `fallback` label.

use compactsim_invariants::text::text_facts;
use compactsim_model::{Event, FactId, MsgId, Transition};
use std::collections::BTreeSet;

/// On a batch pass that wrote a summary row (new id, or new content) while no summarizer
/// call was answered (condense calls aside): the number of distinct facts spelled by
/// rows of `before` that left and spelled by no row of `after`. 0 on any other
/// transition.
pub fn facts_lost(t: &Transition<'_>) -> u64 {
    if !matches!(t.event, Event::BatchPass(_))
        || t.delta.is_empty()
        || t.served.iter().any(|c| c.ok && !c.condense)
    {
        return 0;
    }
    let before_ids: BTreeSet<MsgId> = t.before.iter().map(|m| m.id).collect();
    let wrote_summary = t.after.iter().filter(|m| m.is_summary()).any(|m| {
        !before_ids.contains(&m.id)
            || t.before
                .iter()
                .any(|b| b.id == m.id && b.content != m.content)
    });
    if !wrote_summary {
        return 0;
    }
    let after_ids: BTreeSet<MsgId> = t.after.iter().map(|m| m.id).collect();
    let left: BTreeSet<FactId> = t
        .before
        .iter()
        .filter(|m| !after_ids.contains(&m.id))
        .flat_map(|m| text_facts(&m.content))
        .collect();
    if left.is_empty() {
        return 0;
    }
    let kept: BTreeSet<FactId> = t
        .after
        .iter()
        .flat_map(|m| text_facts(&m.content))
        .collect();
    left.difference(&kept).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_model::{
        BatchPass, BatchPassOutcome, BatchTrigger, Content, ContentKind, Flags, Message, Role,
        Segment, ServedCall,
    };

    fn row(id: u32, facts: &[u32], summary: bool) -> Message {
        let seg = Segment {
            kind: ContentKind::Prose,
            chars: 400,
            seed: id as u64,
            origin: MsgId(id),
            facts: facts.iter().map(|&f| FactId(f)).collect(),
        };
        Message::new(MsgId(id), Role::User, Content::single(seg)).with_flags(Flags {
            summary_marker: summary,
            ..Flags::default()
        })
    }

    fn pass() -> Event {
        Event::BatchPass(BatchPass {
            turn: 1,
            trigger: BatchTrigger::Preflight,
            outcome: BatchPassOutcome::Compacted,
            messages_before: 0,
            messages_after: 0,
            tokens_before: 0,
            tokens_after: 0,
            head_end: 0,
            summary_tokens: 0,
            fallback: true,
            summary_failed: true,
            summary_call_failed: true,
            now_ms: 0,
            fallback_mismatch: None,
        })
    }

    fn answered(ok: bool) -> ServedCall {
        ServedCall {
            condense: false,
            ok,
            expanded: false,
            latency_ms: 0,
            input_tokens: 0,
            facts_in: vec![],
            facts_out: vec![],
            connection_dropped: false,
            empty_output: false,
            tool_results_named: None,
        }
    }

    #[test]
    fn counts_the_facts_a_fallback_pass_dropped_and_wrote_nowhere() {
        let before = vec![
            row(1, &[10, 11], false),
            row(2, &[12], false),
            row(3, &[], false),
        ];
        // The fallback spells fact 11 again; 10 and 12 are lost.
        let after = vec![row(9, &[11], true), row(3, &[], false)];
        let e = pass();
        let failed = [answered(false)];
        let t = Transition::new(0, &e, &before, &after, &failed);
        assert_eq!(facts_lost(&t), 2);
        // With an answered call the loss is no fallback's (no-silent-drop judges it).
        let ok = [answered(true)];
        assert_eq!(facts_lost(&Transition::new(0, &e, &before, &after, &ok)), 0);
        // No summary written: summary-failure-safe's business, not a fallback's loss.
        let bare = vec![row(3, &[], false)];
        assert_eq!(
            facts_lost(&Transition::new(0, &e, &before, &bare, &failed)),
            0
        );
    }
}
