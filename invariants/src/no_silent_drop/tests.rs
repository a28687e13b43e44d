//! Tests of `no_silent_drop` (kept apart for the project's ~600-line rule).

use super::*;
use crate::testkit::*;
use compactsim_model::{BatchTrigger, Content, ContentKind, MsgId, Segment};

fn with_facts(mut m: Message, facts: &[u32]) -> Message {
    let seg = Segment {
        kind: ContentKind::Prose,
        chars: 400,
        seed: m.id.0 as u64,
        origin: m.id,
        facts: facts.iter().map(|&f| FactId(f)).collect(),
    };
    m.set_content(Content::single(seg));
    m
}

/// user 0, an exchange (1..=3) with facts 11, 12, 13, user 4, reply 5 (fact 15), user 6.
fn start() -> Vec<Message> {
    vec![
        user(0),
        with_facts(calling(1, &[1]), &[11]),
        with_facts(tool(2, 1), &[12]),
        with_facts(reply(3), &[13]),
        user(4),
        with_facts(reply(5), &[15]),
        user(6),
    ]
}

fn absorbed_rows() -> Vec<Message> {
    vec![
        user(0),
        micro_marker(9, &[11, 12, 13]),
        user(4),
        with_facts(reply(5), &[15]),
        user(6),
    ]
}

fn observe(ev: &Event, after: &[Message], calls: &[ServedCall]) -> Option<Witness> {
    let before = start();
    NoSilentDrop::default()
        .observe(&transition_served(ev, &before, after, calls))
        .map(readable)
}

#[test]
fn quiet_when_the_exchange_went_through_an_answered_call_into_the_marker() {
    let call = [served(true, 300, &[11, 12, 13])];
    assert!(observe(&absorbed(1, &[1, 2, 3]), &absorbed_rows(), &call).is_none());
    // A fact a live summary already holds needs no new summary (an external
    // compactor's call counts it as the previous summary's, not as input).
    let mut held = start();
    held.insert(0, batch_summary(20, &[12]));
    let mut held_after = absorbed_rows();
    held_after.insert(0, batch_summary(20, &[12]));
    let call = [served(true, 300, &[11, 13])];
    assert!(NoSilentDrop::default()
        .observe(&transition_served(
            &absorbed(1, &[1, 2, 3]),
            &held,
            &held_after,
            &call
        ))
        .is_none());
    // The summarizer's own retention may drop a fact: it is not the compactor's.
    let mut lossy = served(true, 300, &[11, 12, 13]);
    lossy.facts_out = vec![FactId(11), FactId(13)];
    let kept = vec![
        user(0),
        micro_marker(9, &[11, 13]),
        user(4),
        reply(5),
        user(6),
    ];
    let mut kept_rows = kept;
    kept_rows[3] = with_facts(reply(5), &[15]);
    assert!(observe(&absorbed(1, &[1, 2, 3]), &kept_rows, &[lossy]).is_none());
}

#[test]
fn fires_when_a_micro_pass_drops_rows_with_no_answered_call() {
    let failed = [served(false, 300, &[11, 12, 13])];
    for calls in [&failed[..], &[]] {
        let w = observe(&absorbed(1, &[1, 2, 3]), &absorbed_rows(), calls)
            .expect("no summary answered");
        assert!(w.facts[0].contains("3 rows left silently"), "{:?}", w.facts);
        assert_eq!(witness_ids(&w), vec![1, 2, 3]);
    }
}

/// Hermes N1 (iot 0.20.0.post2-0.20.6.post1, axisrow 0.20.1.2): the pass's one call came
/// back cut at `max_tokens` (`finish_reason` `length`, recorded failed: no facts kept) and
/// the compactor took the cut text as its summary: the marker spells what the cut kept,
/// the exchange left. No call answered, so its rows left silently, whatever the marker
/// spells; an answered condense call of the same pass does not change that.
#[test]
fn fires_when_a_micro_pass_absorbs_behind_an_answer_cut_at_max_tokens() {
    let cut = served(false, 300, &[11, 12, 13]);
    let mut condense = served(true, 0, &[]);
    condense.condense = true;
    let cut_adopted = vec![
        user(0),
        micro_marker(9, &[11, 12]),
        user(4),
        with_facts(reply(5), &[15]),
        user(6),
    ];
    for calls in [vec![cut.clone()], vec![condense, cut.clone()]] {
        let w = observe(&absorbed(1, &[1, 2, 3]), &cut_adopted, &calls)
            .expect("a cut answer is no summary");
        assert!(w.facts[0].contains("3 rows left silently"), "{:?}", w.facts);
        assert!(
            w.facts[0].contains("with no answered summary call"),
            "{:?}",
            w.facts
        );
        assert_eq!(witness_ids(&w), vec![1, 2, 3]);
    }
}

