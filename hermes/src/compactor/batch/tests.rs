//! End-to-end tests of `compress()` and of each batch bug switch, both ways.

use super::testkit::{index_of, invalid_json_calls, Builder, Scripted};
use super::*;
use compactsim_fakes::summarizer::{SummaryErrorClass, SummaryFailure};
use compactsim_model::{FactId, Role, ToolCall};

const NETWORK: SummaryFailure = SummaryFailure::Error(SummaryErrorClass::Network);
const AUTH: SummaryFailure = SummaryFailure::Error(SummaryErrorClass::Auth);
const TIMEOUT: SummaryFailure = SummaryFailure::Error(SummaryErrorClass::Timeout);

fn config(budget: u32, bugs: &[Bug]) -> BatchConfig {
    BatchConfig {
        tail_budget_tokens: budget,
        bugs: BugSet::of(bugs),
        ..BatchConfig::default()
    }
}

fn after_first() -> BatchState {
    BatchState {
        compression_count: 1,
        ..BatchState::default()
    }
}

/// System prompt and `turns` complete turns with 8,000-char tool outputs: with a 2,000
/// token budget the tail is exactly the last two turns.
fn long_session(turns: u32) -> Builder {
    let mut b = Builder::new();
    b.system();
    for _ in 0..turns {
        b.turn(400, 1, 8_000);
    }
    b
}

fn run(
    b: &mut Builder,
    cfg: &BatchConfig,
    state: &mut BatchState,
    backend: &mut Scripted,
) -> BatchOutcome {
    compress(&mut b.rows, cfg, state, backend, &mut b.ids, 0, false)
}

fn users(m: &[Message]) -> usize {
    m.iter().filter(|r| r.role == Role::User).count()
}

/// Every tool row answers a call of the nearest preceding assistant; every call is answered.
fn pairs_ok(m: &[Message]) -> bool {
    let mut open: Vec<&ToolCall> = vec![];
    let mut answered = 0;
    let mut total = 0;
    for r in m {
        match r.role {
            Role::Assistant => {
                open = r.tool_calls.iter().collect();
                total += open.len();
            }
            Role::Tool => {
                if !open.iter().any(|c| Some(c.id) == r.tool_call_id) {
                    return false;
                }
                answered += 1;
            }
            _ => open.clear(),
        }
    }
    answered == total
}

#[test]
fn too_few_messages_is_a_noop_with_a_strike() {
    let mut b = Builder::new();
    b.system();
    b.turn(400, 0, 0);
    b.turn(400, 0, 0);
    let copy = b.rows.clone();
    let mut state = BatchState::default();
    let out = run(
        &mut b,
        &config(2_000, &[]),
        &mut state,
        &mut Scripted::default(),
    );
    assert_eq!(out.result, PassResult::NoOp(NoOpReason::TooFewMessages));
    assert_eq!((b.rows, state.ineffective_strikes), (copy, 1));
}

#[test]
fn compaction_keeps_anchors_writes_one_summary_and_strips_persisted() {
    let mut b = long_session(8).persisted();
    let before = b.rows.clone();
    let last_user = before[before.iter().rposition(|m| m.is_real_user()).unwrap()].clone();
    let last_reply = before.last().unwrap().clone();
    let mut state = BatchState::default();
    let mut backend = Scripted::default();
    let out = run(&mut b, &config(2_000, &[]), &mut state, &mut backend);
    assert_eq!(out.result, PassResult::Compacted { fallback: false });
    let m = &b.rows;
    assert!(m.len() < before.len() && out.messages_after as usize == m.len());
    assert_eq!(m.iter().filter(|r| r.is_summary()).count(), 1);
    assert!(m.iter().all(|r| !r.flags.persisted));
    assert!(pairs_ok(m));
    assert!(m
        .iter()
        .any(|r| r.id == last_user.id && r.content == last_user.content && r.is_real_user()));
    assert_eq!(m.last().unwrap().content, last_reply.content);
    let summary = m.iter().find(|r| r.is_summary()).unwrap();
    assert_eq!(
        summary.content.segments[0].chars,
        scaffold::SUMMARY_PREFIX_CHARS_0_19_0
    );
    for id in &out.summarized {
        let facts = before.iter().find(|r| r.id == *id).unwrap().content.facts();
        // prune described old tool outputs first: their facts never reach the summary
        let described = before.iter().any(|r| r.id == *id && r.role == Role::Tool);
        assert!(described || facts.iter().all(|f| summary.content.facts().contains(f)));
    }
    assert_eq!(backend.seen[0].previous, RollingSummary::default());
    assert_eq!((state.compression_count, out.head_end), (1, 4));
    assert!(out.removed.iter().all(|id| out.summarized.contains(id)));
}

