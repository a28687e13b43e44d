//! `compress()` under the 0.19.0 profile's configuration (`Profile::tune_batch`): the
//! structure of a pass where the model follows the release (adapters/hermes/
//! DIFF-s6-dstruct.md).

use super::testkit::{index_of, Builder, Scripted};
use super::*;
use crate::profile::Profile;
use compactsim_fakes::summarizer::{SummaryErrorClass, SummaryFailure};
use compactsim_model::{FactId, Role};

/// The profile's batch configuration and its switches (B1, B3, B5).
fn profile_config(budget: u32) -> BatchConfig {
    let mut cfg = BatchConfig {
        tail_budget_tokens: budget,
        bugs: BugSet::of(&[Bug::H019B1, Bug::H019B3, Bug::H019B5]),
        ..BatchConfig::default()
    };
    Profile::Hermes0_19_0.tune_batch(&mut cfg);
    cfg
}

fn after_first(previous: &[u32]) -> BatchState {
    BatchState {
        compression_count: 1,
        previous_summary: Some(RollingSummary {
            facts: previous.iter().map(|&f| FactId(f)).collect(),
            tokens: 200,
        }),
        ..BatchState::default()
    }
}

fn run(b: &mut Builder, cfg: &BatchConfig, backend: &mut Scripted) -> BatchOutcome {
    let mut state = after_first(&[900]);
    compress(&mut b.rows, cfg, &mut state, backend, &mut b.ids, 0, false)
}

/// A pass at time 0 from a fresh state (no previous summary, no cooldown).
fn run_fresh(b: &mut Builder, cfg: &BatchConfig, backend: &mut Scripted) -> BatchOutcome {
    let mut state = BatchState::default();
    compress(&mut b.rows, cfg, &mut state, backend, &mut b.ids, 0, false)
}

/// A decayed head, the previous summary, then the newest user row and its answer.
fn summary_then_newest_turn() -> (Builder, MsgId, MsgId) {
    let mut b = Builder::new();
    let old = b.summary(Role::Assistant, &[900]);
    let u = b.user(400);
    b.round(400);
    b.reply(400);
    (b, old, u)
}

#[test]
fn a_window_of_the_summary_alone_is_summarized_again_before_59496() {
    let (mut b, old, u) = summary_then_newest_turn();
    let mut backend = Scripted::default();
    let out = run(&mut b, &profile_config(50), &mut backend);
    assert_eq!((out.compress_start, out.compress_end), (0, 1));
    assert_eq!(out.result, PassResult::Compacted { fallback: false });
    // One call: the previous summary, no new turns.
    assert_eq!(backend.seen.len(), 1);
    assert!(backend.seen[0].input_facts.is_empty());
    assert_eq!(backend.seen[0].previous.facts, vec![FactId(900)]);
    // The old row leaves; a new summary row leads, the user row follows.
    assert_eq!(index_of(&b.rows, old), None);
    assert!(b.rows[0].is_batch_summary() && b.rows[0].role == Role::Assistant);
    assert_eq!(index_of(&b.rows, u), Some(1));
}

#[test]
fn the_default_model_finds_nothing_new_in_the_same_window() {
    let (mut b, old, _) = summary_then_newest_turn();
    let before = b.rows.clone();
    let mut cfg = profile_config(50);
    cfg.hermes_0_19_0 = false;
    let mut backend = Scripted::default();
    let out = run(&mut b, &cfg, &mut backend);
    assert_eq!(out.result, PassResult::NoOp(NoOpReason::NothingNew));
    assert!(backend.seen.is_empty());
    assert_eq!(b.rows, before);
    assert_eq!(index_of(&b.rows, old), Some(0));
}

/// An older exchange, then the newest user row first in the tail.
fn tail_on_the_newest_user() -> (Builder, MsgId, MsgId) {
    let mut b = Builder::new();
    b.summary(Role::Assistant, &[900]);
    b.user(400);
    let reply = b.reply(400);
    let u = b.user(400);
    b.round(400);
    b.reply(400);
    (b, reply, u)
}

