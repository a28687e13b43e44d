//! The agent loop's per-case configuration: drawn parameters ([`AgentParams`]) and what
//! the era, the anti-thrash policy and the bug switches derive from them
//! ([`AgentConfig`]).

use super::era::{AntiThrashPolicy, LoopOptions};
use crate::bug_set::BugSet;
use crate::bugs::Bug;
use crate::compactor::batch::BatchConfig;
use crate::compactor::boundaries::{PROTECT_FIRST_N_DEFAULT, PROTECT_LAST_N_DEFAULT};
use crate::compactor::threshold::{self, Thresholds};
use compactsim_fakes::rng::mix64;
use serde::Serialize;

/// `max_attempts` default: overflow recovery rounds per turn.
pub const MAX_ATTEMPTS_DEFAULT: u32 = 3;

/// Per-case parameters of the agent's world, drawn by the engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AgentParams {
    /// Request overhead (system prompt and tool schemas) in rough tokens, per mille of
    /// the trigger.
    pub overhead_per_mille_of_trigger: u32,
    /// Real tokens the provider counts per rough overhead token, per mille (schemas are
    /// tokenized differently by providers: below 1000 the rough estimate overstates).
    pub overhead_real_per_mille: u32,
    /// `compression.in_place` when the era does not force rotation.
    pub in_place: bool,
    /// User think time between turns: uniform in this range, virtual milliseconds.
    pub think_ms: (u64, u64),
    /// Seed of the per-turn think times.
    pub think_seed: u64,
    /// A resumed session: history up to this share of the trigger (per mille, rough
    /// request tokens) is loaded before the first turn; 0 starts empty.
    pub resume_fill_per_mille: u32,
}

/// Everything the agent loop of one case runs with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AgentConfig {
    pub options: LoopOptions,
    /// The run's bug switches plus the era's historical behaviours.
    pub bugs: BugSet,
    pub thresholds: Thresholds,
    pub batch: BatchConfig,
    pub max_attempts: u32,
    pub in_place: bool,
    pub overhead_rough_tokens: u32,
    pub overhead_real_tokens: u32,
    /// The preflight count gate opens above this many messages.
    pub gate_messages: usize,
    pub params: AgentParams,
}

impl AgentConfig {
    pub fn new(
        options: LoopOptions,
        bugs: &BugSet,
        context_length: u32,
        params: AgentParams,
    ) -> Self {
        let bugs = bugs.with_also(options.era.implied_bugs());
        let thresholds = threshold::derive(context_length, options.era.threshold_config());
        let overhead_rough_tokens = (thresholds.trigger_tokens as u64
            * params.overhead_per_mille_of_trigger as u64
            / 1000) as u32;
        let overhead_real_tokens =
            (overhead_rough_tokens as u64 * params.overhead_real_per_mille as u64 / 1000) as u32;
        AgentConfig {
            options,
            batch: BatchConfig::new(&thresholds, bugs.clone()),
            bugs,
            thresholds,
            max_attempts: MAX_ATTEMPTS_DEFAULT,
            in_place: params.in_place && !options.era.always_rotates(),
            overhead_rough_tokens,
            overhead_real_tokens,
            gate_messages: (PROTECT_FIRST_N_DEFAULT + PROTECT_LAST_N_DEFAULT + 1) as usize,
            params,
        }
    }

    pub fn trigger_tokens(&self) -> u32 {
        self.thresholds.trigger_tokens
    }

    pub fn has(&self, bug: Bug) -> bool {
        self.bugs.has(bug)
    }

    pub fn policy(&self) -> AntiThrashPolicy {
        self.options.anti_thrash
    }

    /// Think time before turn `turn`.
    pub fn think_ms(&self, turn: u32) -> u64 {
        let (lo, hi) = self.params.think_ms;
        lo + mix64(self.params.think_seed ^ turn as u64) % (hi.saturating_sub(lo) + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::era::Era;

    pub fn params() -> AgentParams {
        AgentParams {
            overhead_per_mille_of_trigger: 100,
            overhead_real_per_mille: 500,
            in_place: true,
            think_ms: (1_000, 2_000),
            think_seed: 7,
            resume_fill_per_mille: 0,
        }
    }

    #[test]
    fn era_a_adds_its_bugs_rotates_and_era_c_caps_the_trigger() {
        let a = AgentConfig::new(
            LoopOptions::of(Era::A, None),
            &BugSet::none(),
            128_000,
            params(),
        );
        assert!(a.has(Bug::H35054) && a.batch.bugs.has(Bug::H11996) && !a.in_place);
        let c = AgentConfig::new(
            LoopOptions::default(),
            &BugSet::of(&[Bug::H2153]),
            1_000_000,
            params(),
        );
        assert_eq!(c.trigger_tokens(), 256_000);
        assert_eq!(c.overhead_rough_tokens, 25_600);
        assert_eq!(c.overhead_real_tokens, 12_800);
        assert!(c.has(Bug::H2153) && !c.has(Bug::H35054) && c.in_place);
        assert_eq!(c.gate_messages, 24);
        let t: Vec<u64> = (0..50).map(|turn| c.think_ms(turn)).collect();
        assert!(t.iter().all(|ms| (1_000..=2_000).contains(ms)));
        assert_ne!(t[0], t[1]);
    }
}
