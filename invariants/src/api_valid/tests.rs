//! Tests of `api_valid` (kept apart for the project's ~600-line rule).

use super::*;
use crate::testkit::*;
use compactsim_model::MsgId;

fn valid() -> Vec<Message> {
    vec![
        system(0),
        user(1),
        calling(2, &[1, 2]),
        tool(3, 1),
        tool(4, 2),
        reply(5),
        user(6),
        micro_marker(7, &[1]),
        user(8),
    ]
}

/// Runs the checker on `after` and returns the witness; asserts it names only `rule`.
fn only(rule: ApiRule, after: &[Message]) -> Witness {
    let ev = repair_event(1);
    let w = ApiValid::default()
        .observe(&transition(&ev, &valid(), after))
        .unwrap_or_else(|| panic!("{} must fire", rule.label()));
    let w = readable(w);
    assert!(w.facts[0].ends_with(&rule.label()), "{:?}", w.facts);
    assert!(w.facts[1].starts_with(&rule.label()));
    assert!(w.rows.iter().all(|r| r.note.contains(&rule.label())));
    w
}

#[test]
fn quiet_on_a_valid_transcript_with_and_without_system() {
    let mut inv = ApiValid::default();
    let ev = absorbed(1, &[]);
    assert!(inv.observe(&transition(&ev, &[], &valid())).is_none());
    assert!(inv.observe(&transition(&ev, &[], &valid()[1..])).is_none());
}

#[test]
fn rule_1_tool_result_for_a_call_of_an_older_assistant() {
    let mut after = valid();
    after.insert(6, tool(9, 1));
    let w = only(ApiRule::ToolResultMatchesCall, &after);
    assert_eq!(witness_ids(&w), vec![9, 5]);
    assert_eq!(w.rows[0].index, 6);
}

#[test]
fn rule_1_stray_tool_row_after_a_user_row() {
    let mut after = valid();
    after.insert(7, tool(9, 1));
    let w = only(ApiRule::ToolResultMatchesCall, &after);
    assert_eq!(witness_ids(&w), vec![9]);
}

#[test]
fn rule_2_call_without_a_result() {
    let mut after = valid();
    after.remove(4);
    let w = only(ApiRule::CallAnswered, &after);
    assert_eq!((w.rows[0].id, w.rows[0].index), (MsgId(2), 2));
    assert!(w.facts[1].contains("call_2"));
}

#[test]
fn rule_3_two_consecutive_user_rows() {
    let mut after = valid();
    after.remove(7);
    let w = only(ApiRule::NoConsecutiveUser, &after);
    assert_eq!(witness_ids(&w), vec![6, 8]);
}

#[test]
fn rule_4_summary_marker_as_first_visible_row() {
    let mut after = valid();
    after[1] = micro_marker(9, &[1]);
    let w = only(ApiRule::FirstVisibleUser, &after);
    assert_eq!((w.rows[0].id, w.rows[0].index), (MsgId(9), 1));
}

#[test]
fn rule_5_no_user_row() {
    let after = vec![system(0), micro_marker(1, &[1])];
    let ev = repair_event(1);
    let w = ApiValid::default()
        .observe(&transition(&ev, &[], &after))
        .expect("zero users fires");
    assert!(w
        .facts
        .iter()
        .any(|f| f.starts_with(&ApiRule::HasUser.label())));
    assert!(w
        .facts
        .iter()
        .any(|f| f.starts_with(&ApiRule::FirstVisibleUser.label())));
    assert_eq!(w.facts.len(), 3);
}

#[test]
fn rule_6_truncated_arguments() {
    let mut after = valid();
    let mut calls = after[2].tool_calls.to_vec();
    calls[1].arguments = "{\"cmd\":\"l".into();
    after[2].set_tool_calls(calls);
    let w = only(ApiRule::ArgumentsJson, &after);
    assert_eq!(witness_ids(&w), vec![2]);
    assert!(w.facts[1].contains("call_2"));
}

