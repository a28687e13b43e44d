//! A case plan: an explicit description of a case. Every field left unset is drawn from
//! the seed exactly as a case without a plan draws it, so `CasePlan::default()` is the
//! same case as no plan at all, and a plan can fix as little (one knob of a drawn case)
//! or as much (a fully explicit script, summarizer schedule and restart list: what
//! [`record`] writes down and the shrinker reduces) as it needs.
//!
//! Agent-loop cases (strategies `batch` and `both`) honour the same fields except the
//! restarts under `batch` (the batch loop does not model process restarts:
//! [`CasePlan::check_for`] rejects them; `both` restarts between turns), and add what the agent loop draws on its Provider stream: the agent
//! parameters ([`AgentOverrides`]), the provider's configuration ([`ProviderOverrides`])
//! and the provider's per-call outcome schedule.
//!
//! Overrides never change what the streams draw: the engine still draws every value a
//! plan overrides and then uses the plan's, so the streams stay where an unplanned case
//! has them and fixing one knob does not reshuffle the others.

mod agent;
mod gateway;
mod record;
mod script;
mod source;

pub use agent::{AgentOverrides, ProviderOverrides};
pub use gateway::{crash_name, parse_crash, GatewayPlan, GatewaySchedule};
pub use record::{record, run_logged, Logged, Recording};
pub use script::{
    build_rows, facts_room, CallPlan, RowPlan, Script, TurnPlan, CONTENT_SEED_SALT, FACT_CHARS,
};
pub use source::Source;

use crate::shapes::{Family, ShapeParams};
use compactsim_fakes::provider::ProviderOutcome;
use compactsim_fakes::summarizer::{SummarizerConfig, SummaryOutcome};
use compactsim_hermes::compactor::micro::MicroConfig;
use compactsim_hermes::strategy::Strategy;
use serde::Serialize;

/// An explicit description of (part of) a case. `None` means "drawn from the seed".
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CasePlan {
    /// The conversation family (a label only when a script is given).
    pub family: Option<Family>,
    /// The main model's window; sets the trigger and the default tail budget. Row sizes
    /// of a generated conversation stay those its family drew.
    pub context_length: Option<u32>,
    /// A generated conversation has a system prompt (ignored with a script).
    pub system_prompt: Option<bool>,
    /// Characters of a generated conversation's system prompt (ignored with a script).
    pub system_chars: Option<u32>,
    /// A fixed script of turns replacing the shape generator.
    pub script: Option<Script>,
    pub summarizer: SummarizerOverrides,
    /// The outcome of each summarizer call in call order (`ok` past the end).
    pub summary_outcomes: Option<Vec<SummaryOutcome>>,
    /// Turns (≥ 1, ascending) before which the process restarts; replaces the drawn rate.
    pub restarts: Option<Vec<u32>>,
    /// Chance per turn of a restart, per mille; replaces the drawn rate.
    pub restart_per_mille: Option<u32>,
    pub micro: MicroOverrides,
    /// Agent-loop parameters (strategies `batch` and `both`).
    pub agent: AgentOverrides,
    /// The fake provider's configuration (strategies `batch` and `both`).
    pub provider: ProviderOverrides,
    /// The outcome each provider call injects, in call order (`ok` past the end);
    /// replaces the drawn transient faults (strategies `batch` and `both`).
    pub provider_outcomes: Option<Vec<ProviderOutcome>>,
    /// Turn budget of the case (a script also ends the case when it runs out). An
    /// agent-loop case's step budget follows this budget, not the script's length.
    pub turns_max: Option<u32>,
    /// The oracle checks only these invariants (ids of the catalogue); `None` checks
    /// every invariant of the strategy. For bug switches that only show together with
    /// another one, whose own symptom would otherwise hide them.
    pub invariants: Option<Vec<String>>,
    /// The compactor under test the file declares (`[compactor]`): an external adapter;
    /// `None` is the process's choice (`--compactor`, by default the reference).
    pub compactor: Option<crate::external::AdapterSpec>,
    /// The gateway's topic mode and fault schedule (strategy `gateway`).
    pub gateway: GatewayPlan,
}

impl CasePlan {
    /// `ids` narrowed to the plan's `invariants`, if it names any.
    pub fn narrow<'a>(plan: Option<&'a CasePlan>, ids: Vec<&'a str>) -> Vec<&'a str> {
        match plan.and_then(|p| p.invariants.as_ref()) {
            Some(only) => ids
                .into_iter()
                .filter(|id| only.iter().any(|o| o == id))
                .collect(),
            None => ids,
        }
    }
}

