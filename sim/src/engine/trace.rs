//! The event log of a case, one line per transition (`compactsim replay`).

use compactsim_model::{Event, Message, MicroPass, PreflightDecision, ProviderCall};
use std::fmt;

/// One transition as the log shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceLine {
    pub step: u32,
    pub event: Event,
    pub messages_before: usize,
    pub messages_after: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
}

impl TraceLine {
    pub fn new(step: u32, event: &Event, before: &[Message], after: &[Message]) -> Self {
        TraceLine {
            step,
            event: event.clone(),
            messages_before: before.len(),
            messages_after: after.len(),
            tokens_before: compactsim_model::tokens_rough_total(before),
            tokens_after: compactsim_model::tokens_rough_total(after),
        }
    }
}

fn ids(ids: &[compactsim_model::MsgId]) -> String {
    match ids {
        [] => "-".to_string(),
        [one] => one.to_string(),
        [first, .., last] => format!("{first}..{last}({})", ids.len()),
    }
}

fn micro(f: &mut fmt::Formatter<'_>, p: &MicroPass) -> fmt::Result {
    write!(
        f,
        "micro_pass #{} {:?} exchange={} skipped={} cursor={} summary={}t latency={}ms",
        p.pass,
        p.outcome,
        ids(&p.exchange),
        ids(&p.skipped),
        p.cursor,
        p.summary_tokens,
        p.latency_ms
    )
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

fn call(f: &mut fmt::Formatter<'_>, c: &ProviderCall) -> fmt::Result {
    write!(
        f,
        "provider_call @{} request~{}t ",
        seconds(c.now_ms),
        c.request_rough_tokens
    )?;
    match (c.usage_tokens, c.error) {
        (Some(usage), _) => write!(f, "usage={usage}t +{} rows", c.appended),
        (None, Some(class)) => write!(
            f,
            "error={class:?}{}",
            if c.over_window {
                " (over the window)"
            } else {
                ""
            }
        ),
        (None, None) => write!(f, "no reply"),
    }
}

fn decision(d: PreflightDecision) -> String {
    match d {
        PreflightDecision::Compress { passes } => format!("compress({passes} passes)"),
        other => format!("{other:?}"),
    }
}

impl fmt::Display for TraceLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "turn {:>3} step {:>4}  ", self.event.turn(), self.step)?;
        match &self.event {
            Event::TurnAppended { appended, .. } => write!(f, "append +{appended} rows")?,
            Event::MicroPass(p) => micro(f, p)?,
            Event::BatchPass(p) => write!(
                f,
                "batch_pass @{} {:?} {:?} head_end={} summary={}t fallback={} summary_failed={}",
                seconds(p.now_ms),
                p.trigger,
                p.outcome,
                p.head_end,
                p.summary_tokens,
                p.fallback,
                p.summary_failed
            )?,
            Event::Repair {
                merged_rows,
                dropped_rows,
                pruned_calls,
                ..
            } => write!(
                f,
                "repair merged={merged_rows} dropped={dropped_rows} pruned_calls={pruned_calls}"
            )?,
            Event::Restart { .. } => write!(f, "restart (in-memory state lost)")?,
            Event::Preflight(p) => write!(
                f,
                "preflight @{} msgs={} rough={}t request~{}t trigger={}t -> {}",
                seconds(p.now_ms),
                p.messages,
                p.messages_rough_tokens,
                p.request_rough_tokens,
                p.trigger_tokens,
                decision(p.decision)
            )?,
            Event::ProviderCall(c) => call(f, c)?,
            Event::TurnFailed {
                now_ms,
                exhausted,
                removed,
                ..
            } => write!(
                f,
                "turn_failed @{}{} rolled back {removed} rows",
                seconds(*now_ms),
                if *exhausted {
                    " compression_exhausted"
                } else {
                    ""
                }
            )?,
            Event::SessionReset { now_ms, .. } => write!(f, "session_reset @{}", seconds(*now_ms))?,
            Event::Rotation { old, new, .. } => write!(f, "rotation session {old} -> {new}")?,
        }
        write!(
            f,
            "  msgs {}->{} tokens {}->{}",
            self.messages_before, self.messages_after, self.tokens_before, self.tokens_after
        )
    }
}
