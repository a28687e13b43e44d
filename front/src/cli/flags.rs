//! The flags several commands share: what a case does (seed, passes, strategy, bugs,
//! era, profile, session mode) and which compactor is under test, and their checks.

use crate::cli::args::{self, CaseParams};
use crate::cli::exit::Failure;
use compactsim_harness::compactor::CompactorSpec;
use std::path::PathBuf;

/// Flags that decide what a case does (shared by `run`, `replay` and `shrink`). Optional
/// here so that `replay FILE` and `shrink FILE` can refuse them; the defaults are
/// applied in [`case_params`].
#[derive(clap::Args)]
pub struct CaseFlags {
    /// Root seed (printed first) [default: 20260731].
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub knobs: CaseKnobs,
}

/// Everything but the seed that decides what a case does (`sweep` varies the seed).
/// Optional here so that `replay FILE` and `shrink FILE` can refuse them; the defaults
/// are applied in [`knob_params`].
#[derive(clap::Args)]
pub struct CaseKnobs {
    /// Passes with work per case, 1 to 10000 [default: 25].
    #[arg(long)]
    pub passes: Option<u32>,
    /// Compaction strategy (see `compactsim list strategies`) [default: micro; with
    /// --compactor external: the first of micro and batch the adapter's hello declares].
    #[arg(long)]
    pub strategy: Option<String>,
    /// Switch a catalogued bug back on (repeatable; see `compactsim list bugs`).
    #[arg(long = "bug", value_name = "ID")]
    pub bugs: Vec<String>,
    /// Hermes era preset for the agent loop: a, b or c (default c, the latest).
    #[arg(long, value_name = "ERA")]
    pub era: Option<String>,
    /// Anti-thrash policy of the agent loop: v1, v2 or v2.2 (default: the era's).
    #[arg(long = "anti-thrash", value_name = "POLICY")]
    pub anti_thrash: Option<String>,
    /// A real release the model follows: hermes-0.19.0 (batch, era b) or
    /// hermes-iot-0.22.2 (micro only). Sets the era.
    #[arg(long, value_name = "RELEASE")]
    pub profile: Option<String>,
    /// Agent-loop strategies: every case rotates its session id on compaction or
    /// compacts in place: rotate or in-place (default: each case's drawn mode).
    #[arg(long = "session-mode", value_name = "MODE")]
    pub session_mode: Option<String>,
    #[command(flatten)]
    pub compactor: CompactorFlags,
}

impl CaseKnobs {
    /// `--profile`, parsed.
    pub fn profile(&self) -> Result<Option<compactsim_hermes::profile::Profile>, Failure> {
        self.profile
            .as_deref()
            .map(compactsim_hermes::profile::Profile::parse)
            .transpose()
            .map_err(Failure::bad_input)
    }

    /// (strategy, era) after `--profile` and the capabilities of `compactor` (see
    /// `cli::caps`): the profile's, or the flags as given, or the adapter's default.
    pub fn strategy_and_era<'a>(
        &'a self,
        compactor: &CompactorSpec,
    ) -> Result<(String, Option<&'a str>), Failure> {
        let given =
            crate::cli::caps::strategy(compactor, self.strategy.as_deref(), self.profile()?)?;
        match &self.profile {
            None => Ok((
                given.unwrap_or_else(|| args::STRATEGY_DEFAULT.to_string()),
                self.era.as_deref(),
            )),
            Some(name) => compactsim_hermes::profile::Profile::parse(name)
                .and_then(|p| p.resolve(given.as_deref(), self.era.as_deref()))
                .map(|(s, era)| (s.to_string(), era))
                .map_err(Failure::bad_input),
        }
    }
}

/// Flags that choose the compactor under test (adapters/PROTOCOL.md).
#[derive(clap::Args)]
pub struct CompactorFlags {
    /// The compactor under test: reference (the Rust models) or external (an adapter).
    #[arg(long, default_value = "reference")]
    pub compactor: String,
    /// The external adapter's command line, split without a shell.
    #[arg(long, value_name = "'CMD ARGS'")]
    pub adapter: Option<String>,
    /// Per-request limit of the adapter in milliseconds: the longest it may stay silent
    /// after the harness's last message of a request [default: 60000].
    #[arg(long, value_name = "MS")]
    pub adapter_timeout_ms: Option<u64>,
    /// Start-up limit of the adapter in milliseconds: from the start of a child to its
    /// hello (a cold venv import) [default: 120000].
    #[arg(long, value_name = "MS")]
    pub adapter_startup_timeout_ms: Option<u64>,
    /// Stall watchdog bound in milliseconds: an exchange with the adapter without any
    /// message for this long ends the run with exit 4 and both sides' state [default:
    /// twice the longer limit].
    #[arg(long, value_name = "MS")]
    pub adapter_watchdog_ms: Option<u64>,
    /// Write every message to and from the adapter into DIR, one JSON-lines file per
    /// case (adapters/PROTOCOL.md, "Recording").
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// The highest adapter protocol version offered: 2 (default) sends transcript
    /// deltas to an adapter that answers 2, 1 keeps every adapter on protocol 1.
    /// Reports are the same either way.
    #[arg(long, value_name = "1|2")]
    pub protocol: Option<u32>,
}

impl CompactorFlags {
    /// Whether any flag of an external adapter is given.
    pub fn any_adapter_flag(&self) -> bool {
        self.adapter_timeout_ms.is_some()
            || self.adapter_startup_timeout_ms.is_some()
            || self.adapter_watchdog_ms.is_some()
            || self.record.is_some()
            || self.protocol.is_some()
    }
}

