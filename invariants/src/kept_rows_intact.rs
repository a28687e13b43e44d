use crate::class::{classify, pure_append, unchanged, EventClass};
use crate::text::{text_key, TextKey};
use crate::{Invariant, InvariantInfo, Policies, MAX_WITNESS_ROWS};
use compactsim_model::{Event, Message, MsgId, Role, Transition, Witness};
use std::collections::BTreeMap;

/// A row a compaction pass keeps is the row it was.
///
/// Judged on micro passes and batch passes (and any unknown compaction kind): every
/// non-summary row of `before` whose id is still in `after` holds, in `after`,
///
/// - the same text (segment by segment, by text identity, `text.rs`), role and tool
///   calls (metadata flags are not text and are not judged); or
/// - a **verbatim merge**: its role and its tool calls, and its whole text as one
///   contiguous run of the new row's segments (a summary merged in front of the first
///   tail row, user rows joined by the merge separator: text is added around it, none
///   of its own is changed); or
/// - under the `tool_output_prune` policy, on a batch pass, a **declared prune**: a
///   tool row answering the same call with its output rewritten (the one-line
///   description, the duplicate placeholder; hermes-agent 0.19.0's description quotes
///   an argument whole, so it can be longer than the output it replaces), or a row whose
///   text is kept (as above) whose tool calls are the same calls (id and name) with
///   their arguments rewritten (truncated). Where the prune's own protected tail ends
///   is the compactor's: the harness does not see it.
///
/// A summary row of `before` is not judged here (a rolling summary is rewritten by
/// design; marker-contained and marker-pristine judge it). The pre-send repair's own
/// edits (merges, stray results, unanswered calls) are declared repairs judged by
/// no-silent-drop and api-valid; other events do not compact and are not judged.
#[derive(Clone, Debug, Default)]
pub struct KeptRowsIntact {
    policies: Policies,
}

pub const INFO: InvariantInfo = InvariantInfo {
    id: "kept-rows-intact",
    statement: "a row a compaction pass keeps (same id) keeps its text, role and tool calls, \
                unless it is merged verbatim into a larger row or a declared prune rewrites \
                its tool output or arguments",
    catches: &[],
    class: crate::InvariantClass::Universal,
};

impl KeptRowsIntact {
    /// The invariant for a compactor declaring `policies`.
    pub fn new(policies: Policies) -> Self {
        KeptRowsIntact { policies }
    }
}

/// Why a kept row is not intact.
fn rewrite(before: &Message, after: &Message, prune: bool) -> Option<&'static str> {
    if before.role != after.role {
        return Some("its role changed");
    }
    let text_kept = text_within(before, after);
    let calls_kept = before.tool_calls == after.tool_calls;
    if text_kept && calls_kept {
        return None;
    }
    if prune && before.role == Role::Tool {
        return (before.tool_call_id != after.tool_call_id)
            .then_some("its tool output became another call's");
    }
    if !text_kept {
        return Some("its text changed");
    }
    let pruned = prune
        && before.tool_calls.len() == after.tool_calls.len()
        && before
            .tool_calls
            .iter()
            .zip(after.tool_calls.iter())
            .all(|(b, a)| {
                b.id == a.id && b.name == a.name && a.arguments.len() <= b.arguments.len()
            });
    (!pruned).then_some("its tool calls changed")
}

/// Whether every segment of `before`'s text is in `after`'s text, as one contiguous run
/// in order (equal text is the run of all of it).
fn text_within(before: &Message, after: &Message) -> bool {
    let b: Vec<TextKey<'_>> = before.content.segments.iter().map(text_key).collect();
    let a: Vec<TextKey<'_>> = after.content.segments.iter().map(text_key).collect();
    b.is_empty() || a.windows(b.len()).any(|w| w == b.as_slice())
}

