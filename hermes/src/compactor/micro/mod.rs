//! Micro-compaction, faithful to hermes-domain §3: after each turn, fold the oldest
//! unabsorbed exchange (a full agent turn inside the compressible window) into a rolling
//! summary held by exactly one assistant-role marker. User turns are never absorbed.
//!
//! Modelling decisions beyond the spec: the micro head never decays (the protected head
//! rows stay verbatim for the session's life), and a summary that comes back larger
//! than its input (the expansion fault) is treated as a failed call, like an empty or
//! cut-off one, so a committed pass from the second on never grows the transcript.
//! The release's bugs (FINDINGS M1-M4) are switches (`IOT-0.22.2-M*`, [`released`]),
//! which `--profile hermes-iot-0.22.2` turns on.

mod config;
mod exchange;
mod gate;
pub mod marker;
mod released;
mod splice;

pub use config::*;

use crate::bug_set::BugSet;
use crate::bugs::Bug;
use crate::compactor::boundaries::{head_end, tail_start};
use crate::compactor::tail_iot;
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::seam::SummaryBackend;
use compactsim_fakes::summarizer::RollingSummary;
use compactsim_model::{Message, MicroOutcome, MicroPass, MsgId};

/// In-memory state of the micro compactor; all of it is lost on a process restart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct MicroState {
    rolling: RollingSummary,
    /// Index of the first unabsorbed message.
    cursor: usize,
    /// Consecutive failures at the exchange starting at this row.
    failures: Option<(MsgId, u32)>,
    /// Pass invocations (the cadence counter advances per invocation).
    invocations: u32,
}

/// The micro compactor of one session.
#[derive(Clone, Debug)]
pub struct MicroCompactor {
    pub config: MicroConfig,
    bugs: BugSet,
    state: MicroState,
}

/// The window and exchange one pass works on.
struct Window {
    head: usize,
    tail: usize,
}

impl MicroCompactor {
    pub fn new(config: MicroConfig, bugs: BugSet) -> Self {
        MicroCompactor {
            config,
            bugs,
            state: MicroState::default(),
        }
    }

    /// A process restart: every in-memory field is forgotten.
    pub fn restart(&mut self) {
        self.state = MicroState::default();
    }

    /// Another compactor rewrote the list (a batch pass): the cursor is an index into
    /// the old list and the failure count refers to rows that may be gone, so both are
    /// re-derived on the next pass. The rolling summary stays.
    pub fn rewritten(&mut self) {
        self.state.cursor = 0;
        self.state.failures = None;
    }

    pub fn rolling(&self) -> &RollingSummary {
        &self.state.rolling
    }

    /// Runs one pass after turn `turn`. With no bug switch on, leaves at most one micro
    /// marker and the cursor one past the newest marker.
    pub fn pass(
        &mut self,
        msgs: &mut Vec<Message>,
        turn: u32,
        summarizer: &mut dyn SummaryBackend,
        ids: &mut IdAlloc,
    ) -> MicroPass {
        self.state.invocations += 1;
        let mut ev = MicroPass::no_exchange(turn, self.state.invocations);
        #[cfg(debug_assertions)]
        let rows_before: Vec<Message> = msgs.clone();
        let every_n = self.config.every_n_turns.max(1);
        let phase = if self.config.cadence_runs_last {
            self.state.invocations
        } else {
            self.state.invocations - 1
        };
        if !phase.is_multiple_of(every_n) {
            ev.outcome = MicroOutcome::Cadence;
        } else if msgs.len() >= MESSAGES_MIN {
            // IOT-0.22.2-M1 is asked only where it decides: the decay would change the head.
            let configured = self.config.protect_first_n;
            let decayed = released::effective_protect_first_n(msgs, configured);
            let protect_first_n = if decayed != configured && self.bugs.has(Bug::IotM1) {
                decayed
            } else {
                configured
            };
            let head = head_end(msgs, protect_first_n);
            let tail = self.tail(msgs, head);
            self.work(msgs, &Window { head, tail }, summarizer, ids, &mut ev);
        }
        ev.cursor = self.state.cursor as u32;
        ev.summary_tokens = self.state.rolling.tokens;
        debug_assert!(
            !self.bugs.is_empty() || marker::count(msgs) <= 1,
            "micro pass left {} markers",
            marker::count(msgs)
        );
        #[cfg(debug_assertions)]
        debug_assert!(
            !self.bugs.is_empty() || ev.outcome.committed() || *msgs == rows_before,
            "a micro pass that committed nothing ({:?}) changed the messages",
            ev.outcome
        );
        ev
    }

