//! The event log of a case, one line per transition (`compactsim replay`).

use compactsim_model::{Event, Message};
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

impl fmt::Display for TraceLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "turn {:>3} step {:>4}  {}  msgs {}->{} tokens {}->{}",
            self.event.turn(),
            self.step,
            self.event.what(),
            self.messages_before,
            self.messages_after,
            self.tokens_before,
            self.tokens_after
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_line_is_the_event_in_report_words_with_the_list_sizes() {
        let line = TraceLine {
            step: 12,
            event: Event::Rotation {
                turn: 4,
                old: 1,
                new: 2,
            },
            messages_before: 9,
            messages_after: 9,
            tokens_before: 300,
            tokens_after: 300,
        };
        assert_eq!(
            line.to_string(),
            "turn   4 step   12  rotation session 1 -> 2  msgs 9->9 tokens 300->300"
        );
    }
}
