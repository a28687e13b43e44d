//! tiny-window: small models with 8K–32K windows (the trigger is 85 % of the window):
//! short rows, few calls, compaction from the first turns on.

use super::params::{KindMix, SizeRange};
use super::recipe::{Recipe, Switch};
use super::{Family, ShapeParams};
use compactsim_fakes::rng::{chance, SimRng};

pub const RECIPE: Recipe = Recipe {
    family: Family::TinyWindow,
    windows: &[
        (8_192, 2),
        (12_288, 1),
        (16_384, 3),
        (24_576, 1),
        (32_768, 3),
    ],
    system_per_mille: 300,
    fill_turns: SizeRange::new(3, 25),
    shares: [300, 60, 350, 290],
    tool_turn_per_mille: SizeRange::new(200, 800),
    rounds_max: SizeRange::new(1, 4),
    parallel_per_mille: 300,
    calls_max: SizeRange::new(2, 3),
    text_kinds: KindMix::new(8, 3, 1),
    tool_kinds: KindMix::new(3, 2, 3),
    facts_max: SizeRange::new(1, 3),
    tools: &["terminal", "read_file", "web_search"],
    silent_calls: Switch {
        on_per_mille: 300,
        rate: SizeRange::new(200, 1000),
    },
    long_args: Switch::OFF,
    message_chars_max: u32::MAX,
};

/// Chance of an odd window size instead of a listed one.
pub const ODD_WINDOW_PER_MILLE: u32 = 200;
/// Range of an odd window, tokens.
pub const WINDOW_TOKENS: SizeRange = SizeRange::new(8_000, 32_768);

pub fn draw(rng: &mut SimRng) -> ShapeParams {
    if chance(rng, ODD_WINDOW_PER_MILLE) {
        let window = WINDOW_TOKENS.draw(rng);
        RECIPE.draw_for_window(window, rng)
    } else {
        RECIPE.draw(rng)
    }
}
