//! The common way a family draws its per-case parameters. A family states ranges (a
//! `Recipe`); the draw picks a window, then sizes every kind of row from the window's
//! tail budget so that the transcript outgrows the budget after about `fill_turns`
//! turns, and no single row exceeds `MESSAGE_CAP_PER_MILLE` of the budget.

use super::params::{Features, KindMix, SizeRange};
use super::{Family, ShapeParams};
use compactsim_fakes::rng::{between, chance, weighted, SimRng};
use compactsim_hermes::compactor::threshold::{derive, ThresholdConfig};
use compactsim_model::message::TOOL_CALL_ENVELOPE_CHARS;
use compactsim_model::tokens::chars_for_rough_tokens;

/// Largest row, per mille of the tail budget (in characters); 250 minus room for the
/// per-row overhead the tail walk adds.
pub const MESSAGE_CAP_PER_MILLE: u32 = 220;
/// Longest tool name in any family (room reserved per call envelope).
pub const TOOL_NAME_CHARS_MAX: u32 = 20;
/// Characters a call costs on top of its arguments.
pub const CALL_RESERVE_CHARS: u32 = TOOL_CALL_ENVELOPE_CHARS + TOOL_NAME_CHARS_MAX;
/// Ordinary tool-call arguments, characters.
pub const ARGS_CHARS_MIN: u32 = 20;
pub const ARGS_CHARS_MAX: u32 = 400;
/// Upper end of an ordinary argument range is at least this (when the cap allows).
pub const ARGS_CHARS_HI_MIN: u32 = 60;
/// Long arguments (which batch compaction truncates above 500 characters).
pub const LONG_ARGS_CHARS: SizeRange = SizeRange::new(501, 1_500);
/// Long arguments are offered only when the cap leaves at least this much room.
pub const LONG_ARGS_ROOM_MIN: u32 = 600;
/// Floors of each row kind, characters (a user row must fit one spelled-out fact).
pub const USER_CHARS_MIN: u32 = 24;
pub const CALL_TEXT_CHARS_MIN: u32 = 8;
pub const TOOL_CHARS_MIN: u32 = 16;
pub const REPLY_CHARS_MIN: u32 = 16;
/// System prompt size, characters (before the cap).
pub const SYSTEM_CHARS: SizeRange = SizeRange::new(400, 24_000);
/// Low end of a size range as a share of its mean, per mille (skews the spread).
pub const SPREAD_LO_PER_MILLE: SizeRange = SizeRange::new(200, 800);
/// Largest mean of a size range, per mille of the cap.
pub const MEAN_CAP_PER_MILLE: u32 = 750;
/// Each share of a turn is jittered by this factor, per mille.
pub const SHARE_JITTER_PER_MILLE: SizeRange = SizeRange::new(500, 1_500);

/// A swarm switch: on in `on_per_mille` of the cases, then a rate from `rate`.
#[derive(Clone, Copy, Debug)]
pub struct Switch {
    pub on_per_mille: u32,
    pub rate: SizeRange,
}

impl Switch {
    pub const OFF: Switch = Switch {
        on_per_mille: 0,
        rate: SizeRange::new(0, 0),
    };

    pub fn draw(self, rng: &mut SimRng) -> u32 {
        if chance(rng, self.on_per_mille) {
            self.rate.draw(rng)
        } else {
            0
        }
    }
}

/// The ranges a family draws its parameters from.
#[derive(Clone, Copy, Debug)]
pub struct Recipe {
    pub family: Family,
    /// Windows in tokens with their weights.
    pub windows: &'static [(u32, u32)],
    pub system_per_mille: u32,
    /// Turns after which the transcript should outgrow the tail budget.
    pub fill_turns: SizeRange,
    /// Shares of a turn's characters, per mille: user, call text, tool output, reply.
    pub shares: [u32; 4],
    pub tool_turn_per_mille: SizeRange,
    pub rounds_max: SizeRange,
    pub parallel_per_mille: u32,
    /// Calls per round when parallel calls are on.
    pub calls_max: SizeRange,
    pub text_kinds: KindMix,
    pub tool_kinds: KindMix,
    pub facts_max: SizeRange,
    pub tools: &'static [&'static str],
    pub silent_calls: Switch,
    pub long_args: Switch,
    /// Absolute cap on a row's characters (short-message families).
    pub message_chars_max: u32,
}

/// Mean characters of each row kind for one case.
struct Means {
    user: u32,
    call_text: u32,
    tool: u32,
    reply: u32,
}

impl Recipe {
    /// Draws a window from the recipe's list, then the rest.
    pub fn draw(&self, rng: &mut SimRng) -> ShapeParams {
        let weights: Vec<u32> = self.windows.iter().map(|&(_, w)| w).collect();
        let context_length = self.windows[weighted(rng, &weights)].0;
        self.draw_for_window(context_length, rng)
    }

