//! Per-case parameters of the agent loop (strategies `batch` and `both`), drawn from the
//! Provider stream only, so micro cases and the shapes of existing seeds are untouched:
//! the fake provider's behaviour, the request overhead and how the provider counts it,
//! rotation vs in-place compaction, the user's think time and a resumed session's fill.

use super::fault_mix::FaultMix;
use super::CaseSpec;
use compactsim_fakes::provider::ProviderConfig;
use compactsim_fakes::rng::{self, between, chance, next_seed, weighted, SimRng, Stream};
use compactsim_hermes::agent::AgentParams;
use serde::Serialize;

/// Chance of a case with heavy tool schemas (50+ tools, #14695), per mille.
pub const HEAVY_SCHEMAS_PER_MILLE: u32 = 120;
/// Request overhead of an ordinary case, per mille of the trigger: the drawn range.
pub const OVERHEAD_PER_MILLE: (u32, u32) = (10, 250);
/// Request overhead with heavy schemas, per mille of the trigger: the drawn range.
pub const HEAVY_OVERHEAD_PER_MILLE: (u32, u32) = (350, 800);
/// Real tokens per rough overhead token, per mille, of an ordinary case…
pub const OVERHEAD_REAL_PER_MILLE: (u32, u32) = (700, 1_300);
/// …and of heavy schemas, which providers count well below chars/4 (MiniMax: rough
/// ~113K vs real ~58K, #35054).
pub const HEAVY_OVERHEAD_REAL_PER_MILLE: (u32, u32) = (400, 700);
/// Chance that an agent is built with the default config (`in_place: true`), per mille.
pub const IN_PLACE_PER_MILLE: u32 = 800;
/// Typical think times between turns (ms) and their weights: a busy room, a chat, a
/// work session, occasional use, cron.
pub const THINK_SCALES_MS: [(u64, u32); 5] = [
    (1_000, 2),
    (10_000, 4),
    (60_000, 4),
    (600_000, 2),
    (3_600_000, 1),
];
/// Chance that a case resumes a session with history, per mille.
pub const RESUME_PER_MILLE: u32 = 700;
/// Fill of a resumed session, per mille of the trigger: the drawn range.
pub const RESUME_FILL_PER_MILLE: (u32, u32) = (300, 950);

/// What an agent-loop case draws on top of `CaseSetup`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AgentSetup {
    pub provider: ProviderConfig,
    pub params: AgentParams,
}

impl AgentSetup {
    /// The setup of the case whose seed is `case_seed`, and the Provider stream
    /// positioned after it (the provider's per-call draws continue from there).
    pub fn draw(case_seed: u64) -> (AgentSetup, SimRng) {
        let mut rng = rng::stream(case_seed, Stream::Provider);
        let mut provider = ProviderConfig::draw(&mut rng);
        FaultMix::of_case(case_seed).apply_provider(&mut provider);
        let heavy = chance(&mut rng, HEAVY_SCHEMAS_PER_MILLE);
        let (overhead, real) = if heavy {
            (HEAVY_OVERHEAD_PER_MILLE, HEAVY_OVERHEAD_REAL_PER_MILLE)
        } else {
            (OVERHEAD_PER_MILLE, OVERHEAD_REAL_PER_MILLE)
        };
        let overhead_per_mille_of_trigger = between(&mut rng, overhead.0, overhead.1);
        let overhead_real_per_mille = between(&mut rng, real.0, real.1);
        let in_place = chance(&mut rng, IN_PLACE_PER_MILLE);
        let weights: Vec<u32> = THINK_SCALES_MS.iter().map(|&(_, w)| w).collect();
        let scale = THINK_SCALES_MS[weighted(&mut rng, &weights)].0;
        let think_seed = next_seed(&mut rng);
        let resume_fill_per_mille = if chance(&mut rng, RESUME_PER_MILLE) {
            between(&mut rng, RESUME_FILL_PER_MILLE.0, RESUME_FILL_PER_MILLE.1)
        } else {
            0
        };
        let params = AgentParams {
            overhead_per_mille_of_trigger,
            overhead_real_per_mille,
            in_place,
            think_ms: (scale / 2, scale * 2),
            think_seed,
            resume_fill_per_mille,
        };
        (AgentSetup { provider, params }, rng)
    }

    /// The setup of `spec`: drawn as [`AgentSetup::draw`] does, then the plan's agent
    /// and provider overrides applied (the stream is positioned as without them), then
    /// the run's `--session-mode`.
    pub fn draw_for(spec: &CaseSpec) -> (AgentSetup, SimRng) {
        let (mut setup, rng) = Self::draw(spec.case_seed());
        if let Some(plan) = spec.plan.as_deref() {
            setup.provider = plan.provider.apply(setup.provider);
            setup.params = plan.agent.apply(setup.params);
        }
        if let Some(mode) = spec.strategy.loop_options().and_then(|o| o.session_mode) {
            setup.params.in_place = mode.in_place();
        }
        (setup, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_reproducible_and_cover_the_switches() {
        let setups: Vec<AgentSetup> = (0..300).map(|s| AgentSetup::draw(s).0).collect();
        assert_eq!(AgentSetup::draw(5).0, setups[5]);
        let any = |f: &dyn Fn(&AgentSetup) -> bool| setups.iter().any(f);
        assert!(any(
            &|s| s.params.overhead_per_mille_of_trigger >= HEAVY_OVERHEAD_PER_MILLE.0
        ));
        assert!(any(&|s| s.params.overhead_real_per_mille < 700));
        assert!(any(&|s| !s.params.in_place) && any(&|s| s.params.in_place));
        assert!(any(&|s| s.params.resume_fill_per_mille == 0));
        assert!(any(&|s| s.params.resume_fill_per_mille > 0));
        assert!(setups
            .iter()
            .all(|s| s.params.think_ms.0 < s.params.think_ms.1));
    }
}
