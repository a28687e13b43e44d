//! Study files (`scenarios/studies/*.toml`): the session to simulate, the summarizer,
//! the provider prices and the strategies to compare. Parsed strictly (unknown keys are
//! errors) and range-checked; every error names the file, line and column.

use super::pricing::{Pricing, PricingSpec};
use crate::scenario::ScenarioError;
use compactsim_harness::shapes::Family;
use compactsim_hermes::compactor::micro::RECLAIM_GATE_TOKENS_MAX;
use serde::Deserialize;
use std::path::Path;

/// Largest study file read, bytes.
pub const STUDY_FILE_BYTES_MAX: u64 = 1 << 20;
/// Upper bounds of a study.
pub const TURNS_MAX: u32 = 5_000;
pub const SESSION_HOURS_MAX: f64 = 1_000.0;
pub const CONTEXT_LENGTH_MAX: u32 = 10_000_000;
pub const STRATEGIES_MAX: usize = 8;
/// The smallest window a study accepts (the 64K trigger floor needs room).
pub const CONTEXT_LENGTH_MIN: u32 = 8_000;

/// The strategies a study can compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StudyStrategy {
    /// Batch compaction at the trigger only.
    Batch,
    /// Micro-compaction after every turn, batch as the backstop.
    Micro,
    /// Micro-compaction with the reclaim-size gate, batch as the backstop.
    MicroGated,
    /// Fresh-session handoff at a capacity trigger, batch as the backstop.
    Handoff,
}

