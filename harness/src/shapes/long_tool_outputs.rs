//! long-tool-outputs: few tool calls, each returning a large output (logs, web pages,
//! whole files) close to the per-row cap.

use super::params::{KindMix, SizeRange};
use super::recipe::{Recipe, Switch};
use super::{Family, ShapeParams};
use compactsim_fakes::rng::SimRng;

pub const RECIPE: Recipe = Recipe {
    family: Family::LongToolOutputs,
    windows: &[
        (64_000, 1),
        (128_000, 3),
        (200_000, 3),
        (262_144, 2),
        (1_000_000, 1),
    ],
    system_per_mille: 300,
    fill_turns: SizeRange::new(3, 20),
    shares: [80, 40, 800, 80],
    tool_turn_per_mille: SizeRange::new(600, 1000),
    rounds_max: SizeRange::new(1, 4),
    parallel_per_mille: 300,
    calls_max: SizeRange::new(2, 3),
    text_kinds: KindMix::new(6, 3, 1),
    tool_kinds: KindMix::new(3, 2, 3),
    facts_max: SizeRange::new(1, 6),
    tools: &["terminal", "browser_navigate", "web_extract", "read_file"],
    silent_calls: Switch {
        on_per_mille: 500,
        rate: SizeRange::new(300, 1000),
    },
    long_args: Switch {
        on_per_mille: 200,
        rate: SizeRange::new(10, 80),
    },
    message_chars_max: u32::MAX,
};

pub fn draw(rng: &mut SimRng) -> ShapeParams {
    RECIPE.draw(rng)
}
