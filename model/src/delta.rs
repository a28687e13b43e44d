//! What one transition changed, computed once for every invariant: the rows of `before`
//! it removed and the rows of `after` it added, as one window between the longest common
//! prefix and the longest common suffix of the two lists. An invariant that looks only
//! at the window (and at running totals it keeps itself) does work proportional to
//! what changed, not to the length of the transcript.

use crate::message::{tokens_rough_total, Message};
use std::ops::Range;

/// The changed window of one transition (see the module doc). Rows outside the window
/// are equal, position for position, in `before` and `after`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Delta {
    /// Leading rows equal in `before` and `after`.
    pub prefix_rows: usize,
    /// Trailing rows equal in both lists, disjoint from the prefix in each.
    pub suffix_rows: usize,
    before_len: usize,
    after_len: usize,
}

impl Delta {
    /// The window between `before` and `after`. The same slice is unchanged and a
    /// shorter view of the same memory is a pure append, both without comparing rows;
    /// otherwise rows are compared from both ends with [`Message::equals`] (equal rows
    /// share their text and calls, so they usually compare inline by pointer).
    pub fn between(before: &[Message], after: &[Message]) -> Delta {
        let same_memory = std::ptr::eq(before.as_ptr(), after.as_ptr());
        let common_max = before.len().min(after.len());
        let prefix = if same_memory && before.len() <= after.len() {
            before.len()
        } else {
            // Equal-length views, so the indexing below needs no bounds checks.
            let (b, a) = (&before[..common_max], &after[..common_max]);
            let mut k = 0;
            while k < b.len() && k < a.len() && b[k].equals(&a[k]) {
                k += 1;
            }
            k
        };
        let suffix_max = common_max - prefix;
        // The last `suffix_max` rows of each list, compared from the end.
        let b = &before[before.len() - suffix_max..];
        let a = &after[after.len() - suffix_max..];
        let mut k = suffix_max.min(b.len()).min(a.len());
        while k > 0 && b[k - 1].equals(&a[k - 1]) {
            k -= 1;
        }
        let suffix = suffix_max - k;
        let delta = Delta {
            prefix_rows: prefix,
            suffix_rows: suffix,
            before_len: before.len(),
            after_len: after.len(),
        };
        debug_assert!(
            delta.is_empty() == (before == after),
            "an empty window must mean equal lists"
        );
        delta
    }

    /// Indices of `before` the transition removed (or rewrote).
    pub fn removed_range(&self) -> Range<usize> {
        self.prefix_rows..self.before_len - self.suffix_rows
    }

    /// Indices of `after` the transition added (or rewrote).
    pub fn added_range(&self) -> Range<usize> {
        self.prefix_rows..self.after_len - self.suffix_rows
    }

    /// The rows of `before` in the window.
    pub fn removed<'a>(&self, before: &'a [Message]) -> &'a [Message] {
        &before[self.removed_range()]
    }

    /// The rows of `after` in the window.
    pub fn added<'a>(&self, after: &'a [Message]) -> &'a [Message] {
        &after[self.added_range()]
    }

    /// The transition changed nothing: `before` equals `after`.
    pub fn is_empty(&self) -> bool {
        self.removed_range().is_empty() && self.added_range().is_empty()
    }

    /// The transition only appended rows at the end.
    pub fn is_append(&self) -> bool {
        self.removed_range().is_empty() && !self.added_range().is_empty()
    }

    /// Rough tokens of the list after minus before, from the window alone.
    pub fn tokens_rough_change(&self, before: &[Message], after: &[Message]) -> i64 {
        tokens_rough_total(self.added(after)) as i64
            - tokens_rough_total(self.removed(before)) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rows::{self, row};

    fn rows(ids: &[u32]) -> Vec<Message> {
        test_rows::rows(ids, 40)
    }

    fn ids(rows: &[Message]) -> Vec<u32> {
        rows.iter().map(|m| m.id.0).collect()
    }

    #[test]
    fn the_window_holds_exactly_what_changed() {
        // (before, after, removed, added)
        type Case<'a> = (&'a [u32], &'a [u32], &'a [u32], &'a [u32]);
        let cases: &[Case] = &[
            (&[], &[], &[], &[]),
            (&[1, 2], &[1, 2], &[], &[]),
            (&[1, 2], &[1, 2, 3], &[], &[3]),
            (&[1, 2, 3, 4, 5], &[1, 9, 5], &[2, 3, 4], &[9]),
            (&[1, 2, 3], &[2, 3], &[1], &[]),
            (&[1, 1, 1], &[1, 1], &[1], &[]),
            (&[1, 2], &[2, 1], &[1, 2], &[2, 1]),
        ];
        for (old, new, removed, added) in cases {
            let (before, after) = (rows(old), rows(new));
            let d = Delta::between(&before, &after);
            assert_eq!(ids(d.removed(&before)), *removed, "{old:?} -> {new:?}");
            assert_eq!(ids(d.added(&after)), *added, "{old:?} -> {new:?}");
            assert_eq!(d.is_empty(), old == new);
            assert_eq!(
                d.tokens_rough_change(&before, &after),
                tokens_rough_total(&after) as i64 - tokens_rough_total(&before) as i64
            );
        }
    }

    #[test]
    fn a_row_rewritten_in_place_is_in_the_window_and_views_need_no_compare() {
        let before = rows(&[1, 2, 3]);
        let mut after = before.clone();
        after[1] = row(2, 99);
        let d = Delta::between(&before, &after);
        assert_eq!((d.removed_range(), d.added_range()), (1..2, 1..2));
        assert!(Delta::between(&before, &before).is_empty());
        let d = Delta::between(&before[..1], &before);
        assert!(d.is_append());
        assert_eq!(d.added_range(), 1..3);
    }
}
