//! The harness's side of the summarizer seam: every call a compactor makes goes through
//! [`Serving`], which answers from the case's fake summarizer and records what it served
//! (the oracle's ground truth about summaries).

use super::{RollingSummary, Summarizer, SummaryCall};
use super::{SummaryErrorClass, SummaryFailure};
use crate::compactor::seam::SummaryBackend;
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

    fn record(&mut self, condense: bool, input: (u32, &[FactId]), call: &SummaryCall) {
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
        });
    }
}

impl SummaryBackend for Serving<'_> {
    fn summarize(
        &mut self,
        previous: &RollingSummary,
        input_facts: &[FactId],
        input_tokens: u32,
    ) -> SummaryCall {
        let call = self.inner.summarize(previous, input_facts, input_tokens);
        self.record(false, (input_tokens, input_facts), &call);
        call
    }

    fn condense(&mut self, summary: &RollingSummary) -> SummaryCall {
        let call = self.inner.condense(summary);
        self.record(true, (0, &summary.facts), &call);
        call
    }

    fn fork(&self) -> Option<Summarizer> {
        Some(self.inner.clone())
    }
}

/// Virtual milliseconds the calls took, in total.
pub fn latency_ms(calls: &[ServedCall]) -> u64 {
    calls.iter().map(|c| c.latency_ms).sum()
}
