//! tool-heavy: agentic work — many rounds of tool calls per turn, often parallel, with
//! medium outputs; the occasional argument longer than 500 characters.

use super::params::{KindMix, SizeRange};
use super::recipe::{Recipe, Switch};
use super::{Family, ShapeParams};
use compactsim_fakes::rng::SimRng;

pub const RECIPE: Recipe = Recipe {
    family: Family::ToolHeavy,
    windows: &[
        (128_000, 3),
        (200_000, 4),
        (262_144, 2),
        (400_000, 1),
        (1_000_000, 1),
    ],
    system_per_mille: 400,
    fill_turns: SizeRange::new(5, 30),
    shares: [100, 80, 650, 170],
    tool_turn_per_mille: SizeRange::new(700, 1000),
    rounds_max: SizeRange::new(2, 10),
    parallel_per_mille: 700,
    calls_max: SizeRange::new(2, 6),
    text_kinds: KindMix::new(6, 3, 1),
    tool_kinds: KindMix::new(3, 3, 4),
    facts_max: SizeRange::new(1, 5),
    tools: &[
        "terminal",
        "read_file",
        "search_files",
        "web_search",
        "browser_navigate",
        "patch",
        "write_file",
    ],
    silent_calls: Switch {
        on_per_mille: 600,
        rate: SizeRange::new(300, 1000),
    },
    long_args: Switch {
        on_per_mille: 400,
        rate: SizeRange::new(20, 150),
    },
    message_chars_max: u32::MAX,
};

pub fn draw(rng: &mut SimRng) -> ShapeParams {
    RECIPE.draw(rng)
}
