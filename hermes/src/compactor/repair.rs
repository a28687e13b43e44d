//! The pre-send repair pass (`repair_message_sequence`, era C; hermes-domain §1.3), run
//! before every API call. It rewrites the list in place: (0) merge consecutive assistant
//! rows, (1) drop stray tool rows, (2) prune tool calls not answered by the immediately
//! following tool run, (3) merge consecutive user rows. Merging keeps the first row and
//! drops the second, so a marker that lands second loses its metadata (H-75345-A).

use compactsim_model::{CallId, Message, Role, ToolCall};
use serde::Serialize;

/// What one repair did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RepairStats {
    pub merged_rows: u32,
    pub dropped_rows: u32,
    pub pruned_calls: u32,
}

/// Repairs `msgs` in place. Any list is accepted (an external compactor's output
/// included).
///
/// CONTRACT (asserted in release whenever the repair changed something, by
/// [`assert_repaired`]): every call of an assistant row is answered in the tool rows
/// right after it; a tool row never opens the list nor follows a user row, and one in
/// the run right after an assistant row answers one of its calls; no two consecutive user
/// rows without tool calls. Not promised: a tool row after a system row may have lost
/// its call (step 2 prunes calls the run right after them does not answer), and two
/// consecutive assistant rows without calls remain where step 2 emptied the first.
pub fn repair(msgs: &mut Vec<Message>) -> RepairStats {
    let mut stats = RepairStats::default();
    if !needed(msgs) {
        return stats;
    }
    let rows_before = msgs.len();
    stats.merged_rows += merge_consecutive(msgs, Role::Assistant);
    stats.dropped_rows += drop_stray_tool_rows(msgs);
    stats.pruned_calls += prune_unanswered_calls(msgs);
    stats.merged_rows += merge_consecutive(msgs, Role::User);
    // O(n), as each step above.
    assert_repaired(msgs);
    debug_assert_eq!(
        msgs.len() as u64 + stats.merged_rows as u64 + stats.dropped_rows as u64,
        rows_before as u64,
        "every row a repair removes is counted as merged or dropped"
    );
    stats
}

/// Asserts the shape [`repair`] leaves (its contract) on `msgs`. O(n) but for the calls
/// of each assistant row, each looked for in the run after it.
pub fn assert_repaired(msgs: &[Message]) {
    // The nearest row before that is not a tool row.
    let mut owner: Option<&Message> = None;
    for (i, m) in msgs.iter().enumerate() {
        match m.role {
            Role::Tool => {
                let called = owner.is_some_and(|o| match o.role {
                    Role::Assistant => o.tool_calls.iter().any(|c| Some(c.id) == m.tool_call_id),
                    Role::System | Role::Tool => true,
                    Role::User => false,
                });
                assert!(
                    called,
                    "CONTRACT: a repaired list has no tool row without its call (row {i})"
                );
            }
            Role::Assistant => {
                assert!(
                    m.tool_calls.is_empty() || all_answered(msgs, i),
                    "CONTRACT: a repaired list has no call without its result (row {i})"
                );
                owner = Some(m);
            }
            Role::User => {
                let plain_user = |r: &Message| r.role == Role::User && r.tool_calls.is_empty();
                let after_plain_user = i.checked_sub(1).is_some_and(|p| plain_user(&msgs[p]));
                assert!(
                    !(plain_user(m) && after_plain_user),
                    "CONTRACT: a repaired list has no two consecutive user rows (row {i})"
                );
                owner = Some(m);
            }
            Role::System => owner = Some(m),
        }
    }
}

/// Whether any step below would change `msgs`: one read-only scan that asks, row by
/// row, each step's condition (a mergeable pair, a stray tool row, an unanswered call).
/// When it is false every step is a no-op on the list as it stands (each step's
/// condition is checked on that list), so skipping them all gives the same result.
pub fn needed(msgs: &[Message]) -> bool {
    // One pass with the stray scan's state inline (the known calls of the nearest
    // preceding assistant row): this runs before every provider call. An assistant whose
    // calls are answered in order by the rows right after it is passed over together
    // with those rows: each answers a call of `known` (not stray) and is a tool row (not
    // mergeable), so asking them changes nothing (`needed_equals_the_row_by_row_scan`).
    let mut known: &[ToolCall] = &[];
    let mut prev: Option<&Message> = None;
    let mut i = 0;
    while i < msgs.len() {
        let m = &msgs[i];
        let plain = m.tool_calls.is_empty();
        if m.role == Role::Assistant && !plain && answered_in_order(msgs, i) {
            let run_rows = m.tool_calls.len();
            known = &m.tool_calls;
            prev = Some(&msgs[i + run_rows]);
            i += run_rows + 1;
            continue;
        }
        if row_needs_repair(msgs, i, prev, known) {
            return true;
        }
        match m.role {
            Role::Assistant => known = &m.tool_calls,
            Role::User => known = &[],
            Role::Tool | Role::System => {}
        }
        prev = Some(m);
        i += 1;
    }
    false
}

