//! The harness's side of the summarizer seam: every call a compactor makes goes through
//! [`Serving`], which answers from the case's fake summarizer and records what it served
//! (the oracle's ground truth about summaries).

use super::SummaryBackend;
use super::{RollingSummary, Summarizer, SummaryCall};
use super::{SummaryErrorClass, SummaryFailure};
use compactsim_model::{FactId, ServedCall};

/// A summarizer call log limit per pass: a compactor asking for more is looping.
pub const SERVED_CALLS_PER_PASS_MAX: usize = 64;

/// The case's summarizer, lent to one pass, recording every call it serves.
pub struct Serving<'a> {
    inner: &'a mut Summarizer,
    calls: Vec<ServedCall>,
}

impl<'a> Serving<'a> {
    pub fn new(inner: &'a mut Summarizer) -> Self {
        Serving {
            inner,
            calls: Vec::new(),
        }
    }

    /// The calls served, in order.
    pub fn into_calls(self) -> Vec<ServedCall> {
        self.calls
    }

    /// `max_tokens`: the call's cap; a `length` stop on a call with no cap is served as
    /// no text (harness/src/external/summaries.rs), empty output as the compactor reads it.
    fn record(
        &mut self,
        condense: bool,
        input: (u32, &[FactId]),
        call: &SummaryCall,
        max_tokens: Option<u32>,
    ) {
        if self.calls.len() >= SERVED_CALLS_PER_PASS_MAX {
            return;
        }
        self.calls.push(ServedCall {
            condense,
            ok: call.result.is_ok(),
            expanded: call.expanded,
            latency_ms: call.latency_ms,
            input_tokens: input.0,
            facts_in: input.1.to_vec(),
            facts_out: call
                .result
                .as_ref()
                .map(|s| s.facts.clone())
                .unwrap_or_default(),
            connection_dropped: matches!(
                call.result,
                Err(SummaryFailure::Error(SummaryErrorClass::Network))
            ),
            empty_output: match call.result {
                Err(SummaryFailure::Empty) => true,
                Err(SummaryFailure::Length) => max_tokens.is_none(),
                _ => false,
            },
            tool_results_named: None,
        });
    }
}

impl SummaryBackend for Serving<'_> {
    fn summarize_within(
        &mut self,
        previous: &RollingSummary,
        input_facts: &[FactId],
        input_tokens: u32,
        max_tokens: Option<u32>,
    ) -> SummaryCall {
        let call = self
            .inner
            .summarize_within(previous, input_facts, input_tokens, max_tokens);
        self.record(false, (input_tokens, input_facts), &call, max_tokens);
        call
    }

    fn condense_within(
        &mut self,
        summary: &RollingSummary,
        max_tokens: Option<u32>,
    ) -> SummaryCall {
        let call = self.inner.condense_within(summary, max_tokens);
        self.record(true, (0, &summary.facts), &call, max_tokens);
        call
    }

    fn named_tool_results(&mut self, calls: Vec<compactsim_model::CallId>) {
        if let Some(last) = self.calls.last_mut() {
            last.tool_results_named = Some(calls);
        }
    }

    fn fork(&self) -> Option<Summarizer> {
        Some(self.inner.clone())
    }

    /// The answer the compactor got was a cut text with finish reason `length`, which a
    /// compactor discards like the summarizer's own `length` failure: recorded failed.
    fn truncated(&mut self) {
        if let Some(last) = self.calls.last_mut() {
            last.ok = false;
            last.facts_out.clear();
        }
    }
}

/// Virtual milliseconds the calls took, in total.
pub fn latency_ms(calls: &[ServedCall]) -> u64 {
    calls.iter().map(|c| c.latency_ms).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Stream};
    use crate::summarizer::SummarizerConfig;

    #[test]
    fn a_truncated_answer_is_recorded_as_a_failed_call() {
        let mut inner =
            Summarizer::new(SummarizerConfig::reliable(), stream(1, Stream::Summarizer));
        let mut serving = Serving::new(&mut inner);
        let previous = RollingSummary::default();
        serving.summarize(&previous, &[FactId(1)], 400);
        serving.summarize(&previous, &[FactId(2)], 400);
        serving.truncated();
        let calls = serving.into_calls();
        assert!(calls[0].ok && calls[0].facts_out.contains(&FactId(1)));
        assert!(!calls[1].ok, "cut at max_tokens: failed");
        assert!(calls[1].facts_out.is_empty(), "nothing kept");
    }
}
