use crate::class::{pure_append, unchanged};
use crate::{Invariant, InvariantInfo};
use compactsim_model::{Transition, Witness};

/// At most one live micro marker and at most one live batch summary. Checked on `after`
/// of every transition; one that provably changed nothing (same list) is skipped, its
/// list having been checked as the previous transition's `after`; so is one that only
/// appended rows none of which is a summary.
///
/// Under the `summary_chain` policy (a compactor that keeps a summary per compaction,
/// Google ADK's sliding window) the batch rule is the chain's: any number of live batch
/// summaries, standing in the order they were written, the order of the ids the harness
/// gave them as they appeared (a summary placed before an older one fires).
#[derive(Clone, Debug, Default)]
pub struct OneMarkerMax {
    /// `summary_chain` declared.
    pub chain: bool,
}

pub const INFO: InvariantInfo = InvariantInfo {
    id: "one-marker-max",
    statement: "at most one live micro marker and at most one live batch summary",
    catches: &["H-75345-B", "IOT-0.22.2-M2", "HERMES-0.19.0-B5"],
    class: crate::InvariantClass::Universal,
};

impl Invariant for OneMarkerMax {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        if unchanged(t) {
            return None;
        }
        if pure_append(t).is_some_and(|from| !t.after[from..].iter().any(|m| m.is_summary())) {
            return None;
        }
        let micro: Vec<usize> = (0..t.after.len())
            .filter(|&i| t.after[i].is_micro_marker())
            .collect();
        let batch: Vec<usize> = (0..t.after.len())
            .filter(|&i| t.after[i].is_batch_summary())
            .collect();
        if self.chain && micro.len() <= 1 {
            return chain_out_of_order(t, &batch);
        }
        if micro.len() <= 1 && batch.len() <= 1 {
            return None;
        }
        let mut w = Witness::default().fact(format!(
            "{} micro markers, {} batch summaries after {}",
            micro.len(),
            batch.len(),
            t.event.describe()
        ));
        for &i in micro.iter().chain(batch.iter()) {
            w = w.row(i, &t.after[i], "live summary");
        }
        Some(w)
    }
}

/// The `summary_chain` rule: the live batch summaries (`batch`, row indices of `t.after`)
/// stand in the order the harness numbered them; the witness is the first pair out of
/// order.
fn chain_out_of_order(t: &Transition<'_>, batch: &[usize]) -> Option<Witness> {
    let (&older, &newer) = batch
        .windows(2)
        .map(|w| (&w[0], &w[1]))
        .find(|(&a, &b)| t.after[a].id > t.after[b].id)?;
    Some(
        Witness::default()
            .fact(format!(
                "summary chain out of order after {}: {} live batch summaries, a newer one \
                 stands before an older one",
                t.event.describe(),
                batch.len()
            ))
            .row(older, &t.after[older], "newer summary, placed first")
            .row(newer, &t.after[newer], "older summary, placed after it"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use compactsim_model::Message;

    #[test]
    fn fires_on_two_micro_markers() {
        let before = vec![user(0), reply(1)];
        let after = vec![
            user(0),
            micro_marker(2, &[1]),
            user(3),
            micro_marker(4, &[1, 2]),
        ];
        let w = OneMarkerMax::default().observe(&transition(&micro_pass_event(1), &before, &after));
        let w = readable(w.expect("two micro markers must fire"));
        assert_eq!(w.rows.len(), 2);
    }

    #[test]
    fn quiet_on_one_micro_and_one_batch_marker() {
        let after = vec![
            batch_summary(0, &[1]),
            user(1),
            micro_marker(2, &[2]),
            user(3),
        ];
        assert!(OneMarkerMax::default()
            .observe(&transition(&micro_pass_event(1), &after, &after))
            .is_none());
    }

    fn chain_pass(before: &[Message], after: &[Message], chain: bool) -> Option<Witness> {
        let event = batch_event(3, compactsim_model::BatchTrigger::PostResponse, true);
        OneMarkerMax { chain }.observe(&transition(&event, before, after))
    }

    #[test]
    fn a_chain_of_summaries_fires_without_the_policy_and_is_quiet_with_it() {
        let before = vec![user(0), reply(1), user(2), reply(3), user(4)];
        let after = vec![batch_summary(5, &[1]), batch_summary(6, &[3]), user(4)];
        let w = chain_pass(&before, &after, false).expect("two batch summaries, no chain");
        assert_eq!(readable(w).rows.len(), 2);
        assert!(chain_pass(&before, &after, true).is_none());
    }

    #[test]
    fn a_chain_out_of_order_fires_under_the_policy() {
        let before = vec![batch_summary(5, &[1]), user(2), reply(3), user(4)];
        let after = vec![batch_summary(6, &[3]), batch_summary(5, &[1]), user(4)];
        let w = readable(chain_pass(&before, &after, true).expect("newer before older"));
        assert_eq!(witness_ids(&w), vec![6, 5]);
        assert!(w.facts[0].contains("out of order"), "{:?}", w.facts);
    }

    #[test]
    fn the_chain_keeps_the_one_micro_marker_rule() {
        let before = vec![user(0), reply(1)];
        let after = vec![
            micro_marker(2, &[1]),
            batch_summary(5, &[1]),
            micro_marker(4, &[1]),
            user(3),
        ];
        assert!(chain_pass(&before, &after, true).is_some());
    }
}
