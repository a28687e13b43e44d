use crate::class::{classify, pure_append, unchanged, EventClass};
use crate::text::{extend_with_segment_facts, segments_text_facts, text_facts_of};
use crate::{Invariant, InvariantInfo, MAX_WITNESS_ROWS};
use compactsim_model::{ContentKind, Event, FactId, Message, Transition, Witness};
use std::borrow::Cow;
use std::sync::Arc;

/// Information in a summary row is never dropped without being folded into a summary.
///
/// When a summary row of `before` has no summary row with its id in `after` (deleted,
/// superseded, or merged into another row — a marker merged into a user row stops being
/// a summary) or keeps its id but loses facts, every fact it carried must appear in the
/// union of the facts of the summary rows of `after`. Facts are judged as text (DESIGN
/// "Judged as text"; `text.rs`): a row holds the facts its text spells, whatever its
/// segments list. A summary row's facts are those spelled in its summary-body segments
/// when it has any (a batch summary merged into a tail row
/// keeps that row's own text beside it; that text is conversation, not summary), else
/// of all its segments. A summary row that leaves (no row of `after` has its id) takes its
/// own conversation text with it: each fact that text spells must be in a summary row of
/// `after`, still spelled in some row of `after`, or seen by a summary call answered
/// during the transition (no-silent-drop judges only rows that are not summaries, so
/// this is where such text is held). A batch pass that wrote its summary while no summarizer call
/// answered (every call the harness served for it failed, or none was made: the
/// deterministic fallback, observed — not as the pass labels itself) is exempt: the
/// fallback keeps a bounded snapshot of the previous summary by policy (hermes-domain
/// §2.3 step 6). Checked on every transition of
/// every kind, unknown kinds included: no event may lose summarized information — except
/// a session reset after compression exhaustion, which archives the whole old session
/// (it stays searchable) and starts an empty one. A transition that provably changed
/// nothing or only appended rows (see `class.rs`) is skipped: every row of `before` is
/// still there, untouched.
#[derive(Clone, Debug, Default)]
pub struct MarkerContained {
    after_summaries: Vec<usize>,
}

pub const INFO: InvariantInfo = InvariantInfo {
    id: "marker-contained",
    statement: "information in a superseded marker is contained in the summaries that replace it",
    catches: &["H-M-resume", "H-75345-A"],
    class: crate::InvariantClass::Universal,
};

/// Facts listed in a witness line at most.
const MAX_FACTS_LISTED: usize = 8;

/// The facts of `small` that are not in `large`, both ascending: one merge walk, linear
/// in both (a binary search per fact costs a log factor on summaries of thousands of
/// facts).
pub(crate) fn missing_from(small: &[FactId], large: &[FactId]) -> Vec<FactId> {
    let mut missing = Vec::new();
    let mut rest = large.iter().peekable();
    for &f in small {
        while rest.next_if(|&&g| g < f).is_some() {}
        if rest.peek() != Some(&&f) {
            missing.push(f);
        }
    }
    missing
}

fn is_subset(small: &[FactId], large: &[FactId]) -> bool {
    missing_from(small, large).is_empty()
}

/// The summarized facts of a summary row (see the type docs) as its text spells them,
/// ascending: a compactor's text holds what it keeps, whatever its segments list.
fn summary_facts(m: &Message) -> Cow<'_, [FactId]> {
    let segments = &m.content.segments;
    let has_body = segments.iter().any(|s| s.kind == ContentKind::Summary);
    segments_text_facts(
        segments
            .iter()
            .filter(move |s| !has_body || s.kind == ContentKind::Summary),
    )
}

/// The facts spelled in a summary row's own conversation text: the segments beside its
/// summary body (a summary merged into a tail row keeps that row's text, or a relabelled
/// user text, beside it), ascending; empty without a summary body.
fn conversation_facts(m: &Message) -> Vec<FactId> {
    let segments = &m.content.segments;
    if !segments.iter().any(|s| s.kind == ContentKind::Summary) {
        return Vec::new();
    }
    segments_text_facts(segments.iter().filter(|s| s.kind != ContentKind::Summary)).into_owned()
}

