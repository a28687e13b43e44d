//! The fake summarizer: deterministic, cumulative, and faulty on purpose.
//!
//! CONTRACT (used by the compactors):
//! - A rolling summary is a set of facts plus a size in tokens. Summarizing new input
//!   returns the new *cumulative* summary: previous facts ∪ retained facts of the input,
//!   size = clamp(previous + ratio × input tokens, min, max), but never less than the
//!   size that spells every fact it keeps ([`tokens_to_spell`]: a summary's text holds
//!   what it keeps, and nothing more; an external compactor only gets the text) — so on
//!   a success the size grows by at most ratio × input tokens (ratio < 1) once the
//!   previous summary is at least `min`, or by what the new facts take to spell.
//! - Previous facts are always kept (the summary is cumulative); each input fact is
//!   retained with the case's retention rate (1000 ‰ keeps everything).
//! - `condense` (defrag) re-summarizes the summary alone: same facts, size shrunk by
//!   the condense ratio, clamped to min and to the size that spells its facts (so a
//!   summary whose facts fill it cannot shrink: marker-contained holds the condensed
//!   marker to every fact of the old one, read from its text).
//! - Faults are drawn per call from the case's Summarizer stream at the case's rates:
//!   error (with a class), empty output, `finish_reason = length`, expansion (output
//!   larger than its input: size grows by more than the input), plus a latency in
//!   virtual milliseconds from tokens in/out and a tokens/s speed.
//! - `max_tokens` (`summarize_within`, `condense_within`: the cap a model call asks for):
//!   the answer is written to fit, as a model asked for N tokens writes within them.
//!   The call is drawn as above, then an answer larger than the cap is shrunk to it
//!   ([`fit`]): its size becomes the cap; if the facts it keeps take more than the cap
//!   to spell, it keeps every fact of the previous summary (a condense: every fact of
//!   the summary) and then the input's facts in ascending id order, oldest first, while
//!   they fit; the rest are dropped, as lossy retention drops facts. If the previous
//!   summary's facts alone do not fit, there is no room: the answer is cut
//!   (`finish_reason = length`). An `ok` answer that had to shrink runs over the cap
//!   instead with the case's overrun rate, drawn from the case's own `SummarizerOverrun`
//!   stream (`with_overrun`; 0 without it), so no draw of the Summarizer stream moves:
//!   a `length` failure, logged as `length`. Dropping the input's newest facts, never
//!   the previous summary's, is what keeps the cumulative contract the oracle relies on
//!   (marker-contained: a superseded summary's facts are in its successor); the loss is
//!   the summarizer's, visible in the served call's facts out, as retention's is.
//!   `cap_counts` counts what the caps did (the run's coverage).
//! - Scripted mode (`with_schedule`): every call still draws its fault from the stream
//!   exactly as above (so the stream stays where an unscripted run would have it), then
//!   the n-th call takes the n-th scheduled outcome instead (`ok` past the end). Every
//!   summarizer logs the outcome each call took (`log`), so a generated case can be
//!   written down as a schedule that replays it.

mod backend;
mod config;
mod fit;
mod schedule;
pub mod served;
#[cfg(test)]
mod tests;

pub use backend::{cut_at, SummaryBackend};
pub use config::*;
pub use fit::{fit, CapCounts};
pub use schedule::SummaryOutcome;

use crate::rng::{between, chance, weighted, SimRng};
use compactsim_model::content::chars_to_spell;
use compactsim_model::tokens::rough_tokens;
use compactsim_model::{ContentKind, FactId};
use serde::Serialize;

/// A cumulative summary: what it retains and how big it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RollingSummary {
    /// Retained facts, ascending, no duplicates.
    pub facts: Vec<FactId>,
    pub tokens: u32,
}

/// Rough tokens of summary text that spells every one of `facts` (a summary body
/// written at this size or larger names each fact it keeps).
pub fn tokens_to_spell(facts: &[FactId]) -> u32 {
    rough_tokens(chars_to_spell(ContentKind::Summary, facts))
}

/// Error classes of a failed summary call (hermes-domain §2.3 step 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryErrorClass {
    Timeout,
    RateLimited,
    ServerError,
    Auth,
    Network,
}

/// Why a summary call produced no usable summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryFailure {
    Error(SummaryErrorClass),
    Empty,
    /// `finish_reason = "length"`.
    Length,
}

