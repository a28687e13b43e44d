//! Supersede, merge and in-place rewrite of markers.

use super::marker;
use crate::summarizer::RollingSummary;
use compactsim_model::{Message, Role};

/// Deletes every micro marker except the one at `newest` (the marker just spliced in),
/// wherever it stands, then merges user rows that became neighbours (first row kept,
/// blank-line join). A marker can stand after the new one when a skipped exchange is
/// absorbed later.
pub fn supersede_others(msgs: &mut Vec<Message>, newest: usize) {
    let keep = msgs[newest].id;
    let mut i = msgs.len();
    while i > 0 {
        i -= 1;
        if i >= msgs.len() || !msgs[i].is_micro_marker() || msgs[i].id == keep {
            continue;
        }
        msgs.remove(i);
        merge_user_neighbours(msgs, i);
    }
    debug_assert!(
        msgs.iter().all(|m| !m.is_micro_marker() || m.id == keep),
        "supersede left a micro marker other than the newest"
    );
}

/// Merges the rows at `i - 1` and `i` when both are user rows (first row kept,
/// blank-line join). True if it merged.
fn merge_user_neighbours(msgs: &mut Vec<Message>, i: usize) -> bool {
    if i > 0 && i < msgs.len() && msgs[i - 1].role == Role::User && msgs[i].role == Role::User {
        let second = msgs.remove(i);
        let first = &mut msgs[i - 1];
        first.merge_content(&second.content);
        first.flags.persisted = false;
        return true;
    }
    false
}

/// Replaces the ascending, disjoint exchanges `ranges` by `marker`, which takes the
/// place of the last one; the earlier ones are deleted and user rows that became
/// neighbours are merged, as a supersede would. Returns the marker's index. One range
/// is a plain splice.
pub fn replace_ranges(
    msgs: &mut Vec<Message>,
    ranges: &[(usize, usize)],
    marker: Message,
) -> usize {
    let Some((&(last_start, last_end), earlier)) = ranges.split_last() else {
        return msgs.len();
    };
    let marker_id = marker.id;
    msgs.splice(last_start..last_end, [marker]);
    let mut at = last_start;
    for &(start, end) in earlier.iter().rev() {
        msgs.drain(start..end);
        at -= end - start;
        if merge_user_neighbours(msgs, start) {
            at -= 1;
        }
    }
    debug_assert!(
        msgs[at].is_summary() && msgs[at].id == marker_id,
        "the returned index is not the marker spliced in"
    );
    at
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