/// The quiet twins of N1: a pass that discards the cut answer and keeps its exchange
/// (iot 0.21.0.post1 on), and one that retried and absorbed through the answered call.
#[test]
fn quiet_when_a_cut_answer_is_discarded_or_a_retry_answered() {
    let cut = served(false, 300, &[11, 12, 13]);
    let failed = Event::MicroPass(compactsim_model::MicroPass {
        outcome: compactsim_model::MicroOutcome::SummarizeFailed,
        ..compactsim_model::MicroPass::no_exchange(1, 1)
    });
    assert!(observe(&failed, &start(), std::slice::from_ref(&cut)).is_none());
    let retried = [cut, served(true, 300, &[11, 12, 13])];
    assert!(observe(&absorbed(1, &[1, 2, 3]), &absorbed_rows(), &retried).is_none());
}

#[test]
fn fires_when_a_micro_pass_removes_a_row_whose_facts_no_call_saw() {
    // The call summarized exchange 1-3 without reply 3's fact; reply 3 left anyway.
    let call = [served(true, 300, &[11, 12])];
    let w = observe(&absorbed(1, &[1, 2, 3]), &absorbed_rows(), &call)
        .expect("fact 13 reached no summary call");
    assert_eq!(witness_ids(&w), vec![3]);
    assert!(
        w.facts[0].contains("no answered summary call saw its facts FACT-000013"),
        "{:?}",
        w.facts
    );
}

#[test]
fn fires_when_the_marker_lists_the_answer_but_its_text_does_not_spell_it() {
    let call = [served(true, 300, &[11, 12, 13])];
    let mut after = absorbed_rows();
    // The marker's one segment lists facts 11-13 in 20 characters: it spells one.
    after[1].set_content(prose(9, 20, &[11, 12, 13]));
    let w = observe(&absorbed(1, &[1, 2, 3]), &after, &call).expect("summary not spelled");
    assert!(w.facts[0].contains("no summary now in"), "{:?}", w.facts);
    assert_eq!(witness_ids(&w), vec![2, 3]);
}

#[test]
fn fires_when_more_rows_leave_a_batch_pass_than_the_call_summarized() {
    let call = [served(true, 300, &[11, 12, 13])];
    let mut after = absorbed_rows();
    after.remove(3);
    let pass = batch_event(1, BatchTrigger::Preflight, true);
    let w = observe(&pass, &after, &call).expect("reply 5 dropped");
    assert_eq!(witness_ids(&w), vec![5]);
    assert!(w.facts[0].contains("FACT-000015"), "{:?}", w.facts);
}

#[test]
fn fires_when_the_answer_is_not_in_the_transcript() {
    let call = [served(true, 300, &[11, 12, 13])];
    let mut after = absorbed_rows();
    after[1] = micro_marker(9, &[11]);
    let w = observe(&absorbed(1, &[1, 2, 3]), &after, &call).expect("summary lost");
    assert!(w.facts[0].contains("no summary now in"), "{:?}", w.facts);
    assert_eq!(witness_ids(&w), vec![2, 3]);
    // A condense call is not a summary of the rows.
    let mut condense = served(true, 0, &[11, 12, 13]);
    condense.condense = true;
    assert!(observe(&absorbed(1, &[1, 2, 3]), &absorbed_rows(), &[condense]).is_some());
}

#[test]
fn merged_text_is_carried_and_a_stray_tool_row_may_go_at_a_repair() {
    let rows = start();
    let mut merged_rows = rows.clone();
    let second = merged_rows.remove(5);
    merged_rows[4].merge_content(&second.content);
    // Reply 5's text now sits inside user 4: not lost (api-valid judges roles).
    assert!(observe(&repair_event(1), &merged_rows, &[]).is_none());
    let mut stray = rows.clone();
    stray.insert(5, tool(8, 77));
    let mut repaired = stray.clone();
    repaired.remove(5);
    assert!(NoSilentDrop::default()
        .observe(&transition(&repair_event(1), &stray, &repaired))
        .is_none());
    let mut answered_dropped = rows.clone();
    answered_dropped.remove(2);
    let w = observe(&repair_event(1), &answered_dropped, &[]).expect("tool 2 answered call 1");
    assert_eq!(witness_ids(&w), vec![2]);
}

