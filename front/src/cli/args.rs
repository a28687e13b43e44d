//! Run parameters shared by `run`, `replay` and the repro lines, validated.

use super::exit::Failure;
use crate::scenario::switch_acts_under;
use compactsim_harness::compactor::CompactorSpec;
use compactsim_harness::runner::Suite;
use compactsim_hermes::agent::{AntiThrashPolicy, Era, LoopOptions, SessionMode};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::bugs::Bug;
use compactsim_hermes::profile::Profile;
use compactsim_hermes::strategy::Strategy;

use compactsim_harness::external::ADAPTER_TIMEOUT_MS_MAX;
pub use compactsim_harness::runner::{
    CASES_DEFAULT, CASES_MAX, JOBS_MAX, PASSES_DEFAULT, PASSES_MAX, SEED_DEFAULT, STRATEGY_DEFAULT,
};

/// The parameters that decide what a case does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseParams {
    pub seed: u64,
    pub passes: u32,
    pub strategy: Strategy,
    pub bugs: BugSet,
    /// `--compactor`: the compactor under test (an axis separate from the strategy).
    pub compactor: CompactorSpec,
    /// `--profile`: the real release the model follows (`None`: the default model).
    pub profile: Option<Profile>,
}

impl CaseParams {
    /// Validates raw CLI values (agent-loop strategies get the default era and policy).
    pub fn parse(
        seed: u64,
        passes: u32,
        strategy: &str,
        bugs: &[String],
    ) -> Result<CaseParams, Failure> {
        Self::parse_with(seed, passes, strategy, None, None, bugs)
    }

    /// Validates raw CLI values including `--era` and `--anti-thrash`, which only the
    /// agent-loop strategies (`batch`, `both`) accept.
    pub fn parse_with(
        seed: u64,
        passes: u32,
        strategy: &str,
        era: Option<&str>,
        anti_thrash: Option<&str>,
        bugs: &[String],
    ) -> Result<CaseParams, Failure> {
        let mut params = Self::parse_plain(seed, passes, strategy, bugs)?;
        if params.strategy.loop_options().is_none() {
            if era.is_some() || anti_thrash.is_some() {
                return Err(Failure::bad_input(format!(
                    "--era and --anti-thrash apply to the agent-loop strategies (batch, \
                     both), not `{}`",
                    params.strategy
                )));
            }
            return Ok(params);
        }
        let era = era
            .map(Era::parse)
            .transpose()
            .map_err(Failure::bad_input)?
            .unwrap_or(Era::DEFAULT);
        let policy = anti_thrash
            .map(AntiThrashPolicy::parse)
            .transpose()
            .map_err(Failure::bad_input)?;
        params.strategy = params.strategy.with_options(LoopOptions::of(era, policy));
        Ok(params)
    }

    fn parse_plain(
        seed: u64,
        passes: u32,
        strategy: &str,
        bugs: &[String],
    ) -> Result<CaseParams, Failure> {
        if passes == 0 || passes > PASSES_MAX {
            return Err(Failure::bad_input(format!(
                "--passes must be between 1 and {PASSES_MAX}, got {passes}"
            )));
        }
        let strategy = Strategy::parse(strategy).map_err(Failure::bad_input)?;
        let bugs: Vec<Bug> = bugs
            .iter()
            .map(|b| Bug::parse(b))
            .collect::<Result<_, _>>()
            .map_err(Failure::bad_input)?;
        if let Some(bug) = bugs
            .iter()
            .find(|b| !switch_acts_under(b.info().strategy, strategy))
        {
            let own = bug.info().strategy;
            return Err(Failure::bad_input(format!(
                "--bug {} switches the {own} strategy (run it with --strategy {own} or both), \
                 not `{strategy}`",
                bug.id()
            )));
        }
        Ok(CaseParams {
            seed,
            passes,
            strategy,
            bugs: BugSet::of(&bugs),
            compactor: CompactorSpec::Reference,
            profile: None,
        })
    }

    /// These parameters under `--profile` (`None`: the default model): the release's
    /// known bugs that act under the strategy are switched on ([`Profile::bugs`]).
    pub fn with_profile(mut self, profile: Option<Profile>) -> CaseParams {
        if let Some(p) = profile {
            self.bugs = self.bugs.with_also(p.bugs(self.strategy));
        }
        self.profile = profile;
        self
    }

