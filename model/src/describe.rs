//! One-line descriptions of events and rows in the report's own words, for witnesses and
//! the replay log: `turn 102: batch pass (overflow) compacted 34 -> 12 rows, ...` and
//! `m18 assistant 40 tokens, calls call_1,call_2` — never a Rust Debug struct.

use crate::event::{
    BatchPass, BatchPassOutcome, BatchTrigger, CallErrorClass, Event, MicroOutcome, MicroPass,
    Preflight, PreflightDecision, ProviderCall,
};
use crate::ids::MsgId;
use crate::message::Message;
use crate::verdict::WitnessRow;

impl MicroOutcome {
    pub const fn label(self) -> &'static str {
        match self {
            MicroOutcome::Cadence => "not this turn (cadence)",
            MicroOutcome::NoExchange => "no exchange",
            MicroOutcome::Absorbed => "absorbed",
            MicroOutcome::Defrag => "defragmented the summary",
            MicroOutcome::DefragFailed => "defrag failed",
            MicroOutcome::SummarizeFailed => "summary failed",
            MicroOutcome::ExchangeSkipped => "skipped the exchange",
        }
    }
}

impl BatchTrigger {
    pub const fn label(self) -> &'static str {
        match self {
            BatchTrigger::Preflight => "preflight",
            BatchTrigger::PostResponse => "post-response",
            BatchTrigger::Overflow => "overflow",
            BatchTrigger::Manual => "manual",
        }
    }
}

impl BatchPassOutcome {
    pub const fn label(self) -> &'static str {
        match self {
            BatchPassOutcome::Compacted => "compacted",
            BatchPassOutcome::Aborted => "aborted",
            BatchPassOutcome::NoOp => "no-op",
        }
    }
}

impl CallErrorClass {
    pub const fn label(self) -> &'static str {
        match self {
            CallErrorClass::PayloadTooLarge => "payload too large (413)",
            CallErrorClass::OverflowPhrase => "context-length phrase",
            CallErrorClass::OverflowGenericBadRequest => "generic 400 on a large session",
            CallErrorClass::OverflowDisconnect => "disconnect on a large session",
            CallErrorClass::Transient => "transient error",
            CallErrorClass::ClientError => "client error",
        }
    }
}

impl PreflightDecision {
    pub fn label(self) -> String {
        match self {
            PreflightDecision::BelowTrigger => "below the trigger".into(),
            PreflightDecision::Gated => "gated".into(),
            PreflightDecision::Deferred => "deferred to the next usage reading".into(),
            PreflightDecision::Cooldown => "summary-failure cooldown".into(),
            PreflightDecision::Blocked => "blocked by the anti-thrash guard".into(),
            PreflightDecision::Compress { passes } => format!("compress ({passes} passes)"),
        }
    }
}

