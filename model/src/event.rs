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

/// What asked for a batch compaction pass (hermes-domain §2.2).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchTrigger {
    /// Turn-start preflight.
    Preflight,
    /// `should_compress` on the provider's usage after a response.
    PostResponse,
    /// Overflow recovery after a context-length / 413 error.
    Overflow,
    /// `/compress` (force: clears the failure cooldown).
    Manual,
}

/// What a batch compaction pass did.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchPassOutcome {
    /// The transcript was rewritten (with an LLM summary, a fallback summary, or — under
    /// a bug switch — no summary at all).
    Compacted,
    /// The summary failed in a way that aborts (auth, network): transcript unchanged.
    Aborted,
    /// Nothing to compress: transcript unchanged.
    NoOp,
}

impl BatchPassOutcome {
    /// The pass changed the transcript.
    pub const fn committed(self) -> bool {
        matches!(self, BatchPassOutcome::Compacted)
    }
}

/// One batch compaction pass. Token counts are rough (the compressor's own estimate).
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct BatchPass {
    pub turn: u32,
    pub trigger: BatchTrigger,
    pub outcome: BatchPassOutcome,
    pub messages_before: u32,
    pub messages_after: u32,
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// End of the protected head in the list before the pass (after decay).
    pub head_end: u32,
    /// Tokens of the summary body written (0 when none was written).
    pub summary_tokens: u32,
    /// The summary is the deterministic local fallback, not an LLM summary.
    pub fallback: bool,
    /// The summarizer was asked (or skipped for a cooldown) and produced no summary.
    pub summary_failed: bool,
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
    BatchPass(BatchPass),
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
            Event::BatchPass(p) => p.turn,
        }
    }

    /// A compaction pass (as opposed to an append, a repair or a restart).
    pub fn is_compaction(&self) -> bool {
        matches!(self, Event::MicroPass(_) | Event::BatchPass(_))
    }

    /// A compaction pass that committed a change.
    pub fn is_committed_compaction(&self) -> bool {
        match self {
            Event::MicroPass(p) => p.outcome.committed(),
            Event::BatchPass(p) => p.outcome.committed(),
            _ => false,
        }
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
