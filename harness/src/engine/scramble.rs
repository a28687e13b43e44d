//! The label-scramble proof aid: every label a compactor (or the agent loop's own
//! decision logic) put in an event, replaced by a different value before the oracle
//! sees it. The transcript and every observation are left as they are. Since no
//! invariant may trust a label, a case must get the same verdict either way.

use compactsim_model::{
    BatchPassOutcome, CallErrorClass, Event, MicroOutcome, MsgId, PreflightDecision,
};

/// How the oracle is shown the labels of each event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Labels {
    /// As reported (every real run).
    #[default]
    AsReported,
    /// Each replaced by a different value (a test of the oracle).
    Scrambled,
}

/// `event` with every label scrambled (see the module doc).
pub fn scramble(event: Event) -> Event {
    match event {
        Event::MicroPass(mut p) => {
            p.outcome = match p.outcome {
                MicroOutcome::Cadence => MicroOutcome::Absorbed,
                MicroOutcome::NoExchange => MicroOutcome::ExchangeSkipped,
                MicroOutcome::Absorbed => MicroOutcome::Cadence,
                MicroOutcome::Defrag => MicroOutcome::DefragFailed,
                MicroOutcome::DefragFailed => MicroOutcome::Defrag,
                MicroOutcome::SummarizeFailed => MicroOutcome::NoExchange,
                MicroOutcome::ExchangeSkipped => MicroOutcome::SummarizeFailed,
            };
            let named = std::mem::take(&mut p.exchange);
            p.exchange = p.skipped.drain(..).collect();
            p.exchange.push(MsgId(u32::MAX));
            p.skipped = named;
            p.cursor = p.cursor.wrapping_add(7);
            p.summary_tokens = p.summary_tokens.wrapping_add(13);
            Event::MicroPass(p)
        }
        Event::BatchPass(mut p) => {
            p.outcome = match p.outcome {
                BatchPassOutcome::Compacted => BatchPassOutcome::Aborted,
                BatchPassOutcome::Aborted => BatchPassOutcome::NoOp,
                BatchPassOutcome::NoOp => BatchPassOutcome::Compacted,
            };
            p.fallback = !p.fallback;
            p.summary_failed = !p.summary_failed;
            p.summary_call_failed = !p.summary_call_failed;
            p.head_end = p.head_end.wrapping_add(3);
            p.summary_tokens = p.summary_tokens.wrapping_add(17);
            Event::BatchPass(p)
        }
        Event::Preflight(mut p) => {
            p.decision = match p.decision {
                PreflightDecision::BelowTrigger => PreflightDecision::Compress { passes: 2 },
                PreflightDecision::Gated => PreflightDecision::BelowTrigger,
                PreflightDecision::Deferred => PreflightDecision::Blocked,
                PreflightDecision::Cooldown => PreflightDecision::Gated,
                PreflightDecision::Blocked => PreflightDecision::Deferred,
                PreflightDecision::Compress { .. } => PreflightDecision::Cooldown,
            };
            Event::Preflight(p)
        }
        Event::ProviderCall(mut c) => {
            c.error = c.error.map(|e| match e {
                CallErrorClass::PayloadTooLarge => CallErrorClass::Transient,
                CallErrorClass::OverflowPhrase => CallErrorClass::ClientError,
                CallErrorClass::OverflowGenericBadRequest => CallErrorClass::Transient,
                CallErrorClass::OverflowDisconnect => CallErrorClass::ClientError,
                CallErrorClass::Transient => CallErrorClass::OverflowPhrase,
                CallErrorClass::ClientError => CallErrorClass::PayloadTooLarge,
            });
            Event::ProviderCall(c)
        }
        other => other,
    }
}