impl Invariant for KeptRowsIntact {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, event: &Event) -> bool {
        matches!(
            classify(event),
            EventClass::Micro | EventClass::OtherCompaction
        )
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        if !self.checks(t.event) || unchanged(t) || pure_append(t).is_some() {
            return None;
        }
        let prune = self.policies.tool_output_prune
            && matches!(classify(t.event), EventClass::OtherCompaction);
        // Rows outside the changed windows are equal by the delta's contract.
        let removed = t.delta.removed_range();
        let old: BTreeMap<MsgId, usize> = removed
            .clone()
            .filter(|&i| !t.before[i].is_summary())
            .map(|i| (t.before[i].id, i))
            .collect();
        if old.is_empty() {
            return None;
        }
        let bad: Vec<(usize, usize, &str)> = t
            .delta
            .added_range()
            .filter_map(|j| {
                let i = *old.get(&t.after[j].id)?;
                rewrite(&t.before[i], &t.after[j], prune).map(|why| (i, j, why))
            })
            .collect();
        let (first_i, _, why) = *bad.first()?;
        let mut w = Witness::default().fact(format!(
            "{} kept rows rewritten on {}; {} first: {why}",
            bad.len(),
            t.event.describe(),
            t.before[first_i].id
        ));
        for (i, j, _) in bad.into_iter().take(MAX_WITNESS_ROWS / 2) {
            w = w.row(i, &t.before[i], "before: the kept row").row(
                j,
                &t.after[j],
                "after: the same row rewritten",
            );
        }
        Some(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use compactsim_model::{BatchTrigger, MsgId};

    fn start() -> Vec<Message> {
        vec![
            user(0),
            reply(1),
            user(2),
            calling(3, &[7]),
            tool(4, 7),
            reply(5),
            user(6),
        ]
    }

    fn compacted(tail: &[Message]) -> Vec<Message> {
        let mut after = vec![user(0), batch_summary(9, &[1])];
        after.extend(tail.iter().cloned());
        after
    }

    fn pass() -> Event {
        batch_event(1, BatchTrigger::Preflight, true)
    }

    #[test]
    fn fires_when_a_kept_reply_is_rewritten() {
        let before = start();
        let mut tail = before[5..].to_vec();
        tail[0].set_content(prose(5, 30, &[]));
        let w = KeptRowsIntact::default()
            .observe(&transition(&pass(), &before, &compacted(&tail)))
            .map(readable)
            .expect("a kept reply lost its text");
        assert!(w.facts[0].contains("its text changed"), "{:?}", w.facts);
        assert_eq!(witness_ids(&w), vec![5, 5]);
    }

    #[test]
    fn fires_when_a_kept_tool_output_is_rewritten_without_a_declared_prune() {
        let before = start();
        let mut tail = before[3..].to_vec();
        tail[1].set_content(prose(4, 40, &[]));
        let after = compacted(&tail);
        let undeclared = KeptRowsIntact::new(Policies::NONE)
            .observe(&transition(&pass(), &before, &after))
            .map(readable)
            .expect("a prune nobody declared");
        assert_eq!(witness_ids(&undeclared), vec![4, 4]);
        assert!(KeptRowsIntact::new(Policies::HERMES)
            .observe(&transition(&pass(), &before, &after))
            .is_none());
        // A declared prune rewrites the output of its own call, on batch passes only.
        tail[1].tool_call_id = Some(compactsim_model::CallId(8));
        assert!(KeptRowsIntact::new(Policies::HERMES)
            .observe(&transition(&pass(), &before, &compacted(&tail)))
            .is_some());
        tail[1].tool_call_id = Some(compactsim_model::CallId(7));
        let micro = absorbed(1, &[1, 2]);
        assert!(KeptRowsIntact::new(Policies::HERMES)
            .observe(&transition(&micro, &before, &compacted(&tail)))
            .is_some());
    }

    #[test]
    fn quiet_on_kept_rows_merged_verbatim_and_on_other_events() {
        let before = start();
        let tail = before[5..].to_vec();
        assert!(KeptRowsIntact::default()
            .observe(&transition(&pass(), &before, &compacted(&tail)))
            .is_none());
        let mut summary_in_front = merged(&[&batch_summary(9, &[1]), &before[5]]);
        summary_in_front.id = MsgId(5);
        summary_in_front.role = before[5].role;
        let after = vec![user(0), summary_in_front, user(6)];
        assert!(KeptRowsIntact::default()
            .observe(&transition(&pass(), &before, &after))
            .is_none());
        let mut rewritten = before.clone();
        rewritten[5].set_content(prose(5, 30, &[]));
        assert!(KeptRowsIntact::default()
            .observe(&transition(&append_event(1), &before, &rewritten))
            .is_none());
    }
}
