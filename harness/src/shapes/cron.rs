//! cron: gateway cron traffic (seed 000): every run sends the same prompt and, usually,
//! runs the same plan of tool calls; only the tool outputs and replies differ.

use super::params::{KindMix, SizeRange};
use super::recipe::{Recipe, Switch};
use super::{Family, ShapeParams};
use compactsim_fakes::rng::{chance, SimRng};

pub const RECIPE: Recipe = Recipe {
    family: Family::Cron,
    windows: &[(64_000, 2), (128_000, 3), (200_000, 2)],
    system_per_mille: 700,
    fill_turns: SizeRange::new(8, 40),
    shares: [150, 60, 550, 240],
    tool_turn_per_mille: SizeRange::new(1000, 1000),
    rounds_max: SizeRange::new(1, 4),
    parallel_per_mille: 400,
    calls_max: SizeRange::new(2, 4),
    text_kinds: KindMix::new(8, 1, 2),
    tool_kinds: KindMix::new(2, 1, 7),
    facts_max: SizeRange::new(1, 4),
    tools: &["web_search", "web_extract", "terminal", "send_message"],
    silent_calls: Switch {
        on_per_mille: 500,
        rate: SizeRange::new(500, 1000),
    },
    long_args: Switch::OFF,
    message_chars_max: u32::MAX,
};

/// Chance the prompt repeats exactly (size and text seed) on every run.
pub const REPEAT_PROMPT_PER_MILLE: u32 = 800;
/// Chance every run follows the same tool plan.
pub const FIXED_PLAN_PER_MILLE: u32 = 800;

pub fn draw(rng: &mut SimRng) -> ShapeParams {
    let mut params = RECIPE.draw(rng);
    params.features.repeat_prompt = chance(rng, REPEAT_PROMPT_PER_MILLE);
    params.features.fixed_plan = chance(rng, FIXED_PLAN_PER_MILLE);
    params
}
