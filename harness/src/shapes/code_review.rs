//! code-review: a long review session (the 3.5-hour session of seed 004): mostly code,
//! file reads whose outputs grow as the review goes on, patches with long arguments.

use super::params::{KindMix, SizeRange};
use super::recipe::{Recipe, Switch};
use super::{Family, ShapeParams};
use compactsim_fakes::rng::SimRng;

pub const RECIPE: Recipe = Recipe {
    family: Family::CodeReview,
    windows: &[
        (128_000, 2),
        (200_000, 3),
        (262_144, 2),
        (400_000, 2),
        (1_000_000, 1),
    ],
    system_per_mille: 500,
    fill_turns: SizeRange::new(12, 45),
    shares: [120, 80, 600, 200],
    tool_turn_per_mille: SizeRange::new(600, 1000),
    rounds_max: SizeRange::new(2, 8),
    parallel_per_mille: 500,
    calls_max: SizeRange::new(2, 5),
    text_kinds: KindMix::new(6, 4, 0),
    tool_kinds: KindMix::new(1, 8, 1),
    facts_max: SizeRange::new(1, 5),
    tools: &["read_file", "search_files", "terminal", "patch"],
    silent_calls: Switch {
        on_per_mille: 500,
        rate: SizeRange::new(300, 1000),
    },
    long_args: Switch {
        on_per_mille: 600,
        rate: SizeRange::new(30, 200),
    },
    message_chars_max: u32::MAX,
};

/// Tool outputs grow, per turn, by this much per mille (when the feature is on).
pub const GROWTH: Switch = Switch {
    on_per_mille: 850,
    rate: SizeRange::new(20, 150),
};

pub fn draw(rng: &mut SimRng) -> ShapeParams {
    let mut params = RECIPE.draw(rng);
    params.features.growth_per_mille = GROWTH.draw(rng);
    params
}

/// As [`draw`], for a window the caller fixes (a study pins the session's window).
pub fn draw_for_window(context_length: u32, rng: &mut SimRng) -> ShapeParams {
    let mut params = RECIPE.draw_for_window(context_length, rng);
    params.features.growth_per_mille = GROWTH.draw(rng);
    params
}