#[test]
fn second_compaction_is_iterative_and_replaces_the_summary() {
    let mut b = long_session(8);
    let cfg = config(2_000, &[]);
    let mut state = BatchState::default();
    let mut backend = Scripted::default();
    run(&mut b, &cfg, &mut state, &mut backend);
    let first = state.previous_summary.clone().unwrap();
    for _ in 0..4 {
        b.turn(400, 1, 8_000);
    }
    let out = run(&mut b, &cfg, &mut state, &mut backend);
    assert!(out.committed());
    assert_eq!(out.head_end, 1, "head decayed to the system row");
    assert_eq!(backend.seen[1].previous, first);
    assert_eq!(b.rows.iter().filter(|r| r.is_summary()).count(), 1);
    let summary = b.rows.iter().find(|r| r.is_summary()).unwrap();
    assert!(first
        .facts
        .iter()
        .all(|f| summary.content.facts().contains(f)));
}

#[test]
fn restart_rehydrates_the_previous_summary_from_its_row() {
    let mut b = Builder::new();
    b.system();
    b.summary(Role::User, &[900, 901]);
    for _ in 0..6 {
        b.turn(400, 1, 8_000);
    }
    let old = b.rows[1].id;
    let mut backend = Scripted::default();
    let out = run(
        &mut b,
        &config(2_000, &[]),
        &mut BatchState::default(),
        &mut backend,
    );
    assert!(out.committed() && out.removed.contains(&old));
    assert_eq!(out.head_end, 1, "restart probe decays the head");
    assert_eq!(
        backend.seen[0].previous.facts,
        vec![FactId(900), FactId(901)]
    );
    assert_eq!(b.rows.iter().filter(|r| r.is_summary()).count(), 1);
}

#[test]
fn a_marker_without_summary_segments_is_previous_not_input() {
    let mut b = Builder::new();
    b.system();
    b.push(Role::Assistant, 1_600);
    b.rows[1].flags.summary_marker = true;
    b.rows[1].flags.micro_marker = true;
    let marker_facts = b.rows[1].content.facts();
    for _ in 0..6 {
        b.turn(400, 1, 8_000);
    }
    let mut backend = Scripted::default();
    let out = run(
        &mut b,
        &config(2_000, &[]),
        &mut BatchState::default(),
        &mut backend,
    );
    assert!(out.committed());
    assert_eq!(backend.seen[0].previous.facts, marker_facts);
    assert!(marker_facts
        .iter()
        .all(|f| !backend.seen[0].input_facts.contains(f)));
}

#[test]
fn window_of_summaries_only_is_a_noop() {
    let mut b = Builder::new();
    b.system();
    b.summary(Role::User, &[1]);
    b.turn(400, 1, 400);
    b.turn(400, 1, 400);
    let mut state = after_first();
    let out = run(
        &mut b,
        &config(1_000_000, &[]),
        &mut state,
        &mut Scripted::default(),
    );
    assert_eq!(out.result, PassResult::NoOp(NoOpReason::NothingNew));
    assert_eq!(state.ineffective_strikes, 1);
}

