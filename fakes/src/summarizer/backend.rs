//! The summarizer as a compactor sees it ([`SummaryBackend`]), and the fake summarizer
//! serving it directly.

use super::{RollingSummary, Summarizer, SummaryCall, SummaryFailure};
use compactsim_model::FactId;

/// The summarizer as a compactor sees it: the harness answers every call (from its fake
/// summarizer, with faults and latency), so a compactor never touches the harness's RNG.
pub trait SummaryBackend {
    /// The new cumulative summary: `previous` updated with `input_facts` from
    /// `input_tokens` tokens of serialized transcript, asked for at most `max_tokens`
    /// tokens (`None`: no cap). The fake summarizer writes its answer to fit
    /// (`fakes/src/summarizer`); a backend that cannot cuts an answer over the cap with
    /// [`cut_at`].
    fn summarize_within(
        &mut self,
        previous: &RollingSummary,
        input_facts: &[FactId],
        input_tokens: u32,
        max_tokens: Option<u32>,
    ) -> SummaryCall;

    /// Re-summarizes `summary` alone (micro defrag): same facts, smaller, asked for at
    /// most `max_tokens` tokens.
    fn condense_within(&mut self, summary: &RollingSummary, max_tokens: Option<u32>)
        -> SummaryCall;

    /// [`SummaryBackend::summarize_within`] with no cap.
    fn summarize(
        &mut self,
        previous: &RollingSummary,
        input_facts: &[FactId],
        input_tokens: u32,
    ) -> SummaryCall {
        self.summarize_within(previous, input_facts, input_tokens, None)
    }

    /// [`SummaryBackend::condense_within`] with no cap.
    fn condense(&mut self, summary: &RollingSummary) -> SummaryCall {
        self.condense_within(summary, None)
    }

    /// Records, for the call just answered, the tool results its prompt named (call ids
    /// of the tool rows whose id or text the harness read in the prompt). A backend that
    /// records no calls ignores it (the default).
    fn named_tool_results(&mut self, _calls: Vec<compactsim_model::CallId>) {}

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

/// `call` cut at `max_tokens`: an answer over it becomes a `length` failure, reported
/// to `backend` as truncated (for a backend that cannot write to fit).
pub fn cut_at<B: SummaryBackend + ?Sized>(
    backend: &mut B,
    call: SummaryCall,
    max_tokens: Option<u32>,
) -> SummaryCall {
    match (&call.result, max_tokens) {
        (Ok(s), Some(max)) if s.tokens > max => {
            backend.truncated();
            SummaryCall {
                result: Err(SummaryFailure::Length),
                expanded: false,
                latency_ms: call.latency_ms,
            }
        }
        _ => call,
    }
}

impl SummaryBackend for Summarizer {
    fn summarize_within(
        &mut self,
        previous: &RollingSummary,
        input_facts: &[FactId],
        input_tokens: u32,
        max_tokens: Option<u32>,
    ) -> SummaryCall {
        Summarizer::summarize_within(self, previous, input_facts, input_tokens, max_tokens)
    }

    fn condense_within(
        &mut self,
        summary: &RollingSummary,
        max_tokens: Option<u32>,
    ) -> SummaryCall {
        Summarizer::condense_within(self, summary, max_tokens)
    }

    fn fork(&self) -> Option<Summarizer> {
        Some(self.clone())
    }
}