/// Result of one summarizer call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryCall {
    pub result: Result<RollingSummary, SummaryFailure>,
    /// The output was larger than its input (the expansion fault); the caller decides.
    pub expanded: bool,
    pub latency_ms: u64,
}

/// Prompt processing runs this many times faster than generation.
pub const PREFILL_SPEEDUP: u64 = 20;
/// Virtual time a timed-out call costs (the 120 s in-agent context timeout).
pub const TIMEOUT_LATENCY_MS: u64 = 120_000;
/// An expansion multiplies the input by this factor, per mille: the drawn range.
pub const EXPANSION_PER_MILLE_RANGE: (u32, u32) = (1_100, 2_000);
/// Relative frequency of each error class when an error fault fires.
const ERROR_CLASS_WEIGHTS: [(SummaryErrorClass, u32); 5] = [
    (SummaryErrorClass::Timeout, 3),
    (SummaryErrorClass::RateLimited, 3),
    (SummaryErrorClass::ServerError, 2),
    (SummaryErrorClass::Auth, 1),
    (SummaryErrorClass::Network, 1),
];

/// The fake summarizer of one case. Every call draws from the case's Summarizer stream,
/// so the same seed and the same sequence of calls give the same results. A clone is a
/// fork: it answers the calls the original would answer next (`compactsim diff` serves
/// a second compactor from one).
#[derive(Clone)]
pub struct Summarizer {
    pub config: SummarizerConfig,
    rng: SimRng,
    /// Overruns of the calls that ask for `max_tokens`: rate per mille and its stream.
    overrun: (u32, Option<SimRng>),
    /// What the `max_tokens` of the calls so far did.
    caps: CapCounts,
    /// Scripted mode: the outcome of each call, in call order.
    schedule: Option<Vec<SummaryOutcome>>,
    /// The outcome every call so far took, in call order.
    log: Vec<SummaryOutcome>,
}

impl Summarizer {
    pub fn new(config: SummarizerConfig, rng: SimRng) -> Self {
        Summarizer {
            config,
            rng,
            overrun: (0, None),
            caps: CapCounts::default(),
            schedule: None,
            log: Vec::new(),
        }
    }

    /// A call that asks for `max_tokens` and must shrink to fit runs over instead (a
    /// `length` failure) with chance `per_mille`, drawn from `rng` (the case's
    /// `SummarizerOverrun` stream); never in scripted mode, where the schedule decides.
    pub fn with_overrun(mut self, per_mille: u32, rng: SimRng) -> Self {
        self.overrun = (per_mille, Some(rng));
        self
    }

    /// What the `max_tokens` of the calls so far did.
    pub fn cap_counts(&self) -> CapCounts {
        self.caps
    }

    /// Scripted mode when `schedule` is set: the n-th call takes the n-th outcome, `ok`
    /// past the end, whatever the fault rates draw.
    pub fn with_schedule(mut self, schedule: Option<Vec<SummaryOutcome>>) -> Self {
        self.schedule = schedule;
        self
    }

    /// The outcome each call so far took, in call order.
    pub fn log(&self) -> &[SummaryOutcome] {
        &self.log
    }

    /// Folds `input_facts` (from `input_tokens` tokens of transcript) into `previous`.
    /// On success the result holds every previous fact plus the retained input facts,
    /// and its size is `clamp(previous + ratio × input, min, max)`, at least
    /// [`tokens_to_spell`] its facts.
    pub fn summarize(
        &mut self,
        previous: &RollingSummary,
        input_facts: &[FactId],
        input_tokens: u32,
    ) -> SummaryCall {
        self.summarize_within(previous, input_facts, input_tokens, None)
    }

