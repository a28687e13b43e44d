//! The `compactsim` command line: flag parsing and dispatch, nothing else.

use clap::{Parser, Subcommand, ValueEnum};
use compactsim::cli::args::{self, CaseParams, Shard};
use compactsim::cli::exit::{Exit, Failure};
use compactsim::cli::{
    console, diff, list, merge, replay, run, scenario, selftest, shrink, study, sweep,
};
use compactsim_harness::compactor::CompactorSpec;
use compactsim_harness::engine::Verdicts;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "compactsim",
    version,
    about = "Deterministic simulator and stress-test harness for LLM-agent context compaction"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Flags that decide what a case does (shared by `run`, `replay` and `shrink`). Optional
/// here so that `replay FILE` and `shrink FILE` can refuse them; the defaults are
/// applied in [`case_params`].
#[derive(clap::Args)]
struct CaseFlags {
    /// Root seed (printed first) [default: 20260731].
    #[arg(long)]
    seed: Option<u64>,
    #[command(flatten)]
    knobs: CaseKnobs,
}

/// Everything but the seed that decides what a case does (`sweep` varies the seed).
/// Optional here so that `replay FILE` and `shrink FILE` can refuse them; the defaults
/// are applied in [`knob_params`].
#[derive(clap::Args)]
struct CaseKnobs {
    /// Passes with work per case, 1 to 10000 [default: 25].
    #[arg(long)]
    passes: Option<u32>,
    /// Compaction strategy (see `compactsim list strategies`) [default: micro; with
    /// --compactor external: the first of micro and batch the adapter's hello declares].
    #[arg(long)]
    strategy: Option<String>,
    /// Switch a catalogued bug back on (repeatable; see `compactsim list bugs`).
    #[arg(long = "bug", value_name = "ID")]
    bugs: Vec<String>,
    /// Hermes era preset for the agent loop: a, b or c (default c, the latest).
    #[arg(long, value_name = "ERA")]
    era: Option<String>,
    /// Anti-thrash policy of the agent loop: v1, v2 or v2.2 (default: the era's).
    #[arg(long = "anti-thrash", value_name = "POLICY")]
    anti_thrash: Option<String>,
    /// A real release the model follows: hermes-0.19.0 (batch, era b) or
    /// hermes-iot-0.22.2 (micro only). Sets the era.
    #[arg(long, value_name = "RELEASE")]
    profile: Option<String>,
    /// Agent-loop strategies: every case rotates its session id on compaction or
    /// compacts in place: rotate or in-place (default: each case's drawn mode).
    #[arg(long = "session-mode", value_name = "MODE")]
    session_mode: Option<String>,
    #[command(flatten)]
    compactor: CompactorFlags,
}

impl CaseKnobs {
    /// `--profile`, parsed.
    fn profile(&self) -> Result<Option<compactsim_hermes::profile::Profile>, Failure> {
        self.profile
            .as_deref()
            .map(compactsim_hermes::profile::Profile::parse)
            .transpose()
            .map_err(Failure::bad_input)
    }

