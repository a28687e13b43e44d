//! The data of a study: per strategy, one row per turn plus totals.

use serde::{Deserialize, Serialize};

/// Version of `study.json`; bump on any change of its fields.
pub const STUDY_SCHEMA_VERSION: u32 = 2;

/// A whole study: the setting and one series per strategy, in the order the study
/// file lists them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyReport {
    pub schema_version: u32,
    pub name: String,
    /// A decimal string (a JSON number above 2^53 is rounded by readers).
    #[serde(with = "crate::seed_text")]
    pub seed: u64,
    pub family: String,
    pub context_length: u32,
    pub trigger_tokens: u32,
    pub tail_budget_tokens: u32,
    pub turns: u32,
    /// Virtual time of the session without compaction waits.
    pub session_s: f64,
    /// Generation speed of the summarizer model.
    pub summarizer_tokens_per_s: u32,
    pub pricing: PricingRow,
    /// The command of the external adapter every strategy ran (`--compactor external`);
    /// absent for the Rust reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    pub strategies: Vec<StrategySeries>,
}

/// Provider prices in US dollars per million tokens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PricingRow {
    pub preset: String,
    pub input_usd_per_mtok: f64,
    /// Input tokens written to the prompt cache (a cache miss).
    pub cache_write_usd_per_mtok: f64,
    /// Input tokens read from the prompt cache (a cache hit).
    pub cached_input_usd_per_mtok: f64,
    pub output_usd_per_mtok: f64,
}

/// One strategy's run of the session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StrategySeries {
    pub name: String,
    pub description: String,
    pub totals: StrategyTotals,
    /// Net token change of each absorbing micro pass, in order (negative: reclaimed).
    pub micro_pass_deltas_tokens: Vec<i64>,
    pub turns: Vec<TurnRow>,
}

/// The state after one turn (and the compaction that followed it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnRow {
    /// 1-based.
    pub turn: u32,
    /// Virtual time at the end of the turn, compaction waits included.
    pub clock_s: f64,
    pub messages: u32,
    pub tokens: u64,
    /// Tokens as a share of the batch trigger, percent.
    pub occupancy_pct: f64,
    /// Committed compactions so far (micro passes, batch passes, handoffs).
    pub compactions_total: u32,
    pub batch_compactions_total: u32,
    /// Seconds this turn waited on compaction before its reply (batch, handoff).
    pub stall_s: f64,
    /// Seconds this turn's finalization waited on a micro pass after its reply.
    pub finalize_s: f64,
    /// Provider calls so far that found part of their previous prompt rewritten.
    pub cache_breaks_total: u32,
    pub cost_usd_total: f64,
    /// Facts ever introduced, and the share still in the context (verbatim or in a
    /// summary), percent.
    pub facts_introduced: u32,
    pub facts_retained_pct: f64,
}

/// Totals of one strategy's run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StrategyTotals {
    pub batch_compactions: u32,
    /// Committed micro passes that absorbed exchanges.
    pub micro_commits: u32,
    /// Committed micro passes that only condensed the rolling summary (no absorption).
    pub micro_defrags: u32,
    pub handoffs: u32,
    pub occupancy_pct_peak: f64,
    pub occupancy_pct_final: f64,
    /// Mean occupancy over the last fifth of the turns.
    pub occupancy_pct_equilibrium: f64,
    pub stall_s_total: f64,
    pub stall_s_max: f64,
    pub finalize_s_total: f64,
    /// Median duration of a committed micro pass.
    pub micro_pass_s_median: f64,
    /// Net token change of the first committed micro pass.
    pub micro_first_pass_delta_tokens: i64,
    /// 1-based pass at which the running sum of micro deltas first drops to 0 or below.
    pub micro_break_even_pass: Option<u32>,
    pub provider_calls: u32,
    pub cache_breaks: u32,
    pub input_tokens_cached: u64,
    pub input_tokens_uncached: u64,
    pub output_tokens: u64,
    /// Tokens that were cached before a break and billed uncached after it.
    pub recached_tokens: u64,
    pub cost_usd_total: f64,
    /// What the breaks cost over reading the same tokens from the cache.
    pub cache_break_cost_usd: f64,
    pub facts_retained_pct_final: f64,
    pub facts_retained_pct_min: f64,
}