#[test]
fn rule_6_rechecks_a_row_whose_calls_were_rewritten() {
    let mut inv = ApiValid::default();
    let ev = repair_event(1);
    let good = valid();
    assert!(inv.observe(&transition(&ev, &[], &good)).is_none());
    let mut bad = good.clone();
    let mut calls = bad[2].tool_calls.to_vec();
    calls[0].arguments = "not json".into();
    bad[2].set_tool_calls(calls);
    assert!(inv.observe(&transition(&ev, &good, &bad)).is_some());
}

#[test]
fn appends_are_not_judged() {
    let mut after = valid();
    after.push(user(9));
    let mut inv = ApiValid::default();
    let ev = append_event(2);
    assert!(!inv.checks(&ev));
    assert!(inv.observe(&transition(&ev, &valid(), &after)).is_none());
    let ev = restart_event(2);
    assert!(inv.observe(&transition(&ev, &valid(), &after)).is_some());
    let empty: Vec<Message> = Vec::new();
    let t = Transition::new(3, &ev, &empty, &empty, &[]);
    assert!(
        inv.observe(&t).is_none(),
        "a restart that reloaded the (empty) list is no request"
    );
}

#[test]
fn a_request_is_judged_on_before_and_resumed_scans_match_full_ones() {
    let mut buf = valid();
    let mut inv = ApiValid::default();
    let call = call_event(1, Some(10), None);
    let n = buf.len();
    buf.push(reply(9));
    let t = Transition::new(0, &call, &buf[..n], &buf, &[]);
    assert!(
        inv.observe(&t).is_none(),
        "valid request, response appended"
    );
    for id in [10, 11] {
        let n = buf.len();
        buf.push(user(id));
        let ev = append_event(2);
        let t = Transition::new(1, &ev, &buf[..n], &buf, &[]);
        assert!(inv.observe(&t).is_none(), "appends are not judged");
    }
    let t = Transition::new(3, &call, &buf, &buf, &[]);
    let resumed = inv.observe(&t).expect("consecutive users in the request");
    let full = ApiValid::default()
        .observe(&t)
        .expect("same without a prefix");
    assert_eq!(resumed, full);
    assert_eq!(witness_ids(&resumed), vec![10, 11]);
    for ev in [
        reset_event(3),
        failed_event(3, false, 0),
        rotation_event(3, 0),
    ] {
        assert!(!inv.checks(&ev), "{ev:?} is not a request");
    }
}

#[test]
fn a_pass_passes_over_the_valid_rows_after_its_window_and_matches_a_full_scan() {
    let before = vec![
        user(0),
        calling(1, &[1]),
        tool(2, 1),
        reply(3),
        user(4),
        calling(5, &[5, 6]),
        tool(6, 5),
        tool(7, 6),
        user(8),
        reply(9),
    ];
    let repair = repair_event(1);
    let pass = absorbed(2, &[1, 2, 3]);
    // Appended after the check (not judged): `tail` rows, then the pass drops 1..=3.
    for (tail, breaks) in [
        (vec![user(10), calling(11, &[11]), tool(12, 11)], false),
        (vec![user(10), user(13)], true),
        (vec![tool(14, 5)], true),
        (vec![], false),
    ] {
        let mut inv = ApiValid::default();
        assert!(inv
            .observe(&Transition::new(0, &repair, &before, &before, &[]))
            .is_none());
        let mut longer = before.clone();
        longer.extend(tail.iter().cloned());
        if !tail.is_empty() {
            let append = append_event(2);
            let t = Transition::new(1, &append, &longer[..before.len()], &longer, &[]);
            assert!(inv.observe(&t).is_none());
        }
        let mut after = longer.clone();
        after.splice(1..4, [micro_marker(20, &[1])]);
        let t = Transition::new(2, &pass, &longer, &after, &[]);
        let scan = inv.valid_prefix.clone().expect("the list was valid");
        let skip = skip_after_window(&t, &scan).expect("a user row after the window");
        assert_eq!((skip.stop, skip.resume_at), (2, 8));
        assert_eq!(skip.users, 3);
        let passed = inv.observe(&t);
        let full = ApiValid::default().observe(&t);
        assert_eq!(passed.is_some(), breaks, "{tail:?}");
        assert_eq!(passed, full, "{tail:?}");
        // The state carried over makes the next check match a full one too.
        if !breaks {
            let mut next = after.clone();
            next.push(tool(15, 11));
            let t = Transition::new(3, &repair, &after, &next, &[]);
            assert_eq!(inv.observe(&t), ApiValid::default().observe(&t), "{tail:?}");
        }
    }
}