    /// (strategy, era) after `--profile` and the capabilities of `compactor` (see
    /// `cli::caps`): the profile's, or the flags as given, or the adapter's default.
    fn strategy_and_era<'a>(
        &'a self,
        compactor: &CompactorSpec,
    ) -> Result<(String, Option<&'a str>), Failure> {
        let given =
            compactsim::cli::caps::strategy(compactor, self.strategy.as_deref(), self.profile()?)?;
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
struct CompactorFlags {
    /// The compactor under test: reference (the Rust models) or external (an adapter).
    #[arg(long, default_value = "reference")]
    compactor: String,
    /// The external adapter's command line, split without a shell.
    #[arg(long, value_name = "'CMD ARGS'")]
    adapter: Option<String>,
    /// Per-request limit of the adapter in milliseconds: the longest it may stay silent
    /// after the harness's last message of a request [default: 60000].
    #[arg(long, value_name = "MS")]
    adapter_timeout_ms: Option<u64>,
    /// Start-up limit of the adapter in milliseconds: from the start of a child to its
    /// hello (a cold venv import) [default: 120000].
    #[arg(long, value_name = "MS")]
    adapter_startup_timeout_ms: Option<u64>,
    /// Stall watchdog bound in milliseconds: an exchange with the adapter without any
    /// message for this long ends the run with exit 4 and both sides' state [default:
    /// twice the longer limit].
    #[arg(long, value_name = "MS")]
    adapter_watchdog_ms: Option<u64>,
    /// Write every message to and from the adapter into DIR, one JSON-lines file per
    /// case (adapters/PROTOCOL.md, "Recording").
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// The highest adapter protocol version offered: 2 (default) sends transcript
    /// deltas to an adapter that answers 2, 1 keeps every adapter on protocol 1.
    /// Reports are the same either way.
    #[arg(long, value_name = "1|2")]
    protocol: Option<u32>,
}

impl CompactorFlags {
    /// Whether any flag of an external adapter is given.
    fn any_adapter_flag(&self) -> bool {
        self.adapter_timeout_ms.is_some()
            || self.adapter_startup_timeout_ms.is_some()
            || self.adapter_watchdog_ms.is_some()
            || self.record.is_some()
            || self.protocol.is_some()
    }
}

/// The adapter of `--adapter` with its limits, recording to `--record` (its directory
/// created).
fn adapter_spec(
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
fn choose_compactor(f: &CompactorFlags, has_bugs: bool) -> Result<CompactorSpec, Failure> {
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

#[derive(Subcommand)]
enum Command {
    /// Run the suite: many conversation shapes, many passes, invariants after every transition.
    Run {
        #[command(flatten)]
        case: CaseFlags,
        /// Number of cases.
        #[arg(long, default_value_t = args::CASES_DEFAULT)]
        cases: u32,
        /// Worker threads (default: all cores). The report does not depend on it.
        #[arg(long)]
        jobs: Option<usize>,
        /// Output directory (default: target/compactsim/<name>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Run name, used for the default output directory.
        #[arg(long, default_value = "run")]
        name: String,
        /// Run only slice K of N of the case range (K/N, 0-based).
        #[arg(long)]
        shard: Option<String>,
        /// Seconds to shrink the first failing cases into failures/*.toml (0: off).
        #[arg(long, default_value_t = run::SHRINK_TIME_DEFAULT_S)]
        shrink_time: f64,
        /// No progress bar (it is shown only when stderr is a terminal).
        #[arg(long)]
        quiet: bool,
        /// all: judge each case past its first violation and report every invariant
        /// that fired (with its first step); first: stop each case at its first
        /// violation (faster; the outcome and first violation are the same).
        #[arg(long, default_value = "all", value_name = "all|first")]
        verdicts: String,
    },
    /// The suite under many root seeds: one line per seed, a total; exit = worst outcome.
    Sweep(SweepArgs),
    /// The Rust reference against an external compactor (--adapter), pass by pass, on
    /// the same transcripts and summarizer answers: diff.json and diff.md.
    Diff(DiffArgs),
    /// Rerun one case (or a scenario file) and print its event log and the witness.
    Replay {
        /// A scenario file to replay instead of --seed/--case.
        file: Option<PathBuf>,
        #[command(flatten)]
        case_flags: CaseFlags,
        /// Case id.
        #[arg(long, required_unless_present = "file")]
        case: Option<u32>,
    },
    /// Run scenario files (or every *.toml below directories) against their expectations.
    Scenario {
        /// Files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Output directory for scenarios.txt and junit.xml.
        #[arg(long, default_value = scenario::OUT_DEFAULT)]
        out: PathBuf,
        /// Print every scenario's event log and witness.
        #[arg(long)]
        trace: bool,
        /// Worker threads (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// No progress bar (it is shown only when stderr is a terminal).
        #[arg(long)]
        quiet: bool,
        /// Every agent-loop scenario rotates or compacts in place, whatever its file
        /// says: rotate or in-place (files of other strategies are refused).
        #[arg(long = "session-mode", value_name = "MODE")]
        session_mode: Option<String>,
        #[command(flatten)]
        compactor: CompactorFlags,
    },
    /// Shrink a failing case to a small scenario file under <out>/failures/.
    Shrink(ShrinkArgs),
    /// Every bug switch against the default suite: caught or not, by which invariant.
    Selftest(SelftestArgs),
    /// List invariants, bug switches, shape families or strategies.
    List { what: ListWhat },
    /// Join the run directories of `run --shard K/N` (K = 0..N) into one run directory.
    Merge {
        /// The shard run directories (each holding report.json).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output directory.
        #[arg(long, default_value = merge::OUT_DEFAULT)]
        out: PathBuf,
    },
    /// Every release of a version matrix file through its default suite and every
    /// finding's scenario: matrix.json, MATRIX.md and matrix.html (finding × release,
    /// first and last affected release, per-release invariant counts).
    Matrix(MatrixArgs),
    /// Compare compaction strategies on one session (a study file): writes study.json,
    /// SVG charts, summary.md and index.html.
    Study {
        /// The study file (e.g. scenarios/studies/code-review-3h.toml).
        file: PathBuf,
        /// Output directory (default: target/compactsim/study/<name>/).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        compactor: CompactorFlags,
    },
}

#[derive(clap::Args)]
struct MatrixArgs {
    /// The matrix file (e.g. scenarios/matrix/hermes.toml).
    file: PathBuf,
    /// Root seed of every default suite [default: 20260731].
    #[arg(long)]
    seed: Option<u64>,
    /// Passes with work per case [default: 25].
    #[arg(long)]
    passes: Option<u32>,
    /// Cases of each release's default suite.
    #[arg(long, default_value_t = args::CASES_DEFAULT)]
    cases: u32,
    /// Worker threads (default: all cores). matrix.json does not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// Only this release of the file (repeatable; default: all, in file order).
    #[arg(long = "release", value_name = "NAME")]
    releases: Vec<String>,
    /// Output directory.
    #[arg(long, default_value = compactsim::cli::matrix::OUT_DEFAULT)]
    out: PathBuf,
    /// Per-request limit of every adapter in milliseconds [default: 60000].
    #[arg(long, value_name = "MS")]
    adapter_timeout_ms: Option<u64>,
    /// Start-up limit of every adapter in milliseconds (a cold venv) [default: 120000].
    #[arg(long, value_name = "MS")]
    adapter_startup_timeout_ms: Option<u64>,
}

/// `matrix`: the request, validated.
fn matrix_command(a: MatrixArgs) -> Result<Exit, Failure> {
    use compactsim_harness::external::{DEFAULT_STARTUP_TIMEOUT_MS, DEFAULT_TIMEOUT_MS};
    let passes = a.passes.unwrap_or(args::PASSES_DEFAULT);
    // The seed and passes are checked as any run's are.
    CaseParams::parse(
        a.seed.unwrap_or(args::SEED_DEFAULT),
        passes,
        args::STRATEGY_DEFAULT,
        &[],
    )?;
    compactsim::cli::matrix::matrix(&compactsim::cli::matrix::MatrixRequest {
        file: a.file,
        seed: a.seed.unwrap_or(args::SEED_DEFAULT),
        passes,
        cases: args::check_cases(a.cases)?,
        jobs: args::jobs(a.jobs)?,
        out: a.out,
        only: a.releases,
        startup_timeout_ms: args::adapter_limit_ms(
            "--adapter-startup-timeout-ms",
            a.adapter_startup_timeout_ms,
            DEFAULT_STARTUP_TIMEOUT_MS,
        )?,
        timeout_ms: args::adapter_limit_ms(
            "--adapter-timeout-ms",
            a.adapter_timeout_ms,
            DEFAULT_TIMEOUT_MS,
        )?,
    })
}

#[derive(clap::Args)]
struct ShrinkArgs {
    /// A scenario file to shrink instead of --seed/--case.
    file: Option<PathBuf>,
    #[command(flatten)]
    case_flags: CaseFlags,
    /// Case id.
    #[arg(long, required_unless_present = "file")]
    case: Option<u32>,
    /// Wall-time cap in seconds (the attempt bound is fixed).
    #[arg(long, default_value_t = shrink::SHRINK_TIME_DEFAULT_S)]
    shrink_time: f64,
    /// The invariant to shrink for, wherever it fires in the case (`run --verdicts all`
    /// lists them); default: the case's first violated invariant.
    #[arg(long)]
    invariant: Option<String>,
    /// Run directory (default: target/compactsim/<name>/).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run name, used for the default output directory.
    #[arg(long, default_value = "run")]
    name: String,
}

#[derive(clap::Args)]
struct SweepArgs {
    /// Root seeds, inclusive: `1..64` runs 64 seeds.
    #[arg(long)]
    seeds: String,
    #[command(flatten)]
    knobs: CaseKnobs,
    /// Number of cases per seed.
    #[arg(long, default_value_t = args::CASES_DEFAULT)]
    cases: u32,
    /// Worker threads (default: all cores). The output does not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
}

#[derive(clap::Args)]
struct SelftestArgs {
    /// Root seeds each row runs, inclusive (default: 1..8; 1..2 for --compactor external).
    #[arg(long)]
    seeds: Option<String>,
    /// Cases of the suite per seed (default: 480; 24 for --compactor external).
    #[arg(long)]
    cases: Option<u32>,
    /// Passes with work per case.
    #[arg(long, default_value_t = args::PASSES_DEFAULT)]
    passes: u32,
    /// Worker threads (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Candidate runs each switch's shrink may make (the deterministic bound).
    #[arg(long, default_value_t = compactsim::shrink::SHRINK_ATTEMPTS_MAX)]
    shrink_attempts: u32,
    /// Outer wall-time cap in seconds of each switch's shrink (reported when hit).
    #[arg(long, default_value_t = selftest::SELFTEST_SHRINK_TIME_CAP_S)]
    shrink_time: f64,
    /// Output directory (shrunk repros go to its failures/).
    #[arg(long, default_value = "target/compactsim/selftest")]
    out: PathBuf,
    /// Only each switch's shrunk repro (its first credited case under its own
    /// strategy), no catch rates; exit 0 only if every repro is at most 10 turns and
    /// fails an expected invariant.
    #[arg(long)]
    shrink_only: bool,
    #[command(flatten)]
    compactor: CompactorFlags,
}

#[derive(Clone, Copy, ValueEnum)]
enum ListWhat {
    Invariants,
    Bugs,
    Shapes,
    Strategies,
}

impl CaseFlags {
    /// Whether any flag was given (a scenario file takes none: it says them itself).
    fn any(&self) -> bool {
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

fn case_params(f: &CaseFlags) -> Result<CaseParams, Failure> {
    knob_params(f.seed.unwrap_or(args::SEED_DEFAULT), &f.knobs)
}

fn knob_params(seed: u64, k: &CaseKnobs) -> Result<CaseParams, Failure> {
    let compactor = choose_compactor(&k.compactor, !k.bugs.is_empty())?;
    let mut params = model_params(seed, k, &compactor)?;
    params.compactor = compactor;
    Ok(params)
}

/// The case parameters `k` asks for, validated against what `compactor` serves: strategy
/// and era (after `--profile`), passes, anti-thrash, bugs, profile, `--session-mode`. The
/// compactor of the result is the reference; `run` and the rest set theirs, `diff` keeps
/// the reference as its driving side. One function, so `diff` refuses what `run` refuses.
fn model_params(
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
fn file_alone(command: &str, flags: &CaseFlags, case: Option<u32>) -> Result<(), Failure> {
    if flags.any() || case.is_some() {
        return Err(Failure::bad_input(format!(
            "{command} FILE.toml takes no --seed, --passes, --strategy, --bug, --era, \
             --anti-thrash, --session-mode or --case: the file sets them (edit it, or drop FILE)"
        )));
    }
    Ok(())
}

fn shrink_command(a: ShrinkArgs) -> Result<Exit, Failure> {
    let chosen = choose_compactor(
        &a.case_flags.knobs.compactor,
        !a.case_flags.knobs.bugs.is_empty(),
    )?;
    let target = match (a.file, a.case) {
        (Some(path), case) => {
            file_alone("shrink", &a.case_flags, case)?;
            shrink::Target::File { path, chosen }
        }
        (None, Some(case)) => shrink::Target::Drawn {
            params: case_params(&a.case_flags)?,
            case,
        },
        (None, None) => return Err(Failure::bad_input("shrink needs FILE.toml or --case")),
    };
    if let Some(id) = &a.invariant {
        let known: Vec<&str> = compactsim_invariants::catalogue()
            .iter()
            .map(|i| i.id)
            .chain(
                compactsim_invariants::gateway::gateway_catalogue()
                    .iter()
                    .map(|i| i.id),
            )
            .collect();
        if !known.contains(&id.as_str()) {
            return Err(Failure::bad_input(format!(
                "--invariant: unknown invariant `{id}` (known: {})",
                known.join(", ")
            )));
        }
    }
    shrink::shrink(&shrink::ShrinkRequest {
        target,
        time: shrink::shrink_time(a.shrink_time)?,
        invariant: a.invariant,
        out: a
            .out
            .unwrap_or_else(|| PathBuf::from("target/compactsim").join(a.name)),
    })
}

fn selftest_command(a: SelftestArgs) -> Result<Exit, Failure> {
    // Bug switches belong to the reference; an external compactor gets its clean runs
    // and the mutants around it instead.
    let compactor = choose_compactor(&a.compactor, false)?;
    let external = compactor != CompactorSpec::Reference;
    if a.passes == 0 || a.passes > args::PASSES_MAX {
        return Err(Failure::bad_input(format!(
            "--passes must be between 1 and {}, got {}",
            args::PASSES_MAX,
            a.passes
        )));
    }
    if a.shrink_attempts == 0 {
        return Err(Failure::bad_input("--shrink-attempts must be at least 1"));
    }
    if external && a.shrink_only {
        return Err(Failure::bad_input(
            "--shrink-only shrinks the bug switches' cases; bug switches apply to the reference compactor, not to --compactor external",
        ));
    }
    let (seeds_default, cases_default) = if external {
        (
            compactsim::selftest::external::EXTERNAL_SEEDS_DEFAULT,
            compactsim::selftest::external::EXTERNAL_CASES_DEFAULT,
        )
    } else {
        (
            compactsim::selftest::SELFTEST_SEEDS_DEFAULT,
            args::CASES_DEFAULT,
        )
    };
    let seeds = match &a.seeds {
        Some(text) => {
            compactsim_harness::sweep::SeedRange::parse(text).map_err(Failure::bad_input)?
        }
        None => compactsim_harness::sweep::SeedRange::of_count(
            compactsim::selftest::SELFTEST_SEED_FIRST_DEFAULT,
            seeds_default,
        ),
    };
    let cases = args::check_cases(a.cases.unwrap_or(cases_default))?;
    let jobs = args::jobs(a.jobs)?;
    if external {
        return compactsim::cli::selftest_external::selftest_external(
            &compactsim::cli::selftest_external::ExternalRequest {
                suite: compactsim::selftest::external::ExternalSuite {
                    seeds,
                    cases,
                    passes: a.passes,
                    compactor,
                },
                jobs,
            },
        );
    }
    let run = if a.shrink_only {
        selftest::shrink_only
    } else {
        selftest::selftest
    };
    run(&selftest::SelftestRequest {
        suite: compactsim::selftest::SelftestSuite {
            seeds,
            cases,
            passes: a.passes,
        },
        jobs,
        shrink: compactsim::shrink::Budget {
            attempts_max: a.shrink_attempts,
            time_max: Some(shrink::shrink_time(a.shrink_time)?),
        },
        out: a.out,
    })
}

#[derive(clap::Args)]
struct DiffArgs {
    #[command(flatten)]
    case: CaseFlags,
    /// Number of cases.
    #[arg(long, default_value_t = args::CASES_DEFAULT)]
    cases: u32,
    /// Diff only these case ids, comma-separated (each below --cases), e.g. `--only 1,5,17`.
    #[arg(long, value_delimiter = ',')]
    only: Option<Vec<u32>>,
    /// Worker threads (default: all cores). The reports do not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// Output directory [default: target/compactsim/diff].
    #[arg(long)]
    out: Option<PathBuf>,
    /// No progress bar (it is shown only when stderr is a terminal).
    #[arg(long)]
    quiet: bool,
}

/// `diff`: the reference (with any `--bug`) is one side, `--adapter` the other.
fn diff_command(a: DiffArgs) -> Result<Exit, Failure> {
    let f = &a.case.knobs.compactor;
    if f.compactor != "reference" {
        return Err(Failure::bad_input(
            "diff compares the reference with the --adapter compactor; drop --compactor",
        ));
    }
    let Some(command) = f.adapter.clone() else {
        return Err(Failure::bad_input("diff needs --adapter 'CMD ARGS'"));
    };
    let k = &a.case.knobs;
    let compactor =
        CompactorSpec::external(adapter_spec(f, &command)?).map_err(Failure::bad_input)?;
    let params = model_params(a.case.seed.unwrap_or(args::SEED_DEFAULT), k, &compactor)?;
    let cases = args::check_cases(a.cases)?;
    let only = a.only.map(|ids| diff_only(ids, cases)).transpose()?;
    diff::diff(&diff::DiffRequest {
        params,
        cases,
        only,
        jobs: args::jobs(a.jobs)?,
        out: a
            .out
            .unwrap_or_else(|| PathBuf::from("target/compactsim/diff")),
        compactor,
        profile: k.profile.clone(),
        quiet: a.quiet,
    })
}

/// `--only`: sorted, without repeats, each below `cases` (bad input otherwise).
fn diff_only(mut ids: Vec<u32>, cases: u32) -> Result<Vec<u32>, Failure> {
    if let Some(bad) = ids.iter().find(|&&c| c >= cases) {
        return Err(Failure::bad_input(format!(
            "--only {bad}: a case id must be below --cases {cases}"
        )));
    }
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Err(Failure::bad_input("--only needs at least one case id"));
    }
    Ok(ids)
}

fn dispatch(cli: Cli) -> Result<Exit, Failure> {
    match cli.command {
        Command::Run {
            case,
            cases,
            jobs,
            out,
            name,
            shard,
            shrink_time,
            quiet,
            verdicts,
        } => {
            let jobs = args::jobs(jobs)?;
            let req = run::RunRequest {
                params: case_params(&case)?,
                cases: args::check_cases(cases)?,
                shard: shard.as_deref().map_or(Ok(Shard::WHOLE), Shard::parse)?,
                jobs,
                out: out.unwrap_or_else(|| PathBuf::from("target/compactsim").join(name)),
                shrink_time: shrink::shrink_time(shrink_time)?,
                quiet,
                verdicts: Verdicts::parse(&verdicts).map_err(Failure::bad_input)?,
            };
            run::run(&req)
        }
        Command::Replay {
            file,
            case_flags,
            case,
        } => {
            let chosen = choose_compactor(
                &case_flags.knobs.compactor,
                !case_flags.knobs.bugs.is_empty(),
            )?;
            let (text, exit) = match (file, case) {
                (Some(file), case) => {
                    file_alone("replay", &case_flags, case)?;
                    scenario::replay_file(&file, &chosen)?
                }
                (None, Some(case)) => replay::replay(&case_params(&case_flags)?, case),
                (None, None) => return Err(Failure::bad_input("replay needs FILE.toml or --case")),
            };
            compactsim::out!("{text}");
            Ok(exit)
        }
        Command::Scenario {
            paths,
            out,
            trace,
            jobs,
            quiet,
            session_mode,
            compactor,
        } => {
            let compactor = choose_compactor(&compactor, false)?;
            scenario::scenario(&scenario::ScenarioRequest {
                paths,
                out,
                trace,
                jobs: args::jobs(jobs)?,
                quiet,
                session_mode: args::session_mode(session_mode.as_deref())?,
                compactor,
            })
        }
        Command::Sweep(a) => sweep::sweep(&sweep::SweepRequest {
            params: knob_params(0, &a.knobs)?,
            seeds: compactsim_harness::sweep::SeedRange::parse(&a.seeds)
                .map_err(Failure::bad_input)?,
            cases: args::check_cases(a.cases)?,
            jobs: args::jobs(a.jobs)?,
        }),
        Command::Shrink(a) => shrink_command(a),
        Command::Diff(a) => diff_command(a),
        Command::Study {
            file,
            out,
            compactor,
        } => study::study(&file, out, &choose_compactor(&compactor, false)?),
        Command::Matrix(a) => matrix_command(a),
        Command::Merge { dirs, out } => merge::merge(&dirs, &out),
        Command::Selftest(a) => selftest_command(a),
        Command::List { what } => {
            let listing = match what {
                ListWhat::Invariants => list::Listing::Invariants,
                ListWhat::Bugs => list::Listing::Bugs,
                ListWhat::Shapes => list::Listing::Shapes,
                ListWhat::Strategies => list::Listing::Strategies,
            };
            compactsim::out!("{}", list::render(listing));
            Ok(Exit::Clean)
        }
    }
}

/// The parsed command line. `--help` and `--version` are printed through
/// [`console::write_out`], so a closed or full standard output ends the process with a
/// non-zero exit instead of a silent 0; every other clap error keeps clap's message and
/// exit 2.
fn parse_cli() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            compactsim::out!("{}", e.render());
            std::process::exit(0)
        }
        Err(e) => e.exit(),
    }
}

fn main() -> ExitCode {
    let cli = parse_cli();
    console::handle_interrupts();
    // The command owns its compactor (an adapter's pool of children): every child ends
    // and its scratch directory is removed when `dispatch` returns and drops it.
    let result = dispatch(cli);
    match result {
        Ok(exit) => console::exit_code(exit.code() as u8),
        Err(failure) => console::end(
            &format!("error: {}", failure.message),
            failure.exit.code() as u8,
        ),
    }
}
