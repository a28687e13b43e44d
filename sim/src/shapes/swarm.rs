//! Swarm knobs drawn from their own stream (`Stream::Swarm`) after a family's parameters:
//! extremes of a shape that reach rare paths of the agent loop, switched on in some cases
//! only, so the existing streams (and every other case) keep their draws.
//!
//! - Giant pastes (huge-prompts): the largest pasted prompt grows from 1.2 tail budgets
//!   to up to 5.5 (a tail budget is a tenth of the window under the 0.19.0 defaults, so
//!   up to about 55 % of the window): a handful of rows then reaches the compaction
//!   trigger, the situation of the message-count preflight gate (H-27404) and of a
//!   compaction with nothing to compress (H-40803).

use super::params::SizeRange;
use super::recipe::tail_chars;
use super::{Family, ShapeParams};
use crate::rng::{chance, SimRng};

/// Share of huge-prompts cases whose pastes may be giant.
pub const GIANT_PASTE_ON_PER_MILLE: u32 = 900;
/// The largest giant paste, per mille of the tail budget: the drawn range.
pub const GIANT_PASTE_HI_PER_MILLE: SizeRange = SizeRange::new(1_500, 5_500);

/// Applies the swarm knobs to `shape`, drawing from the Swarm stream only.
pub fn swarm(shape: &mut ShapeParams, rng: &mut SimRng) {
    if shape.family != Family::HugePrompts || !chance(rng, GIANT_PASTE_ON_PER_MILLE) {
        return;
    }
    let tail = tail_chars(shape.context_length) as u64;
    let hi = (tail * GIANT_PASTE_HI_PER_MILLE.draw(rng) as u64 / 1000) as u32;
    if let Some(h) = shape.features.huge_prompt.as_mut() {
        h.chars = SizeRange::new(h.chars.lo, hi.max(h.chars.hi));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Stream};
    use crate::shapes::Family;

    #[test]
    fn giant_pastes_touch_only_some_huge_prompt_cases_and_only_their_paste_size() {
        let mut giant = 0u32;
        for seed in 0..200u64 {
            for family in Family::ALL {
                let drawn = ShapeParams::draw(family, &mut stream(seed, Stream::Params));
                let mut shape = drawn.clone();
                swarm(&mut shape, &mut stream(seed, Stream::Swarm));
                let (Some(before), Some(after)) =
                    (drawn.features.huge_prompt, shape.features.huge_prompt)
                else {
                    assert_eq!(shape, drawn, "{family:?}");
                    continue;
                };
                if after != before {
                    giant += 1;
                    let tail = tail_chars(shape.context_length) as u64;
                    assert!(after.chars.hi as u64 * 1000 >= tail * 1_500, "{after:?}");
                    assert_eq!(
                        (after.chars.lo, after.per_mille),
                        (before.chars.lo, before.per_mille)
                    );
                }
                shape.features.huge_prompt = drawn.features.huge_prompt;
                assert_eq!(shape, drawn);
            }
        }
        let share = giant * 1000 / 200;
        assert!(
            share.abs_diff(GIANT_PASTE_ON_PER_MILLE) < 120,
            "{giant} of 200"
        );
    }
}
