//! The Hermes batch compressor (hermes-domain §2.3–§2.7, era B / 0.19.0): one call of
//! [`compress`] is one `compress()` of the built-in engine — prune, boundaries with
//! decay and anchors, previous-summary rehydration, a single iterative summary (or the
//! deterministic fallback, or an abort), assembly with role choice and merge, tool-pair
//! sanitizing. It decides nothing about *when* it runs: triggers, anti-thrash and
//! cooldown gating belong to the agent loop, which reads [`BatchState`].
//!
//! CONTRACT:
//! - `Compacted`: `messages` was rewritten; no row carries `persisted`; tool pairs are
//!   consistent; the newest real user row and newest visible reply are verbatim unless
//!   a bug switch says otherwise; at most one summary row was written (a new row, or
//!   merged into the first tail row, which keeps its id and own segments).
//! - `Aborted` and `NoOp`: `messages` is untouched (but an abort under the switch
//!   `HERMES-0.19.0-B6` hands back the pruned list). `NoOp` adds one ineffective strike.

pub mod assemble;
pub mod boundaries;
pub mod fallback;
pub mod fallback_0190;
pub mod prune;
pub mod release;
pub mod released;
pub mod sanitize;
pub mod scaffold;
pub mod state;
pub mod summary;
#[cfg(test)]
mod testkit;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_0190;

pub use boundaries::Window;
pub use prune::PruneStats;
pub use sanitize::SanitizeStats;
pub use state::{AbortFlag, BatchState};
pub use summary::Miss;

pub use compactsim_fakes::seam::SummaryBackend;

use crate::bug_set::BugSet;
use crate::bugs::Bug;
use crate::compactor::boundaries as shared;
use crate::compactor::threshold::{self, ThresholdConfig, Thresholds};
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::summarizer::RollingSummary;
use compactsim_model::event::{BatchPass, BatchPassOutcome, BatchTrigger};
use compactsim_model::{tokens_rough_total, Event, Message, MsgId};
use serde::Serialize;

/// `compress()` needs more than the head ([`boundaries::head_size`], before its alignment
/// past tool rows) + this many middle rows + one tail row.
pub const MIN_MIDDLE_MESSAGES: usize = 3;

/// Configuration of one compressor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BatchConfig {
    pub protect_first_n: u32,
    pub protect_last_n: u32,
    /// `threshold_tokens × target_ratio`.
    pub tail_budget_tokens: u32,
    /// Ceiling of the summary budget: min(5 % of the window, 10,000).
    pub summary_tokens_max: u32,
    /// `SUMMARY_PREFIX` length of the modelled version.
    pub summary_prefix_chars: u32,
    /// Length of the compaction note appended to the system row, separator included.
    /// Model-internal: not sent to adapters (the protocol's batch config is unchanged).
    #[serde(skip)]
    pub system_note_chars: u32,
    /// The prune's protected tail. `None`: the compressible window's tail walk (the
    /// default model). `Some(cap)`: the releases' `_prune_old_tool_results` boundary
    /// ([`prune::released_boundary`]) with the message floor capped at `cap`.
    /// Model-internal, like `system_note_chars`.
    #[serde(skip)]
    pub prune_floor_max: Option<u32>,
    /// When the whole compressible region fits the tail budget, keep the message floor
    /// as the tail (the releases) instead of all but one row (the default model):
    /// [`shared::tail_start`]. Model-internal, like `system_note_chars`.
    #[serde(skip)]
    pub tail_floor_when_fits: bool,
    /// Follow `hermes-agent==0.19.0` byte for byte where the default model keeps only the
    /// shape: its row price and tail cut, wrapper lengths, task snapshot, tool-result
    /// descriptions and argument JSON ([`release`]; `--profile hermes-0.19.0`).
    /// Model-internal, like `system_note_chars`.
    #[serde(skip)]
    pub hermes_0_19_0: bool,
    /// true: a failed summary aborts instead of writing the fallback.
    pub abort_on_summary_failure: bool,
    pub bugs: BugSet,
}