#[test]
fn a_batch_fallback_and_the_prune_are_declared_policies() {
    let pass = batch_event(1, BatchTrigger::Preflight, true);
    let after = vec![
        batch_summary(9, &[]),
        user(4),
        with_facts(reply(5), &[15]),
        user(6),
    ];
    assert!(observe(&pass, &after, &[served(false, 300, &[])]).is_none());
    assert!(observe(&pass, &after, &[]).is_none(), "cooldown: no call");
    // An answered call that never saw tool 2's facts: the prune rewrote it.
    let call = [served(true, 300, &[11, 13])];
    let summary = vec![
        batch_summary(9, &[11, 13]),
        user(4),
        with_facts(reply(5), &[15]),
        user(6),
    ];
    assert!(observe(&pass, &summary, &call).is_none());
    // ...but the assistant row's fact 13 must reach the summary in the transcript.
    let lost = vec![
        batch_summary(9, &[11]),
        user(4),
        with_facts(reply(5), &[15]),
        user(6),
    ];
    let w = observe(&pass, &lost, &call).expect("fact 13 kept by the call, not written");
    assert_eq!(witness_ids(&w), vec![3]);
    assert!(w.rows.iter().all(|r| r.id != MsgId(2)));
}

fn observe_declaring(
    policies: Policies,
    after: &[Message],
    calls: &[ServedCall],
) -> Option<Witness> {
    let pass = batch_event(1, BatchTrigger::Preflight, true);
    NoSilentDrop::new(policies)
        .observe(&transition_served(&pass, &start(), after, calls))
        .map(readable)
}

#[test]
fn fires_when_a_failed_call_drops_the_window_and_no_fallback_is_declared() {
    let after = vec![
        batch_summary(9, &[]),
        user(4),
        with_facts(reply(5), &[15]),
        user(6),
    ];
    let undeclared = Policies {
        static_fallback: false,
        ..Policies::HERMES
    };
    for calls in [vec![served(false, 300, &[])], vec![]] {
        let w = observe_declaring(undeclared, &after, &calls).expect("an empty summary");
        assert_eq!(witness_ids(&w), vec![0, 1, 2, 3]);
        assert!(w.facts[0].contains("static_fallback"), "{:?}", w.facts);
        assert!(observe_declaring(Policies::HERMES, &after, &calls).is_none());
    }
    // A pass that aborts and changes nothing drops nothing.
    assert!(observe_declaring(undeclared, &start(), &[served(false, 300, &[])]).is_none());
}

#[test]
fn fires_when_a_tool_result_no_answered_call_named_leaves_a_batch_pass() {
    let summary = vec![
        batch_summary(9, &[11, 13]),
        user(4),
        with_facts(reply(5), &[15]),
        user(6),
    ];
    let mut call = served(true, 300, &[11, 13]);
    call.tool_results_named = Some(vec![]);
    let w = observe_declaring(Policies::HERMES, &summary, &[call.clone()])
        .expect("tool 2's result was in no prompt");
    assert_eq!(witness_ids(&w), vec![2]);
    assert!(w.facts[0].contains("named"), "{:?}", w.facts);
    // Named (its pruned output in the prompt): the declared prune.
    call.tool_results_named = Some(vec![CallId(1)]);
    assert!(observe_declaring(Policies::HERMES, &summary, &[call.clone()]).is_none());
    // Without the prune a tool row is held to its facts like any other row.
    let no_prune = Policies {
        tool_output_prune: false,
        ..Policies::HERMES
    };
    let w = observe_declaring(no_prune, &summary, &[call.clone()]).expect("fact 12 unseen");
    assert_eq!(witness_ids(&w), vec![2]);
    call.facts_in.push(FactId(12));
    let all = vec![
        batch_summary(9, &[11, 12, 13]),
        user(4),
        with_facts(reply(5), &[15]),
        user(6),
    ];
    call.facts_out = vec![FactId(11), FactId(12), FactId(13)];
    assert!(observe_declaring(no_prune, &all, &[call]).is_none());
}