impl StudyStrategy {
    pub fn name(self) -> &'static str {
        match self {
            StudyStrategy::Batch => "batch",
            StudyStrategy::Micro => "micro",
            StudyStrategy::MicroGated => "micro-gated",
            StudyStrategy::Handoff => "handoff",
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StudyFile {
    study: StudySection,
    summarizer: SummarizerSection,
    #[serde(default)]
    pricing: PricingSpec,
    #[serde(default)]
    micro: MicroSection,
    #[serde(default)]
    handoff: HandoffSection,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StudySection {
    name: String,
    seed: u64,
    family: String,
    context_length: u32,
    threshold_per_mille: u32,
    target_ratio_per_mille: u32,
    turns: u32,
    session_hours: f64,
    strategies: Vec<StudyStrategy>,
    /// Mean tokens of one turn: the drawn row sizes are scaled to it.
    turn_tokens_mean: Option<u32>,
    /// Growth of tool outputs per turn, per mille (overrides the drawn value).
    growth_per_mille: Option<u32>,
    /// Mean tokens of a user row (overrides the drawn sizes).
    user_tokens_mean: Option<u32>,
}

/// The summarizer of a study: fixed, not drawn (faults off unless set).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummarizerSection {
    pub tokens_per_s: u32,
    pub base_latency_ms: u32,
    pub ratio_per_mille: u32,
    pub min_tokens: u32,
    pub max_tokens: u32,
    pub condense_per_mille: u32,
    pub retention_per_mille: u32,
    #[serde(default)]
    pub error_per_mille: u32,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MicroSection {
    /// Gate of the `micro-gated` strategy.
    pub reclaim_gate_tokens: u32,
}

impl Default for MicroSection {
    fn default() -> Self {
        MicroSection {
            reclaim_gate_tokens: RECLAIM_GATE_TOKENS_DEFAULT,
        }
    }
}

/// `proactive_prune_min_reclaim_tokens`, the analogue hermes-domain §5 names.
pub const RECLAIM_GATE_TOKENS_DEFAULT: u32 = 4_096;
/// PR #77790's `handoff_threshold_tokens`.
pub const HANDOFF_TRIGGER_TOKENS_DEFAULT: u32 = 100_000;
/// Bound of the handoff packet, tokens.
pub const HANDOFF_PACKET_TOKENS_DEFAULT: u32 = 2_000;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoffSection {
    /// Hand off at the end of a turn whose context reached this many tokens.
    pub trigger_tokens: u32,
    /// The packet is cut to this many tokens.
    pub packet_tokens_max: u32,
}

impl Default for HandoffSection {
    fn default() -> Self {
        HandoffSection {
            trigger_tokens: HANDOFF_TRIGGER_TOKENS_DEFAULT,
            packet_tokens_max: HANDOFF_PACKET_TOKENS_DEFAULT,
        }
    }
}

/// A validated study.
#[derive(Clone, Debug)]
pub struct StudySpec {
    pub name: String,
    pub seed: u64,
    pub family: Family,
    pub context_length: u32,
    pub threshold_per_mille: u32,
    pub target_ratio_per_mille: u32,
    pub turns: u32,
    pub session_s: f64,
    pub strategies: Vec<StudyStrategy>,
    pub turn_tokens_mean: Option<u32>,
    pub growth_per_mille: Option<u32>,
    pub user_tokens_mean: Option<u32>,
    pub summarizer: SummarizerSection,
    pub pricing: Pricing,
    pub micro: MicroSection,
    pub handoff: HandoffSection,
}

/// Reads and validates the study file at `path`.
pub fn load(path: &Path) -> Result<StudySpec, ScenarioError> {
    // A regular file only (a FIFO would block, /dev/zero never end), within the limit.
    let source = crate::scenario::input::read_text_within(path, STUDY_FILE_BYTES_MAX)
        .map_err(|e| ScenarioError::file(path, e))?;
    parse(path, &source)
}

/// Parses and validates study text `source` read from `path`.
pub fn parse(path: &Path, source: &str) -> Result<StudySpec, ScenarioError> {
    let file: StudyFile = toml::from_str(source)
        .map_err(|e| ScenarioError::at(path, source, e.span(), e.message().trim()))?;
    let bad =
        |key: &str, message: String| ScenarioError::at(path, source, locate(source, key), message);
    let s = file.study;
    let family = Family::parse(&s.family)
        .filter(|f| *f == Family::CodeReview)
        .ok_or_else(|| {
            bad(
                "family",
                format!("family `{}`: studies support `code-review`", s.family),
            )
        })?;
    check(
        &bad,
        "context_length",
        s.context_length,
        CONTEXT_LENGTH_MIN,
        CONTEXT_LENGTH_MAX,
    )?;
    check(
        &bad,
        "threshold_per_mille",
        s.threshold_per_mille,
        100,
        1000,
    )?;
    check(
        &bad,
        "target_ratio_per_mille",
        s.target_ratio_per_mille,
        100,
        800,
    )?;
    check(&bad, "turns", s.turns, 1, TURNS_MAX)?;
    if !(s.session_hours > 0.0 && s.session_hours <= SESSION_HOURS_MAX) {
        return Err(bad(
            "session_hours",
            format!("session_hours must be in (0, {SESSION_HOURS_MAX}]"),
        ));
    }
    if s.strategies.is_empty() || s.strategies.len() > STRATEGIES_MAX {
        return Err(bad(
            "strategies",
            format!("1 to {STRATEGIES_MAX} strategies"),
        ));
    }
    if let Some(twice) = s
        .strategies
        .iter()
        .enumerate()
        .find(|(i, a)| s.strategies[..*i].contains(a))
    {
        return Err(bad(
            "strategies",
            format!(
                "strategy `{}` is listed twice: each strategy is compared once",
                twice.1.name()
            ),
        ));
    }
    if let Some(n) = s.turn_tokens_mean {
        check(&bad, "turn_tokens_mean", n, 1, s.context_length / 8)?;
    }
    if let Some(n) = s.user_tokens_mean {
        check(&bad, "user_tokens_mean", n, 1, s.context_length / 8)?;
    }
    if let Some(n) = s.growth_per_mille {
        check(&bad, "growth_per_mille", n, 0, 1000)?;
    }
    let z = &file.summarizer;
    check(&bad, "tokens_per_s", z.tokens_per_s, 1, 100_000)?;
    check(&bad, "ratio_per_mille", z.ratio_per_mille, 1, 999)?;
    check(&bad, "retention_per_mille", z.retention_per_mille, 0, 1000)?;
    check(&bad, "condense_per_mille", z.condense_per_mille, 1, 1000)?;
    check(&bad, "error_per_mille", z.error_per_mille, 0, 1000)?;
    check(
        &bad,
        "max_tokens",
        z.max_tokens,
        z.min_tokens.max(1),
        1_000_000,
    )?;
    check(
        &bad,
        "reclaim_gate_tokens",
        file.micro.reclaim_gate_tokens,
        1,
        RECLAIM_GATE_TOKENS_MAX,
    )?;
    check(
        &bad,
        "packet_tokens_max",
        file.handoff.packet_tokens_max,
        1,
        s.context_length / 4,
    )?;
    check(
        &bad,
        "trigger_tokens",
        file.handoff.trigger_tokens,
        1,
        s.context_length,
    )?;
    let pricing = file.pricing.resolve().map_err(|m| bad("preset", m))?;
    Ok(StudySpec {
        name: s.name,
        seed: s.seed,
        family,
        context_length: s.context_length,
        threshold_per_mille: s.threshold_per_mille,
        target_ratio_per_mille: s.target_ratio_per_mille,
        turns: s.turns,
        session_s: s.session_hours * 3600.0,
        strategies: s.strategies,
        turn_tokens_mean: s.turn_tokens_mean,
        growth_per_mille: s.growth_per_mille,
        user_tokens_mean: s.user_tokens_mean,
        summarizer: file.summarizer,
        pricing,
        micro: file.micro,
        handoff: file.handoff,
    })
}

fn check(
    bad: &dyn Fn(&str, String) -> ScenarioError,
    key: &str,
    value: u32,
    lo: u32,
    hi: u32,
) -> Result<(), ScenarioError> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(bad(key, format!("{key} = {value} is outside {lo}..={hi}")))
    }
}

/// Byte range of the first line assigning `key` (`key = ...`), for error positions.
fn locate(source: &str, key: &str) -> Option<std::ops::Range<usize>> {
    let mut offset = 0;
    for line in source.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some(rest) = trimmed.strip_prefix(key) {
            if rest.trim_start().starts_with('=') {
                return Some(offset + indent..offset + indent + key.len());
            }
        }
        offset += line.len();
    }
    None
}