    /// Start of the verbatim tail: the release's cut under the iot profile, else the
    /// default model's.
    fn tail(&self, msgs: &[Message], head: usize) -> usize {
        let c = &self.config;
        match c.iot_tail_window_tokens {
            Some(window) => tail_iot::tail_start(
                msgs,
                head,
                c.tail_budget_tokens,
                tail_iot::soft_ceiling_tokens(c.tail_budget_tokens, window),
                c.protect_last_n,
            ),
            None => tail_start(
                msgs,
                head,
                c.tail_budget_tokens,
                c.protect_last_n,
                c.tail_floor_when_fits,
            ),
        }
    }

    fn work(
        &mut self,
        msgs: &mut Vec<Message>,
        w: &Window,
        summarizer: &mut dyn SummaryBackend,
        ids: &mut IdAlloc,
        ev: &mut MicroPass,
    ) {
        if self.state.rolling == RollingSummary::default() {
            self.rehydrate(msgs, w);
        }
        let cumulative = self.state.rolling != RollingSummary::default();
        self.state.cursor = exchange::recover_cursor(msgs, self.state.cursor, w.head, w.tail);
        let original_design = self.bugs.has(Bug::H75345A);
        let exchange = exchange::find(msgs, self.state.cursor, w.tail, original_design);
        if self.state.rolling.tokens >= self.config.defrag_threshold_tokens
            && (exchange.is_some() || !self.config.defrag_needs_exchange)
        {
            self.defrag(msgs, w, summarizer, ids, ev);
            return;
        }
        let Some((start, end)) = exchange else {
            return;
        };
        if self.config.reclaim_gate_tokens > 0 {
            self.work_gated(msgs, w, (start, end), cumulative, summarizer, ids, ev);
            return;
        }
        ev.exchange = msgs[start..end].iter().map(|m| m.id).collect();
        let facts: Vec<_> = msgs[start..end]
            .iter()
            .flat_map(|m| m.content.facts())
            .collect();
        let tokens: u32 = msgs[start..end].iter().map(|m| m.tokens().rough).sum();
        let cap = self.config.summary_tokens_max;
        let call = summarizer.summarize_within(&self.state.rolling, &facts, tokens, cap);
        ev.latency_ms = call.latency_ms;
        match self.usable(call, summarizer) {
            Some(summary) => {
                let supersede = self.supersedes(msgs, cumulative);
                self.commit(msgs, &[(start, end)], summary, supersede, ids);
                ev.outcome = MicroOutcome::Absorbed;
            }
            None => self.fail(msgs, start, end, ev),
        }
    }

    /// The answer a pass adopts: not a failure, not larger than its input (unless
    /// IOT-0.22.2-M3), and not over the `max_tokens` the pass asked for (the call asks
    /// for it, and the fake summarizer writes to fit; an answer of a backend that did
    /// not is cut with finish reason `length`, recorded as a failed call).
    pub(super) fn usable(
        &self,
        call: compactsim_fakes::summarizer::SummaryCall,
        summarizer: &mut dyn SummaryBackend,
    ) -> Option<RollingSummary> {
        let summary = call.result.ok()?;
        if call.expanded && !self.bugs.has(Bug::IotM3) {
            return None;
        }
        if self
            .config
            .summary_tokens_max
            .is_some_and(|max| summary.tokens > max)
        {
            summarizer.truncated();
            return None;
        }
        Some(summary)
    }

    /// Rebuilds an empty rolling summary from the newest micro marker. Batch summaries
    /// are not adopted: their content never passed through the rolling summary, and a
    /// supersede must never delete them (H-M-foreign). IOT-0.22.2-M2 takes the release's
    /// source instead (asked only where that is another row); H-M-resume keeps it empty
    /// (asked only where there is a marker to rebuild from).
    fn rehydrate(&mut self, msgs: &[Message], w: &Window) {
        let newest = msgs.iter().rev().find(|m| m.is_micro_marker());
        let released = released::rehydration_source(msgs, self.state.cursor, w.head, w.tail);
        let source = if released.map(|m| m.id) != newest.map(|m| m.id) && self.bugs.has(Bug::IotM2)
        {
            released
        } else if newest.is_some()
            // Under M2 too the same row is its source, whatever H-M-resume says.
            && (!self.bugs.has(Bug::HMResume) || self.bugs.has(Bug::IotM2))
        {
            newest
        } else {
            None
        };
        if let Some(m) = source {
            self.state.rolling = marker::rehydrate(m);
        }
    }

