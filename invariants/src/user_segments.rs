//! Tracked user segments: the positions, in a row list, of the user text the
//! user-turns invariants follow (`user_turns_intact.rs`, and its batch rule in
//! `user_turns_batch.rs`).

use crate::idset::IdSet;
use compactsim_model::{ContentKind, Message, Role, Segment};

/// Position of one tracked segment: (row index, segment index).
pub(crate) type SegRef = (usize, usize);

pub(crate) fn segment(rows: &[Message], at: SegRef) -> &Segment {
    &rows[at.0].content.segments[at.1]
}

/// Collects the positions of tracked segments inside user-role rows, in order. Summary
/// and scaffold text is never user text, even when a batch summary merged into a user
/// row carries that row's id as its origin.
pub(crate) fn collect_tracked(recorded: &IdSet, rows: &[Message], out: &mut Vec<SegRef>) {
    out.clear();
    for (i, m) in rows.iter().enumerate() {
        if m.role != Role::User {
            continue;
        }
        for (k, s) in m.content.segments.iter().enumerate() {
            let generated = matches!(s.kind, ContentKind::Summary | ContentKind::Scaffold);
            if !generated && recorded.contains(s.origin) {
                out.push((i, k));
            }
        }
    }
}
