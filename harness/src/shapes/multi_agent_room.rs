//! multi-agent-room: a busy room of agents (seed 003: 50+ messages a minute): short
//! rows, and bursts of many short call/result rounds inside one turn.

use super::params::{Burst, KindMix, SizeRange};
use super::recipe::{Recipe, Switch};
use super::{Family, ShapeParams};
use compactsim_fakes::rng::{chance, SimRng};

/// Largest row of a room, characters.
pub const ROOM_MESSAGE_CHARS_MAX: u32 = 600;

pub const RECIPE: Recipe = Recipe {
    family: Family::MultiAgentRoom,
    windows: &[(32_768, 2), (64_000, 3), (128_000, 2)],
    system_per_mille: 500,
    fill_turns: SizeRange::new(15, 45),
    shares: [350, 100, 250, 300],
    tool_turn_per_mille: SizeRange::new(400, 1000),
    rounds_max: SizeRange::new(1, 5),
    parallel_per_mille: 400,
    calls_max: SizeRange::new(2, 4),
    text_kinds: KindMix::new(10, 1, 1),
    tool_kinds: KindMix::new(4, 0, 6),
    facts_max: SizeRange::new(1, 3),
    tools: &["send_message", "read_channel", "memory", "web_search"],
    silent_calls: Switch {
        on_per_mille: 400,
        rate: SizeRange::new(200, 1000),
    },
    long_args: Switch::OFF,
    message_chars_max: ROOM_MESSAGE_CHARS_MAX,
};

/// Chance a case has bursts at all (swarm).
pub const BURSTS_ON_PER_MILLE: u32 = 900;
/// Chance a turn is a burst: the drawn range.
pub const BURST_PER_MILLE: SizeRange = SizeRange::new(100, 400);
/// Rounds of a burst: the drawn ranges of its low and high end.
pub const BURST_ROUNDS_LO: SizeRange = SizeRange::new(3, 6);
pub const BURST_ROUNDS_HI: SizeRange = SizeRange::new(8, 30);
/// Row size during a burst: fixed low end, drawn high end.
pub const BURST_CHARS_LO: u32 = 16;
pub const BURST_CHARS_HI: SizeRange = SizeRange::new(120, 300);

pub fn draw(rng: &mut SimRng) -> ShapeParams {
    let mut params = RECIPE.draw(rng);
    if chance(rng, BURSTS_ON_PER_MILLE) {
        params.features.burst = Some(Burst {
            per_mille: BURST_PER_MILLE.draw(rng),
            rounds: SizeRange::new(BURST_ROUNDS_LO.draw(rng), BURST_ROUNDS_HI.draw(rng)),
            chars: SizeRange::new(BURST_CHARS_LO, BURST_CHARS_HI.draw(rng)),
        });
    }
    params
}
