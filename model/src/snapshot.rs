//! Copies of the live transcript kept in step with it: a transition's `before` made by
//! updating an older copy in the rows that differ, instead of cloning the whole list.

use crate::delta::Delta;
use crate::message::Message;

/// Makes `copy` equal to `live`, cloning only the rows between their longest common
/// prefix and longest common suffix (rewritten in place where both have a row). Rows compare cheaply (their text and calls are
/// shared, so equal rows usually compare by pointer), so the cost is a scan plus the
/// rows that changed since `copy` was last in step.
pub fn sync_copy(copy: &mut Vec<Message>, live: &[Message]) {
    let delta = Delta::between(copy, live);
    sync_copy_by(copy, live, &delta);
}

/// [`sync_copy`] with the window already known: `delta` is `Delta::between(copy, live)`
/// (checked in debug builds), so no row is compared again.
pub fn sync_copy_by(copy: &mut Vec<Message>, live: &[Message], delta: &Delta) {
    debug_assert_eq!(*delta, Delta::between(copy, live), "a stale delta");
    if delta.is_empty() {
        return;
    }
    let (gone, new) = (delta.removed_range(), delta.added_range());
    let common = gone.len().min(new.len());
    let prefix = gone.start;
    copy[prefix..prefix + common].clone_from_slice(&live[prefix..prefix + common]);
    if new.len() > common {
        copy.splice(
            prefix + common..prefix + common,
            live[prefix + common..new.end].iter().cloned(),
        );
    } else if gone.len() > common {
        // Rows removed (a compaction shrinks the front of the list): dropped in one
        // pass that moves each later row once, not one block move of the whole tail.
        let gone = prefix + common..gone.end;
        let mut k = 0;
        copy.retain(|_| {
            k += 1;
            !gone.contains(&(k - 1))
        });
    }
    debug_assert!(
        copy.as_slice() == live,
        "sync_copy left the copy out of step"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rows::{self, row};

    fn rows(ids: &[u32]) -> Vec<Message> {
        test_rows::rows(ids, 10)
    }

    #[test]
    fn the_copy_ends_equal_to_the_live_list_for_every_kind_of_change() {
        let cases: &[(&[u32], &[u32])] = &[
            (&[], &[]),
            (&[], &[1, 2]),
            (&[1, 2], &[]),
            (&[1, 2], &[1, 2, 3, 4]),
            (&[1, 2, 3, 4], &[1, 2]),
            (&[1, 2, 3, 4], &[1, 9, 4]),
            (&[1, 2, 3], &[9, 2, 3]),
            (&[1, 2, 3], &[1, 2, 9]),
            (&[1, 1, 1], &[1, 1]),
            (&[1, 2], &[2, 1]),
            (&[1, 2, 3], &[7, 8, 9, 10]),
        ];
        for (old, new) in cases {
            let mut copy = rows(old);
            let live = rows(new);
            sync_copy(&mut copy, &live);
            assert_eq!(copy, live, "{old:?} -> {new:?}");
        }
    }

    #[test]
    fn a_row_changed_in_place_is_replaced() {
        let mut copy = rows(&[1, 2, 3]);
        let mut live = copy.clone();
        live[1] = row(2, 99);
        sync_copy(&mut copy, &live);
        assert_eq!(copy, live);
        assert_eq!(copy[1].content.chars(), 99);
    }
}
