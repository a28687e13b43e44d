//! The seam between the harness and the compactor under test.
//!
//! The engine drives every compactor — the Rust reference models with their bug
//! switches, and (later) an external program over the stdio protocol — through
//! [`Compactor`]. The harness owns the world: the live list, the summarizer (reached
//! only through the harness-owned [`SummaryBackend`]), message ids ([`Harness::ids`])
//! and virtual time. The compactor owns nothing but its own state.
//!
//! What a compactor returns are *labels*: its own account of what it did. The agent
//! loop may act on them the way the real agent acts on its compressor's return value,
//! and a trace may print them, but the oracle never trusts them: every fact an
//! invariant uses is computed by the engine from what it observed (the list before and
//! after, the summarizer calls it served).
//!
//! Choosing the loop (`--strategy micro|batch|both`) and choosing the compactor
//! (`--compactor reference|…`) are separate axes: any loop runs with any compactor.

use crate::ids::IdAlloc;
pub use crate::summarizer::SummaryBackend;
use compactsim_model::{BatchPassOutcome, BatchTrigger, Message, MicroPass};
use std::fmt;

/// What the harness lends a compactor for one pass.
pub struct Harness<'a> {
    /// The only way to a summarizer.
    pub summarizer: &'a mut dyn SummaryBackend,
    /// The only source of ids for new rows (summaries, markers).
    pub ids: &'a mut IdAlloc,
    /// Virtual time at the start of the pass, milliseconds since the case began.
    pub now_ms: u64,
}

/// What asked for a batch pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchRequest {
    pub turn: u32,
    pub trigger: BatchTrigger,
    /// `/compress`: clear any failure cooldown first.
    pub force: bool,
}

/// A batch pass's own account of itself (labels; see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchReport {
    pub outcome: BatchPassOutcome,
    /// The summary written is a deterministic local fallback.
    pub fallback: bool,
    /// No summary came back (a failed call, or a cooldown skip).
    pub summary_failed: bool,
    /// The summarizer was called and the call failed.
    pub summary_call_failed: bool,
    /// The summary came back larger than its input.
    pub summary_expanded: bool,
    /// End of the protected head in the list before the pass.
    pub head_end: u32,
    /// Tokens of the summary body written (0 when none).
    pub summary_tokens: u32,
    /// An observation, not a label: set by a seam that reads the pass's text (an
    /// external adapter's) when the pass wrote a summary row with no answered
    /// summarizer call and that row's text is not the declared static fallback text
    /// (`policy static_fallback {"text": …}`): which row and what it lacks. `None`
    /// otherwise, and always for the Rust reference.
    pub fallback_mismatch: Option<String>,
}

impl BatchReport {
    /// A pass that did nothing and says so.
    pub const fn noop() -> Self {
        BatchReport {
            outcome: BatchPassOutcome::NoOp,
            fallback: false,
            summary_failed: false,
            summary_call_failed: false,
            summary_expanded: false,
            head_end: 0,
            summary_tokens: 0,
            fallback_mismatch: None,
        }
    }
}

/// The compactor under test failed as a component (an external adapter died, timed out
/// or spoke garbage). The engine ends the case as a harness/adapter failure (exit 4),
/// never as a verdict about compaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactorFailure {
    pub what: String,
}

impl fmt::Display for CompactorFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "compactor failure: {}", self.what)
    }
}

/// A compactor under test. Object-safe; `Send` so cases run on any worker thread.
///
/// CONTRACT (every implementation):
/// - A pass may rewrite `msgs` in any way; the oracle judges the result. New rows take
///   their ids from [`Harness::ids`]; summaries come only from [`Harness::summarizer`].
/// - A pass never panics on any list the harness hands it; a component failure is an
///   `Err(CompactorFailure)`.
/// - Nothing a pass returns is trusted by the oracle.
pub trait Compactor: Send {
    /// A short name for reports (`reference`, `external:<cmd>`).
    fn name(&self) -> String;

    /// A micro pass after turn `turn` (strategies `micro` and `both`). The default is a
    /// compactor without micro-compaction: it leaves `msgs` alone and says so.
    fn micro_pass(
        &mut self,
        msgs: &mut Vec<Message>,
        turn: u32,
        harness: &mut Harness<'_>,
    ) -> Result<MicroPass, CompactorFailure> {
        let _ = (msgs, harness);
        Ok(MicroPass::no_exchange(turn, 0))
    }

    /// One batch compaction (`compress()`), asked for by `request`.
    fn batch_pass(
        &mut self,
        msgs: &mut Vec<Message>,
        request: BatchRequest,
        harness: &mut Harness<'_>,
    ) -> Result<BatchReport, CompactorFailure>;

    /// A process restart or a session reset: every volatile (in-memory) state is
    /// dropped; what survives is only what is in the transcript.
    fn restart(&mut self);

    /// A copy of this compactor with its state, to continue a forked case from where
    /// this one is (the self-test's forks). `None`: it cannot be copied (an external
    /// adapter's process); the case is then run from its start.
    fn fork(&self) -> Option<Box<dyn Compactor>> {
        None
    }

    /// Something other than this compactor's own micro pass rewrote the list (a batch
    /// pass, a rollback): positions remembered into the old list are stale.
    fn rewritten(&mut self) {}

    /// The compactor's own summary-failure cooldown is in force at `now_ms`: the
    /// agent's `should_compress` gate stays shut. Default: no cooldown. An `Err` is a
    /// component failure, as from a pass (an external adapter answers it over the wire).
    fn cooling_down(&mut self, now_ms: u64) -> Result<bool, CompactorFailure> {
        let _ = now_ms;
        Ok(false)
    }

    /// Consecutive passes that wrote only a fallback summary (anti-thrash input).
    /// Default: 0.
    fn fallback_streak(&mut self) -> Result<u32, CompactorFailure> {
        Ok(0)
    }

    /// A real usage reading from the provider (prompt tokens of the last request).
    /// Default: ignored.
    fn on_usage(&mut self, prompt_tokens: u64) -> Result<(), CompactorFailure> {
        let _ = prompt_tokens;
        Ok(())
    }

    /// The compactor as `Any`, for an engine that drives more of it than this seam
    /// (the gateway's external store, adapters/PROTOCOL.md "Gateway store"). Default:
    /// none.
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
}