    /// Whether a commit supersedes the older micro markers: when the rolling summary is
    /// cumulative, or under H-M-resume (asked only where there is a marker to supersede).
    pub(super) fn supersedes(&self, msgs: &[Message], cumulative: bool) -> bool {
        cumulative || (marker::count(msgs) > 0 && self.bugs.has(Bug::HMResume))
    }

    /// Replaces the exchanges `ranges` (ascending) by one new marker.
    fn commit(
        &mut self,
        msgs: &mut Vec<Message>,
        ranges: &[(usize, usize)],
        summary: RollingSummary,
        supersede: bool,
        ids: &mut IdAlloc,
    ) {
        let role = if self.bugs.has(Bug::H75345A) {
            compactsim_model::Role::User
        } else {
            compactsim_model::Role::Assistant
        };
        let new_marker = marker::build(ids.msg(), role, &summary, self.config.scaffold_tokens);
        let marker_id = new_marker.id;
        for &(start, end) in ranges {
            ids.assert_new_row(marker_id, &msgs[start..end]);
        }
        // IOT-0.22.2-M4 keeps the last marker by position instead of superseding.
        let keep_last = supersede && self.bugs.has(Bug::IotM4);
        let supersede = supersede && !keep_last && !self.bugs.has(Bug::H75345B);
        let at = splice::replace_ranges(msgs, ranges, new_marker, supersede);
        if keep_last {
            released::supersede_keep_last(msgs);
        } else if supersede && self.bugs.is_empty() {
            marker::assert_one(msgs);
        }
        self.state.cursor = if self.bugs.has(Bug::HMCursor) {
            ranges.last().map_or(at + 1, |r| r.1)
        } else {
            splice::one_past_last_marker(msgs)
        };
        // Under H-M-cursor the cursor is the exchange's old end, which the splice may
        // have left past the list (the release stored `exchange_end` as it was); the
        // next pass's recovery drops such a cursor.
        debug_assert!(
            !self.bugs.is_empty() || msgs[..self.state.cursor].iter().any(|m| m.id == marker_id),
            "the cursor is not past the marker it just wrote"
        );
        debug_assert!(
            self.bugs.has(Bug::HMCursor) || self.state.cursor <= msgs.len(),
            "cursor {} past the list of {}",
            self.state.cursor,
            msgs.len()
        );
        self.state.rolling = summary;
        self.state.failures = None;
    }

    fn fail(&mut self, msgs: &[Message], start: usize, end: usize, ev: &mut MicroPass) {
        let first = msgs[start].id;
        let count = match self.state.failures {
            Some((id, n)) if id == first => n + 1,
            _ => 1,
        };
        if count >= self.config.failures_per_exchange_max {
            ev.outcome = MicroOutcome::ExchangeSkipped;
            ev.skipped = ev.exchange.clone();
            self.state.cursor = end;
            self.state.failures = None;
        } else {
            ev.outcome = MicroOutcome::SummarizeFailed;
            self.state.failures = Some((first, count));
        }
    }

    /// Re-summarizes the rolling summary alone and rewrites the newest marker in place.
    /// Nothing is committed on failure.
    fn defrag(
        &mut self,
        msgs: &mut Vec<Message>,
        w: &Window,
        summarizer: &mut dyn SummaryBackend,
        ids: &mut IdAlloc,
        ev: &mut MicroPass,
    ) {
        let call = summarizer.condense_within(&self.state.rolling, self.config.summary_tokens_max);
        ev.latency_ms = call.latency_ms;
        let condensed = self.usable(call, summarizer);
        if self.bugs.has(Bug::HMDefrag) {
            // Historical: the whole window became one marker, even on failure.
            let summary = condensed
                .clone()
                .unwrap_or_else(|| self.state.rolling.clone());
            let m = marker::build(
                ids.msg(),
                compactsim_model::Role::Assistant,
                &summary,
                self.config.scaffold_tokens,
            );
            ids.assert_new_row(m.id, &msgs[w.head..w.tail]);
            msgs.splice(w.head..w.tail, [m]);
            self.state.cursor = splice::one_past_last_marker(msgs);
        }
        match condensed {
            Some(s)
                if self.bugs.has(Bug::HMDefrag)
                    || splice::rewrite_newest_marker(msgs, &s, self.config.scaffold_tokens) =>
            {
                self.state.rolling = s;
                ev.outcome = MicroOutcome::Defrag;
            }
            _ => ev.outcome = MicroOutcome::DefragFailed,
        }
    }
}

#[cfg(test)]
mod tests;
