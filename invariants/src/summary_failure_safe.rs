use crate::{Invariant, InvariantInfo, MAX_WITNESS_ROWS};
use compactsim_model::{Event, Message, Transition, Witness};
use std::collections::BTreeMap;

/// A batch pass never drops rows without a summary that takes their place (H-29559).
///
/// On every batch pass, whatever outcome it reports (an "aborted" or "no-op" pass that
/// drops rows is judged like any other): if a non-summary row of `before` is gone from
/// `after`, then `after` holds a summary row written by this pass — one whose id is new
/// or whose content changed. When the summarizer failed that row is the deterministic
/// fallback (an explicit policy); a pass that drops the window with no summary at all
/// fails here. Other events are not checked.
#[derive(Debug, Default)]
pub struct SummaryFailureSafe;

pub const INFO: InvariantInfo = InvariantInfo {
    id: "summary-failure-safe",
    statement: "a batch pass never removes rows without writing a summary in their place \
                (the LLM summary or the explicit fallback)",
    catches: &["H-29559"],
};

fn written_summary(before: &[Message], after: &[Message]) -> bool {
    let old: BTreeMap<_, _> = before
        .iter()
        .filter(|m| m.is_summary())
        .map(|m| (m.id, &m.content))
        .collect();
    after
        .iter()
        .filter(|m| m.is_summary())
        .any(|m| old.get(&m.id) != Some(&&m.content))
}

impl Invariant for SummaryFailureSafe {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, event: &Event) -> bool {
        matches!(event, Event::BatchPass(_))
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        let Event::BatchPass(p) = t.event else {
            return None;
        };
        let kept: std::collections::BTreeSet<_> = t.after.iter().map(|m| m.id).collect();
        let removed: Vec<(usize, &Message)> = t
            .before
            .iter()
            .enumerate()
            .filter(|(_, m)| !m.is_summary() && !kept.contains(&m.id))
            .collect();
        if removed.is_empty() || written_summary(t.before, t.after) {
            return None;
        }
        let mut w = Witness::default().fact(format!(
            "{} rows removed with no summary written (the pass reported {}, \
             {} summarizer calls served, {} answered) on {}",
            removed.len(),
            p.outcome.label(),
            t.served.len(),
            t.served.iter().filter(|c| c.ok).count(),
            t.event.describe()
        ));
        for (i, m) in removed.into_iter().take(MAX_WITNESS_ROWS) {
            w = w.row(i, m, "before: removed without a summary");
        }
        Some(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use compactsim_model::BatchTrigger;

    fn start() -> Vec<Message> {
        vec![user(0), reply(1), user(2), reply(3), user(4), reply(5)]
    }

    fn pass() -> Event {
        batch_event(1, BatchTrigger::Preflight, true)
    }

    #[test]
    fn fires_when_the_window_is_dropped_without_a_summary() {
        let after = vec![user(4), reply(5)];
        let w = SummaryFailureSafe
            .observe(&transition(&pass(), &start(), &after))
            .expect("dropped silently");
        let w = readable(w);
        assert_eq!(w.rows.len(), 4);
        let mut with_old = vec![batch_summary(9, &[1])];
        with_old.extend(start());
        let mut kept_old = vec![batch_summary(9, &[1])];
        kept_old.extend([user(4), reply(5)]);
        assert!(
            SummaryFailureSafe
                .observe(&transition(&pass(), &with_old, &kept_old))
                .is_some(),
            "an untouched old summary is not a new one"
        );
    }

    #[test]
    fn quiet_with_a_new_or_rewritten_summary_and_on_other_events() {
        let after = vec![batch_summary(9, &[1]), user(4), reply(5)];
        assert!(SummaryFailureSafe
            .observe(&transition(&pass(), &start(), &after))
            .is_none());
        let mut merged = merged(&[&batch_summary(9, &[1]), &user(4)]);
        merged.id = compactsim_model::MsgId(4);
        let after = vec![merged, reply(5)];
        assert!(SummaryFailureSafe
            .observe(&transition(&pass(), &start(), &after))
            .is_none());
        let noop = batch_event(1, BatchTrigger::Preflight, false);
        assert!(SummaryFailureSafe
            .observe(&transition(&noop, &start(), &start()))
            .is_none());
        let append = append_event(1);
        assert!(SummaryFailureSafe
            .observe(&transition(&append, &start(), &[user(4), reply(5)]))
            .is_none());
    }

    #[test]
    fn an_aborted_or_noop_label_does_not_excuse_a_dropped_window() {
        let dropped = vec![user(4), reply(5)];
        let noop = batch_event(1, BatchTrigger::Preflight, false);
        assert!(SummaryFailureSafe
            .observe(&transition(&noop, &start(), &dropped))
            .is_some());
    }
}