/// Overrides of the drawn summarizer configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SummarizerOverrides {
    /// Start from [`SummarizerConfig::reliable`] instead of the drawn configuration.
    pub reliable: bool,
    pub ratio_per_mille: Option<u32>,
    pub min_tokens: Option<u32>,
    pub max_tokens: Option<u32>,
    pub condense_per_mille: Option<u32>,
    pub retention_per_mille: Option<u32>,
    pub error_per_mille: Option<u32>,
    pub empty_per_mille: Option<u32>,
    pub length_per_mille: Option<u32>,
    pub expansion_per_mille: Option<u32>,
    pub tokens_per_s: Option<u32>,
    pub base_latency_ms: Option<u32>,
}

impl SummarizerOverrides {
    /// Every field of `config`, explicit.
    pub fn exactly(config: &SummarizerConfig) -> Self {
        SummarizerOverrides {
            reliable: false,
            ratio_per_mille: Some(config.ratio_per_mille),
            min_tokens: Some(config.min_tokens),
            max_tokens: Some(config.max_tokens),
            condense_per_mille: Some(config.condense_per_mille),
            retention_per_mille: Some(config.retention_per_mille),
            error_per_mille: Some(config.error_per_mille),
            empty_per_mille: Some(config.empty_per_mille),
            length_per_mille: Some(config.length_per_mille),
            expansion_per_mille: Some(config.expansion_per_mille),
            tokens_per_s: Some(config.tokens_per_s),
            base_latency_ms: Some(config.base_latency_ms),
        }
    }

    /// The configuration a case uses, given the one it drew.
    pub fn apply(&self, drawn: SummarizerConfig) -> SummarizerConfig {
        let base = if self.reliable {
            SummarizerConfig::reliable()
        } else {
            drawn
        };
        SummarizerConfig {
            ratio_per_mille: self.ratio_per_mille.unwrap_or(base.ratio_per_mille),
            min_tokens: self.min_tokens.unwrap_or(base.min_tokens),
            max_tokens: self.max_tokens.unwrap_or(base.max_tokens),
            condense_per_mille: self.condense_per_mille.unwrap_or(base.condense_per_mille),
            retention_per_mille: self.retention_per_mille.unwrap_or(base.retention_per_mille),
            error_per_mille: self.error_per_mille.unwrap_or(base.error_per_mille),
            empty_per_mille: self.empty_per_mille.unwrap_or(base.empty_per_mille),
            length_per_mille: self.length_per_mille.unwrap_or(base.length_per_mille),
            expansion_per_mille: self.expansion_per_mille.unwrap_or(base.expansion_per_mille),
            tokens_per_s: self.tokens_per_s.unwrap_or(base.tokens_per_s),
            base_latency_ms: self.base_latency_ms.unwrap_or(base.base_latency_ms),
        }
    }
}

/// Overrides of the micro-compaction configuration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MicroOverrides {
    pub every_n_turns: Option<u32>,
    pub defrag_threshold_tokens: Option<u32>,
    pub scaffold_tokens: Option<u32>,
    pub tail_budget_tokens: Option<u32>,
}

impl MicroOverrides {
    /// Every overridable field of `config`, explicit.
    pub fn exactly(config: &MicroConfig) -> Self {
        MicroOverrides {
            every_n_turns: Some(config.every_n_turns),
            defrag_threshold_tokens: Some(config.defrag_threshold_tokens),
            scaffold_tokens: Some(config.scaffold_tokens),
            tail_budget_tokens: Some(config.tail_budget_tokens),
        }
    }

    pub fn apply(&self, config: &mut MicroConfig) {
        let MicroOverrides {
            every_n_turns,
            defrag_threshold_tokens,
            scaffold_tokens,
            tail_budget_tokens,
        } = *self;
        config.every_n_turns = every_n_turns.unwrap_or(config.every_n_turns);
        config.defrag_threshold_tokens =
            defrag_threshold_tokens.unwrap_or(config.defrag_threshold_tokens);
        config.scaffold_tokens = scaffold_tokens.unwrap_or(config.scaffold_tokens);
        config.tail_budget_tokens = tail_budget_tokens.unwrap_or(config.tail_budget_tokens);
    }
}

