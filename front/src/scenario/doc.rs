//! The scenario file as written: serde structs that mirror the TOML, with spans kept on
//! every value a later check may reject. Unknown keys are errors everywhere.

use super::limits::{
    ArgsChars, ContextLength, KnobTokens, LatencyMs, OverheadReal, Passes, PerMille, Repeat,
    RowChars, Speed, Turns,
};
use compactsim_model::{ContentKind, Role};
use serde::de::{self, Deserializer};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// A whole scenario file (format 1).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Doc {
    pub format: Spanned<i64>,
    pub name: Option<String>,
    pub description: Option<String>,
    #[serde(default, deserialize_with = "seed")]
    pub seed: Option<u64>,
    pub case: Option<u32>,
    pub passes: Option<Passes>,
    pub strategy: Option<Spanned<String>>,
    #[serde(default)]
    pub bugs: Vec<Spanned<String>>,
    pub expect: Spanned<toml::Value>,
    pub turns_max: Option<Turns>,
    pub shape: Option<ShapeDoc>,
    pub script: Option<Spanned<ScriptDoc>>,
    pub summarizer: Option<SummarizerDoc>,
    pub faults: Option<FaultsDoc>,
    pub micro: Option<MicroDoc>,
    pub agent: Option<AgentDoc>,
    pub provider: Option<ProviderDoc>,
    pub compactor: Option<Spanned<CompactorDoc>>,
    /// Strategy `gateway`: session mode, topic mode, fault schedule.
    pub gateway: Option<Spanned<super::gateway::GatewayDoc>>,
    // Top-level keys of the agent loop and the oracle (checked in `toplevel.rs` and
    // `counters.rs`).
    pub era: Option<Spanned<String>>,
    pub anti_thrash: Option<Spanned<String>>,
    pub invariants: Option<Spanned<Vec<Spanned<String>>>>,
    /// What the compactor under test must declare to serve the file (`requires.rs`).
    pub requires: Option<Spanned<Vec<Spanned<String>>>>,
    pub expect_counters: Option<Spanned<BTreeMap<String, Spanned<toml::Value>>>>,
}

/// `[compactor]`: the compactor under test of the file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactorDoc {
    /// `reference` (the Rust models, the default) or `external` (an adapter).
    pub kind: Spanned<String>,
    /// The adapter's command line (split without a shell; relative paths resolve against
    /// the file's directory or its nearest ancestor where they exist, see
    /// `AdapterSpec::argv`).
    pub adapter: Option<Spanned<String>>,
    /// The per-request limit (`--adapter-timeout-ms`).
    pub timeout_ms: Option<Spanned<u64>>,
    /// The start-up limit (`--adapter-startup-timeout-ms`).
    pub startup_timeout_ms: Option<Spanned<u64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeDoc {
    pub family: Option<Spanned<String>>,
    pub context_length: Option<ContextLength>,
    pub system_prompt: Option<bool>,
    pub system_chars: Option<RowChars>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptDoc {
    pub builtin: Option<Spanned<String>>,
    pub system: Option<Spanned<RowDoc>>,
    #[serde(default)]
    pub history: Vec<Spanned<TurnDoc>>,
    #[serde(default)]
    pub turns: Vec<Spanned<TurnDoc>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnDoc {
    /// The turn stands for this many identical turns.
    pub repeat: Option<Repeat>,
    pub rows: Vec<RowDoc>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowDoc {
    pub role: Option<Role>,
    pub kind: Option<ContentKind>,
    pub chars: RowChars,
    pub facts: Option<u32>,
    #[serde(default)]
    pub calls: Vec<CallDoc>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallDoc {
    pub tool: String,
    pub args_chars: Option<ArgsChars>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummarizerDoc {
    pub preset: Option<Spanned<String>>,
    pub ratio_per_mille: Option<PerMille>,
    pub min_tokens: Option<KnobTokens>,
    /// Spanned: a value below `min_tokens` is refused at it.
    pub max_tokens: Option<Spanned<KnobTokens>>,
    pub condense_per_mille: Option<PerMille>,
    pub retention_per_mille: Option<PerMille>,
    pub error_per_mille: Option<PerMille>,
    pub empty_per_mille: Option<PerMille>,
    pub length_per_mille: Option<PerMille>,
    pub expansion_per_mille: Option<PerMille>,
    pub tokens_per_s: Option<Speed>,
    pub base_latency_ms: Option<LatencyMs>,
    pub outcomes: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultsDoc {
    pub restarts: Option<Spanned<Vec<Turns>>>,
    pub restart_per_mille: Option<PerMille>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MicroDoc {
    pub every_n_turns: Option<Turns>,
    pub defrag_threshold_tokens: Option<KnobTokens>,
    pub scaffold_tokens: Option<KnobTokens>,
    pub tail_budget_tokens: Option<KnobTokens>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentDoc {
    pub overhead_per_mille: Option<PerMille>,
    pub overhead_real_per_mille: Option<OverheadReal>,
    pub in_place: Option<bool>,
    pub think_ms: Option<Spanned<Vec<u64>>>,
    #[serde(default, deserialize_with = "seed")]
    pub think_seed: Option<u64>,
    pub resume_fill_per_mille: Option<PerMille>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderDoc {
    pub preset: Option<Spanned<String>>,
    pub overflow: Option<Spanned<String>>,
    pub disconnect_per_mille: Option<PerMille>,
    pub server_error_per_mille: Option<PerMille>,
    pub base_latency_ms: Option<LatencyMs>,
    pub prefill_tokens_per_s: Option<Speed>,
    pub outcomes: Option<Vec<Spanned<String>>>,
}

/// A root seed: an integer, or a decimal string for seeds above TOML's i64 range.
fn seed<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct Seed;
    impl de::Visitor<'_> for Seed {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a non-negative integer seed (or one in a string, above 2^63)")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
            v.parse()
                .map_err(|_| E::invalid_value(de::Unexpected::Str(v), &self))
        }
    }
    d.deserialize_any(Seed).map(Some)
}
