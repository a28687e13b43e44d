//! The summary-storm knob, drawn from its own stream (`Stream::SummaryStorm`), added
//! after every other stream was fixed: in some `both` cases the summarizer fails often
//! (an overloaded or flapping auxiliary endpoint), so batch passes meet a failed summary
//! call — among them the network errors of H-29559's path — far more often than the
//! drawn 1..8 % rates give. A case without the knob draws exactly as before; with it,
//! only the summarizer's error rate changes (its per-call draws stay on the Summarizer
//! stream). Plan overrides apply after it; a recorded case writes its rate down.
//! Not drawn for `micro` and `batch` (their rows are deep without it) nor the gateway.

use compactsim_fakes::summarizer::SummarizerConfig;

/// Share of `both` cases with a summary storm, per mille.
pub const SUMMARY_STORM_ON_PER_MILLE: u32 = 150;
/// A storm's summarizer error rate, per mille of calls: the drawn range.
pub const SUMMARY_STORM_ERROR_PER_MILLE: (u32, u32) = (200, 700);

/// The drawn summarizer configuration with the storm's error rate (drawn in
/// [`super::draw`]; `None`: no storm) applied.
pub fn applied(storm: Option<u32>, mut config: SummarizerConfig) -> SummarizerConfig {
    if let Some(rate) = storm {
        config.error_per_mille = config.error_per_mille.max(rate);
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::draw::{self, Draw};
    use crate::engine::CaseSpec;

    const CASES: u32 = 2_000;

    fn spec(case: u32, strategy: &str) -> CaseSpec {
        CaseSpec::drawn(case, strategy)
    }

    /// The storm knob of `s`'s case.
    fn draw(s: &CaseSpec) -> Option<u32> {
        draw::summary_storm(s, &mut Draw::new(s.case_seed()))
    }

    #[test]
    fn only_some_both_cases_storm_and_only_their_error_rate_changes() {
        let mut storms = 0u32;
        for case in 0..CASES {
            for other in ["micro", "batch", "gateway"] {
                assert_eq!(draw(&spec(case, other)), None, "{other}");
            }
            let s = spec(case, "both");
            let calm = SummarizerConfig::reliable();
            let got = applied(draw(&s), calm.clone());
            let Some(rate) = draw(&s) else {
                assert_eq!(got, calm, "no storm changes nothing");
                continue;
            };
            storms += 1;
            let (lo, hi) = SUMMARY_STORM_ERROR_PER_MILLE;
            assert!((lo..=hi).contains(&rate), "{rate}");
            assert_eq!(
                got,
                SummarizerConfig {
                    error_per_mille: rate,
                    ..calm
                }
            );
        }
        let share = storms * 1000 / CASES;
        assert!(
            share.abs_diff(SUMMARY_STORM_ON_PER_MILLE) < 40,
            "{share} per mille"
        );
    }
}
