//! Swarm knobs drawn (in `engine/draw.rs`) from their own stream (`Stream::Swarm`) after a
//! family's parameters:
//! extremes of a shape that reach rare paths of the agent loop, switched on in some cases
//! only, so the existing streams (and every other case) keep their draws.
//!
//! - Giant pastes (huge-prompts): the largest pasted prompt grows from 1.2 tail budgets
//!   to up to 5.5 (a tail budget is a tenth of the window under the 0.19.0 defaults, so
//!   up to about 55 % of the window): a handful of rows then reaches the compaction
//!   trigger, the situation of the message-count preflight gate (H-27404) and of a
//!   compaction with nothing to compress (H-40803).
//! - Marathon turns (every family): some turns answer one request with many rounds of
//!   large tool outputs, 1.2 to 7 tail budgets in all. A compaction then falls inside a
//!   turn whose own rows outgrow the tail (the last-user anchor, H-10896 / H-58753), and
//!   one turn can carry a session from below the trigger to past it, or past the window,
//!   even when a micro pass after every turn keeps it small (the batch paths under
//!   `both`, the disconnect spiral of H-2153). Drawn after the giant pastes.

use super::params::{Marathon, SizeRange};
use super::recipe::tail_chars;
use super::ShapeParams;

/// Share of huge-prompts cases whose pastes may be giant.
pub const GIANT_PASTE_ON_PER_MILLE: u32 = 900;
/// The largest giant paste, per mille of the tail budget: the drawn range.
pub const GIANT_PASTE_HI_PER_MILLE: SizeRange = SizeRange::new(1_500, 5_500);

/// Share of cases (any family) with marathon turns.
pub const MARATHON_ON_PER_MILLE: u32 = 300;
/// Chance a turn of such a case is a marathon: the drawn range, per mille.
pub const MARATHON_TURN_PER_MILLE: SizeRange = SizeRange::new(30, 200);
/// Tool output of one marathon turn, per mille of the tail budget: the drawn range.
pub const MARATHON_TAIL_PER_MILLE: SizeRange = SizeRange::new(1_200, 7_000);
/// Rounds of a marathon turn at most (below the agent loop's `ROUNDS_PER_TURN_MAX`).
pub const MARATHON_ROUNDS_MAX: u32 = 48;

/// Marathon turns (a case drawn with the knob, see `engine/draw.rs`): a turn is a
/// marathon with chance `per_mille`; each tool output of a marathon turn is half to all
/// of the row cap, and the rounds add up to `tail_per_mille` of the tail budget.
pub fn marathon(shape: &mut ShapeParams, per_mille: u32, tail_per_mille: u32) {
    let tail = tail_chars(shape.context_length) as u64;
    let total = tail * tail_per_mille as u64 / 1000;
    let cap = shape.message_chars_max.max(1);
    let tool_chars = SizeRange::new(cap / 2, cap);
    let rounds = total
        .div_ceil(tool_chars.mean().max(1) as u64)
        .clamp(1, MARATHON_ROUNDS_MAX as u64) as u32;
    shape.features.marathon = Some(Marathon {
        per_mille,
        rounds: SizeRange::new((rounds * 3 / 4).max(1), rounds),
        tool_chars,
    });
}

/// Giant pastes (a huge-prompts case drawn with the knob, see `engine/draw.rs`): the
/// largest paste grows to `hi_per_mille` of the tail budget.
pub fn giant_pastes(shape: &mut ShapeParams, hi_per_mille: u32) {
    let tail = tail_chars(shape.context_length) as u64;
    let hi = (tail * hi_per_mille as u64 / 1000) as u32;
    if let Some(h) = shape.features.huge_prompt.as_mut() {
        h.chars = SizeRange::new(h.chars.lo, hi.max(h.chars.hi));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::Family;
    use compactsim_fakes::rng::{stream, Stream};

    const SEEDS: u64 = 200;

    /// Per-mille share of `n` over every seed of one family.
    fn share(n: u32) -> u32 {
        (n as u64 * 1000 / SEEDS) as u32
    }

    #[test]
    fn swarm_knobs_touch_only_some_cases_and_only_their_own_features() {
        let (mut giant, mut marathons) = (0u32, 0u32);
        for seed in 0..SEEDS {
            for family in Family::ALL {
                let drawn = ShapeParams::draw(family, &mut stream(seed, Stream::Params));
                let mut shape = drawn.clone();
                let mut d = crate::engine::draw::Draw::new(seed);
                crate::engine::draw::swarm(&mut shape, &mut d);
                let tail = tail_chars(shape.context_length) as u64;
                match (
                    family,
                    drawn.features.huge_prompt,
                    shape.features.huge_prompt,
                ) {
                    (Family::HugePrompts, Some(before), Some(after)) if after != before => {
                        giant += 1;
                        assert!(after.chars.hi as u64 * 1000 >= tail * 1_500, "{after:?}");
                        assert_eq!(
                            (after.chars.lo, after.per_mille),
                            (before.chars.lo, before.per_mille)
                        );
                    }
                    (Family::HugePrompts, ..) => {}
                    (
                        Family::Chatty
                        | Family::ToolHeavy
                        | Family::LongToolOutputs
                        | Family::CodeReview
                        | Family::MultiAgentRoom
                        | Family::Cron
                        | Family::TinyWindow,
                        before,
                        after,
                    ) => assert_eq!(before, after, "{family:?}"),
                }
                assert_eq!(drawn.features.marathon, None);
                if let Some(m) = shape.features.marathon {
                    marathons += 1;
                    assert!(
                        m.rounds.lo >= 1 && m.rounds.hi <= MARATHON_ROUNDS_MAX,
                        "{m:?}"
                    );
                    assert!(m.tool_chars.hi <= shape.message_chars_max, "{m:?}");
                    let most = m.rounds.hi as u64 * m.tool_chars.hi as u64 * 1000;
                    let capped = m.rounds.hi == MARATHON_ROUNDS_MAX;
                    assert!(capped || most >= tail * 1_200, "{m:?} tail {tail}");
                }
                shape.features.huge_prompt = drawn.features.huge_prompt;
                shape.features.marathon = drawn.features.marathon;
                assert_eq!(shape, drawn);
            }
        }
        let near = |got: u32, want: u32| got.abs_diff(want) < 120;
        assert!(near(share(giant), GIANT_PASTE_ON_PER_MILLE), "{giant}");
        let families = Family::ALL.len() as u32;
        assert!(
            near(share(marathons) / families, MARATHON_ON_PER_MILLE),
            "{marathons}"
        );
    }
}