/// Whether row `i` asks for a repair step, given the row before it and the known calls
/// of the nearest preceding assistant: a mergeable pair, a stray tool row, an
/// unanswered call.
fn row_needs_repair(
    msgs: &[Message],
    i: usize,
    prev: Option<&Message>,
    known: &[ToolCall],
) -> bool {
    let m = &msgs[i];
    let plain = m.tool_calls.is_empty();
    let mergeable = matches!(m.role, Role::User | Role::Assistant)
        && plain
        && prev.is_some_and(|p| p.role == m.role && p.tool_calls.is_empty());
    let unanswered = m.role == Role::Assistant && !plain && !all_answered(msgs, i);
    let stray = m.role == Role::Tool
        && !m
            .tool_call_id
            .is_some_and(|id| known.iter().any(|c| c.id == id));
    mergeable || stray || unanswered
}

/// Merges runs of consecutive rows of `role` into their first row. Assistant rows with
/// tool calls are not merged (their results must follow them).
fn merge_consecutive(msgs: &mut Vec<Message>, role: Role) -> u32 {
    let mut merged = 0;
    let mut i = 1;
    while i < msgs.len() {
        let mergeable = msgs[i - 1].role == role
            && msgs[i].role == role
            && msgs[i - 1].tool_calls.is_empty()
            && msgs[i].tool_calls.is_empty();
        if mergeable {
            let second = msgs.remove(i);
            let first = &mut msgs[i - 1];
            first.merge_content(&second.content);
            first.flags.persisted = false;
            merged += 1;
        } else {
            i += 1;
        }
    }
    merged
}

/// Drops tool rows whose id is not a call of the nearest preceding assistant (the known
/// set resets at every assistant and user row). A list with no stray row is left alone
/// without allocating.
fn drop_stray_tool_rows(msgs: &mut Vec<Message>) -> u32 {
    if !stray_tool_rows(msgs).any(|stray| stray) {
        return 0;
    }
    let stray: Vec<bool> = stray_tool_rows(msgs).collect();
    let mut flags = stray.iter();
    let before = msgs.len();
    msgs.retain(|_| !flags.next().copied().unwrap_or(false));
    (before - msgs.len()) as u32
}

/// For each row, whether it is a tool row its nearest preceding assistant did not call.
fn stray_tool_rows(msgs: &[Message]) -> impl Iterator<Item = bool> + '_ {
    let mut known: &[ToolCall] = &[];
    msgs.iter().map(move |m| match m.role {
        Role::Assistant => {
            known = &m.tool_calls;
            false
        }
        Role::User => {
            known = &[];
            false
        }
        Role::Tool => !m
            .tool_call_id
            .is_some_and(|id| known.iter().any(|c| c.id == id)),
        Role::System => false,
    })
}

/// Whether every call of the assistant at `i` is answered in the tool run after it.
fn all_answered(msgs: &[Message], i: usize) -> bool {
    let (calls, rest) = (&msgs[i].tool_calls, &msgs[i + 1..]);
    // The usual shape first: the run opens with one result per call, in call order
    // (those rows are all tool rows, so they are in the run).
    let run = rest.iter().take_while(|m| m.role == Role::Tool);
    answered_in_order(msgs, i)
        || calls
            .iter()
            .all(|c| run.clone().any(|m| m.tool_call_id == Some(c.id)))
}

/// Whether the rows right after the assistant at `i` are one tool row per call, in call
/// order.
fn answered_in_order(msgs: &[Message], i: usize) -> bool {
    let (calls, rest) = (&msgs[i].tool_calls, &msgs[i + 1..]);
    calls.len() <= rest.len()
        && calls
            .iter()
            .zip(rest)
            .all(|(c, m)| m.role == Role::Tool && m.tool_call_id == Some(c.id))
}

