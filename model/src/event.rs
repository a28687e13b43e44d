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
    /// The harness's reading of the pass's text (not the compactor's label): a micro
    /// marker the pass wrote whose text is not the marker template the compactor
    /// declared (policy `marker_template`), and what it lacks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker_mismatch: Option<String>,
}

impl MicroPass {
    /// Pass `pass` after turn `turn` that found no exchange and changed nothing.
    pub fn no_exchange(turn: u32, pass: u32) -> MicroPass {
        MicroPass {
            turn,
            pass,
            outcome: MicroOutcome::NoExchange,
            exchange: Vec::new(),
            skipped: Vec::new(),
            cursor: 0,
            summary_tokens: 0,
            latency_ms: 0,
            marker_mismatch: None,
        }
    }
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
    /// The summarizer was actually called and the call failed (a cooldown skip is not a
    /// call): the failure cooldown starts at `now_ms`.
    pub summary_call_failed: bool,
    /// Virtual time at the start of the pass, milliseconds since the case began.
    pub now_ms: u64,
    /// The harness's reading of the pass's text (not the compactor's label): a summary
    /// row written with no answered summarizer call whose text is not the declared
    /// static fallback text, and what it lacks (`BatchReport::fallback_mismatch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_mismatch: Option<String>,
}

/// What turn-start preflight decided (hermes-domain §2.2 items 1–2).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "decision")]
pub enum PreflightDecision {
    /// The rough request estimate is below the trigger.
    BelowTrigger,
    /// At or over the trigger, but the gate (message count, or the rough message
    /// estimate alone) did not open.
    Gated,
    /// Deferred to the next real usage reading.
    Deferred,
    /// A summary-failure cooldown is in force.
    Cooldown,
    /// The anti-thrash guard blocks automatic compaction.
    Blocked,
    /// Compacted: this many passes ran (they precede this event in the trace).
    Compress { passes: u32 },
}

/// The preflight evaluation of one turn, emitted after its passes (if any).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Preflight {
    pub turn: u32,
    pub now_ms: u64,
    /// Messages when the turn's preflight started.
    pub messages: u32,
    /// Rough estimate of the messages alone at the start.
    pub messages_rough_tokens: u64,
    /// Rough request estimate (messages + system prompt + tool schemas) at the start.
    pub request_rough_tokens: u64,
    pub trigger_tokens: u32,
    pub decision: PreflightDecision,
}

/// How the agent classified a failed provider call (hermes-domain §2.7).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallErrorClass {
    /// 413 or its texts.
    PayloadTooLarge,
    /// A context-length phrase.
    OverflowPhrase,
    /// A terse 400 on a large session (#1630).
    OverflowGenericBadRequest,
    /// A dropped connection on a large session (#2153/#4750).
    OverflowDisconnect,
    /// Retry as is.
    Transient,
    /// Not retryable.
    ClientError,
}

impl CallErrorClass {
    /// The agent routes this error to overflow recovery.
    pub const fn is_overflow(self) -> bool {
        matches!(
            self,
            CallErrorClass::PayloadTooLarge
                | CallErrorClass::OverflowPhrase
                | CallErrorClass::OverflowGenericBadRequest
                | CallErrorClass::OverflowDisconnect
        )
    }
}

/// One call to the main model. On success the response rows (the assistant row and, if
/// it called tools, their results) are appended in the same transition; the request
/// that was sent is the transition's `before`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct ProviderCall {
    pub turn: u32,
    pub now_ms: u64,
    /// Rough request estimate of what was sent.
    pub request_rough_tokens: u64,
    /// Provider-reported prompt tokens (a real usage reading); `None` when it failed.
    pub usage_tokens: Option<u64>,
    /// The agent's classification of the failure; `None` on success.
    pub error: Option<CallErrorClass>,
    /// The request was over the window (ground truth of the fake provider, for
    /// witnesses; the agent never sees it).
    pub over_window: bool,
    /// Rows the response appended.
    pub appended: u32,
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
    /// Turn-start preflight of the agent loop.
    Preflight(Preflight),
    /// A call to the main model (and the rows its response appended).
    ProviderCall(ProviderCall),
    /// The turn failed. Unless a compaction committed during the turn, its rows (the
    /// user row and every row after it) were removed: a failed turn is not persisted.
    TurnFailed {
        turn: u32,
        now_ms: u64,
        /// `failed + compression_exhausted`: overflow recovery ran out of attempts or
        /// could not compress further.
        exhausted: bool,
        /// Rows removed from the live list.
        removed: u32,
    },
    /// The session was reset after compression exhaustion: the transcript restarts empty
    /// (a leading system row is kept); every compactor and agent state is fresh.
    SessionReset {
        turn: u32,
        now_ms: u64,
    },
    /// Legacy rotation after a compaction (`in_place: false`): a new session id.
    Rotation {
        turn: u32,
        old: u32,
        new: u32,
    },
}

