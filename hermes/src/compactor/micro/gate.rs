//! The reclaim-size gate (hermes-domain §5, "does not exist yet" in Hermes): buffer
//! complete exchanges and splice only once their tokens reach the gate, so a run of
//! small reclaims costs one prompt-cache break instead of one per turn. The buffered
//! exchanges are folded in one summary call and one splice; user rows stay verbatim.

use super::{exchange, MicroCompactor, Window};
use crate::bugs::Bug;
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::seam::SummaryBackend;
use compactsim_model::{Message, MicroOutcome, MicroPass};

/// Every complete exchange from `first` on, before the tail, in order.
fn pending(
    msgs: &[Message],
    first: (usize, usize),
    tail: usize,
    original: bool,
) -> Vec<(usize, usize)> {
    let mut out = vec![first];
    while let Some(next) = exchange::find(msgs, out[out.len() - 1].1, tail, original) {
        out.push(next);
    }
    out
}

impl MicroCompactor {
    /// A gated pass: below the gate nothing happens (`NoExchange`); at or above it every
    /// pending exchange is absorbed at once.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn work_gated(
        &mut self,
        msgs: &mut Vec<Message>,
        w: &Window,
        first: (usize, usize),
        cumulative: bool,
        summarizer: &mut dyn SummaryBackend,
        ids: &mut IdAlloc,
        ev: &mut MicroPass,
    ) {
        let ranges = pending(msgs, first, w.tail, self.bugs.has(Bug::H75345A));
        let rows = || ranges.iter().flat_map(|&(s, e)| msgs[s..e].iter());
        let tokens: u32 = rows().map(|m| m.tokens().rough).sum();
        if tokens < self.config.reclaim_gate_tokens {
            return;
        }
        ev.exchange = rows().map(|m| m.id).collect();
        let facts: Vec<_> = rows().flat_map(|m| m.content.facts()).collect();
        let cap = self.config.summary_tokens_max;
        let call = summarizer.summarize_within(&self.state.rolling, &facts, tokens, cap);
        ev.latency_ms = call.latency_ms;
        let end = ranges[ranges.len() - 1].1;
        match self.usable(call, summarizer) {
            Some(summary) => {
                let supersede = self.supersedes(msgs, cumulative);
                self.commit(msgs, &ranges, summary, supersede, ids);
                ev.outcome = MicroOutcome::Absorbed;
            }
            None => self.fail(msgs, first.0, end, ev),
        }
    }
}