/// Every fact spelled in the text of a row of `after`, or in the input or answer of a
/// summary call answered during the transition (what the summarizer dropped of what it
/// saw is its retention policy, as no-silent-drop holds), ascending.
fn facts_in_any_row(t: &Transition<'_>) -> Vec<FactId> {
    let mut all: Vec<FactId> = t
        .after
        .iter()
        .flat_map(|m| {
            text_facts_of(&m.content)
                .iter()
                .copied()
                .collect::<Vec<_>>()
        })
        .chain(
            t.served
                .iter()
                .filter(|c| c.ok && !c.condense)
                .flat_map(|c| c.facts_in.iter().chain(&c.facts_out).copied()),
        )
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// A batch pass no summarizer call answered: any summary it wrote is a fallback.
fn fallback_pass(t: &Transition<'_>) -> bool {
    matches!(t.event, Event::BatchPass(_)) && !t.served.iter().any(|c| c.ok)
}

impl MarkerContained {
    /// Index in `after` of the summary row with `m`'s id, and whether `m` lost facts.
    /// `facts` is `summary_facts(m)`, read only when needed and kept for the caller.
    fn fate<'m>(
        &self,
        t: &Transition<'_>,
        m: &'m Message,
        facts: &mut Option<Cow<'m, [FactId]>>,
    ) -> (Option<usize>, bool) {
        let same = self
            .after_summaries
            .iter()
            .copied()
            .find(|&j| t.after[j].id == m.id);
        let lost = match same {
            None => true,
            Some(j) if Arc::ptr_eq(&t.after[j].content.segments, &m.content.segments) => false,
            Some(j) => {
                let own = facts.get_or_insert_with(|| summary_facts(m));
                !is_subset(own, &text_facts_of(&t.after[j].content))
            }
        };
        (same, lost)
    }

    fn union_after(&self, t: &Transition<'_>) -> Vec<FactId> {
        let mut all: Vec<FactId> = Vec::new();
        for s in self
            .after_summaries
            .iter()
            .flat_map(|&j| t.after[j].content.segments.iter())
        {
            extend_with_segment_facts(&mut all, s);
        }
        all.sort_unstable();
        all.dedup();
        all
    }

    fn witness(
        &self,
        t: &Transition<'_>,
        (i, m): (usize, &Message),
        same: Option<usize>,
        missing: &[FactId],
    ) -> Witness {
        let fate = if same.is_some() {
            "lost facts in place"
        } else {
            "is no longer a live summary"
        };
        let listed: Vec<String> = missing
            .iter()
            .take(MAX_FACTS_LISTED)
            .map(ToString::to_string)
            .collect();
        let mut w = Witness::default()
            .fact(format!(
                "summary {} {fate} after {}; {} of its facts are in no summary: {}",
                m.id,
                t.event.describe(),
                missing.len(),
                listed.join(", ")
            ))
            .row(i, m, "before: summary whose facts were dropped");
        for &j in self.after_summaries.iter().take(MAX_WITNESS_ROWS) {
            w = w.row(j, &t.after[j], "after: live summary");
        }
        if same.is_none() {
            let holder = t.after.iter().enumerate().find(|(_, a)| {
                !a.is_summary()
                    && a.content
                        .segments
                        .iter()
                        .any(|s| m.content.segments.contains(s))
            });
            if let Some((k, a)) = holder {
                w = w.row(k, a, "after: non-summary row holding the summary text");
            }
        }
        w
    }
}

