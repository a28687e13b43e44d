//! Threshold derivation (hermes-domain §2.1): when batch compaction fires, and the tail
//! budget both compactors protect.

use serde::Serialize;

/// `MINIMUM_CONTEXT_LENGTH`: the trigger never goes below this.
pub const MINIMUM_TRIGGER_TOKENS: u32 = 64_000;
/// Windows below this get the small-window floor on the trigger ratio.
pub const SMALL_WINDOW_TOKENS: u32 = 512_000;
/// The small-window floor, per mille.
pub const SMALL_WINDOW_FLOOR_PER_MILLE: u32 = 750;
/// Trigger for windows too small for the 64K floor, per mille.
pub const TINY_WINDOW_TRIGGER_PER_MILLE: u32 = 850;

/// The configuration keys that decide the trigger.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ThresholdConfig {
    /// `compression.threshold`, per mille of the window.
    pub threshold_per_mille: u32,
    /// `compression.target_ratio`, per mille (clamped to 100..=800).
    pub target_ratio_per_mille: u32,
    /// `compression.threshold_tokens`: absolute cap on the trigger.
    pub threshold_tokens_cap: Option<u32>,
    /// Output reservation (`max_tokens`) subtracted from the window.
    pub max_output_tokens: Option<u32>,
}

impl ThresholdConfig {
    /// The 0.19.0 defaults: threshold 0.50, target ratio 0.20, no cap, no reservation.
    pub const V0_19_0: ThresholdConfig = ThresholdConfig {
        threshold_per_mille: 500,
        target_ratio_per_mille: 200,
        threshold_tokens_cap: None,
        max_output_tokens: None,
    };
}

/// The derived numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Thresholds {
    pub context_length: u32,
    /// Compaction fires at or above this many prompt tokens.
    pub trigger_tokens: u32,
    /// Tokens the verbatim tail keeps (`trigger × target_ratio`).
    pub tail_budget_tokens: u32,
    /// Ceiling of a batch summary: min(5 % of the window, 10,000).
    pub summary_tokens_max: u32,
}

/// Ceiling of a batch summary for a window: min(5 % of the window, 10,000).
pub fn summary_tokens_max(context_length: u32) -> u32 {
    (context_length / 20).min(10_000)
}

/// Derives the trigger and budgets for a window of `context_length` tokens.
pub fn derive(context_length: u32, config: ThresholdConfig) -> Thresholds {
    let mut per_mille = config.threshold_per_mille;
    if context_length < SMALL_WINDOW_TOKENS {
        per_mille = per_mille.max(SMALL_WINDOW_FLOOR_PER_MILLE);
    }
    let window = context_length.saturating_sub(config.max_output_tokens.unwrap_or(0));
    let mut trigger =
        (window as u64 * per_mille as u64 / 1000).max(MINIMUM_TRIGGER_TOKENS as u64) as u32;
    if trigger >= window {
        let tiny = (window as u64 * TINY_WINDOW_TRIGGER_PER_MILLE as u64 / 1000) as u32;
        trigger = tiny.min(window.saturating_sub(1));
    }
    if let Some(cap) = config.threshold_tokens_cap {
        trigger = trigger.min(cap);
    }
    let ratio = config.target_ratio_per_mille.clamp(100, 800);
    Thresholds {
        context_length,
        trigger_tokens: trigger,
        tail_budget_tokens: (trigger as u64 * ratio as u64 / 1000) as u32,
        summary_tokens_max: summary_tokens_max(context_length),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table measured with the real 0.19.0 code (hermes-domain §2.1).
    #[test]
    fn matches_measured_0_19_0_table() {
        let cases = [
            (64_000, 54_400, 10_880),
            (128_000, 96_000, 19_200),
            (200_000, 150_000, 30_000),
            (262_144, 196_608, 39_321),
            (512_000, 256_000, 51_200),
            (1_000_000, 500_000, 100_000),
        ];
        for (window, trigger, tail) in cases {
            let t = derive(window, ThresholdConfig::V0_19_0);
            assert_eq!(
                (t.trigger_tokens, t.tail_budget_tokens),
                (trigger, tail),
                "window {window}"
            );
        }
    }

    #[test]
    fn tiny_windows_trigger_at_85_percent_and_cap_applies() {
        let t = derive(32_000, ThresholdConfig::V0_19_0);
        assert_eq!(t.trigger_tokens, 27_200);
        let capped = derive(
            1_000_000,
            ThresholdConfig {
                threshold_tokens_cap: Some(256_000),
                ..ThresholdConfig::V0_19_0
            },
        );
        assert_eq!(capped.trigger_tokens, 256_000);
        let reserved = derive(
            128_000,
            ThresholdConfig {
                max_output_tokens: Some(8_000),
                ..ThresholdConfig::V0_19_0
            },
        );
        assert_eq!(reserved.trigger_tokens, 90_000);
        assert_eq!(
            derive(200_000, ThresholdConfig::V0_19_0).summary_tokens_max,
            10_000
        );
    }

    /// The model's derivation agrees with the oracle's own statement of the spec
    /// (`compactsim_invariants::threshold`) on every window and configuration tried.
    #[test]
    fn agrees_with_the_oracles_derivation() {
        use compactsim_invariants::threshold::{trigger_tokens, TriggerSpec};
        let configs = [
            ThresholdConfig::V0_19_0,
            ThresholdConfig {
                threshold_tokens_cap: Some(256_000),
                ..ThresholdConfig::V0_19_0
            },
            ThresholdConfig {
                threshold_per_mille: 900,
                max_output_tokens: Some(8_000),
                ..ThresholdConfig::V0_19_0
            },
            ThresholdConfig {
                threshold_per_mille: 100,
                threshold_tokens_cap: Some(50_000),
                max_output_tokens: Some(120_000),
                ..ThresholdConfig::V0_19_0
            },
        ];
        let mut windows: Vec<u32> = (0..=2_100_000).step_by(7_919).collect();
        windows.extend([
            0, 1, 63_999, 64_000, 64_001, 511_999, 512_000, 75_294, 75_295,
        ]);
        for config in configs {
            for &window in &windows {
                let spec = TriggerSpec {
                    context_length: window,
                    threshold_per_mille: config.threshold_per_mille,
                    threshold_tokens_cap: config.threshold_tokens_cap,
                    max_output_tokens: config.max_output_tokens,
                };
                assert_eq!(
                    derive(window, config).trigger_tokens,
                    trigger_tokens(spec),
                    "window {window}, {config:?}"
                );
            }
        }
    }
}