/// Removes from each assistant row the calls that the immediately following tool run
/// does not answer; an assistant left with no calls and no text gets a short note. A
/// row whose calls are all answered is left alone without allocating.
fn prune_unanswered_calls(msgs: &mut [Message]) -> u32 {
    let mut pruned = 0;
    for i in 0..msgs.len() {
        if msgs[i].role != Role::Assistant || msgs[i].tool_calls.is_empty() {
            continue;
        }
        if all_answered(msgs, i) {
            continue;
        }
        let run = msgs[i + 1..].iter().take_while(|m| m.role == Role::Tool);
        let answered = |id: CallId| run.clone().any(|m| m.tool_call_id == Some(id));
        let keep: Vec<ToolCall> = msgs[i]
            .tool_calls
            .iter()
            .filter(|c| answered(c.id))
            .cloned()
            .collect();
        pruned += (msgs[i].tool_calls.len() - keep.len()) as u32;
        msgs[i].set_tool_calls(keep);
    }
    pruned
}

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_model::{Content, ContentKind, Flags, MsgId, Segment, ToolCall};

    fn row(id: u32, role: Role) -> Message {
        let seg = Segment {
            kind: ContentKind::Prose,
            chars: 40,
            seed: id as u64,
            origin: MsgId(id),
            facts: vec![],
        };
        Message::new(MsgId(id), role, Content::single(seg))
    }

    fn call(id: u32) -> ToolCall {
        ToolCall {
            id: CallId(id),
            name: "t".into(),
            arguments: "{}".into(),
        }
    }

    const SHAPES: u32 = 9;
    const ROWS_MAX: u32 = 5;

    /// Row shape `k` of the exhaustive tests: users with and without calls, assistants
    /// with none, one or two calls, tool rows answering call 1, call 2 or nothing, system.
    fn shape(id: u32, k: u32) -> Message {
        match k {
            0 => row(id, Role::User),
            1 => row(id, Role::User).with_tool_calls(vec![call(1)]),
            2 => row(id, Role::Assistant),
            3 => row(id, Role::Assistant).with_tool_calls(vec![call(1)]),
            4 => row(id, Role::Assistant).with_tool_calls(vec![call(1), call(2)]),
            5 => row(id, Role::Tool).with_tool_call_id(CallId(1)),
            6 => row(id, Role::Tool).with_tool_call_id(CallId(2)),
            7 => row(id, Role::Tool),
            _ => row(id, Role::System),
        }
    }

    #[test]
    fn merges_users_keeping_first_row_and_losing_second_metadata() {
        let marker = row(2, Role::User).with_flags(Flags {
            summary_marker: true,
            micro_marker: true,
            ..Flags::default()
        });
        let mut m = vec![row(1, Role::User), marker, row(3, Role::Assistant)];
        let stats = repair(&mut m);
        assert_eq!(stats.merged_rows, 1);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].id, MsgId(1));
        assert!(!m[0].is_summary(), "metadata of the second row is dropped");
        assert_eq!(m[0].content.segments.len(), 2);
    }

    #[test]
    fn drops_stray_results_and_prunes_unanswered_calls() {
        let mut m = vec![
            row(1, Role::User),
            row(2, Role::Assistant).with_tool_calls(vec![call(1), call(2)]),
            row(3, Role::Tool).with_tool_call_id(CallId(1)),
            row(4, Role::Tool).with_tool_call_id(CallId(9)),
            row(5, Role::Assistant),
        ];
        let stats = repair(&mut m);
        assert_eq!(
            stats,
            RepairStats {
                merged_rows: 0,
                dropped_rows: 1,
                pruned_calls: 1
            }
        );
        assert_eq!(m.len(), 4);
        assert_eq!(m[1].tool_calls.len(), 1);
        assert_eq!(m[1].tool_calls[0].id, CallId(1));
    }

    #[test]
    fn a_valid_list_is_untouched() {
        let mut m = vec![
            row(1, Role::User),
            row(2, Role::Assistant).with_tool_calls(vec![call(1)]),
            row(3, Role::Tool).with_tool_call_id(CallId(1)),
            row(4, Role::Assistant),
            row(5, Role::User),
        ];
        let before = m.clone();
        assert_eq!(repair(&mut m), RepairStats::default());
        assert_eq!(m, before);
    }

    #[test]
    #[should_panic(expected = "CONTRACT: a repaired list has no call without its result")]
    fn an_unanswered_call_fires() {
        assert_repaired(&[
            row(1, Role::User),
            row(2, Role::Assistant).with_tool_calls(vec![call(1)]),
            row(3, Role::Assistant),
        ]);
    }

    #[test]
    #[should_panic(expected = "CONTRACT: a repaired list has no tool row without its call")]
    fn a_result_after_a_user_row_fires() {
        assert_repaired(&[
            row(1, Role::User),
            row(2, Role::Tool).with_tool_call_id(CallId(1)),
        ]);
    }

    #[test]
    #[should_panic(expected = "CONTRACT: a repaired list has no tool row without its call")]
    fn a_result_of_another_call_fires() {
        assert_repaired(&[
            row(1, Role::Assistant).with_tool_calls(vec![call(1)]),
            row(2, Role::Tool).with_tool_call_id(CallId(1)),
            row(3, Role::Tool).with_tool_call_id(CallId(2)),
        ]);
    }

    #[test]
    #[should_panic(expected = "CONTRACT: a repaired list has no two consecutive user rows")]
    fn two_plain_user_rows_fire() {
        assert_repaired(&[row(1, Role::User), row(2, Role::User)]);
    }

    /// Every list of up to 5 rows over the 9 row shapes of the test below, repaired,
    /// meets the repair's contract (the release assert in [`repair`] never fires on
    /// them), and the two things it does not promise do happen.
    #[test]
    fn every_small_list_repaired_meets_the_contract() {
        let (mut orphan_after_system, mut assistant_pair) = (false, false);
        for len in 0..=ROWS_MAX {
            for code in 0..SHAPES.pow(len) {
                let mut msgs: Vec<Message> = (0..len)
                    .map(|i| shape(i, code / SHAPES.pow(i) % SHAPES))
                    .collect();
                repair(&mut msgs);
                assert_repaired(&msgs);
                orphan_after_system |= stray_tool_rows(&msgs).any(|stray| stray);
                assistant_pair |= msgs.windows(2).any(|w| {
                    w.iter()
                        .all(|m| m.role == Role::Assistant && m.tool_calls.is_empty())
                });
            }
        }
        assert!(orphan_after_system && assistant_pair);
    }

    /// `needed` as it was written before the one-pass scan: each step's condition row
    /// by row, the stray rows from `stray_tool_rows`.
    fn needed_plain(msgs: &[Message]) -> bool {
        let rows = msgs.iter().enumerate().zip(stray_tool_rows(msgs));
        for ((i, m), stray) in rows {
            let mergeable = i > 0 && {
                let p = &msgs[i - 1];
                p.role == m.role
                    && matches!(m.role, Role::User | Role::Assistant)
                    && p.tool_calls.is_empty()
                    && m.tool_calls.is_empty()
            };
            let unanswered =
                m.role == Role::Assistant && !m.tool_calls.is_empty() && !all_answered(msgs, i);
            if mergeable || stray || unanswered {
                return true;
            }
        }
        false
    }

    /// Every list of up to 5 rows over 9 row shapes (users with and without calls,
    /// assistants with none, one or two calls, tool rows answering call 1, call 2 or
    /// nothing, system): the one-pass scan answers as the plain one, and a list it
    /// calls clean is left untouched by the repair.
    #[test]
    fn the_one_pass_needed_scan_equals_the_plain_one_on_every_small_list() {
        let (mut lists, mut clean) = (0u32, 0u32);
        for len in 0..=ROWS_MAX {
            for code in 0..SHAPES.pow(len) {
                let msgs: Vec<Message> = (0..len)
                    .map(|i| shape(i, code / SHAPES.pow(i) % SHAPES))
                    .collect();
                assert_eq!(needed(&msgs), needed_plain(&msgs), "{msgs:?}");
                if !needed(&msgs) {
                    let mut repaired = msgs.clone();
                    assert_eq!(repair(&mut repaired), RepairStats::default());
                    assert_eq!(repaired, msgs);
                    clean += 1;
                }
                lists += 1;
            }
        }
        assert_eq!(lists, 66_430);
        assert!(clean > 100, "{clean} clean lists");
    }
}
