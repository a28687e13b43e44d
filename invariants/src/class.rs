//! The event kinds an invariant distinguishes. Every invariant classifies events through
//! [`classify`], so a new event kind added to the model lands in one of two explicit
//! buckets — [`EventClass::OtherCompaction`] when `Event::is_compaction()` says so (batch
//! passes and any later compaction kind), else [`EventClass::Other`] — and each
//! invariant documents what it does with those buckets instead of silently ignoring
//! them. The agent loop's events have classes of their own.

use compactsim_model::{Event, MsgId, Preflight, ProviderCall, Transition};

#[derive(Clone, Copy, Debug)]
pub(crate) enum EventClass<'a> {
    /// The world appended the rows of one turn.
    Append,
    /// A micro-compaction pass (any outcome; its labels are for printing only).
    Micro,
    /// A compaction pass that is not a micro pass (batch compaction). Whether it
    /// changed the list is an observation ([`changed`]), never the pass's own label.
    OtherCompaction,
    /// The pre-send repair pass.
    Repair,
    /// The agent process restarted and reloaded the persisted transcript.
    Restart,
    /// Turn-start preflight decision (changes nothing; its passes are separate events).
    Preflight(&'a Preflight),
    /// A provider call; on success the response rows were appended. The request sent is
    /// the transition's `before`.
    ProviderCall(&'a ProviderCall),
    /// A failed turn; its rows may have been rolled back.
    TurnFailed,
    /// A session reset: the transcript restarted empty (system row kept).
    SessionReset,
    /// A legacy rotation (changes nothing in the list).
    Rotation,
    /// An event kind this crate does not know yet.
    Other,
}

pub(crate) fn classify(event: &Event) -> EventClass<'_> {
    #[allow(unreachable_patterns)]
    match event {
        Event::TurnAppended { .. } => EventClass::Append,
        Event::MicroPass(_) => EventClass::Micro,
        Event::Repair { .. } => EventClass::Repair,
        Event::Restart { .. } => EventClass::Restart,
        Event::Preflight(p) => EventClass::Preflight(p),
        Event::ProviderCall(c) => EventClass::ProviderCall(c),
        Event::TurnFailed { .. } => EventClass::TurnFailed,
        Event::SessionReset { .. } => EventClass::SessionReset,
        Event::Rotation { .. } => EventClass::Rotation,
        _ if event.is_compaction() => EventClass::OtherCompaction,
        _ => EventClass::Other,
    }
}

/// The transition provably changed nothing: the engine passed the same list as
/// `before` and `after` (it does so only for events that do not touch the list).
pub(crate) fn unchanged(t: &Transition<'_>) -> bool {
    std::ptr::eq(t.before, t.after)
}

/// The transition changed the list, as observed (not as any label claims): `after`
/// differs from `before` in length, ids or content (its delta is not empty).
pub(crate) fn changed(t: &Transition<'_>) -> bool {
    !t.delta.is_empty()
}

/// A batch (non-micro) compaction pass that compacted, as observed: it changed the list
/// and a row of `before` left it. A pass that only rewrote rows in place compacted
/// nothing (hermes-agent 0.19.0 returns its tool-output prune when it aborts; it counts
/// no compaction, so its head does not decay).
pub(crate) fn committed_batch(t: &Transition<'_>) -> bool {
    matches!(classify(t.event), EventClass::OtherCompaction) && changed(t) && rows_left(t)
}

/// Some row of `before` is not in `after` (by id). Rows outside the changed window are
/// equal, ids included, to rows of `after`, so only the window's rows are looked up
/// (equal to asking every row: `rows_left_equals_asking_every_row`).
fn rows_left(t: &Transition<'_>) -> bool {
    let removed = t.delta.removed(t.before);
    if removed.is_empty() {
        return false;
    }
    let mut after: Vec<MsgId> = t.after.iter().map(|m| m.id).collect();
    after.sort_unstable();
    removed.iter().any(|m| after.binary_search(&m.id).is_err())
}

/// The transition provably only appended rows: `before` is a shorter view of the same
/// memory as `after`. Returns the index of the first appended row.
pub(crate) fn pure_append(t: &Transition<'_>) -> Option<usize> {
    (std::ptr::eq(t.before.as_ptr(), t.after.as_ptr()) && t.before.len() < t.after.len())
        .then_some(t.before.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;

    #[test]
    fn known_events_land_in_their_own_class() {
        assert!(matches!(classify(&append_event(1)), EventClass::Append));
        assert!(matches!(classify(&micro_pass_event(1)), EventClass::Micro));
        assert!(matches!(classify(&repair_event(1)), EventClass::Repair));
        assert!(matches!(classify(&restart_event(1)), EventClass::Restart));
        assert!(matches!(
            classify(&batch_event(
                1,
                compactsim_model::BatchTrigger::Preflight,
                true
            )),
            EventClass::OtherCompaction
        ));
        assert!(matches!(
            classify(&reset_event(1)),
            EventClass::SessionReset
        ));
        assert!(matches!(
            classify(&failed_event(1, true, 0)),
            EventClass::TurnFailed
        ));
    }

    /// The window-only lookup of `rows_left` equals asking every row of `before`, on
    /// every way of keeping, dropping, duplicating and reordering a few rows.
    #[test]
    fn rows_left_equals_asking_every_row() {
        let before = vec![user(0), reply(1), user(2), reply(3), user(1)];
        let ev = append_event(1);
        let (mut left, mut stayed) = (0u32, 0u32);
        for keep in 0u32..(1 << 5) {
            for shape in 0..3 {
                let mut after: Vec<_> = (0..5)
                    .filter(|i| keep & (1 << i) != 0)
                    .map(|i| before[i].clone())
                    .collect();
                match shape {
                    1 => after.reverse(),
                    2 => after.push(reply(3)),
                    _ => {}
                }
                let t = transition(&ev, &before, &after);
                let ids: std::collections::BTreeSet<_> = after.iter().map(|m| m.id).collect();
                let plain = t.before.iter().any(|m| !ids.contains(&m.id));
                assert_eq!(rows_left(&t), plain, "keep {keep:b} shape {shape}");
                if plain {
                    left += 1;
                } else {
                    stayed += 1;
                }
            }
        }
        assert!(left > 20 && stayed > 5, "left {left}, stayed {stayed}");
    }

    #[test]
    fn unchanged_means_the_same_slice_not_equal_content() {
        let rows = vec![user(0)];
        let copy = rows.clone();
        let ev = append_event(0);
        assert!(unchanged(&transition(&ev, &rows, &rows)));
        assert!(!unchanged(&transition(&ev, &rows, &copy)));
    }
}