    /// [`Summarizer::summarize`] asked for at most `max_tokens` tokens (`None`: no cap):
    /// the answer is written to fit (see the module docs).
    pub fn summarize_within(
        &mut self,
        previous: &RollingSummary,
        input_facts: &[FactId],
        input_tokens: u32,
        max_tokens: Option<u32>,
    ) -> SummaryCall {
        let fault = self.next_outcome();
        let prompt_tokens = previous.tokens.saturating_add(input_tokens);
        let (tokens, expanded) = if fault == SummaryOutcome::Expansion {
            let grown = expansion_growth(&mut self.rng, input_tokens);
            (previous.tokens.saturating_add(grown), true)
        } else {
            let ratio = self.config.ratio_per_mille as u64;
            let growth = (input_tokens as u64 * ratio / 1000) as u32;
            let size = previous.tokens.saturating_add(growth);
            (self.clamp_size(size), false)
        };
        let facts = self.merge_facts(&previous.facts, input_facts);
        let tokens = tokens.max(tokens_to_spell(&facts));
        let summary = RollingSummary { facts, tokens };
        let grown_past = previous.tokens.saturating_add(input_tokens);
        let (fault, summary, expanded) = self.within(
            max_tokens,
            (fault, summary, expanded),
            &previous.facts,
            grown_past,
        );
        self.finish(fault, prompt_tokens, summary, expanded, max_tokens)
    }

    /// Re-summarizes `summary` alone (defrag): on success the same facts, the size shrunk
    /// by the condense ratio and floored at `min`, never larger than `summary` unless
    /// `summary` is too small to spell its facts, never smaller than that. An
    /// expansion fault returns 1.1–2× the summary instead.
    pub fn condense(&mut self, summary: &RollingSummary) -> SummaryCall {
        self.condense_within(summary, None)
    }

    /// [`Summarizer::condense`] asked for at most `max_tokens` tokens (`None`: no cap):
    /// the answer is written to fit, every fact kept (no room: `length`).
    pub fn condense_within(
        &mut self,
        summary: &RollingSummary,
        max_tokens: Option<u32>,
    ) -> SummaryCall {
        let fault = self.next_outcome();
        let (tokens, expanded) = if fault == SummaryOutcome::Expansion {
            (expansion_growth(&mut self.rng, summary.tokens), true)
        } else {
            let shrunk =
                (summary.tokens as u64 * self.config.condense_per_mille as u64 / 1000) as u32;
            (
                shrunk
                    .max(self.config.min_tokens)
                    .min(summary.tokens)
                    .max(tokens_to_spell(&summary.facts)),
                false,
            )
        };
        let result = RollingSummary {
            facts: summary.facts.clone(),
            tokens,
        };
        let (fault, result, expanded) = self.within(
            max_tokens,
            (fault, result, expanded),
            &summary.facts,
            summary.tokens,
        );
        self.finish(fault, summary.tokens, result, expanded, max_tokens)
    }

    /// The answer `(fault, summary, expanded)` of a call asked for `max_tokens`: an
    /// answer over the cap is shrunk to it keeping `keep` first ([`fit`]), or cut
    /// (`Length`): no room for `keep`, or the drawn overrun of an `ok` answer;
    /// `expanded` stays only while the answer is still larger than `grown_past` (its
    /// input). Counted in [`CapCounts`]. An overrun is logged as `length` (a replay of
    /// the log cuts it without a draw); no room is not (it follows from the call, so the
    /// logged outcome replays it, and an expansion's growth draw with it).
    fn within(
        &mut self,
        max_tokens: Option<u32>,
        (fault, summary, expanded): (SummaryOutcome, RollingSummary, bool),
        keep: &[FactId],
        grown_past: u32,
    ) -> (SummaryOutcome, RollingSummary, bool) {
        let Some(max) = max_tokens else {
            return (fault, summary, expanded);
        };
        self.caps.asked += 1;
        let answered = matches!(fault, SummaryOutcome::Ok | SummaryOutcome::Expansion);
        if !answered || summary.tokens <= max {
            return (fault, summary, expanded);
        }
        let Some(fitted) = fit(&summary, keep, max) else {
            self.caps.no_room += 1;
            return (SummaryOutcome::Length, summary, false);
        };
        if fault == SummaryOutcome::Ok && self.overruns() {
            self.caps.overrun += 1;
            if let Some(last) = self.log.last_mut() {
                *last = SummaryOutcome::Length;
            }
            return (SummaryOutcome::Length, summary, false);
        }
        self.caps.fitted += 1;
        self.caps.facts_dropped += (summary.facts.len() - fitted.facts.len()) as u64;
        let expanded = expanded && fitted.tokens > grown_past;
        (fault, fitted, expanded)
    }

    /// Whether a call that must shrink runs over its cap instead: drawn from the overrun
    /// stream, never in scripted mode.
    fn overruns(&mut self) -> bool {
        match (&self.schedule, &mut self.overrun) {
            (None, (per_mille, Some(rng))) => chance(rng, *per_mille),
            _ => false,
        }
    }

