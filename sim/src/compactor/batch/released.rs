//! hermes-agent 0.19.0's batch bugs (adapters/hermes/FINDINGS.md B1, B3, B5), each a
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

use super::boundaries::Window;
use super::release;
use crate::bugs::{Bug, BugSet};
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
}
