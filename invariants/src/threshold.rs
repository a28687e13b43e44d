//! The trigger as the specification states it (hermes-domain §2.1), owned by the
//! oracle: the oracle's parameters come from the case's declared configuration through
//! this derivation, never from the compactor's own code. The Rust reference model keeps
//! its own copy (`sim::compactor::threshold`); a test in `sim` proves the two agree.

/// `MINIMUM_CONTEXT_LENGTH`: the trigger never goes below this.
pub const TRIGGER_FLOOR_TOKENS: u64 = 64_000;
/// Windows below this get the small-window floor on the trigger ratio.
pub const SMALL_WINDOW_TOKENS: u64 = 512_000;
/// The small-window floor on `compression.threshold`, per mille.
pub const SMALL_WINDOW_FLOOR_PER_MILLE: u64 = 750;
/// The trigger of a window too small for the 64K floor, per mille of it.
pub const TINY_WINDOW_TRIGGER_PER_MILLE: u64 = 850;

/// The declared configuration keys that decide the trigger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TriggerSpec {
    /// Model window in tokens.
    pub context_length: u32,
    /// `compression.threshold`, per mille of the window.
    pub threshold_per_mille: u32,
    /// `compression.threshold_tokens`: absolute cap on the trigger.
    pub threshold_tokens_cap: Option<u32>,
    /// Output reservation (`max_tokens`) subtracted from the window.
    pub max_output_tokens: Option<u32>,
}

/// Compaction fires at or above this many prompt tokens: `threshold × (window −
/// reservation)`, the threshold floored at 75 % below a 512K window, the result floored
/// at 64K unless that reaches the window (then 85 % of it, below it), capped by
/// `threshold_tokens`.
pub fn trigger_tokens(spec: TriggerSpec) -> u32 {
    let window = spec
        .context_length
        .saturating_sub(spec.max_output_tokens.unwrap_or(0)) as u64;
    let mut per_mille = spec.threshold_per_mille as u64;
    if (spec.context_length as u64) < SMALL_WINDOW_TOKENS {
        per_mille = per_mille.max(SMALL_WINDOW_FLOOR_PER_MILLE);
    }
    let mut trigger = (window * per_mille / 1000).max(TRIGGER_FLOOR_TOKENS);
    if trigger >= window {
        trigger = (window * TINY_WINDOW_TRIGGER_PER_MILLE / 1000).min(window.saturating_sub(1));
    }
    if let Some(cap) = spec.threshold_tokens_cap {
        trigger = trigger.min(cap as u64);
    }
    trigger as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(context_length: u32) -> TriggerSpec {
        TriggerSpec {
            context_length,
            threshold_per_mille: 500,
            threshold_tokens_cap: None,
            max_output_tokens: None,
        }
    }

    #[test]
    fn the_floors_the_tiny_window_rule_and_the_cap_apply() {
        assert_eq!(trigger_tokens(spec(1_000_000)), 500_000);
        assert_eq!(trigger_tokens(spec(200_000)), 150_000, "75 % floor");
        assert_eq!(trigger_tokens(spec(80_000)), 64_000, "64K floor");
        assert_eq!(
            trigger_tokens(spec(32_768)),
            27_852,
            "85 % of a tiny window"
        );
        let capped = TriggerSpec {
            threshold_tokens_cap: Some(100_000),
            ..spec(1_000_000)
        };
        assert_eq!(trigger_tokens(capped), 100_000);
        let reserved = TriggerSpec {
            max_output_tokens: Some(200_000),
            ..spec(1_000_000)
        };
        assert_eq!(trigger_tokens(reserved), 400_000);
    }
}