impl CasePlan {
    /// True when the plan fixes nothing (the case is the drawn one).
    pub fn is_empty(&self) -> bool {
        *self == CasePlan::default()
    }

    /// The family and shape-level overrides applied to drawn shape parameters.
    pub fn apply_shape(&self, shape: &mut ShapeParams) {
        if let Some(n) = self.context_length {
            shape.context_length = n;
        }
        if let Some(on) = self.system_prompt {
            shape.system_prompt = on;
        }
        if let Some(n) = self.system_chars {
            shape.system_chars = n;
        }
    }

    /// The turn budget of a case whose unplanned budget is `default`.
    pub fn turns_max(&self, default: u32) -> u32 {
        let budget = self.turns_max.unwrap_or(default);
        match &self.script {
            Some(script) => budget.min(script.turns.len() as u32),
            None => budget,
        }
    }

    /// Whether the process restarts before `turn`, given what the fault stream drew.
    pub fn restart(&self, turn: u32, drawn: bool) -> bool {
        match &self.restarts {
            Some(turns) => turns.binary_search(&turn).is_ok(),
            None => drawn,
        }
    }

    /// Checks what the types cannot: restart turns, the script's contract, sizes.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(turns) = &self.restarts {
            if turns.contains(&0) {
                return Err("restart turns start at 1 (a restart before turn 0 is a no-op)".into());
            }
            if turns.windows(2).any(|w| w[0] >= w[1]) {
                return Err("restart turns must be strictly ascending".into());
            }
        }
        if self.restart_per_mille.is_some_and(|p| p > 1000) {
            return Err("restart_per_mille must be at most 1000".into());
        }
        if self.context_length == Some(0) || self.micro.every_n_turns == Some(0) {
            return Err("context_length and every_n_turns must be at least 1".into());
        }
        if let Some(script) = &self.script {
            script.validate()?;
        }
        if let Some(schedule) = &self.gateway.schedule {
            schedule.validate()?;
        }
        let p = &self.provider;
        if [p.disconnect_per_mille, p.server_error_per_mille]
            .iter()
            .any(|r| r.is_some_and(|r| r > 1000))
        {
            return Err("provider fault rates must be at most 1000 per mille".into());
        }
        if p.prefill_tokens_per_s == Some(0) {
            return Err("prefill_tokens_per_s must be at least 1".into());
        }
        if self.agent.think_ms.is_some_and(|(lo, hi)| lo > hi) {
            return Err("think_ms is a range [min, max] with min <= max".into());
        }
        Ok(())
    }

    /// [`CasePlan::validate`], and that every field the plan sets is one `strategy`
    /// honours: restarts are micro's and `both`'s (the batch loop does not model process
    /// restarts), agent and provider fields the agent loop's only, micro knobs those of
    /// the strategies that run micro passes.
    pub fn check_for(&self, strategy: Strategy) -> Result<(), String> {
        self.validate()?;
        let agent_fields =
            !self.agent.is_empty() || !self.provider.is_empty() || self.provider_outcomes.is_some();
        let restarts = self.restarts.is_some() || self.restart_per_mille.is_some();
        if let (Some(script), Some(_)) = (&self.script, strategy.loop_options()) {
            script.check_agent_turns()?;
        }
        match strategy {
            Strategy::Micro if agent_fields => Err(
                "agent and provider settings apply to the agent-loop strategies (batch, both), not micro"
                    .into(),
            ),
            Strategy::Batch(_) if restarts => Err(format!(
                "the batch loop ({strategy}) does not model process restarts: remove restarts and restart_per_mille"
            )),
            Strategy::Gateway(_) if restarts => Err(
                "the gateway's restarts and crashes are its [gateway] schedule, not [faults]"
                    .into(),
            ),
            Strategy::Micro | Strategy::Batch(_) | Strategy::Both(_)
                if !self.gateway.is_empty() =>
            {
                Err(format!(
                    "gateway settings apply to the gateway strategy, not {strategy}"
                ))
            }
            Strategy::Batch(_) if self.micro != MicroOverrides::default() => Err(
                "micro settings apply to the strategies that run micro passes (micro, both), not batch"
                    .into(),
            ),
            Strategy::Micro | Strategy::Batch(_) | Strategy::Both(_) | Strategy::Gateway(_) => {
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests;