impl Event {
    pub fn turn(&self) -> u32 {
        match self {
            Event::TurnAppended { turn, .. }
            | Event::Repair { turn, .. }
            | Event::Restart { turn }
            | Event::TurnFailed { turn, .. }
            | Event::SessionReset { turn, .. }
            | Event::Rotation { turn, .. } => *turn,
            Event::MicroPass(p) => p.turn,
            Event::BatchPass(p) => p.turn,
            Event::Preflight(p) => p.turn,
            Event::ProviderCall(c) => c.turn,
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

fn is_false(b: &bool) -> bool {
    !*b
}

/// One summarizer call the harness served during a transition. The harness *is* the
/// summarizer, so this is an observation, not a compactor's report.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct ServedCall {
    /// A condense (defrag) call: the summary re-summarized alone.
    pub condense: bool,
    /// The call returned a summary (not an error, empty output or a cut-off one).
    pub ok: bool,
    /// The summary returned is larger than its input (the expansion fault).
    pub expanded: bool,
    pub latency_ms: u64,
    /// Tokens of the new input the call was given (0 for a condense).
    pub input_tokens: u32,
    /// Facts of the new input (for a condense: of the summary condensed).
    pub facts_in: Vec<crate::ids::FactId>,
    /// Facts of the summary returned (empty when the call failed).
    pub facts_out: Vec<crate::ids::FactId>,
    /// The call failed as a dropped connection (the `network` fault): the spec's short
    /// cooldown class (30 s for a closed stream, hermes-domain §2.3).
    #[serde(default)]
    pub connection_dropped: bool,
    /// The call answered empty content (the `empty` fault): a class a release may give
    /// its own cooldown (iot 0.22.2.post1: 30 s, as a closed stream).
    #[serde(default, skip_serializing_if = "is_false")]
    pub empty_output: bool,
    /// Tool results whose call id or text the call's prompt held, by the call they
    /// answer, ascending: what the harness read of the prompt (an external adapter's).
    /// `None` when the seam reads no prompt text (the Rust reference passes facts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_results_named: Option<Vec<crate::ids::CallId>>,
}

/// What an invariant observes: one event and the message list around it.
#[derive(Clone, Copy, Debug)]
pub struct Transition<'a> {
    /// 0-based index of this transition in the case.
    pub step: u32,
    pub event: &'a Event,
    pub before: &'a [Message],
    pub after: &'a [Message],
    /// Every summarizer call the harness served during this transition, in order (an
    /// observation: the harness is the summarizer).
    pub served: &'a [ServedCall],
    /// What changed between `before` and `after`, computed once by [`Transition::new`].
    pub delta: crate::delta::Delta,
}

impl<'a> Transition<'a> {
    /// A transition with its [`Delta`](crate::delta::Delta) computed.
    pub fn new(
        step: u32,
        event: &'a Event,
        before: &'a [Message],
        after: &'a [Message],
        served: &'a [ServedCall],
    ) -> Self {
        let delta = crate::delta::Delta::between(before, after);
        Self::with_delta(step, event, (before, after), served, delta)
    }

    /// A transition whose delta the caller already computed with
    /// `Delta::between(before, after)` (checked in debug builds).
    pub fn with_delta(
        step: u32,
        event: &'a Event,
        (before, after): (&'a [Message], &'a [Message]),
        served: &'a [ServedCall],
        delta: crate::delta::Delta,
    ) -> Self {
        debug_assert_eq!(
            delta,
            crate::delta::Delta::between(before, after),
            "a delta given with a transition must be the one between its lists"
        );
        Transition {
            step,
            event,
            before,
            after,
            served,
            delta,
        }
    }
}