/// The adapter of `--adapter` with its limits, recording to `--record` (its directory
/// created).
pub fn adapter_spec(
    f: &CompactorFlags,
    command: &str,
) -> Result<compactsim_harness::external::AdapterSpec, Failure> {
    use compactsim_harness::external::wire::PROTOCOL_VERSION_MAX;
    use compactsim_harness::external::{DEFAULT_STARTUP_TIMEOUT_MS, DEFAULT_TIMEOUT_MS};
    let timeout_ms = args::adapter_limit_ms(
        "--adapter-timeout-ms",
        f.adapter_timeout_ms,
        DEFAULT_TIMEOUT_MS,
    )?;
    let startup_ms = args::adapter_limit_ms(
        "--adapter-startup-timeout-ms",
        f.adapter_startup_timeout_ms,
        DEFAULT_STARTUP_TIMEOUT_MS,
    )?;
    let watchdog_ms = match f.adapter_watchdog_ms {
        None => None,
        given => Some(args::adapter_limit_ms("--adapter-watchdog-ms", given, 0)?),
    };
    if let Some(dir) = &f.record {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::bad_input(format!("--record {}: {e}", dir.display())))?;
    }
    let protocol = f.protocol.unwrap_or(PROTOCOL_VERSION_MAX);
    if !(1..=PROTOCOL_VERSION_MAX).contains(&protocol) {
        return Err(Failure::bad_input(format!(
            "--protocol must be 1..={PROTOCOL_VERSION_MAX}, got {protocol}"
        )));
    }
    Ok(
        compactsim_harness::external::AdapterSpec::new(command, timeout_ms)
            .with_startup_timeout_ms(startup_ms)
            .with_watchdog_ms(watchdog_ms)
            .recording_to(f.record.clone())
            .offering_protocol(protocol),
    )
}

/// The compactor `--compactor` chooses (an external one with the pool of its children,
/// owned by the command). Bug switches belong to the reference models: combined with an
/// external compactor they are bad input.
pub fn choose_compactor(f: &CompactorFlags, has_bugs: bool) -> Result<CompactorSpec, Failure> {
    match (f.compactor.as_str(), &f.adapter) {
        ("reference", None) if !f.any_adapter_flag() => Ok(CompactorSpec::Reference),
        ("reference", _) => Err(Failure::bad_input(
            "--adapter, --adapter-timeout-ms, --adapter-startup-timeout-ms, \
             --adapter-watchdog-ms, --record and --protocol need --compactor external",
        )),
        ("external", None) => Err(Failure::bad_input(
            "--compactor external needs --adapter 'CMD ARGS'",
        )),
        ("external", Some(_)) if has_bugs => Err(Failure::bad_input(
            "bug switches apply to the reference compactor, not to --compactor external",
        )),
        ("external", Some(cmd)) => {
            let spec =
                CompactorSpec::external(adapter_spec(f, cmd)?).map_err(Failure::bad_input)?;
            Ok(spec)
        }
        (other, _) => Err(Failure::bad_input(format!(
            "--compactor must be reference or external, got {other}"
        ))),
    }
}

impl CaseFlags {
    /// Whether any flag was given (a scenario file takes none: it says them itself).
    pub fn any(&self) -> bool {
        let k = &self.knobs;
        self.seed.is_some()
            || k.passes.is_some()
            || k.strategy.is_some()
            || !k.bugs.is_empty()
            || k.era.is_some()
            || k.anti_thrash.is_some()
            || k.profile.is_some()
            || k.session_mode.is_some()
    }
}

pub fn case_params(f: &CaseFlags) -> Result<CaseParams, Failure> {
    knob_params(f.seed.unwrap_or(args::SEED_DEFAULT), &f.knobs)
}

pub fn knob_params(seed: u64, k: &CaseKnobs) -> Result<CaseParams, Failure> {
    let compactor = choose_compactor(&k.compactor, !k.bugs.is_empty())?;
    let mut params = model_params(seed, k, &compactor)?;
    params.compactor = compactor;
    Ok(params)
}

/// The case parameters `k` asks for, validated against what `compactor` serves: strategy
/// and era (after `--profile`), passes, anti-thrash, bugs, profile, `--session-mode`. The
/// compactor of the result is the reference; `run` and the rest set theirs, `diff` keeps
/// the reference as its driving side. One function, so `diff` refuses what `run` refuses.
pub fn model_params(
    seed: u64,
    k: &CaseKnobs,
    compactor: &CompactorSpec,
) -> Result<CaseParams, Failure> {
    let (strategy, era) = k.strategy_and_era(compactor)?;
    let params = CaseParams::parse_with(
        seed,
        k.passes.unwrap_or(args::PASSES_DEFAULT),
        &strategy,
        era,
        k.anti_thrash.as_deref(),
        &k.bugs,
    )?;
    let params = params.with_profile(k.profile()?);
    params.with_session_mode(k.session_mode.as_deref())
}

/// `FILE` with case flags is bad input: the file says every one of them.
pub fn file_alone(command: &str, flags: &CaseFlags, case: Option<u32>) -> Result<(), Failure> {
    if flags.any() || case.is_some() {
        return Err(Failure::bad_input(format!(
            "{command} FILE.toml takes no --seed, --passes, --strategy, --bug, --era, \
             --anti-thrash, --session-mode or --case: the file sets them (edit it, or drop FILE)"
        )));
    }
    Ok(())
}