/// Virtual milliseconds as seconds: `12.345s`.
pub fn seconds(ms: u64) -> String {
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

/// A short id list: `-`, `m4`, or `m4..m9(6)`.
pub fn id_span(ids: &[MsgId]) -> String {
    match ids {
        [] => "-".to_string(),
        [one] => one.to_string(),
        [first, .., last] => format!("{first}..{last}({})", ids.len()),
    }
}

fn micro(p: &MicroPass) -> String {
    format!(
        "micro pass #{} {}, exchange {}, skipped {}, cursor {}, summary {} tokens, {} ms",
        p.pass,
        p.outcome.label(),
        id_span(&p.exchange),
        id_span(&p.skipped),
        p.cursor,
        p.summary_tokens,
        p.latency_ms
    )
}

fn batch(p: &BatchPass) -> String {
    let mut s = format!(
        "batch pass ({}) {} at {}: {} -> {} rows, {} -> {} tokens, head ends at {}",
        p.trigger.label(),
        p.outcome.label(),
        seconds(p.now_ms),
        p.messages_before,
        p.messages_after,
        p.tokens_before,
        p.tokens_after,
        p.head_end
    );
    if p.summary_tokens > 0 {
        s.push_str(&format!(", summary {} tokens", p.summary_tokens));
    }
    if p.fallback {
        s.push_str(", fallback summary");
    }
    if p.summary_call_failed {
        s.push_str(", summary call failed");
    } else if p.summary_failed {
        s.push_str(", no summary");
    }
    s
}

fn preflight(p: &Preflight) -> String {
    format!(
        "preflight at {}: {} messages, {} tokens (request {}) vs trigger {} -> {}",
        seconds(p.now_ms),
        p.messages,
        p.messages_rough_tokens,
        p.request_rough_tokens,
        p.trigger_tokens,
        p.decision.label()
    )
}

fn call(c: &ProviderCall) -> String {
    let at = seconds(c.now_ms);
    let request = c.request_rough_tokens;
    match (c.usage_tokens, c.error) {
        (Some(usage), _) => format!(
            "provider call at {at}: request {request} tokens, usage {usage} tokens, +{} rows",
            c.appended
        ),
        (None, Some(class)) => format!(
            "provider call failed at {at}: {}, request {request} tokens{}",
            class.label(),
            if c.over_window {
                " over the window"
            } else {
                ""
            }
        ),
        (None, None) => format!("provider call at {at}: request {request} tokens, no reply"),
    }
}

impl Event {
    /// What happened, without the turn: `batch pass (overflow) compacted ...`.
    pub fn what(&self) -> String {
        match self {
            Event::TurnAppended { appended, .. } => format!("appended {appended} rows"),
            Event::MicroPass(p) => micro(p),
            Event::BatchPass(p) => batch(p),
            Event::Repair {
                merged_rows,
                dropped_rows,
                pruned_calls,
                ..
            } => format!(
                "repair merged {merged_rows} rows, dropped {dropped_rows} rows, \
                 pruned {pruned_calls} calls"
            ),
            Event::Restart { .. } => "restart (in-memory state lost)".into(),
            Event::Preflight(p) => preflight(p),
            Event::ProviderCall(c) => call(c),
            Event::TurnFailed {
                now_ms,
                exhausted,
                removed,
                ..
            } => format!(
                "turn failed at {}{}, {removed} rows rolled back",
                seconds(*now_ms),
                if *exhausted {
                    " (compression exhausted)"
                } else {
                    ""
                }
            ),
            Event::SessionReset { now_ms, .. } => format!("session reset at {}", seconds(*now_ms)),
            Event::Rotation { old, new, .. } => format!("rotation session {old} -> {new}"),
        }
    }

    /// The event on one line: `turn 7: provider call failed at ...`.
    pub fn describe(&self) -> String {
        format!("turn {}: {}", self.turn(), self.what())
    }
}

/// `summary`, `micro marker` or the role.
fn kind(role: &str, marker: bool, micro_marker: bool) -> &str {
    if micro_marker {
        "micro marker"
    } else if marker {
        "summary"
    } else {
        role
    }
}

impl Message {
    /// The row on one line: `m18 assistant 40 tokens, calls call_1,call_2`.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} {} {} tokens",
            self.id,
            kind(
                self.role.as_str(),
                self.is_summary(),
                self.is_micro_marker()
            ),
            self.tokens().rough
        );
        if !self.tool_calls.is_empty() {
            let calls: Vec<String> = self.tool_calls.iter().map(|c| c.id.to_string()).collect();
            s.push_str(&format!(", calls {}", calls.join(",")));
        }
        if let Some(id) = self.tool_call_id {
            s.push_str(&format!(", result of {id}"));
        }
        s
    }
}

