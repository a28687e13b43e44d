use crate::class::{pure_append, unchanged};
use crate::{Invariant, InvariantInfo};
use compactsim_model::{Transition, Witness};

/// At most one live micro marker and at most one live batch summary. Checked on `after`
/// of every transition; one that provably changed nothing (same list) is skipped, its
/// list having been checked as the previous transition's `after`; so is one that only
/// appended rows none of which is a summary.
#[derive(Clone, Debug, Default)]
pub struct OneMarkerMax;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;

    #[test]
    fn fires_on_two_micro_markers() {
        let before = vec![user(0), reply(1)];
        let after = vec![
            user(0),
            micro_marker(2, &[1]),
            user(3),
            micro_marker(4, &[1, 2]),
        ];
        let w = OneMarkerMax.observe(&transition(&micro_pass_event(1), &before, &after));
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
        assert!(OneMarkerMax
            .observe(&transition(&micro_pass_event(1), &after, &after))
            .is_none());
    }
}