#[test]
fn network_failure_aborts_unchanged_and_the_flag_outlives_the_cooldown_return() {
    let mut b = long_session(8);
    let copy = b.rows.clone();
    let cfg = config(2_000, &[]);
    let mut state = BatchState::default();
    let mut backend = Scripted::failing(&[NETWORK]);
    let out = run(&mut b, &cfg, &mut state, &mut backend);
    assert_eq!(out.result, PassResult::Aborted(AbortReason::Network));
    assert_eq!(b.rows, copy);
    assert!(state.cooling_down(0) && state.abort_flag == Some(AbortFlag::Network));
    let again = run(&mut b, &cfg, &mut state, &mut backend);
    assert_eq!(again.result, PassResult::Aborted(AbortReason::Network));
    assert_eq!(
        (backend.seen.len(), &b.rows),
        (1, &copy),
        "no call while cooling down"
    );
    let forced = compress(
        &mut b.rows,
        &cfg,
        &mut state,
        &mut backend,
        &mut b.ids,
        0,
        true,
    );
    assert_eq!(forced.result, PassResult::Compacted { fallback: false });
    assert_eq!(state.abort_flag, None);
}

#[test]
fn h29559_network_failure_drops_the_middle_without_a_summary() {
    let mut b = long_session(8);
    let n = b.rows.len();
    let mut state = BatchState::default();
    let mut backend = Scripted::failing(&[NETWORK]);
    let out = run(
        &mut b,
        &config(2_000, &[Bug::H29559]),
        &mut state,
        &mut backend,
    );
    assert_eq!(out.result, PassResult::Compacted { fallback: false });
    assert!(out.summary_miss.is_some() && out.summary_tokens == 0);
    assert!(b.rows.len() < n && !out.removed.is_empty());
    assert!(b.rows.iter().all(|r| !r.is_summary()));
    assert_eq!(state.abort_flag, None);
}

#[test]
fn auth_failure_aborts_and_abort_on_failure_config_aborts_too() {
    let mut b = long_session(8);
    let copy = b.rows.clone();
    let out = run(
        &mut b,
        &config(2_000, &[]),
        &mut BatchState::default(),
        &mut Scripted::failing(&[AUTH]),
    );
    assert_eq!(out.result, PassResult::Aborted(AbortReason::Auth));
    let strict = BatchConfig {
        abort_on_summary_failure: true,
        ..config(2_000, &[])
    };
    let out = run(
        &mut b,
        &strict,
        &mut BatchState::default(),
        &mut Scripted::failing(&[TIMEOUT]),
    );
    assert_eq!(out.result, PassResult::Aborted(AbortReason::SummaryFailed));
    assert_eq!(b.rows, copy);
}

#[test]
fn other_failure_writes_the_fallback_and_arms_the_cooldown() {
    let mut b = long_session(8);
    let cfg = config(2_000, &[]);
    let mut state = BatchState::default();
    let mut backend = Scripted::failing(&[TIMEOUT]);
    let out = compress(
        &mut b.rows,
        &cfg,
        &mut state,
        &mut backend,
        &mut b.ids,
        5_000,
        false,
    );
    assert_eq!(out.result, PassResult::Compacted { fallback: true });
    assert_eq!(
        (state.cooldown_until_ms, state.fallback_streak),
        (65_000, 1)
    );
    let summary = b.rows.iter().find(|r| r.is_summary()).unwrap();
    assert!(summary.tokens().rough * 4 <= fallback::FALLBACK_MAX_CHARS + 2_000);
    let last_dropped = out.summarized.last().unwrap();
    assert!(out.removed.contains(last_dropped));
    for _ in 0..4 {
        b.turn(400, 1, 8_000);
    }
    let out = compress(
        &mut b.rows,
        &cfg,
        &mut state,
        &mut backend,
        &mut b.ids,
        6_000,
        false,
    );
    assert_eq!(out.result, PassResult::Compacted { fallback: true });
    assert_eq!((backend.seen.len(), state.fallback_streak), (1, 2));
    assert_eq!(out.summary_miss, Some(Miss::CoolingDown));
}

#[test]
fn h11996_head_stays_protected_on_later_passes() {
    for (bugs, head) in [(vec![], 1), (vec![Bug::H11996], 4)] {
        let mut b = long_session(8);
        let out = run(
            &mut b,
            &config(2_000, &bugs),
            &mut after_first(),
            &mut Scripted::default(),
        );
        assert!(out.committed());
        assert_eq!(out.head_end, head, "{bugs:?}");
    }
}

