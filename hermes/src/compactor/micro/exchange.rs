//! Finding the next exchange and keeping the cursor valid (hermes-domain §3.3–§3.4).

use compactsim_model::{Message, Role};

/// The cursor if it is valid (head < cursor < tail), else one past the last summary
/// marker in the window, else the head end.
pub fn recover_cursor(msgs: &[Message], cursor: usize, head: usize, tail: usize) -> usize {
    if head < cursor && cursor < tail {
        return cursor;
    }
    let recovered = (head..tail.min(msgs.len()))
        .rev()
        .find(|&i| msgs[i].is_summary())
        .map_or(head, |i| i + 1);
    debug_assert!(
        recovered == head || (head < recovered && recovered <= tail),
        "recovered cursor {recovered} outside the window {head}..{tail}"
    );
    recovered
}

fn is_agent_row(m: &Message) -> bool {
    matches!(m.role, Role::Assistant | Role::Tool) && !m.is_summary()
}

/// The exchange `[start, end)`: from the first real assistant row at/after `cursor` over
/// the consecutive assistant/tool rows of that turn, entirely before `tail`. None when
/// the turn would be cut by the tail boundary. `original_design` is the first cut of
/// #74522: one assistant row and its tool results.
pub fn find(
    msgs: &[Message],
    cursor: usize,
    tail: usize,
    original_design: bool,
) -> Option<(usize, usize)> {
    let tail = tail.min(msgs.len());
    let start =
        (cursor..tail).find(|&i| msgs[i].role == Role::Assistant && !msgs[i].is_summary())?;
    let mut end = start + 1;
    if original_design {
        while end < tail && msgs[end].role == Role::Tool {
            end += 1;
        }
        return (end < tail).then_some((start, end));
    }
    while end < tail && is_agent_row(&msgs[end]) {
        end += 1;
    }
    let cut_mid_turn = end == tail && msgs.get(end).is_none_or(is_agent_row);
    debug_assert!(
        cursor <= start && start < end && end <= tail,
        "exchange {start}..{end} not between the cursor {cursor} and the tail {tail}"
    );
    (!cut_mid_turn).then_some((start, end))
}