#[test]
fn the_summarizer_input_caps_are_declared_policies_of_compaction_passes() {
    let pass = batch_event(1, BatchTrigger::Preflight, true);
    let mut big = start();
    let long = Segment {
        kind: ContentKind::Prose,
        chars: MESSAGE_INPUT_CAP_CHARS + 1,
        seed: 3,
        origin: MsgId(3),
        facts: vec![FactId(13)],
    };
    big[3].set_content(Content::single(long));
    let after = vec![
        batch_summary(9, &[11]),
        user(4),
        with_facts(reply(5), &[15]),
        user(6),
    ];
    let call = [served(true, 300, &[11])];
    let fires = |before: &[Message]| {
        NoSilentDrop::default()
            .observe(&transition_served(&pass, before, &after, &call))
            .is_some()
    };
    assert!(
        fires(&start()),
        "reply 3 is short: its fact 13 had to be seen"
    );
    assert!(!fires(&big), "reply 3 was cut to its head and tail");
    // A micro pass serializes its exchange the same way (iot's serializer).
    let call = [served(true, 300, &[11, 12])];
    let micro_fires = |before: &[Message]| {
        NoSilentDrop::default()
            .observe(&transition_served(
                &absorbed(1, &[1, 2, 3]),
                before,
                &absorbed_rows(),
                &call,
            ))
            .is_some()
    };
    assert!(micro_fires(&start()), "reply 3 is short");
    assert!(!micro_fires(&big), "reply 3 was cut");
    // A window of 14 rows under the per-message cap (82,600 chars): the block cap.
    let mut window = vec![user(0)];
    for id in 20..34 {
        let mut row = if id % 2 == 0 { user(id) } else { reply(id) };
        let seg = Segment {
            kind: ContentKind::Prose,
            chars: 5_900,
            seed: id as u64,
            origin: MsgId(id),
            facts: vec![FactId(id)],
        };
        row.set_content(Content::single(seg));
        window.push(row);
    }
    window.extend([user(4), with_facts(reply(5), &[15]), user(6)]);
    assert!(!fires(&window));
    assert!(fires(
        &window[..8]
            .iter()
            .chain(&window[15..])
            .cloned()
            .collect::<Vec<_>>()
    ));
}

#[test]
fn a_batch_pass_summarizes_one_window_only() {
    let pass = batch_event(1, BatchTrigger::Preflight, true);
    // Even a call that saw reply 5's fact does not excuse a row past the window.
    let call = [served(true, 300, &[11, 12, 13, 15])];
    let after = vec![batch_summary(9, &[11, 12, 13, 15]), user(4), user(6)];
    let w = observe(&pass, &after, &call).expect("reply 5 is past kept user 4");
    assert_eq!(witness_ids(&w), vec![5]);
    assert!(
        w.facts[0].contains("outside the one window"),
        "{:?}",
        w.facts
    );
    let window = vec![
        batch_summary(9, &[11, 12, 13]),
        user(4),
        with_facts(reply(5), &[15]),
        user(6),
    ];
    assert!(observe(&pass, &window, &call).is_none());
}

/// iot 0.22.2.post1's user-turn anchor (agent/conversation_compression.py:2415-2446): a
/// compressed list with no real user row gets a copy of the newest summarized one, after
/// the tail. The copy is kept but moved: it does not split the window (gateway case 32).
#[test]
fn a_kept_row_moved_behind_the_tail_does_not_split_the_window() {
    let pass = batch_event(1, BatchTrigger::Preflight, true);
    let call = [served(true, 300, &[11, 12, 13, 15])];
    let anchored = vec![batch_summary(9, &[11, 12, 13, 15]), user(6), user(4)];
    assert!(observe(&pass, &anchored, &call).is_none());
    // The same rows with user 4 left where it was: reply 5 is past a row that stayed.
    let stayed = vec![batch_summary(9, &[11, 12, 13, 15]), user(4), user(6)];
    let w = observe(&pass, &stayed, &call).expect("reply 5 is past kept user 4");
    assert_eq!(witness_ids(&w), vec![5]);
}

