//! The event log of a case, one line per transition (`compactsim replay`).

use compactsim_model::{Event, Message, MicroPass};
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

impl fmt::Display for TraceLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "turn {:>3} step {:>4}  ", self.event.turn(), self.step)?;
        match &self.event {
            Event::TurnAppended { appended, .. } => write!(f, "append +{appended} rows")?,
            Event::MicroPass(p) => micro(f, p)?,
            Event::BatchPass(p) => write!(
                f,
                "batch_pass {:?} {:?} head_end={} summary={}t fallback={} summary_failed={}",
                p.trigger, p.outcome, p.head_end, p.summary_tokens, p.fallback, p.summary_failed
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
        }
        write!(
            f,
            "  msgs {}->{} tokens {}->{}",
            self.messages_before, self.messages_after, self.tokens_before, self.tokens_after
        )
    }
}
