//! hermes-agent 0.19.0's batch bugs (adapters/hermes/FINDINGS.md B1, B3-B6), each a
//! switch (`HERMES-0.19.0-B*`) that `--profile hermes-0.19.0` turns on and `--bug` can
//! turn on alone. The default model does none of this; the oracle judges it.
//!
//! - B1 (`compress()` phase 4): `last_head_role` defaults to `"user"` when
//!   `compress_start == 0`, so the #52160 guard (`last_head_role == "system"`) does not
//!   fire on an empty head and the summary is written as `assistant` (or merged into an
//!   assistant first tail row). H-52160 drops the guard for a system-only head as well;
//!   B1 is that bug on an empty head only, through the same role rule
//!   ([`super::assemble::place`]).
//! - B3: `_find_latest_context_summary` finds the newest summary in the window and
//!   `compress()` summarizes only `messages[summary_idx + 1:compress_end]`; the window
//!   rows before it leave with no prompt having seen them.
//! - B5: the same search stops at `compress_end`, so a summary the tail covers is
//!   neither rehydrated nor removed.
//! - B4: the forced-`user` summary is merged into the newest user row when the tail
//!   starts on it (the model's bridge would start the tail one group earlier), and
//!   `_find_last_user_message_idx` skips a row with summary content, so the next pass's
//!   last-user anchor no longer holds that row: the user's words are summarized away.
//! - B6: phase 1 reassigns `messages` to the pruned copy before the summary is asked
//!   for, and the abort branch (a terminal auth or network failure) `return messages`:
//!   an aborted `compress()` hands back its pruned list, old tool outputs rewritten and
//!   no summary holding them.

use super::boundaries::{holds_user_words, Window};
use super::release;
use crate::bug_set::BugSet;
use crate::bugs::Bug;
use compactsim_model::{Message, Role};
use std::ops::Range;

/// The role of the last head row as the role rule reads it: `None` for an empty head,
/// except under B1, where the release's default `"user"` stands in.
pub fn head_last_role(head: &[Message], bugs: &BugSet) -> Option<Role> {
    match head.last() {
        Some(m) => Some(m.role),
        None if bugs.has(Bug::H019B1) => Some(Role::User),
        None => None,
    }
}

/// Whether the last-user anchors take `m`: a row holding the user's words, but under B4
/// not a user row a summary was merged into. Asked only for such a row ([`BugSet`]).
pub fn anchors_user_row(m: &Message, bugs: &BugSet) -> bool {
    holds_user_words(m) && !(m.is_batch_summary() && bugs.has(Bug::H019B4))
}

/// The newest row the last-user anchors take ([`anchors_user_row`]).
pub fn last_user_anchor(messages: &[Message], bugs: &BugSet) -> Option<usize> {
    messages.iter().rposition(|m| anchors_user_row(m, bugs))
}

/// Whether the bridge moves a tail starting on the newest user row one group earlier:
/// not under B4. The caller asks only where the bridge would move ([`BugSet`]).
pub fn bridges(bugs: &BugSet) -> bool {
    !bugs.has(Bug::H019B4)
}

/// Whether an aborted pass hands back `pruned` (the list after the prune) instead of
/// leaving `messages` as it found it: under B6, where the prune changed the list. Asked
/// only where it decides (a prune that changed something, [`BugSet`]).
pub fn hands_back_pruned(messages: &[Message], pruned: &[Message], bugs: &BugSet) -> bool {
    messages != pruned && bugs.has(Bug::H019B6)
}

/// The window rows the summarizer sees: all of them, or under B3 only those after the
/// newest summary in the window ([`release::turns`]).
/// The switch is asked only where it decides (a summary in the window), so that the
/// selftest's shared clean runs stay shared ([`BugSet`]).
pub fn summarized_rows(messages: &[Message], window: &Window, bugs: &BugSet) -> Range<usize> {
    let all = window.start..window.end;
    let turns = release::turns(messages, window);
    if turns != all && bugs.has(Bug::H019B3) {
        turns
    } else {
        all
    }
}

/// Whether the batch summaries in `tail` are rehydrated and superseded (not under B5).
/// A tail with no batch summary has nothing to supersede: `false`, and the switch is not
/// asked ([`BugSet`]).
pub fn supersedes_tail_summaries(tail: &[Message], bugs: &BugSet) -> bool {
    tail.iter().any(Message::is_batch_summary) && !bugs.has(Bug::H019B5)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bug_set::BugMask;
    use compactsim_model::{Content, ContentKind, Flags, MsgId, Segment};

    fn row(id: u32, role: Role, summary: bool) -> Message {
        let text = Content::single(Segment {
            kind: ContentKind::Prose,
            chars: 8,
            seed: u64::from(id),
            origin: MsgId(id),
            facts: vec![],
        });
        Message::new(MsgId(id), role, text).with_flags(Flags {
            summary_marker: summary,
            ..Flags::default()
        })
    }

    #[test]
    fn b1_reads_an_empty_head_as_user_and_leaves_a_real_head_alone() {
        let b1 = BugSet::of(&[Bug::H019B1]);
        assert_eq!(head_last_role(&[], &BugSet::none()), None);
        assert_eq!(head_last_role(&[], &b1), Some(Role::User));
        let system = [row(0, Role::System, false)];
        assert_eq!(head_last_role(&system, &b1), Some(Role::System));
    }

    #[test]
    fn b3_summarizes_only_after_the_newest_summary_in_the_window() {
        let rows = [
            row(0, Role::User, false),
            row(1, Role::Assistant, false),
            row(2, Role::User, true),
            row(3, Role::Assistant, false),
            row(4, Role::User, false),
            row(5, Role::Assistant, false),
        ];
        let window = Window {
            head_end: 0,
            start: 0,
            end: 4,
        };
        assert_eq!(summarized_rows(&rows, &window, &BugSet::none()), 0..4);
        let b3 = BugSet::of(&[Bug::H019B3]);
        assert_eq!(summarized_rows(&rows, &window, &b3), 3..4);
        let b5 = BugSet::of(&[Bug::H019B5]);
        let tail = [row(6, Role::User, true), row(7, Role::Assistant, false)];
        assert!(supersedes_tail_summaries(&tail, &b3));
        assert!(!supersedes_tail_summaries(&tail, &b5));
        // A tail with no batch summary has nothing to supersede, whatever the switch.
        assert!(!supersedes_tail_summaries(&tail[1..], &BugSet::none()));
    }

    #[test]
    fn b6_hands_back_a_changed_prune_and_is_asked_only_then() {
        let rows = [row(0, Role::User, false), row(1, Role::Tool, false)];
        let mut pruned = rows.to_vec();
        pruned[1] = row(1, Role::Tool, true);
        let b6 = BugSet::of(&[Bug::H019B6]).recording();
        assert!(!hands_back_pruned(&rows, &rows, &b6));
        assert!(
            !b6.consulted().meets(BugMask::of([Bug::H019B6])),
            "nothing pruned: not asked"
        );
        assert!(hands_back_pruned(&rows, &pruned, &b6));
        assert!(b6.consulted().meets(BugMask::of([Bug::H019B6])));
        assert!(!hands_back_pruned(&rows, &pruned, &BugSet::none()));
    }

    #[test]
    fn b4_drops_the_bridge() {
        assert!(bridges(&BugSet::none()));
        assert!(!bridges(&BugSet::of(&[Bug::H019B4])));
    }
}
