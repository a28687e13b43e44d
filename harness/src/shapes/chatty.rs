//! chatty: mostly talk — prose questions and replies, tool calls in a minority of turns.

use super::params::{KindMix, SizeRange};
use super::recipe::{Recipe, Switch};
use super::{Family, ShapeParams};
use compactsim_fakes::rng::SimRng;

pub const RECIPE: Recipe = Recipe {
    family: Family::Chatty,
    windows: &[(64_000, 2), (128_000, 4), (200_000, 3), (262_144, 1)],
    system_per_mille: 300,
    fill_turns: SizeRange::new(12, 45),
    shares: [350, 40, 160, 450],
    tool_turn_per_mille: SizeRange::new(0, 300),
    rounds_max: SizeRange::new(1, 2),
    parallel_per_mille: 150,
    calls_max: SizeRange::new(2, 3),
    text_kinds: KindMix::new(10, 2, 1),
    tool_kinds: KindMix::new(4, 1, 4),
    facts_max: SizeRange::new(1, 4),
    tools: &["web_search", "memory", "session_search"],
    silent_calls: Switch {
        on_per_mille: 300,
        rate: SizeRange::new(200, 1000),
    },
    long_args: Switch::OFF,
    message_chars_max: u32::MAX,
};

pub fn draw(rng: &mut SimRng) -> ShapeParams {
    RECIPE.draw(rng)
}
