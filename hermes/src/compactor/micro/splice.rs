//! Supersede, merge and in-place rewrite of markers.

use super::marker;
use compactsim_fakes::summarizer::RollingSummary;
use compactsim_model::{Message, MsgId, Role};

/// A list being edited: removed rows are marked dead and dropped in one pass at the
/// end, so the rows after the edits move once, not once per removal. Neighbours are
/// the nearest live rows, so every edit sees the list as if each removal had happened.
struct Edit<'a> {
    msgs: &'a mut Vec<Message>,
    dead: Vec<bool>,
}

impl<'a> Edit<'a> {
    fn new(msgs: &'a mut Vec<Message>) -> Self {
        let dead = vec![false; msgs.len()];
        Edit { msgs, dead }
    }

    fn remove(&mut self, i: usize) {
        debug_assert!(!self.dead[i], "row {i} removed twice");
        self.dead[i] = true;
    }

    /// The nearest live row before `i`.
    fn live_before(&self, i: usize) -> Option<usize> {
        (0..i).rev().find(|&k| !self.dead[k])
    }

    /// The nearest live row after `i`.
    fn live_after(&self, i: usize) -> Option<usize> {
        (i + 1..self.msgs.len()).find(|&k| !self.dead[k])
    }

    /// Merges the live neighbours around the removed row `i` when both are user rows
    /// (first row kept, blank-line join). True if it merged.
    fn merge_user_neighbours(&mut self, i: usize) -> bool {
        let (Some(first), Some(second)) = (self.live_before(i), self.live_after(i)) else {
            return false;
        };
        if self.msgs[first].role != Role::User || self.msgs[second].role != Role::User {
            return false;
        }
        self.remove(second);
        let content = self.msgs[second].content.clone();
        let kept = &mut self.msgs[first];
        kept.merge_content(&content);
        kept.flags.persisted = false;
        true
    }

    /// The physical index of the `n`th live row (0-based).
    fn nth_live(&self, n: usize) -> Option<usize> {
        self.dead
            .iter()
            .enumerate()
            .filter(|(_, &d)| !d)
            .nth(n)
            .map(|(k, _)| k)
    }

    /// Drops the dead rows; each live row after the first dead one moves once.
    fn finish(self) {
        let dead = &self.dead;
        let mut k = 0;
        self.msgs.retain(|_| {
            k += 1;
            !dead[k - 1]
        });
    }
}

/// Replaces the ascending, disjoint exchanges `ranges` by `marker`, which takes the
/// place of the last one; the earlier ones are deleted and user rows that became
/// neighbours are merged, as a supersede would. Returns the marker's index in the list
/// as it stands before any supersede (the list's length when `ranges` is empty). With
/// `supersede`, then deletes every micro marker but the one at that index, wherever it
/// stands, merging user rows that became neighbours (first row kept, blank-line join);
/// a marker can stand after the new one when a skipped exchange is absorbed later.
/// Removed rows are dropped in one pass at the end.
pub fn replace_ranges(
    msgs: &mut Vec<Message>,
    ranges: &[(usize, usize)],
    marker: Message,
    supersede: bool,
) -> usize {
    let Some((&(last_start, last_end), earlier)) = ranges.split_last() else {
        return msgs.len();
    };
    let marker_id = marker.id;
    let mut edit = Edit::new(msgs);
    edit.msgs[last_start] = marker;
    (last_start + 1..last_end).for_each(|k| edit.remove(k));
    let mut at = last_start;
    for &(start, end) in earlier.iter().rev() {
        (start..end).for_each(|k| edit.remove(k));
        at -= end - start;
        if edit.merge_user_neighbours(end - 1) {
            at -= 1;
        }
    }
    let newest = edit
        .nth_live(at)
        .expect("the marker's index is in the list");
    debug_assert!(
        edit.msgs[newest].is_summary() && edit.msgs[newest].id == marker_id,
        "the returned index is not the marker spliced in"
    );
    if supersede {
        let keep = edit.msgs[newest].id;
        supersede_others(&mut edit, keep);
    }
    edit.finish();
    debug_assert!(
        !supersede
            || msgs
                .iter()
                .all(|m| !m.is_micro_marker() || m.id == marker_id),
        "supersede left a micro marker other than the newest"
    );
    at
}

/// Deletes every micro marker but the one with id `keep`, merging the user rows each
/// deletion makes neighbours (the rows after move once).
pub fn supersede_all_but(msgs: &mut Vec<Message>, keep: MsgId) {
    let mut edit = Edit::new(msgs);
    supersede_others(&mut edit, keep);
    edit.finish();
}

/// Deletes every live micro marker but the one with id `keep`, last first, merging the
/// user rows each deletion makes neighbours.
fn supersede_others(edit: &mut Edit<'_>, keep: MsgId) {
    for i in (0..edit.msgs.len()).rev() {
        if edit.dead[i] || !edit.msgs[i].is_micro_marker() || edit.msgs[i].id == keep {
            continue;
        }
        edit.remove(i);
        edit.merge_user_neighbours(i);
    }
}

/// One past the newest summary row (0 if none).
pub fn one_past_last_marker(msgs: &[Message]) -> usize {
    msgs.iter()
        .rposition(Message::is_summary)
        .map_or(0, |i| i + 1)
}

/// Rewrites the newest micro marker with `summary`, keeping its id and role. False if
/// there is no micro marker.
pub fn rewrite_newest_marker(
    msgs: &mut [Message],
    summary: &RollingSummary,
    scaffold_tokens: u32,
) -> bool {
    let Some(m) = msgs.iter_mut().rev().find(|m| m.is_micro_marker()) else {
        return false;
    };
    *m = marker::build(m.id, m.role, summary, scaffold_tokens);
    true
}
