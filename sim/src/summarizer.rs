//! The fake summarizer: deterministic, cumulative, and faulty on purpose.
//!
//! CONTRACT (used by the compactors):
//! - A rolling summary is a set of facts plus a size in tokens. Summarizing new input
//!   returns the new *cumulative* summary: previous facts ∪ retained facts of the input,
//!   size = clamp(previous + ratio × input tokens, min, max) — so on a success the size
//!   grows by at most ratio × input tokens (ratio < 1) once the previous summary is at
//!   least `min`.
//! - Previous facts are always kept (the summary is cumulative); each input fact is
//!   retained with the case's retention rate (1000 ‰ keeps everything).
//! - `condense` (defrag) re-summarizes the summary alone: same facts, size shrunk by
//!   the condense ratio, clamped to min.
//! - Faults are drawn per call from the case's Summarizer stream at the case's rates:
//!   error (with a class), empty output, `finish_reason = length`, expansion (output
//!   larger than its input: size grows by more than the input), plus a latency in
//!   virtual milliseconds from tokens in/out and a tokens/s speed.

use crate::rng::SimRng;
use compactsim_model::FactId;
use serde::Serialize;

/// A cumulative summary: what it retains and how big it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RollingSummary {
    /// Retained facts, ascending, no duplicates.
    pub facts: Vec<FactId>,
    pub tokens: u32,
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

/// Per-case summarizer configuration, drawn from the Params stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SummarizerConfig {
    /// Output tokens per input token, per mille (e.g. 200 = 0.20).
    pub ratio_per_mille: u32,
    pub min_tokens: u32,
    pub max_tokens: u32,
    /// Defrag output size as a share of the summary, per mille.
    pub condense_per_mille: u32,
    /// Share of input facts a summary retains, per mille.
    pub retention_per_mille: u32,
    /// Fault rates per call, per mille; 0 switches the fault off (swarm).
    pub error_per_mille: u32,
    pub empty_per_mille: u32,
    pub length_per_mille: u32,
    pub expansion_per_mille: u32,
    /// Generation speed for the latency model.
    pub tokens_per_s: u32,
}

impl SummarizerConfig {
    /// Draws a per-case configuration (swarm: each fault on or off).
    pub fn draw(rng: &mut SimRng) -> SummarizerConfig {
        let _ = rng;
        todo!()
    }

    /// No faults, default sizes: for scripted scenarios and unit tests.
    pub fn reliable() -> SummarizerConfig {
        todo!()
    }
}

pub struct Summarizer {
    pub config: SummarizerConfig,
}

impl Summarizer {
    pub fn new(config: SummarizerConfig, rng: SimRng) -> Self {
        let _ = rng;
        Summarizer { config }
    }

    /// Folds `input_facts` (from `input_tokens` tokens of transcript) into `previous`.
    pub fn summarize(
        &mut self,
        previous: &RollingSummary,
        input_facts: &[FactId],
        input_tokens: u32,
    ) -> SummaryCall {
        let _ = (previous, input_facts, input_tokens);
        todo!()
    }

    /// Re-summarizes `summary` alone (defrag).
    pub fn condense(&mut self, summary: &RollingSummary) -> SummaryCall {
        let _ = summary;
        todo!()
    }
}
