//! The anti-thrash guard (hermes-domain §2.5) as a switchable policy: whether automatic
//! compaction is blocked, fed by every pass and every real usage reading.
//!
//! - V1: two consecutive passes each saving < 10 % latch the guard; a pass ≥ 10 %
//!   resets the streak; only a session reset clears the latch.
//! - V2: after a completed compaction the next real reading is the verdict (≥ trigger:
//!   strike + 1, else strikes reset); any reading below the trigger resets. Blocked at
//!   ≥ 2 strikes or a fallback-summary streak ≥ 2.
//! - V2.2: V2, and a session blocked for [`RECOVERY_WINDOW_MS`] gets one probe
//!   compaction; the window re-arms at the probe.
//! - V1.1 (#40803), every policy: a no-op exit is a strike (V1: a pass with no savings).
//!
//! Bug switches: H-40803 (no-op exits add nothing), H-14694 (once blocked, blocked for
//! the session's life: no probe, readings do not unblock).

use super::era::AntiThrashPolicy;
use crate::bug_set::BugSet;
use crate::bugs::Bug;
use compactsim_model::BatchPassOutcome;
use serde::Serialize;

/// `_ANTI_THRASH_RECOVERY_SECONDS`: a blocked session gets a probe after this long.
pub const RECOVERY_WINDOW_MS: u64 = 300_000;
/// Strikes (V2) or low-savings passes in a row (V1) that block.
pub const STRIKES_TO_BLOCK: u32 = 2;
/// Fallback summaries in a row that block (V2).
pub const FALLBACK_STREAK_TO_BLOCK: u32 = 2;
/// V1: a pass saving less than this share of the rough tokens (per mille) is ineffective.
pub const V1_SAVINGS_MIN_PER_MILLE: u64 = 100;

/// One pass as the guard sees it: the compactor's outcome and the rough tokens of the
/// list before and after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassSeen {
    pub outcome: BatchPassOutcome,
    pub tokens_before: u64,
    pub tokens_after: u64,
}

/// What the guard says about automatic compaction now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    Open,
    Blocked,
    /// Blocked, but the recovery window elapsed: one probe may run.
    Probe,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AntiThrash {
    policy: AntiThrashPolicy,
    /// Strikes (V2) or consecutive low-savings passes (V1).
    strikes: u32,
    /// V1's latch, or any policy's under H-14694.
    latched: bool,
    /// A compaction completed since the last real reading (V2's pending verdict).
    verdict_pending: bool,
    /// When the current block began (or the last probe ran).
    blocked_since_ms: Option<u64>,
    /// The switches H-40803 (a no-op pass is no strike) and H-14694 (a block latches for
    /// good), asked only where they decide.
    #[serde(skip)]
    bugs: BugSet,
}

impl AntiThrash {
    pub fn new(policy: AntiThrashPolicy, bugs: &BugSet) -> Self {
        AntiThrash {
            policy,
            strikes: 0,
            latched: false,
            verdict_pending: false,
            blocked_since_ms: None,
            bugs: bugs.clone(),
        }
    }

    pub fn strikes(&self) -> u32 {
        self.strikes
    }

    fn blocked_now(&self, fallback_streak: u32) -> bool {
        self.latched
            || match self.policy {
                AntiThrashPolicy::V1 => false,
                AntiThrashPolicy::V2 | AntiThrashPolicy::V2_2 => {
                    self.strikes >= STRIKES_TO_BLOCK || fallback_streak >= FALLBACK_STREAK_TO_BLOCK
                }
            }
    }

    /// Re-reads the block after a change; true when a block just began.
    fn refresh(&mut self, fallback_streak: u32, now_ms: u64) -> bool {
        let blocked = self.blocked_now(fallback_streak);
        if blocked && self.bugs.has(Bug::H14694) {
            self.latched = true;
        }
        match (blocked, self.blocked_since_ms) {
            (true, None) => {
                self.blocked_since_ms = Some(now_ms);
                true
            }
            (false, _) => {
                self.blocked_since_ms = None;
                false
            }
            (true, Some(_)) => false,
        }
    }

    /// The gate at `now_ms`, given the compactor's fallback-summary streak.
    pub fn gate(&self, fallback_streak: u32, now_ms: u64) -> Gate {
        if !self.blocked_now(fallback_streak) {
            return Gate::Open;
        }
        let recovers = self.policy == AntiThrashPolicy::V2_2 && !self.bugs.has(Bug::H14694);
        match self.blocked_since_ms {
            Some(since) if recovers && now_ms >= since + RECOVERY_WINDOW_MS => Gate::Probe,
            _ => Gate::Blocked,
        }
    }

    /// A probe is taken: the recovery window re-arms from now.
    pub fn take_probe(&mut self, now_ms: u64) {
        self.blocked_since_ms = Some(now_ms);
    }

