//! Per-case parameters of the agent loop (strategies `batch` and `both`), drawn (in
//! `draw.rs`) from the Provider stream only, so micro cases and the shapes of existing seeds are untouched:
//! the fake provider's behaviour, the request overhead and how the provider counts it,
//! rotation vs in-place compaction, the user's think time and a resumed session's fill.

use compactsim_fakes::provider::ProviderConfig;
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

/// What an agent-loop case draws on top of `CaseSetup` (in [`super::draw`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AgentSetup {
    pub provider: ProviderConfig,
    pub params: AgentParams,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::draw::{agent, Draw};

    #[test]
    fn draws_are_reproducible_and_cover_the_switches() {
        let draw = |seed| agent(&mut Draw::new(seed));
        let setups: Vec<AgentSetup> = (0..300).map(draw).collect();
        assert_eq!(draw(5), setups[5]);
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