#[test]
fn under_b1_the_tail_starts_on_the_newest_user_row_with_the_summary_a_row_of_its_own() {
    let (mut b, reply, u) = tail_on_the_newest_user();
    let mut backend = Scripted::default();
    let out = run(&mut b, &profile_config(50), &mut backend);
    // The window reaches the user row: the reply before it is summarized.
    assert_eq!((out.compress_start, out.compress_end), (0, 3));
    assert_eq!(index_of(&b.rows, reply), None);
    assert!(b.rows[0].is_batch_summary() && b.rows[0].role == Role::Assistant);
    assert_eq!(index_of(&b.rows, u), Some(1));
    assert!(!b.rows[1].is_summary());
}

#[test]
fn where_the_summary_would_merge_into_the_newest_user_row_the_bridge_keeps_the_reply() {
    let (mut b, reply, u) = tail_on_the_newest_user();
    // Without B1 the empty head forces a user summary, which the user row would take.
    let mut cfg = profile_config(50);
    cfg.bugs = BugSet::of(&[Bug::H019B3, Bug::H019B5]);
    let mut backend = Scripted::default();
    let out = run(&mut b, &cfg, &mut backend);
    assert_eq!((out.compress_start, out.compress_end), (0, 2));
    assert!(b.rows[0].is_batch_summary() && b.rows[0].role == Role::User);
    assert_eq!(index_of(&b.rows, reply), Some(1));
    assert_eq!(index_of(&b.rows, u), Some(2));
    assert!(!b.rows[2].is_summary());
}

#[test]
fn under_b4_the_summary_is_merged_into_the_newest_user_row() {
    let (mut b, reply, u) = tail_on_the_newest_user();
    let mut cfg = profile_config(50);
    cfg.bugs = BugSet::of(&[Bug::H019B3, Bug::H019B4, Bug::H019B5]);
    let mut backend = Scripted::default();
    let out = run(&mut b, &cfg, &mut backend);
    // No bridge: the reply is summarized and the user row takes the summary.
    assert_eq!((out.compress_start, out.compress_end), (0, 3));
    assert_eq!(index_of(&b.rows, reply), None);
    assert_eq!(index_of(&b.rows, u), Some(0));
    assert!(b.rows[0].is_batch_summary() && b.rows[0].role == Role::User);
}

/// A system head, three turns, a huge reply and the newest user turn after it.
fn newest_turn_at_the_cut() -> (Builder, MsgId) {
    let mut b = Builder::new();
    b.system();
    for _ in 0..3 {
        b.turn(400, 1, 400);
    }
    b.user(400);
    b.round(400);
    b.reply(40_000);
    let u = b.user(400);
    for _ in 0..4 {
        b.round(400);
    }
    b.reply(400);
    (b, u)
}

#[test]
fn under_the_profile_a_timed_out_summary_aborts_the_pass() {
    // "Request timed out" is a connection error to 0.19.0: the network flag aborts the
    // pass (the list untouched) where the default model writes the fallback.
    let timeout = SummaryFailure::Error(SummaryErrorClass::Timeout);
    let (mut b, _) = newest_turn_at_the_cut();
    let copy = b.rows.clone();
    let mut backend = Scripted::failing(&[timeout]);
    let out = run_fresh(&mut b, &profile_config(2_000), &mut backend);
    assert_eq!(out.result, PassResult::Aborted(AbortReason::Network));
    assert_eq!(b.rows, copy);
    let (mut b, _) = newest_turn_at_the_cut();
    let mut backend = Scripted::failing(&[timeout]);
    let cfg = BatchConfig {
        tail_budget_tokens: 2_000,
        ..BatchConfig::default()
    };
    let out = run_fresh(&mut b, &cfg, &mut backend);
    assert_eq!(out.result, PassResult::Compacted { fallback: true });
}

/// [`newest_turn_at_the_cut`] through the profile's configuration with `more` switches,
/// its summary call failing with `failure`: the outcome, the rows before and after.
fn abort_at_the_cut(
    failure: SummaryFailure,
    more: &[Bug],
) -> (BatchOutcome, Vec<Message>, Vec<Message>) {
    let (mut b, _) = newest_turn_at_the_cut();
    let before = b.rows.clone();
    let mut cfg = profile_config(2_000);
    cfg.bugs = cfg.bugs.with_also(more);
    let mut backend = Scripted::failing(&[failure]);
    let out = run_fresh(&mut b, &cfg, &mut backend);
    (out, before, b.rows)
}

