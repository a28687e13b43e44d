//! Per-case summarizer configuration: sizes, retention, fault rates (swarm) and speed.

use crate::rng::{between, chance, SimRng};
use serde::Serialize;

/// Output tokens per input token, per mille: the drawn range.
pub const RATIO_PER_MILLE_RANGE: (u32, u32) = (100, 400);
/// Floor of a summary in tokens: the drawn range (around 64).
pub const MIN_TOKENS_RANGE: (u32, u32) = (48, 96);
/// Ceiling of a summary in tokens: the drawn range.
pub const MAX_TOKENS_RANGE: (u32, u32) = (1_500, 4_000);
/// Defrag output as a share of the summary, per mille: the drawn range.
pub const CONDENSE_PER_MILLE_RANGE: (u32, u32) = (300, 600);
/// Chance that a case keeps every input fact.
pub const FULL_RETENTION_PER_MILLE: u32 = 800;
/// Retention of a lossy case, per mille: the drawn range.
pub const LOSSY_RETENTION_PER_MILLE_RANGE: (u32, u32) = (500, 990);
/// Chance that a fault is switched on in a case (swarm).
pub const FAULT_ON_PER_MILLE: u32 = 500;
/// Rate of a switched-on fault, per mille of calls: the drawn range.
pub const FAULT_RATE_PER_MILLE_RANGE: (u32, u32) = (1, 80);
/// Chance, per mille, that a call asking for `max_tokens` whose answer must shrink to
/// fit runs over the cap instead (`finish_reason = length`): the drawn range, 0.2–1 % (a
/// model asked for N tokens answers within them nearly always; a judgement, not a
/// measurement of one model). At 1–3 % a batch adapter capped at 1,024 tokens lost 6.4 %
/// of its passes (each overrun aborts a pass and starts the failure cooldown), more than a
/// real cap costs. Drawn per case from its own stream (`Stream::SummarizerOverrun`, knob
/// `summarizer.overrun_per_mille`).
pub const OVERRUN_PER_MILLE_RANGE: (u32, u32) = (2, 10);
/// Generation speed in tokens per second: the drawn range (a 4-bit 7B model on a
/// shared box up to a hosted API).
pub const TOKENS_PER_S_RANGE: (u32, u32) = (15, 150);
/// Fixed per-call overhead in virtual milliseconds: the drawn range.
pub const BASE_LATENCY_MS_RANGE: (u32, u32) = (200, 2_000);

/// Per-case summarizer configuration, drawn from the Params stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SummarizerConfig {
    /// Output tokens per input token, per mille (e.g. 200 = 0.20).
    pub ratio_per_mille: u32,
    pub min_tokens: u32,
    pub max_tokens: u32,
    /// Defrag output size as a share of the summary, per mille.
    pub condense_per_mille: u32,
    /// Share of input facts a summary retains, per mille.
    pub retention_per_mille: u32,
    /// Fault rates per call, per mille; 0 switches the fault off (swarm).
    pub error_per_mille: u32,
    pub empty_per_mille: u32,
    pub length_per_mille: u32,
    pub expansion_per_mille: u32,
    /// Generation speed for the latency model.
    pub tokens_per_s: u32,
    /// Fixed overhead of every call (connection, queueing), virtual milliseconds.
    pub base_latency_ms: u32,
}

impl SummarizerConfig {
    /// Draws a per-case configuration (swarm: each fault on or off).
    pub fn draw(rng: &mut SimRng) -> SummarizerConfig {
        let ratio_per_mille = between(rng, RATIO_PER_MILLE_RANGE.0, RATIO_PER_MILLE_RANGE.1);
        let min_tokens = between(rng, MIN_TOKENS_RANGE.0, MIN_TOKENS_RANGE.1);
        let max_tokens = between(rng, MAX_TOKENS_RANGE.0, MAX_TOKENS_RANGE.1);
        let condense_per_mille =
            between(rng, CONDENSE_PER_MILLE_RANGE.0, CONDENSE_PER_MILLE_RANGE.1);
        let retention_per_mille = if chance(rng, FULL_RETENTION_PER_MILLE) {
            1000
        } else {
            between(
                rng,
                LOSSY_RETENTION_PER_MILLE_RANGE.0,
                LOSSY_RETENTION_PER_MILLE_RANGE.1,
            )
        };
        SummarizerConfig {
            ratio_per_mille,
            min_tokens,
            max_tokens,
            condense_per_mille,
            retention_per_mille,
            error_per_mille: draw_fault_rate(rng),
            empty_per_mille: draw_fault_rate(rng),
            length_per_mille: draw_fault_rate(rng),
            expansion_per_mille: draw_fault_rate(rng),
            tokens_per_s: between(rng, TOKENS_PER_S_RANGE.0, TOKENS_PER_S_RANGE.1),
            base_latency_ms: between(rng, BASE_LATENCY_MS_RANGE.0, BASE_LATENCY_MS_RANGE.1),
        }
    }

    /// No faults, default sizes: for scripted scenarios and unit tests.
    pub fn reliable() -> SummarizerConfig {
        SummarizerConfig {
            ratio_per_mille: 200,
            min_tokens: 64,
            max_tokens: 4_000,
            condense_per_mille: 500,
            retention_per_mille: 1000,
            error_per_mille: 0,
            empty_per_mille: 0,
            length_per_mille: 0,
            expansion_per_mille: 0,
            tokens_per_s: 50,
            base_latency_ms: 500,
        }
    }

    /// True when no fault can happen.
    pub fn fault_free(&self) -> bool {
        self.error_per_mille == 0
            && self.empty_per_mille == 0
            && self.length_per_mille == 0
            && self.expansion_per_mille == 0
    }
}

/// A fault rate: 0 (switched off) or a small rate.
fn draw_fault_rate(rng: &mut SimRng) -> u32 {
    if chance(rng, FAULT_ON_PER_MILLE) {
        between(
            rng,
            FAULT_RATE_PER_MILLE_RANGE.0,
            FAULT_RATE_PER_MILLE_RANGE.1,
        )
    } else {
        0
    }
}
