//! Eras and anti-thrash policies (hermes-domain §0, §2.5): Hermes behaviour is a
//! versioned family. An era preset picks the anti-thrash policy, whether compaction
//! rotates the session id, the `threshold_tokens` cap, and — for era A — the historical
//! behaviours that are bug switches today.
//!
//! Era A (Mar–Apr 2026, ≤ v0.9) turns these switches on: H-35054 (preflight compares
//! the rough estimate with the trigger, no anti-thrash, no deferral), H-27404 (count-only
//! preflight gate), H-11996 (head never decays), H-10896 (no last-user anchor), H-11529
//! (no cooldown gate), H-40803 (no strike on no-op exits; V1.1 came later), H-57771
//! (rotation without progress), H-29559 (network error drops the window), H-52160 and
//! H-58753 (no forced-user summary role), H-11762 (arguments cut by offset). Not H-2153:
//! PR #4750 (March 2026) is in every era. Era B (May–Jul, v0.10–v0.19) has every fix
//! through 0.19.0; era C (Aug–Oct) adds the V2.2 recovery probe and the 256,000-token
//! `threshold_tokens` cap.

use crate::bugs::Bug;
use crate::compactor::threshold::ThresholdConfig;
use serde::Serialize;
use std::fmt;

/// `threshold_tokens` of the era-C developer guide.
pub const ERA_C_THRESHOLD_TOKENS_CAP: u32 = 256_000;

/// The anti-thrash rule (hermes-domain §2.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AntiThrashPolicy {
    /// Two consecutive passes each saving < 10 % latch the guard until a reset.
    V1,
    /// Verdict from the next real usage reading after a compaction; block at ≥ 2
    /// strikes or a fallback streak ≥ 2; a reading below the trigger resets.
    V2,
    /// V2 plus one probe compaction after 300 s of being blocked.
    V2_2,
}

impl AntiThrashPolicy {
    pub const ALL: [AntiThrashPolicy; 3] = [
        AntiThrashPolicy::V1,
        AntiThrashPolicy::V2,
        AntiThrashPolicy::V2_2,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AntiThrashPolicy::V1 => "v1",
            AntiThrashPolicy::V2 => "v2",
            AntiThrashPolicy::V2_2 => "v2.2",
        }
    }

    pub fn parse(name: &str) -> Result<AntiThrashPolicy, String> {
        AntiThrashPolicy::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| format!("unknown anti-thrash policy `{name}` (known: v1, v2, v2.2)"))
    }
}

impl fmt::Display for AntiThrashPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Hermes era (hermes-domain §0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Era {
    A,
    B,
    C,
}

/// Bug switches that are era A's behaviour (see the module docs).
const ERA_A_BUGS: &[Bug] = &[
    Bug::H35054,
    Bug::H27404,
    Bug::H11996,
    Bug::H10896,
    Bug::H11529,
    Bug::H40803,
    Bug::H57771,
    Bug::H29559,
    Bug::H52160,
    Bug::H58753,
    Bug::H11762,
];

impl Era {
    pub const ALL: [Era; 3] = [Era::A, Era::B, Era::C];
    /// The latest era.
    pub const DEFAULT: Era = Era::C;

    pub fn name(self) -> &'static str {
        match self {
            Era::A => "a",
            Era::B => "b",
            Era::C => "c",
        }
    }

    pub fn parse(name: &str) -> Result<Era, String> {
        Era::ALL
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| format!("unknown era `{name}` (known: a, b, c)"))
    }

    pub fn anti_thrash_default(self) -> AntiThrashPolicy {
        match self {
            Era::A => AntiThrashPolicy::V1,
            Era::B => AntiThrashPolicy::V2,
            Era::C => AntiThrashPolicy::V2_2,
        }
    }

    /// Era A always rotates; later eras compact in place unless the agent was built
    /// without the default config (0.19.0 reads a missing `in_place` as false).
    pub fn always_rotates(self) -> bool {
        self == Era::A
    }

    /// The threshold keys of the era.
    pub fn threshold_config(self) -> ThresholdConfig {
        match self {
            Era::A | Era::B => ThresholdConfig::V0_19_0,
            Era::C => ThresholdConfig {
                threshold_tokens_cap: Some(ERA_C_THRESHOLD_TOKENS_CAP),
                ..ThresholdConfig::V0_19_0
            },
        }
    }

    /// Historical behaviours of the era that are bug switches today.
    pub fn implied_bugs(self) -> &'static [Bug] {
        match self {
            Era::A => ERA_A_BUGS,
            Era::B | Era::C => &[],
        }
    }
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The agent-loop options of a run: the era and the anti-thrash policy (the era's
/// default unless chosen).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct LoopOptions {
    pub era: Era,
    pub anti_thrash: AntiThrashPolicy,
    /// `--session-mode`: every case rotates or compacts in place (wins over a plan's
    /// `in_place`); `None`: each case keeps the mode it drew.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_mode: Option<super::SessionMode>,
}

impl LoopOptions {
    pub fn of(era: Era, anti_thrash: Option<AntiThrashPolicy>) -> Self {
        LoopOptions {
            era,
            anti_thrash: anti_thrash.unwrap_or(era.anti_thrash_default()),
            session_mode: None,
        }
    }

    /// These options with every case in `mode` (`None`: as drawn).
    pub fn with_session_mode(self, mode: Option<super::SessionMode>) -> Self {
        LoopOptions {
            session_mode: mode,
            ..self
        }
    }
}

impl Default for LoopOptions {
    fn default() -> Self {
        LoopOptions::of(Era::DEFAULT, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_defaults_follow_the_era() {
        for e in Era::ALL {
            assert_eq!(Era::parse(e.name()), Ok(e));
        }
        for p in AntiThrashPolicy::ALL {
            assert_eq!(AntiThrashPolicy::parse(p.name()), Ok(p));
        }
        assert!(Era::parse("d").unwrap_err().contains("a, b, c"));
        assert!(AntiThrashPolicy::parse("v3").is_err());
        let d = LoopOptions::default();
        assert_eq!((d.era, d.anti_thrash), (Era::C, AntiThrashPolicy::V2_2));
        assert_eq!(
            LoopOptions::of(Era::A, None).anti_thrash,
            AntiThrashPolicy::V1
        );
        assert_eq!(
            LoopOptions::of(Era::A, Some(AntiThrashPolicy::V2)).anti_thrash,
            AntiThrashPolicy::V2
        );
        assert!(Era::C.implied_bugs().is_empty() && Era::B.implied_bugs().is_empty());
        assert!(!Era::A.implied_bugs().contains(&Bug::H2153));
        assert_eq!(
            Era::C.threshold_config().threshold_tokens_cap,
            Some(ERA_C_THRESHOLD_TOKENS_CAP)
        );
    }
}