impl WitnessRow {
    /// The witness row on one line: `[3] m17 user 1200 tokens, 1 segments: note`.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "[{}] {} {} {} tokens, {} segments",
            self.index,
            self.id,
            kind(self.role.as_str(), self.marker, self.micro_marker),
            self.tokens.rough,
            self.segments
        );
        if self.tool_calls > 0 {
            s.push_str(&format!(", {} calls", self.tool_calls));
        }
        if !self.note.is_empty() {
            s.push_str(&format!(": {}", self.note));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::CallId;
    use crate::message::tests::prose;
    use crate::message::{Flags, Role, ToolCall};

    fn batch_pass() -> BatchPass {
        BatchPass {
            turn: 102,
            trigger: BatchTrigger::Overflow,
            outcome: BatchPassOutcome::Compacted,
            messages_before: 34,
            messages_after: 12,
            tokens_before: 51200,
            tokens_after: 9800,
            head_end: 3,
            summary_tokens: 800,
            fallback: true,
            summary_failed: false,
            summary_call_failed: false,
            fallback_mismatch: None,
            now_ms: 12_345,
        }
    }

    fn call(error: Option<CallErrorClass>, usage: Option<u64>) -> Event {
        Event::ProviderCall(ProviderCall {
            turn: 7,
            now_ms: 2_000,
            request_rough_tokens: 131_072,
            usage_tokens: usage,
            error,
            over_window: error.is_some(),
            appended: 3,
        })
    }

    #[test]
    fn every_event_variant_reads_as_a_report_line() {
        let micro = Event::MicroPass(MicroPass {
            turn: 5,
            pass: 2,
            outcome: MicroOutcome::Absorbed,
            exchange: vec![MsgId(4), MsgId(5), MsgId(6)],
            skipped: vec![],
            cursor: 7,
            summary_tokens: 120,
            latency_ms: 900,
            marker_mismatch: None,
        });
        let preflight = Event::Preflight(Preflight {
            turn: 9,
            now_ms: 1_500,
            messages: 40,
            messages_rough_tokens: 5000,
            request_rough_tokens: 6000,
            trigger_tokens: 5500,
            decision: PreflightDecision::Compress { passes: 2 },
        });
        let table = [
            (Event::TurnAppended { turn: 1, appended: 4 }, "turn 1: appended 4 rows"),
            (micro, "turn 5: micro pass #2 absorbed, exchange m4..m6(3), skipped -, cursor 7, summary 120 tokens, 900 ms"),
            (Event::BatchPass(batch_pass()), "turn 102: batch pass (overflow) compacted at 12.345s: 34 -> 12 rows, 51200 -> 9800 tokens, head ends at 3, summary 800 tokens, fallback summary"),
            (Event::Repair { turn: 3, merged_rows: 1, dropped_rows: 2, pruned_calls: 0 }, "turn 3: repair merged 1 rows, dropped 2 rows, pruned 0 calls"),
            (Event::Restart { turn: 4 }, "turn 4: restart (in-memory state lost)"),
            (preflight, "turn 9: preflight at 1.500s: 40 messages, 5000 tokens (request 6000) vs trigger 5500 -> compress (2 passes)"),
            (call(Some(CallErrorClass::OverflowPhrase), None), "turn 7: provider call failed at 2.000s: context-length phrase, request 131072 tokens over the window"),
            (call(None, Some(128_000)), "turn 7: provider call at 2.000s: request 131072 tokens, usage 128000 tokens, +3 rows"),
            (Event::TurnFailed { turn: 8, now_ms: 3_000, exhausted: true, removed: 5 }, "turn 8: turn failed at 3.000s (compression exhausted), 5 rows rolled back"),
            (Event::SessionReset { turn: 8, now_ms: 3_001 }, "turn 8: session reset at 3.001s"),
            (Event::Rotation { turn: 9, old: 1, new: 2 }, "turn 9: rotation session 1 -> 2"),
        ];
        for (event, expected) in table {
            assert_eq!(event.describe(), expected);
        }
    }

    #[test]
    fn a_failed_summary_is_named() {
        let mut p = batch_pass();
        (p.fallback, p.summary_failed, p.summary_call_failed) = (false, true, true);
        p.summary_tokens = 0;
        assert!(Event::BatchPass(p.clone())
            .what()
            .ends_with("summary call failed"));
        p.summary_call_failed = false;
        assert!(Event::BatchPass(p)
            .what()
            .ends_with("head ends at 3, no summary"));
    }

    #[test]
    fn rows_read_as_id_kind_tokens_and_calls() {
        let user = Message::new(MsgId(17), Role::User, prose(4800));
        assert_eq!(user.describe(), "m17 user 1200 tokens");
        let calls = ["1", "2"].map(|n| ToolCall {
            id: CallId(n.parse().unwrap()),
            name: "t".into(),
            arguments: "{}".into(),
        });
        let assistant =
            Message::new(MsgId(18), Role::Assistant, prose(0)).with_tool_calls(calls.to_vec());
        assert!(assistant
            .describe()
            .ends_with("tokens, calls call_1,call_2"));
        let tool = Message::new(MsgId(19), Role::Tool, prose(40)).with_tool_call_id(CallId(1));
        assert_eq!(tool.describe(), "m19 tool 10 tokens, result of call_1");
        let marker = Message::new(MsgId(20), Role::User, prose(40)).with_flags(Flags {
            summary_marker: true,
            micro_marker: true,
            ..Flags::default()
        });
        assert_eq!(marker.describe(), "m20 micro marker 10 tokens");
        let row = WitnessRow::of(3, &marker, "after: the marker");
        assert_eq!(
            row.describe(),
            "[3] m20 micro marker 10 tokens, 1 segments: after: the marker"
        );
    }
}
