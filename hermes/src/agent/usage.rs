//! What the agent knows about the size of its prompt (hermes-domain §1.2, §2.2 items
//! 2–3): the last provider usage reading, whether a compaction is still waiting for
//! one, and the deferral rule that lets preflight trust real usage over the rough
//! estimate (#35054/#36718).

use serde::Serialize;

/// Deferral tolerance: growth since the baseline of at most this many rough tokens…
pub const DEFER_TOLERANCE_MIN_TOKENS: u64 = 4_096;
/// …or this share of the trigger (per mille), whichever is larger.
pub const DEFER_TOLERANCE_PER_MILLE: u64 = 50;

/// The agent's usage bookkeeping for one session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct UsageState {
    /// `last_prompt_tokens`: `None` is Hermes's −1 (unknown, set after a compaction);
    /// `Some(0)` means a call ended with no usage (a disconnect).
    pub last_prompt_tokens: Option<u64>,
    /// The last real provider reading, if any.
    pub last_real_tokens: Option<u64>,
    /// `awaiting_real_usage_after_compression`.
    pub awaiting_real: bool,
    /// Preflight already deferred once since the last compaction.
    deferred_since_compaction: bool,
    /// Rough request size when a real reading last proved the prompt fit (or right
    /// after the last compaction).
    baseline_rough: Option<u64>,
    /// The rough request size right after the last compaction while no reading has
    /// followed it: what H-35054 leaves as `last_prompt_tokens` (the clean model leaves
    /// `None`). The switch is asked when this is read ([`Self::judged_tokens`]), the one
    /// place it decides.
    #[serde(skip)]
    rough_after_compaction: Option<u64>,
}

impl UsageState {
    /// A successful call reported `usage_tokens` for a request of `request_rough`.
    pub fn on_reading(&mut self, usage_tokens: u64, request_rough: u64, trigger_tokens: u32) {
        self.last_prompt_tokens = Some(usage_tokens);
        self.rough_after_compaction = None;
        self.last_real_tokens = Some(usage_tokens);
        self.awaiting_real = false;
        if usage_tokens < trigger_tokens as u64 {
            self.baseline_rough = Some(request_rough);
        }
    }

    /// A call ended without usage (a dropped connection).
    pub fn on_no_usage(&mut self) {
        self.last_prompt_tokens = Some(0);
        self.rough_after_compaction = None;
    }

    /// A compaction committed; the request is now `request_rough` rough tokens. Under
    /// H-35054 that rough estimate stands in for real usage (decided when read).
    pub fn on_compaction(&mut self, request_rough: u64) {
        self.last_prompt_tokens = None;
        self.rough_after_compaction = Some(request_rough);
        self.awaiting_real = true;
        self.deferred_since_compaction = false;
        self.baseline_rough = Some(request_rough);
    }

    /// `should_defer_preflight_to_real_usage(rough)`: defer exactly one turn while
    /// awaiting real usage after a compaction; never without a reading or when the last
    /// reading was at or over the trigger; otherwise only if the rough estimate grew by
    /// at most the tolerance since the baseline. Records the one-turn deferral.
    pub fn should_defer(&mut self, request_rough: u64, trigger_tokens: u32) -> bool {
        let defers = self.would_defer(request_rough, trigger_tokens);
        if defers && self.awaiting_real {
            self.deferred_since_compaction = true;
        }
        defers
    }

    /// What [`Self::should_defer`] answers, without recording the deferral.
    pub fn would_defer(&self, request_rough: u64, trigger_tokens: u32) -> bool {
        let trigger = trigger_tokens as u64;
        if request_rough < trigger {
            return false;
        }
        if self.awaiting_real && !self.deferred_since_compaction {
            return true;
        }
        match (self.last_real_tokens, self.baseline_rough) {
            (Some(real), Some(baseline)) if real < trigger => {
                let tolerance =
                    DEFER_TOLERANCE_MIN_TOKENS.max(trigger * DEFER_TOLERANCE_PER_MILLE / 1000);
                request_rough.saturating_sub(baseline) <= tolerance
            }
            _ => false,
        }
    }

    /// The tokens `should_compress` judges after a call: the last usage, or — since
    /// PR #4750, unless `zero_disables` (H-2153) — the rough estimate when the last call
    /// left no usage. Unknown usage (after a compaction) judges as 0.
    /// `zero_disables` is asked only when the last reading was 0 (the one case it decides),
    /// `rough_stands_in` (H-35054, given the rough size after the compaction) only when
    /// a compaction left usage unknown.
    pub fn judged_tokens(
        &self,
        request_rough: u64,
        zero_disables: impl FnOnce() -> bool,
        rough_stands_in: impl FnOnce(u64) -> bool,
    ) -> u64 {
        let last = self.last_prompt_tokens.or_else(|| {
            self.rough_after_compaction
                .filter(|rough| rough_stands_in(*rough))
        });
        match last {
            Some(0) if !zero_disables() => request_rough,
            Some(n) => n,
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRIGGER: u32 = 100_000;

    #[test]
    fn defers_once_after_a_compaction_then_follows_the_baseline() {
        let mut u = UsageState::default();
        assert!(!u.should_defer(120_000, TRIGGER), "no reading: never defer");
        u.on_reading(80_000, 101_000, TRIGGER);
        assert!(u.should_defer(105_000, TRIGGER), "grew 4,000 < 5,000");
        assert!(
            !u.should_defer(106_001, TRIGGER),
            "grew more than 5 % of the trigger"
        );
        assert!(
            !u.should_defer(99_000, TRIGGER),
            "below the trigger: nothing to defer"
        );
        u.on_compaction(40_000);
        assert_eq!(u.last_prompt_tokens, None);
        assert!(u.should_defer(200_000, TRIGGER), "one turn while awaiting");
        assert!(!u.should_defer(200_000, TRIGGER), "only one");
        u.on_reading(120_000, 130_000, TRIGGER);
        assert!(
            !u.should_defer(130_000, TRIGGER),
            "last reading over the trigger"
        );
    }

    #[test]
    fn zero_usage_judges_by_the_rough_estimate_unless_h2153() {
        let mut u = UsageState::default();
        u.on_reading(50_000, 40_000, TRIGGER);
        let never = |_: u64| -> bool { panic!("H-35054 asked with usage known") };
        assert_eq!(u.judged_tokens(90_000, || false, never), 50_000);
        u.on_no_usage();
        assert_eq!(u.judged_tokens(90_000, || false, never), 90_000);
        assert_eq!(u.judged_tokens(90_000, || true, never), 0);
        u.on_compaction(70_000);
        assert_eq!(
            u.judged_tokens(1, || false, |rough| rough == 70_000),
            70_000,
            "H-35054: rough stands in"
        );
        assert_eq!(u.judged_tokens(1, || false, |_| false), 0);
        u.on_reading(60_000, 65_000, TRIGGER);
        assert_eq!(
            u.judged_tokens(1, || false, never),
            60_000,
            "a reading ends the stand-in"
        );
        u.on_compaction(70_000);
        u.on_no_usage();
        assert_eq!(u.judged_tokens(5, || false, never), 5);
    }
}