    /// These parameters with `--session-mode` (`None`: as drawn); bad input for a
    /// strategy without the agent loop.
    pub fn with_session_mode(mut self, mode: Option<&str>) -> Result<CaseParams, Failure> {
        let Some(mode) = session_mode(mode)? else {
            return Ok(self);
        };
        let Some(options) = self.strategy.loop_options() else {
            return Err(Failure::bad_input(format!(
                "--session-mode applies to the agent-loop strategies (batch, both, gateway), \
                 not `{}`",
                self.strategy
            )));
        };
        self.strategy = self
            .strategy
            .with_options(options.with_session_mode(Some(mode)));
        Ok(self)
    }

    /// The flags that reproduce these parameters, as `replay` accepts them.
    pub fn flags(&self) -> String {
        format!("--seed {} {}", self.seed, self.flags_but_seed())
    }

    /// [`Self::flags`] without `--seed` (a sweep runs them under many seeds).
    pub fn flags_but_seed(&self) -> String {
        let mut s = format!("--passes {} --strategy {}", self.passes, self.strategy);
        if let Some(p) = self.profile {
            s.push_str(&format!(" --profile {}", p.name()));
        }
        if let Some(o) = self.strategy.loop_options() {
            // A profile sets the era itself (and refuses `--era`).
            if self.profile.is_none() {
                s.push_str(&format!(" --era {}", o.era));
            }
            s.push_str(&format!(" --anti-thrash {}", o.anti_thrash));
            if let Some(m) = o.session_mode {
                s.push_str(&format!(" --session-mode {m}"));
            }
        }
        for b in self.bugs.iter() {
            s.push_str(&format!(" --bug {b}"));
        }
        s.push_str(&self.compactor.repro_flags());
        s
    }

    /// The exact command that replays case `case`.
    pub fn repro(&self, case: u32) -> String {
        format!("compactsim replay {} --case {case}", self.flags())
    }

    pub fn suite(&self, case_first: u32, cases: u32) -> Suite {
        Suite {
            root_seed: self.seed,
            case_first,
            cases,
            passes: self.passes,
            strategy: self.strategy,
            bugs: self.bugs.clone(),
            compactor: self.compactor.clone(),
            profile: self.profile,
        }
    }
}

/// Parses `--session-mode` (`None` when absent).
pub fn session_mode(mode: Option<&str>) -> Result<Option<SessionMode>, Failure> {
    mode.map(SessionMode::parse)
        .transpose()
        .map_err(Failure::bad_input)
}

/// `--shard K/N`: this process runs the K-th of N equal slices of the case range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    pub fn parse(text: &str) -> Result<Shard, Failure> {
        let bad =
            || Failure::bad_input(format!("--shard must be K/N with 0 <= K < N, got `{text}`"));
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The range of this shard of `cases`. A shard may hold no case (more shards than
    /// cases: a CI matrix wider than a small suite): its report has no case rows and
    /// `merge` joins it like any other shard.
    pub fn checked_range(self, cases: u32) -> Result<(u32, u32), Failure> {
        Ok(self.range(cases))
    }

    /// (first case, number of cases) of this shard of `cases`.
    pub fn range(self, cases: u32) -> (u32, u32) {
        compactsim_reports::shard_range(cases, self.index, self.count)
    }
}

/// Validates `--jobs` (default: the machine's cores, at most [`JOBS_MAX`]).
pub fn jobs(jobs: Option<usize>) -> Result<usize, Failure> {
    match jobs {
        None => Ok(std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(JOBS_MAX)),
        Some(n) if (1..=JOBS_MAX).contains(&n) => Ok(n),
        Some(n) => Err(Failure::bad_input(format!(
            "--jobs must be between 1 and {JOBS_MAX}, got {n}"
        ))),
    }
}

