//! The summarizer as a compactor sees it ([`SummaryBackend`]), and the fake summarizer
//! serving it directly.

use super::{RollingSummary, Summarizer, SummaryCall};
use compactsim_model::FactId;

/// The summarizer as a compactor sees it: the harness answers every call (from its fake
/// summarizer, with faults and latency), so a compactor never touches the harness's RNG.
pub trait SummaryBackend {
    /// The new cumulative summary: `previous` updated with `input_facts` from
    /// `input_tokens` tokens of serialized transcript.
    fn summarize(
        &mut self,
        previous: &RollingSummary,
        input_facts: &[FactId],
        input_tokens: u32,
    ) -> SummaryCall;

    /// Re-summarizes `summary` alone (micro defrag): same facts, smaller.
    fn condense(&mut self, summary: &RollingSummary) -> SummaryCall;

    /// A copy of the summarizer in its current state, answering what this one would
    /// answer next, when the backend has one (`compactsim diff` serves a second
    /// compactor from it). Default: none.
    fn fork(&self) -> Option<Summarizer> {
        None
    }

    /// The newest `summarize` answer reached the compactor cut at the `max_tokens` it
    /// asked for (finish reason `length`): a failed call, not a summary. A backend that
    /// records calls records it so. Default: nothing recorded.
    fn truncated(&mut self) {}
}

impl SummaryBackend for Summarizer {
    fn summarize(
        &mut self,
        previous: &RollingSummary,
        input_facts: &[FactId],
        input_tokens: u32,
    ) -> SummaryCall {
        Summarizer::summarize(self, previous, input_facts, input_tokens)
    }

    fn condense(&mut self, summary: &RollingSummary) -> SummaryCall {
        Summarizer::condense(self, summary)
    }

    fn fork(&self) -> Option<Summarizer> {
        Some(self.clone())
    }
}
