//! The value types a shape's parameters are made of.

use compactsim_fakes::rng::{between, chance, weighted, SimRng};
use compactsim_model::ContentKind;
use serde::Serialize;

/// An inclusive range of sizes (characters) or counts, drawn uniformly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SizeRange {
    pub lo: u32,
    pub hi: u32,
}

impl SizeRange {
    pub const fn new(lo: u32, hi: u32) -> SizeRange {
        SizeRange { lo, hi }
    }

    /// A uniform value in `lo..=hi` (`lo` when the range is empty).
    pub fn draw(self, rng: &mut SimRng) -> u32 {
        between(rng, self.lo, self.hi)
    }

    /// Mean of a uniform draw.
    pub const fn mean(self) -> u32 {
        if self.hi <= self.lo {
            self.lo
        } else {
            self.lo + (self.hi - self.lo) / 2
        }
    }
}

/// Relative weights of prose, code and JSON content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct KindMix {
    pub prose: u32,
    pub code: u32,
    pub json: u32,
}

/// Chance that a swarm draw switches one content kind off.
const KIND_OFF_PER_MILLE: u32 = 250;
/// A kind that stays on gets its base weight times 1..=this.
const KIND_SKEW_MAX: u32 = 4;

impl KindMix {
    pub const fn new(prose: u32, code: u32, json: u32) -> KindMix {
        KindMix { prose, code, json }
    }

    /// Swarm draw from base weights: each kind is switched off with a small chance, the
    /// others get skewed weights; at least the heaviest base kind survives.
    pub fn swarm(self, rng: &mut SimRng) -> KindMix {
        let mut w = [self.prose, self.code, self.json];
        for x in w.iter_mut() {
            *x = if chance(rng, KIND_OFF_PER_MILLE) {
                0
            } else {
                *x * between(rng, 1, KIND_SKEW_MAX)
            };
        }
        if w.iter().all(|&x| x == 0) {
            let base = [self.prose, self.code, self.json];
            let heaviest = (0..3).max_by_key(|&i| (base[i], 3 - i)).unwrap_or(0);
            w[heaviest] = base[heaviest].max(1);
        }
        KindMix::new(w[0], w[1], w[2])
    }

    /// Picks a kind by weight (prose when every weight is zero).
    pub fn pick(self, rng: &mut SimRng) -> ContentKind {
        match weighted(rng, &[self.prose, self.code, self.json]) {
            1 => ContentKind::Code,
            2 => ContentKind::Json,
            _ => ContentKind::Prose,
        }
    }
}

/// Occasional bursts of many short rows in one turn (multi-agent rooms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Burst {
    /// Chance a turn is a burst.
    pub per_mille: u32,
    /// Rounds of one call each in a burst turn.
    pub rounds: SizeRange,
    /// Characters of every row written during a burst.
    pub chars: SizeRange,
}

/// Occasional very large user prompts (pasted logs, files, specs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct HugePrompt {
    /// Chance a user prompt is huge.
    pub per_mille: u32,
    pub chars: SizeRange,
}

/// Occasional marathon turns: one user request answered by many rounds of large tool
/// outputs, so that a single turn outgrows the tail budget (a compaction then falls
/// inside the turn, and the turn alone can carry a session from below the trigger to
/// past the window).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Marathon {
    /// Chance a turn is a marathon.
    pub per_mille: u32,
    /// Rounds of one call each in a marathon turn.
    pub rounds: SizeRange,
    /// Characters of each of its tool outputs.
    pub tool_chars: SizeRange,
}

/// A giant paste as the first prompt of a session (an agent-loop knob, see
/// `engine::opening_paste`): it replaces the size and text of turn 0's user row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OpeningPaste {
    pub chars: u32,
    /// Seed of the pasted text.
    pub seed: u64,
}

/// Swarm-style feature switches: each is off (0 / None / false) in some cases.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Features {
    /// Chance an assistant row with tool calls has no text (content None in Hermes).
    pub silent_calls_per_mille: u32,
    /// Chance the first call of a round gets arguments longer than 500 characters.
    pub long_args_per_mille: u32,
    /// Tool outputs grow by this much per turn, per mille (files read again, larger).
    pub growth_per_mille: u32,
    pub burst: Option<Burst>,
    pub huge_prompt: Option<HugePrompt>,
    pub marathon: Option<Marathon>,
    /// Every user prompt has the same size and text seed (a cron job's prompt).
    pub repeat_prompt: bool,
    /// Every tool turn runs the same rounds of the same tools (a cron job's plan).
    pub fixed_plan: bool,
    /// Turn 0's prompt is a giant paste (agent-loop cases only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opening_paste: Option<OpeningPaste>,
}