/// Validates an adapter limit flag (`--adapter-timeout-ms` and the like): `default`
/// when absent, else between 1 and [`ADAPTER_TIMEOUT_MS_MAX`] milliseconds.
pub fn adapter_limit_ms(flag: &str, value: Option<u64>, default: u64) -> Result<u64, Failure> {
    match value {
        None => Ok(default),
        Some(ms) if (1..=ADAPTER_TIMEOUT_MS_MAX).contains(&ms) => Ok(ms),
        Some(ms) => Err(Failure::bad_input(format!(
            "{flag} must be between 1 and {ADAPTER_TIMEOUT_MS_MAX}, got {ms}"
        ))),
    }
}

/// Validates `--cases`.
pub fn check_cases(cases: u32) -> Result<u32, Failure> {
    if cases == 0 || cases > CASES_MAX {
        return Err(Failure::bad_input(format!(
            "--cases must be between 1 and {CASES_MAX}, got {cases}"
        )));
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::exit::Exit;

    #[test]
    fn bad_values_are_bad_input() {
        assert_eq!(check_cases(0).unwrap_err().exit, Exit::BadInput);
        assert_eq!(
            CaseParams::parse(1, 0, "micro", &[]).unwrap_err().exit,
            Exit::BadInput
        );
        let e = CaseParams::parse(1, 5, "nope", &[]).unwrap_err();
        assert!(
            e.message.contains("nope") && e.message.contains("micro"),
            "{}",
            e.message
        );
        let e = CaseParams::parse(1, 5, "micro", &["H-1".into()]).unwrap_err();
        assert!(e.message.contains("H-1"));
        for bad in ["1", "2/2", "a/b", "1/0"] {
            assert_eq!(Shard::parse(bad).unwrap_err().exit, Exit::BadInput, "{bad}");
        }
        assert_eq!(jobs(Some(0)).unwrap_err().exit, Exit::BadInput);
        assert_eq!(jobs(Some(JOBS_MAX + 1)).unwrap_err().exit, Exit::BadInput);
        assert_eq!(jobs(Some(usize::MAX)).unwrap_err().exit, Exit::BadInput);
        assert_eq!(jobs(Some(JOBS_MAX)), Ok(JOBS_MAX));
    }

    #[test]
    fn adapter_limits_are_bounded() {
        let flag = "--adapter-timeout-ms";
        assert_eq!(adapter_limit_ms(flag, None, 7), Ok(7));
        assert_eq!(adapter_limit_ms(flag, Some(1), 7), Ok(1));
        for bad in [0, ADAPTER_TIMEOUT_MS_MAX + 1, u64::MAX] {
            let e = adapter_limit_ms(flag, Some(bad), 7).unwrap_err();
            assert_eq!(e.exit, Exit::BadInput);
            assert!(e.message.contains(flag), "{}", e.message);
        }
        let empty = Shard {
            index: 0,
            count: 16,
        };
        assert_eq!(empty.checked_range(8), Ok((0, 0)));
        assert_eq!(Shard { index: 7, count: 8 }.checked_range(8), Ok((7, 1)));
    }

    #[test]
    fn repro_round_trips_and_shards_cover_the_range() {
        let p = CaseParams::parse(7, 25, "micro", &["h-75345-b".into()]).unwrap();
        assert_eq!(
            p.repro(3),
            "compactsim replay --seed 7 --passes 25 --strategy micro --bug H-75345-B --case 3"
        );
        let b =
            CaseParams::parse_with(7, 25, "batch", Some("a"), None, &["h-2153".into()]).unwrap();
        assert_eq!(
            b.repro(3),
            "compactsim replay --seed 7 --passes 25 --strategy batch --era a --anti-thrash v1 \
             --bug H-2153 --case 3"
        );
        let d = CaseParams::parse(7, 25, "both", &[]).unwrap();
        assert!(d
            .repro(0)
            .contains("--strategy both --era c --anti-thrash v2.2"));
        let e = CaseParams::parse_with(7, 25, "micro", Some("a"), None, &[]).unwrap_err();
        assert_eq!(e.exit, Exit::BadInput);
        let e = CaseParams::parse_with(7, 25, "batch", None, Some("v9"), &[]).unwrap_err();
        assert!(e.message.contains("v2.2"), "{}", e.message);
        let mut next = 0;
        for k in 0..3 {
            let (lo, n) = Shard { index: k, count: 3 }.range(10);
            assert_eq!(lo, next);
            next = lo + n;
        }
        assert_eq!(next, 10);
    }
}