impl Invariant for MarkerContained {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, _event: &Event) -> bool {
        true
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        if unchanged(t)
            || pure_append(t).is_some()
            || matches!(classify(t.event), EventClass::SessionReset)
            || fallback_pass(t)
        {
            return None;
        }
        self.after_summaries.clear();
        self.after_summaries
            .extend((0..t.after.len()).filter(|&j| t.after[j].is_summary()));
        let mut union: Option<Vec<FactId>> = None;
        let mut anywhere: Option<Vec<FactId>> = None;
        for (i, m) in t.before.iter().enumerate() {
            if !m.is_summary() {
                continue;
            }
            let mut facts = None;
            let (same, lost) = self.fate(t, m, &mut facts);
            if !lost {
                continue;
            }
            let union = union.get_or_insert_with(|| self.union_after(t));
            let facts = facts.unwrap_or_else(|| summary_facts(m));
            let missing = missing_from(&facts, union);
            if !missing.is_empty() {
                return Some(self.witness(t, (i, m), same, &missing));
            }
            // The row's own conversation text leaves with it: its facts are summarized
            // or the text is carried into a row of `after` (no-silent-drop judges only
            // rows that are not summaries).
            if same.is_none() {
                let mut missing = missing_from(&conversation_facts(m), union);
                if !missing.is_empty() {
                    let anywhere = anywhere.get_or_insert_with(|| facts_in_any_row(t));
                    missing.retain(|f| anywhere.binary_search(f).is_err());
                    if !missing.is_empty() {
                        return Some(self.witness(t, (i, m), same, &missing));
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use crate::text::text_facts;
    use compactsim_model::{MicroOutcome, MsgId, Role};

    fn observe(ev: &Event, before: &[Message], after: &[Message]) -> Option<Witness> {
        MarkerContained::default()
            .observe(&transition(ev, before, after))
            .map(readable)
    }

    #[test]
    fn fires_when_a_resumed_process_supersedes_the_marker_with_one_exchange() {
        let before = vec![
            user(0),
            micro_marker(5, &[1, 2, 3]),
            user(4),
            reply(6),
            user(7),
        ];
        let after = vec![user(0), user(4), micro_marker(8, &[4]), user(7)];
        let w = observe(&absorbed(1, &[6]), &before, &after).expect("history dropped");
        assert!(w.facts[0].contains("3 of its facts"), "{:?}", w.facts);
        assert_eq!(witness_ids(&w), vec![5, 8]);
        assert_eq!((w.rows[0].index, w.rows[1].index), (1, 2));
    }

    #[test]
    fn fires_when_the_repair_merges_a_user_role_marker_into_a_user_row() {
        let mut marker = micro_marker(5, &[1, 2]);
        marker.role = Role::User;
        let before = vec![user(0), marker.clone(), user(6)];
        let after = vec![merged(&[&user(0), &marker, &user(6)])];
        let w = observe(&repair_event(1), &before, &after).expect("marker lost");
        assert_eq!(witness_ids(&w), vec![5, 0]);
        assert!(w.rows[1].note.contains("non-summary"));
    }

    /// `observe` on a batch pass whose summary call answered.
    fn observe_answered(ev: &Event, before: &[Message], after: &[Message]) -> Option<Witness> {
        let calls = [served(true, 100, &[1, 2])];
        MarkerContained::default()
            .observe(&transition_served(ev, before, after, &calls))
            .map(readable)
    }

    /// A batch summary merged into a tail row: its summary body and the row's own text.
    fn merged_summary(id: u32, summary: &[u32], own: &[u32]) -> Message {
        let mut body = prose(id, 2000, summary).segments[0].clone();
        body.kind = ContentKind::Summary;
        let own = prose(id + 100, 400, own).segments[0].clone();
        let mut m = batch_summary(id, &[]);
        m.set_content(compactsim_model::Content::from_segments(vec![body, own]));
        m
    }

    #[test]
    fn fires_when_a_merged_summary_rows_own_text_leaves_unsummarized() {
        let before = vec![user(0), merged_summary(5, &[1, 2], &[3]), user(6)];
        let mut next = merged_summary(8, &[1, 2, 4], &[]);
        next.set_content(compactsim_model::Content::single(
            next.content.segments[0].clone(),
        ));
        let after = vec![user(0), next, user(6)];
        let ev = batch_event(1, compactsim_model::BatchTrigger::Preflight, true);
        let w = observe_answered(&ev, &before, &after).expect("own text lost");
        assert!(w.facts[0].contains("FACT-000003"), "{:?}", w.facts);
        assert_eq!(witness_ids(&w)[0], 5);
    }

    #[test]
    fn quiet_when_a_merged_summary_rows_own_text_is_summarized_or_carried() {
        let before = vec![user(0), merged_summary(5, &[1, 2], &[3]), user(6)];
        let ev = batch_event(1, compactsim_model::BatchTrigger::Preflight, true);
        // Summarized: the new summary spells FACT-000003.
        let mut next = merged_summary(8, &[1, 2, 3], &[]);
        next.set_content(compactsim_model::Content::single(
            next.content.segments[0].clone(),
        ));
        assert!(observe_answered(&ev, &before, &[user(0), next.clone(), user(6)]).is_none());
        // Carried: the own text is a row of its own again.
        let mut solo = merged_summary(8, &[1, 2], &[]);
        solo.set_content(compactsim_model::Content::single(
            solo.content.segments[0].clone(),
        ));
        let own = Message::new(
            MsgId(9),
            Role::User,
            compactsim_model::Content::single(before[1].content.segments[1].clone()),
        );
        assert!(observe_answered(&ev, &before, &[user(0), solo, own, user(6)]).is_none());
        // Seen: the answered call's input spelled FACT-000003 (the summarizer dropped it).
        let mut next = merged_summary(8, &[1, 2], &[]);
        next.set_content(compactsim_model::Content::single(
            next.content.segments[0].clone(),
        ));
        let calls = [served(true, 100, &[1, 2, 3])];
        let after = [user(0), next, user(6)];
        let t = transition_served(&ev, &before, &after, &calls);
        assert!(MarkerContained::default().observe(&t).is_none());
    }

    #[test]
    fn fires_when_a_defrag_drops_facts_in_place() {
        let before = vec![user(0), micro_marker(5, &[1, 2, 3]), user(4)];
        let after = vec![user(0), micro_marker(5, &[1, 3]), user(4)];
        let ev = micro(2, MicroOutcome::Defrag, &[], &[]);
        let w = observe(&ev, &before, &after).expect("fact 2 dropped");
        assert!(w.facts[0].contains("in place") && w.facts[0].contains("FACT-000002"));
        assert_eq!(w.rows[0].id, MsgId(5));
    }

    #[test]
    fn quiet_when_facts_are_folded_into_the_new_summaries() {
        let before = vec![
            batch_summary(1, &[7]),
            micro_marker(5, &[1, 2]),
            user(4),
            reply(6),
            user(8),
        ];
        let superseded = vec![
            batch_summary(1, &[7]),
            user(4),
            micro_marker(9, &[1, 2, 3]),
            user(8),
        ];
        assert!(observe(&absorbed(1, &[6]), &before, &superseded).is_none());
        let defragged = vec![
            batch_summary(1, &[7]),
            user(4),
            micro_marker(9, &[1, 2, 3]),
            user(8),
        ];
        let ev = micro(2, MicroOutcome::Defrag, &[], &[]);
        assert!(observe(&ev, &superseded, &defragged).is_none());
        let folded = vec![batch_summary(10, &[1, 2, 3, 7]), user(8)];
        assert!(observe(&restart_event(2), &defragged, &folded).is_none());
        assert!(observe(&append_event(3), &folded, &folded).is_none());
    }

    #[test]
    fn an_observed_fallback_and_a_session_reset_may_drop_summary_facts() {
        let before = vec![batch_summary(1, &[1, 2, 3]), user(2), reply(3), user(4)];
        let after = vec![batch_summary(5, &[3]), user(4)];
        let plain = batch_event(1, compactsim_model::BatchTrigger::Preflight, true);
        let answered = [served(true, 100, &[3])];
        let fires = |ev: &Event, calls: &[compactsim_model::ServedCall]| {
            MarkerContained::default()
                .observe(&transition_served(ev, &before, &after, calls))
                .is_some()
        };
        assert!(fires(&plain, &answered));
        let fallback = failed_summary_at(1, compactsim_model::BatchTrigger::Preflight, 0);
        assert!(
            fires(&fallback, &answered),
            "a pass labelled fallback whose summary call answered is judged"
        );
        assert!(
            !fires(&plain, &[served(false, 100, &[])]),
            "observed fallback"
        );
        assert!(!fires(&plain, &[]), "no call at all: the fallback");
        assert!(observe(&reset_event(1), &before, &[]).is_none());
    }

    /// A marker whose single segment lists `facts` in `chars` characters of text.
    fn marker_sized(id: u32, chars: u32, facts: &[u32]) -> Message {
        let mut m = micro_marker(id, facts);
        m.set_content(prose(id, chars, facts));
        m
    }

    #[test]
    fn fires_when_the_new_marker_lists_facts_its_text_does_not_spell() {
        let before = vec![user(0), micro_marker(5, &[1, 2, 3]), user(4)];
        // 30 characters spell FACT-000001 and FACT-000002, not FACT-000003.
        let after = vec![user(0), marker_sized(5, 30, &[1, 2, 3]), user(4)];
        assert_eq!(text_facts(&after[1].content).len(), 2);
        let ev = micro(2, MicroOutcome::Defrag, &[], &[]);
        let w = observe(&ev, &before, &after).expect("fact 3 is no longer in any text");
        assert!(w.facts[0].contains("FACT-000003"), "{:?}", w.facts);
        assert!(!w.facts[0].contains("FACT-000002"), "{:?}", w.facts);
    }

    #[test]
    fn quiet_when_the_old_marker_never_spelled_what_it_listed() {
        // The old marker's text spells facts 1 and 2 only: a condensed marker that spells
        // those two loses nothing a reader of the text had.
        let before = vec![user(0), marker_sized(5, 30, &[1, 2, 3]), user(4)];
        let after = vec![user(0), marker_sized(5, 200, &[1, 2]), user(4)];
        let ev = micro(2, MicroOutcome::Defrag, &[], &[]);
        assert!(observe(&ev, &before, &after).is_none());
    }

    #[test]
    fn missing_from_is_the_ascending_set_difference() {
        let ids = |v: &[u32]| v.iter().map(|&f| FactId(f)).collect::<Vec<_>>();
        let cases: &[(&[u32], &[u32], &[u32])] = &[
            (&[], &[], &[]),
            (&[1, 2, 3], &[], &[1, 2, 3]),
            (&[], &[1, 2], &[]),
            (&[1, 3, 5], &[1, 2, 3, 4, 5], &[]),
            (&[1, 3, 5, 9], &[2, 3, 4], &[1, 5, 9]),
            (&[7], &[1, 2, 3], &[7]),
            (&[0, 10], &[5], &[0, 10]),
        ];
        for (small, large, want) in cases {
            assert_eq!(missing_from(&ids(small), &ids(large)), ids(want));
            assert_eq!(is_subset(&ids(small), &ids(large)), want.is_empty());
        }
    }
}
