//! Trace events. The engine emits one event per transition of a case; the invariants
//! observe every event together with the message list before and after it, and
//! `compactsim replay` prints them one line each, like a simulator's event log.

use crate::ids::MsgId;
use crate::message::Message;
use serde::{Deserialize, Serialize};

/// What a micro-compaction pass did (the telemetry outcomes of hermes-domain §3.4).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MicroOutcome {
    /// Cadence said not this turn.
    Cadence,
    /// Fewer messages than a pass needs, or no complete exchange in the window.
    NoExchange,
    /// One exchange folded into the single marker.
    Absorbed,
    /// The rolling summary was re-summarized in place.
    Defrag,
    DefragFailed,
    SummarizeFailed,
    /// Third failure at the same exchange: the cursor jumped past it.
    ExchangeSkipped,
}

impl MicroOutcome {
    /// The pass changed the transcript.
    pub const fn committed(self) -> bool {
        matches!(self, MicroOutcome::Absorbed | MicroOutcome::Defrag)
    }
}

/// One micro-compaction pass.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct MicroPass {
    pub turn: u32,
    /// 1-based count of pass invocations in this case.
    pub pass: u32,
    pub outcome: MicroOutcome,
    /// The rows the pass took as its exchange (empty when it found none).
    pub exchange: Vec<MsgId>,
    /// Rows declared skipped after repeated summarizer failures (kept verbatim).
    pub skipped: Vec<MsgId>,
    /// Cursor after the pass (index of the first unabsorbed message).
    pub cursor: u32,
    /// Tokens of the rolling summary after the pass.
    pub summary_tokens: u32,
    /// Virtual milliseconds the summarizer took.
    pub latency_ms: u64,
}

/// One transition of a case.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The rows of one agent turn were appended (user, assistant with tool calls, tool
    /// results, final reply).
    TurnAppended {
        turn: u32,
        appended: u32,
    },
    MicroPass(MicroPass),
    /// The pre-send repair pass (hermes-domain §1.3).
    Repair {
        turn: u32,
        merged_rows: u32,
        dropped_rows: u32,
        pruned_calls: u32,
    },
    /// The agent process restarted: every in-memory state is gone, the transcript is
    /// reloaded as persisted.
    Restart {
        turn: u32,
    },
}

impl Event {
    pub fn turn(&self) -> u32 {
        match self {
            Event::TurnAppended { turn, .. }
            | Event::Repair { turn, .. }
            | Event::Restart { turn } => *turn,
            Event::MicroPass(p) => p.turn,
        }
    }

    /// A compaction pass (as opposed to an append, a repair or a restart).
    pub fn is_compaction(&self) -> bool {
        matches!(self, Event::MicroPass(_))
    }

    /// A compaction pass that committed a change.
    pub fn is_committed_compaction(&self) -> bool {
        matches!(self, Event::MicroPass(p) if p.outcome.committed())
    }
}

/// What an invariant observes: one event and the message list around it.
#[derive(Clone, Copy, Debug)]
pub struct Transition<'a> {
    /// 0-based index of this transition in the case.
    pub step: u32,
    pub event: &'a Event,
    pub before: &'a [Message],
    pub after: &'a [Message],
}
