//! huge-prompts: between ordinary turns, users paste very large prompts (logs, files,
//! specs) of 10 % up to 120 % of the tail budget — the one family whose rows may exceed
//! the per-row cap.

use super::params::{HugePrompt, KindMix, SizeRange};
use super::recipe::{tail_chars, Recipe, Switch};
use super::{Family, ShapeParams};
use compactsim_fakes::rng::SimRng;

pub const RECIPE: Recipe = Recipe {
    family: Family::HugePrompts,
    windows: &[
        (64_000, 2),
        (128_000, 3),
        (200_000, 3),
        (262_144, 1),
        (1_000_000, 1),
    ],
    system_per_mille: 300,
    fill_turns: SizeRange::new(15, 45),
    shares: [300, 50, 250, 400],
    tool_turn_per_mille: SizeRange::new(100, 600),
    rounds_max: SizeRange::new(1, 3),
    parallel_per_mille: 300,
    calls_max: SizeRange::new(2, 3),
    text_kinds: KindMix::new(6, 3, 2),
    tool_kinds: KindMix::new(3, 2, 3),
    facts_max: SizeRange::new(1, 4),
    tools: &["read_file", "web_search", "terminal"],
    silent_calls: Switch {
        on_per_mille: 300,
        rate: SizeRange::new(200, 1000),
    },
    long_args: Switch::OFF,
    message_chars_max: u32::MAX,
};

/// Chance a user prompt is huge: the drawn range.
pub const HUGE_PER_MILLE: SizeRange = SizeRange::new(100, 500);
/// Smallest huge prompt, per mille of the tail budget.
pub const HUGE_LO_PER_MILLE: u32 = 100;
/// Largest huge prompt, per mille of the tail budget: the drawn range.
pub const HUGE_HI_PER_MILLE: SizeRange = SizeRange::new(400, 1_200);

pub fn draw(rng: &mut SimRng) -> ShapeParams {
    let mut params = RECIPE.draw(rng);
    let tail = tail_chars(params.context_length) as u64;
    let per_mille = HUGE_PER_MILLE.draw(rng);
    let hi = HUGE_HI_PER_MILLE.draw(rng) as u64;
    params.features.huge_prompt = Some(HugePrompt {
        per_mille,
        chars: SizeRange::new(
            (tail * HUGE_LO_PER_MILLE as u64 / 1000) as u32,
            (tail * hi / 1000) as u32,
        ),
    });
    params
}
