use crate::class::{classify, EventClass};
use crate::idset::IdMarks;
use crate::{Invariant, InvariantInfo, MAX_WITNESS_ROWS};
use compactsim_model::{Event, Transition, Witness};

/// A compaction pass or a repair never increases the message count.
///
/// Checked on micro passes (every outcome), on any other compaction event and on
/// repairs. Appends, restarts and unknown non-compaction events are not checked: they
/// are allowed to add rows, and a restart's reload is judged by the persistence
/// invariants.
#[derive(Clone, Debug, Default)]
pub struct CountNonGrowing {
    before_ids: IdMarks,
}

pub const INFO: InvariantInfo = InvariantInfo {
    id: "count-non-growing",
    statement: "a compaction pass or a repair never increases the message count",
    // No bug switch is shown breaking it at a failing transition (H-75345-A breaks
    // api-valid first), so it claims none.
    catches: &[],
    class: crate::InvariantClass::Universal,
};

fn applies(event: &Event) -> bool {
    matches!(
        classify(event),
        EventClass::Micro | EventClass::OtherCompaction { .. } | EventClass::Repair
    )
}

impl Invariant for CountNonGrowing {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, event: &Event) -> bool {
        applies(event)
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        if !applies(t.event) || t.after.len() <= t.before.len() {
            return None;
        }
        let mut w = Witness::default().fact(format!(
            "message count grew from {} to {} on {}",
            t.before.len(),
            t.after.len(),
            t.event.describe()
        ));
        self.before_ids.fill(t.before.iter().map(|m| m.id));
        let new_rows = t
            .after
            .iter()
            .enumerate()
            .filter(|(_, m)| !self.before_ids.contains(m.id));
        for (i, m) in new_rows.take(MAX_WITNESS_ROWS) {
            w = w.row(i, m, "after: row not in before");
        }
        Some(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;

    #[test]
    fn fires_when_a_pass_adds_a_row_and_names_it() {
        let before = vec![user(0), calling(1, &[1]), tool(2, 1), reply(3)];
        let after = vec![
            user(0),
            micro_marker(4, &[1]),
            calling(1, &[1]),
            tool(2, 1),
            reply(3),
        ];
        let ev = absorbed(1, &[1, 2, 3]);
        let w = CountNonGrowing::default()
            .observe(&transition(&ev, &before, &after))
            .expect("count grew on a pass");
        let w = readable(w);
        assert_eq!(witness_ids(&w), vec![4]);
        assert_eq!(w.rows[0].index, 1);
    }

    #[test]
    fn fires_on_a_repair_that_grows() {
        let before = vec![user(0), reply(1)];
        let after = vec![user(0), reply(1), user(2)];
        let ev = repair_event(1);
        let w = CountNonGrowing::default().observe(&transition(&ev, &before, &after));
        assert_eq!(witness_ids(&w.expect("repair grew")), vec![2]);
    }

    #[test]
    fn quiet_on_shrinking_passes_and_on_appends() {
        let mut inv = CountNonGrowing::default();
        let before = vec![user(0), calling(1, &[1]), tool(2, 1), reply(3), user(4)];
        let after = vec![user(0), micro_marker(5, &[1]), user(4)];
        let ev = absorbed(1, &[1, 2, 3]);
        assert!(inv.observe(&transition(&ev, &before, &after)).is_none());
        let ev = append_event(2);
        assert!(inv.observe(&transition(&ev, &after, &before)).is_none());
        assert!(!inv.checks(&ev) && inv.checks(&repair_event(2)));
    }
}