    /// The outcome of the next call: drawn, then replaced by the schedule if scripted;
    /// logged.
    fn next_outcome(&mut self) -> SummaryOutcome {
        let drawn = self.draw_fault();
        let outcome = match &self.schedule {
            Some(schedule) => schedule
                .get(self.log.len())
                .copied()
                .unwrap_or(SummaryOutcome::Ok),
            None => drawn,
        };
        self.log.push(outcome);
        outcome
    }

    /// Draws at most one fault, in a fixed order (error, empty, length, expansion).
    fn draw_fault(&mut self) -> SummaryOutcome {
        let c = &self.config;
        let (error, empty, length, expansion) = (
            c.error_per_mille,
            c.empty_per_mille,
            c.length_per_mille,
            c.expansion_per_mille,
        );
        if chance(&mut self.rng, error) {
            let weights: Vec<u32> = ERROR_CLASS_WEIGHTS.iter().map(|&(_, w)| w).collect();
            let class = ERROR_CLASS_WEIGHTS[weighted(&mut self.rng, &weights)].0;
            return SummaryOutcome::Error(class);
        }
        if chance(&mut self.rng, empty) {
            return SummaryOutcome::Empty;
        }
        if chance(&mut self.rng, length) {
            return SummaryOutcome::Length;
        }
        if chance(&mut self.rng, expansion) {
            return SummaryOutcome::Expansion;
        }
        SummaryOutcome::Ok
    }

    fn clamp_size(&self, tokens: u32) -> u32 {
        let c = &self.config;
        tokens.clamp(c.min_tokens, c.max_tokens.max(c.min_tokens))
    }

    /// Previous facts ∪ retained input facts, ascending, without duplicates.
    fn merge_facts(&mut self, previous: &[FactId], input: &[FactId]) -> Vec<FactId> {
        let retention = self.config.retention_per_mille;
        let mut facts = previous.to_vec();
        for &fact in input {
            if retention >= 1000 || chance(&mut self.rng, retention) {
                facts.push(fact);
            }
        }
        facts.sort_unstable();
        facts.dedup();
        facts
    }

    /// Turns the drawn fault and the would-be summary into the call's result and latency.
    fn finish(
        &self,
        fault: SummaryOutcome,
        prompt_tokens: u32,
        summary: RollingSummary,
        expanded: bool,
        max_tokens: Option<u32>,
    ) -> SummaryCall {
        let (result, output_tokens) = match fault {
            SummaryOutcome::Error(class) => {
                let latency_ms = match class {
                    SummaryErrorClass::Timeout => TIMEOUT_LATENCY_MS,
                    _ => self.config.base_latency_ms as u64,
                };
                return SummaryCall {
                    result: Err(SummaryFailure::Error(class)),
                    expanded: false,
                    latency_ms,
                };
            }
            SummaryOutcome::Empty => (Err(SummaryFailure::Empty), 0),
            // Generation stops at the cap the call asked for, else at the model's own.
            SummaryOutcome::Length => (
                Err(SummaryFailure::Length),
                max_tokens.unwrap_or(self.config.max_tokens),
            ),
            SummaryOutcome::Expansion | SummaryOutcome::Ok => {
                let out = summary.tokens;
                (Ok(summary), out)
            }
        };
        SummaryCall {
            result,
            expanded,
            latency_ms: self.latency_ms(prompt_tokens, output_tokens),
        }
    }

    /// Virtual time of a call: fixed overhead, prompt processing, generation.
    pub fn latency_ms(&self, prompt_tokens: u32, output_tokens: u32) -> u64 {
        let tps = self.config.tokens_per_s.max(1) as u64;
        self.config.base_latency_ms as u64
            + prompt_tokens as u64 * 1000 / (tps * PREFILL_SPEEDUP)
            + output_tokens as u64 * 1000 / tps
    }
}

/// Growth of an expanded output: more than the input (1.1–2× of it).
fn expansion_growth(rng: &mut SimRng, input_tokens: u32) -> u32 {
    let factor = between(
        rng,
        EXPANSION_PER_MILLE_RANGE.0,
        EXPANSION_PER_MILLE_RANGE.1,
    ) as u64;
    let grown = (input_tokens as u64 * factor).div_ceil(1000);
    (grown as u32).max(input_tokens.saturating_add(1))
}