#[test]
fn a_skip_that_resumes_right_after_its_stop_row_ends() {
    // The first user row after the window is the last row checked before: the scan
    // resumes right after it, where it would have gone anyway.
    let before = vec![user(0), calling(1, &[1]), tool(2, 1), reply(3), user(4)];
    let after = vec![user(0), micro_marker(20, &[1]), user(4)];
    let mut inv = ApiValid::default();
    let repair = repair_event(1);
    assert!(inv
        .observe(&Transition::new(0, &repair, &before, &before, &[]))
        .is_none());
    let pass = absorbed(2, &[1, 2, 3]);
    let t = Transition::new(1, &pass, &before, &after, &[]);
    let skip = skip_after_window(&t, inv.valid_prefix.as_ref().unwrap()).unwrap();
    assert_eq!((skip.stop, skip.resume_at), (2, 3));
    assert!(inv.observe(&t).is_none());
    assert_eq!(
        inv.valid_prefix.as_ref().map(|s| (s.len, s.users)),
        Some((3, 2))
    );
}

#[test]
fn a_pass_resumes_at_the_last_user_row_before_its_window_and_matches_a_full_scan() {
    let before = vec![
        user(0),
        reply(1),
        user(2),
        calling(3, &[3]),
        tool(4, 3),
        reply(5),
        user(6),
        reply(7),
    ];
    // The pass drops the exchange 3..=5: users 2 and 6 meet.
    let after = vec![user(0), reply(1), user(2), user(6), reply(7)];
    let repair = repair_event(1);
    let pass = absorbed(1, &[3, 4, 5]);
    let mut inv = ApiValid::default();
    assert!(inv
        .observe(&Transition::new(0, &repair, &before, &before, &[]))
        .is_none());
    let t = Transition::new(1, &pass, &before, &after, &[]);
    assert_eq!(t.delta.prefix_rows, 3);
    let resumed = inv.observe(&t).expect("consecutive users after the pass");
    let full = ApiValid::default().observe(&t).expect("same from scratch");
    assert_eq!(resumed, full);
    assert_eq!(witness_ids(&resumed), vec![2, 6]);
    // A valid pass resumes and stays quiet; the next one still sees the whole list.
    let good = vec![user(0), reply(1), user(2), reply(7)];
    let mut inv = ApiValid::default();
    inv.observe(&Transition::new(0, &repair, &before, &before, &[]));
    assert!(inv
        .observe(&Transition::new(1, &pass, &before, &good, &[]))
        .is_none());
    // Rows appended since the last check are checked from the resume point too.
    let mut longer = good.clone();
    longer.extend([user(20), user(21)]);
    let append = append_event(2);
    let n = good.len();
    assert!(inv
        .observe(&Transition::new(2, &append, &longer[..n], &longer, &[]))
        .is_none());
    let mut passed = longer.clone();
    passed.remove(3);
    let t = Transition::new(3, &pass, &longer, &passed, &[]);
    let resumed = inv.observe(&t).expect("consecutive users 2, 20");
    assert_eq!(resumed, ApiValid::default().observe(&t).unwrap());
    assert_eq!(witness_ids(&resumed), vec![2, 20]);
    let bad = vec![reply(1), user(2), reply(7)];
    let w = inv
        .observe(&Transition::new(2, &pass, &good, &bad, &[]))
        .expect("first visible row is no longer a user row");
    assert!(w.facts[0].contains(&ApiRule::FirstVisibleUser.label()));
}