/// Micro passes and repairs over `start()`: every subset of rows 1-6 removed, with
/// or without a marker, with or without the first removed row's text merged into
/// user 0 (carried), under answered, partial, failed or no calls: asking the rules
/// first gives the rows, reasons and order of reading every row's carriage first.
#[test]
fn suspects_first_equals_reading_every_rows_carriage_on_micro_passes_and_repairs() {
    let before = start();
    let calls = [
        vec![],
        vec![served(false, 300, &[11, 12, 13])],
        vec![served(true, 300, &[11, 12, 13])],
        vec![served(true, 300, &[11])],
        vec![served(true, 300, &[12, 13, 15])],
    ];
    let markers: [Option<&[u32]>; 3] = [None, Some(&[11, 12, 13]), Some(&[11])];
    let events = [absorbed(1, &[1, 2, 3]), repair_event(1)];
    let (mut fired, mut quiet) = (0u32, 0u32);
    for removed in 0u32..(1 << 6) {
        for marker in markers {
            for merge in [false, true] {
                let mut after = without_rows(&before, removed);
                let first_removed = (1..7).find(|i| removed & (1 << (i - 1)) != 0);
                if let (true, Some(i)) = (merge, first_removed) {
                    after[0].merge_content(&before[i].content);
                }
                if let Some(facts) = marker {
                    after.insert(1, micro_marker(9, facts));
                }
                for ev in &events {
                    for served in &calls {
                        let t = transition_served(ev, &before, &after, served);
                        let mut inv = NoSilentDrop::default();
                        inv.kept.fill(after.iter().map(|m| m.id));
                        let left: Vec<usize> = t
                            .delta
                            .removed_range()
                            .filter(|&i| {
                                !before[i].is_summary() && !inv.kept.contains(before[i].id)
                            })
                            .collect();
                        let how = judged(ev).expect("judged");
                        let first = unaccounted_suspects_first(how, Policies::HERMES, &t, &left);
                        assert_eq!(first, inv.unaccounted_in_window(how, &t, &left));
                        if first.is_empty() {
                            quiet += 1;
                        } else {
                            fired += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(fired > 100 && quiet > 100, "fired {fired}, quiet {quiet}");
}

/// `before` without the rows whose bit (row `i` at bit `i - 1`) is set in `removed`;
/// row 0 always stays.
fn without_rows(before: &[Message], removed: u32) -> Vec<Message> {
    before
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || removed & (1 << (i - 1)) == 0)
        .map(|(_, m)| m.clone())
        .collect()
}

/// The two carriage walks agree on every subset of rows removed, with or without a row's
/// text (or a call's row) moved into a kept row and a marker written.
#[test]
fn both_carriage_walks_agree() {
    let before = start();
    let (mut carried, mut dropped) = (0u32, 0u32);
    for removed in 0u32..(1 << 6) {
        for moved in 0..7 {
            for marker in [false, true] {
                let mut after = without_rows(&before, removed);
                if moved > 0 && removed & (1 << (moved - 1)) != 0 {
                    after[0].merge_content(&before[moved].content);
                    if !before[moved].tool_calls.is_empty() {
                        let mut copy = before[moved].clone();
                        copy.id = MsgId(20);
                        after.push(copy);
                    }
                }
                if marker {
                    after.insert(1, micro_marker(9, &[11, 12]));
                }
                let ev = absorbed(1, &[1, 2, 3]);
                let t = transition_served(&ev, &before, &after, &[]);
                let left: Vec<usize> = (1..before.len())
                    .filter(|&i| removed & (1 << (i - 1)) != 0)
                    .collect();
                let by_index = carried_rows_by_index(&t, &left);
                assert_eq!(
                    by_index,
                    carried_rows_by_missing(&t, &left),
                    "{removed} {moved}"
                );
                carried += by_index.iter().filter(|&&c| c).count() as u32;
                dropped += by_index.iter().filter(|&&c| !c).count() as u32;
            }
        }
    }
    assert!(
        carried > 50 && dropped > 50,
        "carried {carried}, dropped {dropped}"
    );
}

#[test]
fn unjudged_events_and_summary_rows_are_left_to_others() {
    assert!(observe(&failed_event(1, false, 3), &start()[..4], &[]).is_none());
    assert!(observe(&reset_event(1), &[], &[]).is_none());
    let before = vec![user(0), micro_marker(5, &[1]), user(6)];
    let after = vec![user(0), user(6)];
    assert!(NoSilentDrop::default()
        .observe(&transition(&absorbed(1, &[]), &before, &after))
        .is_none());
    assert!(!NoSilentDrop::default().checks(&append_event(1)));
}
