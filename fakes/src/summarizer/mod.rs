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
//! - Scripted mode (`with_schedule`): every call still draws its fault from the stream
//!   exactly as above (so the stream stays where an unscripted run would have it), then
//!   the n-th call takes the n-th scheduled outcome instead (`ok` past the end). Every
//!   summarizer logs the outcome each call took (`log`), so a generated case can be
//!   written down as a schedule that replays it.

mod backend;
mod config;
mod schedule;
pub mod served;
#[cfg(test)]
mod tests;

pub use backend::SummaryBackend;
pub use config::*;
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
            schedule: None,
            log: Vec::new(),
        }
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
        self.finish(
            fault,
            prompt_tokens,
            RollingSummary { facts, tokens },
            expanded,
        )
    }

    /// Re-summarizes `summary` alone (defrag): on success the same facts, the size shrunk
    /// by the condense ratio and floored at `min`, never larger than `summary` unless
    /// `summary` is too small to spell its facts, never smaller than that. An
    /// expansion fault returns 1.1–2× the summary instead.
    pub fn condense(&mut self, summary: &RollingSummary) -> SummaryCall {
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
        self.finish(fault, summary.tokens, result, expanded)
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
            SummaryOutcome::Length => (Err(SummaryFailure::Length), self.config.max_tokens),
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