#[test]
fn h10896_summarizes_the_last_user_message() {
    for (bugs, kept) in [(vec![], true), (vec![Bug::H10896], false)] {
        let mut b = long_session(5);
        let u = b.user(400);
        for _ in 0..6 {
            b.talking_round(4_000);
        }
        let out = run(
            &mut b,
            &config(2_000, &bugs),
            &mut after_first(),
            &mut Scripted::default(),
        );
        assert!(out.committed());
        let survives = index_of(&b.rows, u).is_some_and(|i| b.rows[i].is_real_user());
        assert_eq!(survives, kept, "{bugs:?}");
    }
}

#[test]
fn h52160_summary_becomes_the_first_visible_row_as_assistant() {
    for (bugs, role) in [(vec![], Role::User), (vec![Bug::H52160], Role::Assistant)] {
        let mut b = long_session(8);
        let out = run(
            &mut b,
            &config(2_000, &bugs),
            &mut after_first(),
            &mut Scripted::default(),
        );
        assert!(out.committed());
        assert_eq!(b.rows[0].role, Role::System);
        assert!(b.rows[1].is_summary());
        assert_eq!(b.rows[1].role, role, "{bugs:?}");
    }
}

#[test]
fn h58753_leaves_zero_user_rows() {
    for (bugs, user_rows) in [(vec![], 1), (vec![Bug::H58753], 0)] {
        let mut b = Builder::new();
        b.system();
        for _ in 0..10 {
            b.round(8_000);
        }
        b.reply(400);
        let out = run(
            &mut b,
            &config(2_000, &bugs),
            &mut after_first(),
            &mut Scripted::default(),
        );
        assert!(out.committed());
        assert_eq!(users(&b.rows), user_rows, "{bugs:?}");
    }
}

#[test]
fn h11762_leaves_invalid_json_in_the_kept_head() {
    for (bugs, invalid) in [(vec![], 0), (vec![Bug::H11762], 1)] {
        let mut b = Builder::new();
        b.user(400);
        b.round_with_args(400, format!("{{\"content\":\"{}\"}}", "y".repeat(2_000)));
        b.reply(400);
        for _ in 0..8 {
            b.turn(400, 1, 8_000);
        }
        let out = run(
            &mut b,
            &config(2_000, &bugs),
            &mut BatchState::default(),
            &mut Scripted::default(),
        );
        assert!(out.committed() && out.head_end == 3);
        assert_eq!(invalid_json_calls(&b.rows), invalid, "{bugs:?}");
    }
}

#[test]
fn event_carries_the_pass_figures() {
    let mut b = long_session(8);
    let out = run(
        &mut b,
        &config(2_000, &[]),
        &mut BatchState::default(),
        &mut Scripted::default(),
    );
    let ev = out.event(7, BatchTrigger::Preflight, 0);
    assert!(ev.is_compaction() && ev.is_committed_compaction() && ev.turn() == 7);
    let Event::BatchPass(p) = ev else {
        panic!("{ev:?}")
    };
    assert_eq!(
        (p.messages_before, p.messages_after),
        (out.messages_before, out.messages_after)
    );
    assert!(p.tokens_after < p.tokens_before && p.summary_tokens > 0 && !p.summary_failed);
}

#[test]
fn an_untouched_list_keeps_its_ends() {
    let mut b = Builder::new();
    b.system();
    b.user(100);
    b.reply(100);
    ListEnds::of(&b.rows).assert_same(&b.rows.clone());
    ListEnds::of(&[]).assert_same(&[]);
}

#[test]
#[should_panic(expected = "CONTRACT: an aborted or no-op pass leaves the list untouched")]
fn a_shortened_list_fires() {
    let mut b = Builder::new();
    b.system();
    b.user(100);
    b.reply(100);
    let found = ListEnds::of(&b.rows);
    b.rows.pop();
    found.assert_same(&b.rows);
}

#[test]
#[should_panic(expected = "CONTRACT: an aborted or no-op pass leaves the list untouched")]
fn a_list_with_a_new_last_row_fires() {
    let mut b = Builder::new();
    b.system();
    b.user(100);
    let found = ListEnds::of(&b.rows);
    b.rows.pop();
    b.reply(100);
    found.assert_same(&b.rows);
}