    /// Feeds one pass (any trigger). True when a block just began.
    pub fn on_pass(&mut self, out: PassSeen, fallback_streak: u32, now_ms: u64) -> bool {
        match out.outcome {
            BatchPassOutcome::NoOp if !self.bugs.has(Bug::H40803) => self.strikes += 1,
            BatchPassOutcome::NoOp | BatchPassOutcome::Aborted => {}
            BatchPassOutcome::Compacted => match self.policy {
                AntiThrashPolicy::V1 => {
                    let saved = out.tokens_before.saturating_sub(out.tokens_after);
                    let low = saved * 1000 < out.tokens_before * V1_SAVINGS_MIN_PER_MILLE;
                    self.strikes = if low { self.strikes + 1 } else { 0 };
                }
                AntiThrashPolicy::V2 | AntiThrashPolicy::V2_2 => self.verdict_pending = true,
            },
        }
        if self.policy == AntiThrashPolicy::V1 && self.strikes >= STRIKES_TO_BLOCK {
            self.latched = true;
        }
        self.refresh(fallback_streak, now_ms)
    }

    /// Feeds one real usage reading. True when a block just began.
    pub fn on_reading(
        &mut self,
        usage_tokens: u64,
        trigger_tokens: u32,
        fallback_streak: u32,
        now_ms: u64,
    ) -> bool {
        if self.policy != AntiThrashPolicy::V1 {
            let over = usage_tokens >= trigger_tokens as u64;
            if self.verdict_pending && over {
                self.strikes += 1;
            } else if !over {
                self.strikes = 0;
            }
            self.verdict_pending = false;
        }
        self.refresh(fallback_streak, now_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(outcome: BatchPassOutcome, before: u64, after: u64) -> PassSeen {
        PassSeen {
            outcome,
            tokens_before: before,
            tokens_after: after,
        }
    }

    const COMPACTED: BatchPassOutcome = BatchPassOutcome::Compacted;
    const NOOP: BatchPassOutcome = BatchPassOutcome::NoOp;
    const TRIGGER: u32 = 1_000;

    #[test]
    fn v2_blocks_on_two_failed_verdicts_and_a_low_reading_unblocks() {
        let s = 0;
        let mut g = AntiThrash::new(AntiThrashPolicy::V2, &BugSet::none());
        g.on_pass(outcome(COMPACTED, 100, 50), s, 0);
        assert!(!g.on_reading(1_200, TRIGGER, s, 1));
        assert_eq!(g.gate(s, 1), Gate::Open);
        g.on_pass(outcome(COMPACTED, 100, 50), s, 2);
        assert!(
            g.on_reading(1_100, TRIGGER, s, 3),
            "second failed verdict blocks"
        );
        assert_eq!(
            g.gate(s, 3 + RECOVERY_WINDOW_MS),
            Gate::Blocked,
            "V2 never probes"
        );
        g.on_reading(999, TRIGGER, s, 4);
        assert_eq!(g.gate(s, 4), Gate::Open);
        assert_eq!(g.gate(FALLBACK_STREAK_TO_BLOCK, 5), Gate::Blocked);
    }

    #[test]
    fn v2_2_probes_after_the_window_and_h14694_latches() {
        let s = 0;
        for (bugs, probes) in [(BugSet::none(), true), (BugSet::of(&[Bug::H14694]), false)] {
            let mut g = AntiThrash::new(AntiThrashPolicy::V2_2, &bugs);
            g.on_pass(outcome(NOOP, 100, 100), s, 0);
            assert!(g.on_pass(outcome(NOOP, 100, 100), s, 10));
            assert_eq!(g.gate(s, 10 + RECOVERY_WINDOW_MS - 1), Gate::Blocked);
            let late = 10 + RECOVERY_WINDOW_MS;
            let want = if probes { Gate::Probe } else { Gate::Blocked };
            assert_eq!(g.gate(s, late), want);
            g.take_probe(late);
            assert_eq!(g.gate(s, late + 1), Gate::Blocked);
            g.on_reading(10, TRIGGER, s, late + 2);
            let after = if probes { Gate::Open } else { Gate::Blocked };
            assert_eq!(
                g.gate(s, late + 2),
                after,
                "low reading unblocks unless latched"
            );
        }
    }

    #[test]
    fn noop_strikes_unless_h40803_and_v1_latches_on_low_savings() {
        let s = 0;
        let mut g = AntiThrash::new(AntiThrashPolicy::V2, &BugSet::of(&[Bug::H40803]));
        for t in 0..5 {
            g.on_pass(outcome(NOOP, 100, 100), s, t);
        }
        assert_eq!((g.strikes(), g.gate(s, 9)), (0, Gate::Open));
        let mut v1 = AntiThrash::new(AntiThrashPolicy::V1, &BugSet::none());
        v1.on_pass(outcome(COMPACTED, 1_000, 950), s, 0);
        v1.on_pass(outcome(COMPACTED, 1_000, 500), s, 1);
        assert_eq!(v1.gate(s, 1), Gate::Open, "a good pass resets the streak");
        v1.on_pass(outcome(COMPACTED, 1_000, 950), s, 2);
        v1.on_pass(outcome(NOOP, 1_000, 1_000), s, 3);
        assert_eq!(v1.gate(s, 3), Gate::Blocked);
        v1.on_reading(0, TRIGGER, s, 4);
        assert_eq!(v1.gate(s, 4 + RECOVERY_WINDOW_MS), Gate::Blocked, "latched");
    }
}