    /// Draws every parameter but the window.
    pub fn draw_for_window(&self, context_length: u32, rng: &mut SimRng) -> ShapeParams {
        let tail_chars = tail_chars(context_length);
        let cap = message_cap_chars(context_length).min(self.message_chars_max);
        let system_prompt = chance(rng, self.system_per_mille);
        let system_chars = between(rng, SYSTEM_CHARS.lo, SYSTEM_CHARS.hi.min(cap));
        let fill_turns = self.fill_turns.draw(rng).max(1);
        let tool_turn_per_mille = self.tool_turn_per_mille.draw(rng);
        let rounds_max = self.rounds_max.draw(rng).max(1);
        let parallel_calls = chance(rng, self.parallel_per_mille);
        let calls_max = if parallel_calls {
            self.calls_max.draw(rng).max(1)
        } else {
            1
        };
        let shares = self
            .shares
            .map(|s| s * SHARE_JITTER_PER_MILLE.draw(rng) / 1000);
        let turn_chars = tail_chars / fill_turns;
        let means = Means::split(
            turn_chars,
            shares,
            tool_turn_per_mille,
            rounds_max,
            calls_max,
        );
        let per_call = (cap / 2) / calls_max;
        let args_hi = per_call
            .saturating_sub(CALL_RESERVE_CHARS)
            .clamp(ARGS_CHARS_MIN, ARGS_CHARS_MAX);
        let args_chars = SizeRange::new(
            ARGS_CHARS_MIN,
            between(rng, ARGS_CHARS_HI_MIN.min(args_hi), args_hi),
        );
        let long_hi = (cap / 2)
            .saturating_sub(CALL_RESERVE_CHARS)
            .min(LONG_ARGS_CHARS.hi);
        let long_args_per_mille = self.long_args.draw(rng);
        ShapeParams {
            family: self.family,
            context_length,
            system_prompt,
            system_chars,
            fill_turns,
            tools: self.tools.to_vec(),
            user_chars: around(rng, means.user, USER_CHARS_MIN, cap),
            call_text_chars: around(rng, means.call_text, CALL_TEXT_CHARS_MIN, cap / 2),
            tool_chars: around(rng, means.tool, TOOL_CHARS_MIN, cap),
            reply_chars: around(rng, means.reply, REPLY_CHARS_MIN, cap),
            args_chars,
            long_args_chars: SizeRange::new(LONG_ARGS_CHARS.lo, long_hi.max(LONG_ARGS_CHARS.lo)),
            message_chars_max: cap,
            tool_turn_per_mille,
            rounds_max,
            parallel_calls,
            calls_max,
            text_kinds: self.text_kinds.swarm(rng),
            tool_kinds: self.tool_kinds.swarm(rng),
            facts_max: self.facts_max.draw(rng).max(1),
            features: Features {
                silent_calls_per_mille: self.silent_calls.draw(rng),
                long_args_per_mille: if long_hi >= LONG_ARGS_ROOM_MIN {
                    long_args_per_mille
                } else {
                    0
                },
                ..Features::default()
            },
        }
    }
}

impl Means {
    /// Splits `turn_chars` so that the expected characters of one turn match it, with
    /// user : reply : all call text : all tool output = the shares, the tool parts
    /// weighted by how often a turn uses tools.
    fn split(
        turn_chars: u32,
        shares: [u32; 4],
        tool_turn_per_mille: u32,
        rounds_max: u32,
        calls_max: u32,
    ) -> Means {
        let [user, call_text, tool, reply] = shares.map(u64::from);
        let p = tool_turn_per_mille as u64;
        let scale = ((user + reply) * 1000 + p * (call_text + tool)).max(1);
        let turn = turn_chars as u64 * 1000;
        // Expected rounds (1 + R) / 2 and calls per round (1 + C) / 2.
        let rounds_x2 = 1 + rounds_max as u64;
        let calls_x2 = 1 + calls_max as u64;
        let mean = |x: u64| (x / scale).min(u32::MAX as u64) as u32;
        Means {
            user: mean(turn * user),
            reply: mean(turn * reply),
            call_text: mean(turn * call_text * 2 / rounds_x2),
            tool: mean(turn * tool * 4 / (rounds_x2 * calls_x2)),
        }
    }
}

/// The tail budget of a window in characters (rough tokens × 4).
pub fn tail_chars(context_length: u32) -> u32 {
    let t = derive(context_length, ThresholdConfig::V0_19_0);
    chars_for_rough_tokens(t.tail_budget_tokens)
}

/// The largest row a window's shapes write, characters.
pub fn message_cap_chars(context_length: u32) -> u32 {
    (tail_chars(context_length) as u64 * MESSAGE_CAP_PER_MILLE as u64 / 1000) as u32
}

/// A range whose mean is about `mean` (at most `MEAN_CAP_PER_MILLE` of `cap`, so sizes
/// vary even when the budget asks for more), spread by a drawn factor, within
/// `floor..=cap`.
fn around(rng: &mut SimRng, mean: u32, floor: u32, cap: u32) -> SizeRange {
    let mean = mean.min((cap as u64 * MEAN_CAP_PER_MILLE as u64 / 1000) as u32);
    let lo = (mean as u64 * SPREAD_LO_PER_MILLE.draw(rng) as u64 / 1000) as u32;
    let hi = (2 * mean as u64).saturating_sub(lo as u64).min(cap as u64) as u32;
    let lo = lo.max(floor).min(cap);
    SizeRange::new(lo, hi.max(lo))
}