#[test]
fn under_b6_an_aborted_pass_hands_back_its_pruned_list() {
    let auth = SummaryFailure::Error(SummaryErrorClass::Auth);
    let (out, before, after) = abort_at_the_cut(auth, &[Bug::H019B6]);
    assert_eq!(out.result, PassResult::Aborted(AbortReason::Auth));
    assert!(out.prune.described > 0, "the prune described old outputs");
    // The same rows in the same order, no summary; only tool outputs rewritten.
    let ids = |rows: &[Message]| rows.iter().map(|m| m.id).collect::<Vec<_>>();
    assert_eq!(ids(&after), ids(&before));
    assert!(after.iter().all(|m| !m.is_summary()));
    let rewritten: Vec<&Message> = after
        .iter()
        .zip(&before)
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a)
        .collect();
    assert_eq!(rewritten.len(), out.prune.described as usize);
    assert!(rewritten.iter().all(|m| m.role == Role::Tool));
    assert_eq!(
        (out.messages_after, out.tokens_after),
        (out.messages_before, tokens_rough_total(&after))
    );
    assert!(out.tokens_after < out.tokens_before);
    // Without B6 the same abort leaves the list as it was.
    let (out, before, after) = abort_at_the_cut(auth, &[]);
    assert_eq!(out.result, PassResult::Aborted(AbortReason::Auth));
    assert!(out.prune.described > 0);
    assert_eq!(after, before);
    assert_eq!(out.tokens_after, out.tokens_before);
}

#[test]
fn under_the_profile_h29559_drops_the_window_on_a_timeout_as_on_a_network_error() {
    // 0.19.0 classes a timeout as a connection error, so H-29559 (the network abort
    // reverted) drops the window with no summary on it, as on a closed stream.
    let timeout = SummaryFailure::Error(SummaryErrorClass::Timeout);
    for failure in [timeout, SummaryFailure::Error(SummaryErrorClass::Network)] {
        let (out, before, after) = abort_at_the_cut(failure, &[Bug::H29559]);
        assert_eq!(out.result, PassResult::Compacted { fallback: false });
        assert_eq!(out.summary_tokens, 0);
        assert!(after.len() < before.len() && after.iter().all(|m| !m.is_summary()));
    }
    // The default model classes a timeout as a timeout: H-29559 leaves it alone.
    let (mut b, _) = newest_turn_at_the_cut();
    let cfg = BatchConfig {
        tail_budget_tokens: 2_000,
        bugs: BugSet::of(&[Bug::H29559]),
        ..BatchConfig::default()
    };
    let out = run_fresh(&mut b, &cfg, &mut Scripted::failing(&[timeout]));
    assert_eq!(out.result, PassResult::Compacted { fallback: true });
}

/// Seed 2024 case 222 (adapters/hermes/DIFF.md): a fresh head of the system row and
/// three rows ends on a tool result, so the aligned head (5 rows) is one longer than
/// `_protect_head_size` (4). `compress()` counts "too few messages" against the latter
/// (0.19.0 `agent/context_compressor.py:3370`): 9 rows > 4 + 3 + 1, and the window is
/// the tool round before the newest reply.
#[test]
fn too_few_messages_counts_the_head_before_its_alignment() {
    let mut b = Builder::new();
    b.system();
    b.user(400);
    b.reply(400);
    b.round(400);
    let (call, tool) = b.round(400);
    let reply = b.reply(400);
    let u = b.user(40_000);
    assert_eq!(b.rows.len(), 9);
    let mut backend = Scripted::default();
    let out = run_fresh(&mut b, &profile_config(50), &mut backend);
    assert_eq!(out.result, PassResult::Compacted { fallback: false });
    assert_eq!(
        (out.head_end, out.compress_start, out.compress_end),
        (5, 5, 7)
    );
    assert_eq!(
        (index_of(&b.rows, call), index_of(&b.rows, tool)),
        (None, None)
    );
    assert!(b.rows[5].is_batch_summary() && b.rows[5].role == Role::User);
    assert_eq!(
        (index_of(&b.rows, reply), index_of(&b.rows, u)),
        (Some(6), Some(7))
    );
    // One row fewer is too few: 8 rows <= 4 + 3 + 1.
    let mut short = Builder::new();
    short.system();
    short.user(400);
    short.reply(400);
    short.round(400);
    short.round(400);
    short.user(40_000);
    short.reply(400);
    short.rows.remove(6);
    let out = run_fresh(&mut short, &profile_config(50), &mut Scripted::default());
    assert_eq!(out.result, PassResult::NoOp(NoOpReason::TooFewMessages));
}