impl BatchConfig {
    /// The 0.19.0 defaults for derived thresholds `t`.
    pub fn new(t: &Thresholds, bugs: BugSet) -> Self {
        BatchConfig {
            protect_first_n: shared::PROTECT_FIRST_N_DEFAULT,
            protect_last_n: shared::PROTECT_LAST_N_DEFAULT,
            tail_budget_tokens: t.tail_budget_tokens,
            summary_tokens_max: t.summary_tokens_max,
            summary_prefix_chars: scaffold::SUMMARY_PREFIX_CHARS_0_19_0,
            system_note_chars: scaffold::Fixed::SystemNote.chars(0),
            prune_floor_max: None,
            tail_floor_when_fits: false,
            hermes_0_19_0: false,
            abort_on_summary_failure: false,
            bugs,
        }
    }
}

impl Default for BatchConfig {
    /// 0.19.0 defaults on a 128K window, no bug switches.
    fn default() -> Self {
        BatchConfig::new(
            &threshold::derive(128_000, ThresholdConfig::V0_19_0),
            BugSet::none(),
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortReason {
    /// Auth/permission/quota failure (now or persisting from an earlier call).
    Auth,
    /// Network failure (now or persisting from an earlier call).
    Network,
    /// `abort_on_summary_failure: true` and the summary failed.
    SummaryFailed,
}

impl From<AbortFlag> for AbortReason {
    fn from(flag: AbortFlag) -> Self {
        match flag {
            AbortFlag::Auth => AbortReason::Auth,
            AbortFlag::Network => AbortReason::Network,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoOpReason {
    /// At most head + 3 + 1 messages.
    TooFewMessages,
    /// The window is empty after the tail walk and the anchors.
    NothingToCompress,
    /// The window holds only summaries (#59496).
    NothingNew,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "result")]
pub enum PassResult {
    Compacted { fallback: bool },
    Aborted(AbortReason),
    NoOp(NoOpReason),
}

/// What one `compress` call did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BatchOutcome {
    pub result: PassResult,
    pub messages_before: u32,
    pub messages_after: u32,
    /// Rough tokens of the message list.
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub head_end: u32,
    /// The window `[compress_start, compress_end)` (0, 0 before it was computed).
    pub compress_start: u32,
    pub compress_end: u32,
    pub prune: PruneStats,
    /// "Target ~N tokens" given to the summarizer.
    pub summary_budget_tokens: u32,
    /// Tokens of the summary body written (0 when none).
    pub summary_tokens: u32,
    /// Why no LLM summary came back, if it did not.
    pub summary_miss: Option<Miss>,
    pub summary_expanded: bool,
    pub summary_latency_ms: u64,
    /// Rows whose text reached the summarizer.
    pub summarized: Vec<MsgId>,
    /// Window rows cut from the summarizer input by the 160,000-character cap.
    pub omitted: Vec<MsgId>,
    /// Rows present before and gone after.
    pub removed: Vec<MsgId>,
    pub sanitize: SanitizeStats,
}

impl BatchOutcome {
    fn start(messages: &[Message]) -> Self {
        BatchOutcome::unchanged(messages.len() as u32, tokens_rough_total(messages))
    }

    /// A pass that has not changed a list of `messages` rows and `tokens` rough tokens
    /// (yet): a no-op with every count equal before and after.
    pub fn unchanged(messages: u32, tokens: u64) -> Self {
        BatchOutcome {
            result: PassResult::NoOp(NoOpReason::TooFewMessages),
            messages_before: messages,
            messages_after: messages,
            tokens_before: tokens,
            tokens_after: tokens,
            head_end: 0,
            compress_start: 0,
            compress_end: 0,
            prune: PruneStats::default(),
            summary_budget_tokens: 0,
            summary_tokens: 0,
            summary_miss: None,
            summary_expanded: false,
            summary_latency_ms: 0,
            summarized: vec![],
            omitted: vec![],
            removed: vec![],
            sanitize: SanitizeStats::default(),
        }
    }

    /// This pass as a no-op: `messages` (the list it was given, `found` its ends then)
    /// must be untouched.
    fn noop(
        mut self,
        state: &mut BatchState,
        reason: NoOpReason,
        messages: &[Message],
        found: ListEnds,
    ) -> Self {
        self.assert_untouched(messages, found);
        state.record_noop();
        self.result = PassResult::NoOp(reason);
        self
    }

    /// This pass as an abort: `messages` (the list it was given) is untouched, except
    /// under B6, where the release hands back `pruned`, its copy after the prune
    /// ([`released::hands_back_pruned`]).
    fn aborted(
        mut self,
        reason: AbortReason,
        messages: &mut Vec<Message>,
        found: ListEnds,
        pruned: Vec<Message>,
        bugs: &BugSet,
    ) -> Self {
        if released::hands_back_pruned(messages, &pruned, bugs) {
            // The prune rewrites rows and removes none.
            *messages = pruned;
            self.tokens_after = tokens_rough_total(messages);
        } else {
            self.assert_untouched(messages, found);
        }
        self.result = PassResult::Aborted(reason);
        self
    }

    /// CONTRACT: an aborted or no-op pass leaves the list as it found it. Its length and
    /// end rows are asserted in release (O(1)); its rough tokens in debug builds (O(n)).
    fn assert_untouched(&self, messages: &[Message], found: ListEnds) {
        found.assert_same(messages);
        debug_assert_eq!(
            (messages.len() as u32, tokens_rough_total(messages)),
            (self.messages_before, self.tokens_before),
            "an aborted or no-op pass changed the list"
        );
    }

    fn finish(mut self, before: &[Message], after: &[Message], result: PassResult) -> Self {
        let mut kept: Vec<MsgId> = after.iter().map(|m| m.id).collect();
        kept.sort_unstable();
        self.removed = before
            .iter()
            .map(|m| m.id)
            .filter(|id| kept.binary_search(id).is_err())
            .collect();
        self.messages_after = after.len() as u32;
        self.tokens_after = tokens_rough_total(after);
        self.result = result;
        self
    }

    /// The transcript changed.
    pub fn committed(&self) -> bool {
        matches!(self.result, PassResult::Compacted { .. })
    }

    /// The trace event of this pass, which started at virtual time `now_ms`.
    pub fn event(&self, turn: u32, trigger: BatchTrigger, now_ms: u64) -> Event {
        let (outcome, fallback) = match self.result {
            PassResult::Compacted { fallback } => (BatchPassOutcome::Compacted, fallback),
            PassResult::Aborted(_) => (BatchPassOutcome::Aborted, false),
            PassResult::NoOp(_) => (BatchPassOutcome::NoOp, false),
        };
        Event::BatchPass(BatchPass {
            turn,
            trigger,
            outcome,
            messages_before: self.messages_before,
            messages_after: self.messages_after,
            tokens_before: self.tokens_before,
            tokens_after: self.tokens_after,
            head_end: self.head_end,
            summary_tokens: self.summary_tokens,
            fallback,
            summary_failed: self.summary_miss.is_some(),
            summary_call_failed: matches!(self.summary_miss, Some(Miss::Failed(_))),
            now_ms,
            fallback_mismatch: None,
        })
    }
}

/// What an aborted or no-op pass must find again: the list's length and the ids of its
/// first and last rows (O(1) to take and to compare).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListEnds {
    len: usize,
    first: Option<MsgId>,
    last: Option<MsgId>,
}

impl ListEnds {
    pub fn of(messages: &[Message]) -> ListEnds {
        ListEnds {
            len: messages.len(),
            first: messages.first().map(|m| m.id),
            last: messages.last().map(|m| m.id),
        }
    }

    /// Asserts `messages` has these ends: an aborted or no-op pass left it as it was.
    pub fn assert_same(self, messages: &[Message]) {
        assert!(
            ListEnds::of(messages) == self,
            "CONTRACT: an aborted or no-op pass leaves the list untouched ({self:?} became {:?})",
            ListEnds::of(messages)
        );
    }
}

/// One `compress()` over `messages` (see the module contract). `force` is `/compress`:
/// it clears the failure cooldown first. `now_ms` is virtual time.
pub fn compress(
    messages: &mut Vec<Message>,
    config: &BatchConfig,
    state: &mut BatchState,
    backend: &mut dyn SummaryBackend,
    ids: &mut IdAlloc,
    now_ms: u64,
    force: bool,
) -> BatchOutcome {
    if force {
        state.clear_cooldown();
    }
    let mut out = BatchOutcome::start(messages);
    let found = ListEnds::of(messages);
    let head_end = boundaries::head_end(messages, config, state);
    out.head_end = head_end as u32;
    // The release counts the head before its forward alignment: a head that ends on a
    // tool group does not make the list "too short" (seed 2024 case 222, DIFF.md).
    if messages.len() <= boundaries::head_size(messages, config, state) + MIN_MIDDLE_MESSAGES + 1 {
        return out.noop(state, NoOpReason::TooFewMessages, messages, found);
    }
    let mut work = messages.clone();
    let prune_tail = match config.prune_floor_max {
        None => shared::tail_start(
            &work,
            head_end,
            config.tail_budget_tokens,
            config.protect_last_n,
            config.tail_floor_when_fits,
        ),
        Some(cap) => prune::released_boundary(
            &work,
            config.tail_budget_tokens,
            config.protect_last_n.min(cap),
            config.hermes_0_19_0,
        ),
    };
    out.prune = prune::prune(&mut work, prune_tail, config);
    let window = if config.hermes_0_19_0 {
        let end = release::tail_cut_with(
            &work,
            head_end,
            config.tail_budget_tokens,
            config.protect_last_n,
            &config.bugs,
        );
        let mut w = Window {
            head_end,
            start: head_end,
            end,
        };
        // Where the release summarizes the newest user row with its pair (#22523: the
        // row is the first of the window), the model keeps it verbatim before the
        // summary, as the default model does (DIFF.md, D3).
        boundaries::anchor_last_user(&work, &mut w, &config.bugs);
        // Likewise the newest visible reply (the release's anchor may leave it first in
        // the window; user-turns-intact fired on profile sweep seed 1 case 142).
        boundaries::anchor_last_reply(&work, &mut w);
        // B4 (FINDINGS.md) is not copied: the newest user row never takes the summary.
        // The bridge is only for that: where the role rule writes a row of its own, the
        // tail starts on the user row as the release's does.
        if assemble::merges_into_user_row(&work, &w, config) {
            boundaries::bridge(&work, &mut w, &config.bugs);
        }
        w.end = shared::align_backward(&work, w.end, w.start);
        w
    } else {
        boundaries::window(&work, head_end, config)
    };
    (out.compress_start, out.compress_end) = (window.start as u32, window.end as u32);
    if window.is_empty() {
        return out.noop(state, NoOpReason::NothingToCompress, messages, found);
    }
    let source = summary::rehydrate_with(&work, &window, state, &config.bugs);
    // 0.19.0 predates #59496: with no new turns (a window of summaries only) it still
    // calls the summarizer on the previous summary alone and writes a new row.
    let resummarizes = config.hermes_0_19_0 && source.previous.is_some();
    if source.rows.is_empty() && !resummarizes {
        return out.noop(state, NoOpReason::NothingNew, messages, found);
    }
    let called = (&work[..], &messages[..], &window, &source);
    let written = match summarize(&mut out, called, config, state, backend, now_ms) {
        Ok(written) => written,
        Err(reason) => return out.aborted(reason, messages, found, work, &config.bugs),
    };
    let fallback = written.as_ref().is_some_and(|w| w.fallback);
    let pad_chars = written.as_ref().and_then(|w| w.pad_chars);
    let summary = written.map(|w| w.summary);
    out.summary_tokens = summary.as_ref().map_or(0, |s| s.tokens);
    // Under 0.19.0 the scaffold before the body is the task snapshot of an LLM summary
    // or the pad of a fallback ([`fallback::fallback_summary_0_19_0`]).
    let snapshot = if fallback {
        pad_chars
    } else {
        config
            .hermes_0_19_0
            .then(|| release::snapshot_chars(work[release::turns(&work, &window)].iter()))
            .flatten()
    };
    let mut assembled =
        assemble::assemble_with(&work, &window, summary.as_ref(), config, ids, snapshot);
    out.sanitize = sanitize::sanitize_tool_pairs(&mut assembled.messages);
    for m in &mut assembled.messages {
        m.flags.persisted = false;
    }
    state.compression_count += 1;
    // Room for the list to regrow to its old length without moving the rows again on
    // every doubling (the agent appends to it turn by turn).
    let regrow = messages.len().saturating_sub(assembled.messages.len());
    assembled.messages.reserve(regrow);
    let before = std::mem::replace(messages, assembled.messages);
    out.finish(&before, messages, PassResult::Compacted { fallback })
}

/// The summary to write.
struct Written {
    summary: RollingSummary,
    fallback: bool,
    /// A scaffold segment before the body ([`fallback::Fallback::pad_chars`]).
    pad_chars: Option<u32>,
}

/// What a pass summarizes: the pruned list, the list before the prune, the window and
/// the rows read back.
type Called<'a> = (
    &'a [Message],
    &'a [Message],
    &'a boundaries::Window,
    &'a summary::Source,
);

/// Calls the summarizer and applies the failure policy: `Ok(Some)` a summary to write,
/// `Ok(None)` drop the window with no summary (H-29559), `Err` abort.
fn summarize(
    out: &mut BatchOutcome,
    (work, unpruned, window, source): Called,
    config: &BatchConfig,
    state: &mut BatchState,
    backend: &mut dyn SummaryBackend,
    now_ms: u64,
) -> Result<Option<Written>, AbortReason> {
    let input = summary::input(source);
    out.summary_budget_tokens = summary::budget_tokens(input.tokens, config.summary_tokens_max);
    out.summarized = input.rows_seen.clone();
    out.omitted = input.rows_omitted.clone();
    let called = summary::call(backend, source.previous.as_ref(), &input, state, now_ms);
    out.summary_expanded = called.expanded;
    out.summary_latency_ms = called.latency_ms;
    let miss = match called.result {
        Ok(summary) => {
            state.record_summary(summary.clone());
            return Ok(Some(Written {
                summary,
                fallback: false,
                pad_chars: None,
            }));
        }
        Err(miss) => miss,
    };
    out.summary_miss = Some(miss);
    if let Miss::Failed(failure) = miss {
        // The flag the failure sets as the modelled version classes it: under 0.19.0 a
        // timeout is a connection error, so H-29559 (the network abort reverted: the
        // window dropped with no summary) takes it too. Asked only where it decides: a
        // failure that sets an abort flag.
        let flag = if config.hermes_0_19_0 {
            AbortFlag::of_0_19_0(failure)
        } else {
            AbortFlag::of(failure)
        };
        let h29559 = flag.is_some() && config.bugs.has(Bug::H29559);
        if config.hermes_0_19_0 {
            state.record_failure_0_19_0(failure, now_ms, !h29559);
        } else {
            state.record_failure(failure, now_ms, !h29559);
        }
        if h29559 && flag == Some(AbortFlag::Network) {
            return Ok(None);
        }
    }
    if let Some(flag) = state.abort_flag {
        return Err(flag.into());
    }
    if config.abort_on_summary_failure {
        return Err(AbortReason::SummaryFailed);
    }
    let written = if config.hermes_0_19_0 {
        let dropped = fallback_0190::Dropped::of(work, unpruned, window);
        fallback::fallback_summary_0_19_0(&dropped, window, miss)
    } else {
        fallback::Fallback {
            summary: fallback::fallback_summary(work, source),
            pad_chars: None,
        }
    };
    state.record_fallback(written.summary.clone());
    Ok(Some(Written {
        summary: written.summary,
        fallback: true,
        pad_chars: written.pad_chars,
    }))
}
