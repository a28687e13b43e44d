//! The flags of `matrix`, `shrink`, `sweep`, `selftest` and `diff`, and their checks
//! into each command's request.

use crate::cli::args::{self, CaseParams};
use crate::cli::exit::{Exit, Failure};
use crate::cli::flags::{adapter_spec, case_params, choose_compactor, file_alone, model_params};
use crate::cli::flags::{CaseFlags, CaseKnobs, CompactorFlags};
use crate::cli::{diff, selftest, shrink};
use compactsim_harness::compactor::CompactorSpec;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct MatrixArgs {
    /// The matrix file (e.g. scenarios/matrix/hermes.toml).
    pub file: PathBuf,
    /// Root seed of every default suite [default: 20260731].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Passes with work per case [default: 25].
    #[arg(long)]
    pub passes: Option<u32>,
    /// Cases of each release's default suite.
    #[arg(long, default_value_t = args::CASES_DEFAULT)]
    pub cases: u32,
    /// Worker threads (default: all cores). matrix.json does not depend on it.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Only this release of the file (repeatable; default: all, in file order).
    #[arg(long = "release", value_name = "NAME")]
    pub releases: Vec<String>,
    /// Output directory.
    #[arg(long, default_value = crate::cli::matrix::OUT_DEFAULT)]
    pub out: PathBuf,
    /// Per-request limit of every adapter in milliseconds [default: 60000].
    #[arg(long, value_name = "MS")]
    pub adapter_timeout_ms: Option<u64>,
    /// Start-up limit of every adapter in milliseconds (a cold venv) [default: 120000].
    #[arg(long, value_name = "MS")]
    pub adapter_startup_timeout_ms: Option<u64>,
}

/// `matrix`: the request, validated.
pub fn matrix_command(a: MatrixArgs) -> Result<Exit, Failure> {
    use compactsim_harness::external::{DEFAULT_STARTUP_TIMEOUT_MS, DEFAULT_TIMEOUT_MS};
    let passes = a.passes.unwrap_or(args::PASSES_DEFAULT);
    // The seed and passes are checked as any run's are.
    CaseParams::parse(
        a.seed.unwrap_or(args::SEED_DEFAULT),
        passes,
        args::STRATEGY_DEFAULT,
        &[],
    )?;
    crate::cli::matrix::matrix(&crate::cli::matrix::MatrixRequest {
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
pub struct ShrinkArgs {
    /// A scenario file to shrink instead of --seed/--case.
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub case_flags: CaseFlags,
    /// Case id.
    #[arg(long, required_unless_present = "file")]
    pub case: Option<u32>,
    /// Wall-time cap in seconds (the attempt bound is fixed).
    #[arg(long, default_value_t = shrink::SHRINK_TIME_DEFAULT_S)]
    pub shrink_time: f64,
    /// The invariant to shrink for, wherever it fires in the case (`run --verdicts all`
    /// lists them); default: the case's first violated invariant.
    #[arg(long)]
    pub invariant: Option<String>,
    /// Keep the kind of the witness too: a reduction is kept only when the --invariant
    /// violation it gives says TEXT (a plain, case-sensitive substring of its message or
    /// of one of its witness facts), and the case must break the invariant so.
    #[arg(long, value_name = "TEXT", requires = "invariant")]
    pub witness: Option<String>,
    /// Run directory (default: target/compactsim/<name>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run name, used for the default output directory.
    #[arg(long, default_value = "run")]
    pub name: String,
}

#[derive(clap::Args)]
pub struct SweepArgs {
    /// Root seeds, inclusive: `1..64` runs 64 seeds.
    #[arg(long)]
    pub seeds: String,
    #[command(flatten)]
    pub knobs: CaseKnobs,
    /// Number of cases per seed.
    #[arg(long, default_value_t = args::CASES_DEFAULT)]
    pub cases: u32,
    /// Worker threads (default: all cores). The output does not depend on it.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Output directory of junit.xml (a test case per seed x case, with wall times).
    #[arg(long, default_value = crate::cli::sweep::OUT_DEFAULT)]
    pub out: PathBuf,
}

#[derive(clap::Args)]
pub struct SelftestArgs {
    /// Root seeds each row runs, inclusive (default: 1..8; 1..2 for --compactor external).
    #[arg(long)]
    pub seeds: Option<String>,
    /// Cases of the suite per seed (default: 480; 24 for --compactor external).
    #[arg(long)]
    pub cases: Option<u32>,
    /// Passes with work per case.
    #[arg(long, default_value_t = args::PASSES_DEFAULT)]
    pub passes: u32,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Candidate runs each switch's shrink may make (the deterministic bound).
    #[arg(long, default_value_t = crate::shrink::SHRINK_ATTEMPTS_MAX)]
    pub shrink_attempts: u32,
    /// Outer wall-time cap in seconds of each switch's shrink (reported when hit).
    #[arg(long, default_value_t = selftest::SELFTEST_SHRINK_TIME_CAP_S)]
    pub shrink_time: f64,
    /// Output directory (shrunk repros go to its failures/).
    #[arg(long, default_value = "target/compactsim/selftest")]
    pub out: PathBuf,
    /// Only each switch's shrunk repro (its first credited case under its own
    /// strategy), no catch rates; exit 0 only if every repro is at most 10 turns and
    /// fails an expected invariant.
    #[arg(long)]
    pub shrink_only: bool,
    #[command(flatten)]
    pub compactor: CompactorFlags,
}

pub fn shrink_command(a: ShrinkArgs) -> Result<Exit, Failure> {
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
    if a.witness.as_deref() == Some("") {
        return Err(Failure::bad_input(
            "--witness: empty TEXT (every violation says it; give the words of the witness kind to keep)",
        ));
    }
    shrink::shrink(&shrink::ShrinkRequest {
        target,
        time: shrink::shrink_time(a.shrink_time)?,
        invariant: a.invariant,
        witness: a.witness,
        out: a
            .out
            .unwrap_or_else(|| PathBuf::from("target/compactsim").join(a.name)),
    })
}

pub fn selftest_command(a: SelftestArgs) -> Result<Exit, Failure> {
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
            crate::selftest::external::EXTERNAL_SEEDS_DEFAULT,
            crate::selftest::external::EXTERNAL_CASES_DEFAULT,
        )
    } else {
        (crate::selftest::SELFTEST_SEEDS_DEFAULT, args::CASES_DEFAULT)
    };
    let seeds = match &a.seeds {
        Some(text) => {
            compactsim_harness::sweep::SeedRange::parse(text).map_err(Failure::bad_input)?
        }
        None => compactsim_harness::sweep::SeedRange::of_count(
            crate::selftest::SELFTEST_SEED_FIRST_DEFAULT,
            seeds_default,
        ),
    };
    let cases = args::check_cases(a.cases.unwrap_or(cases_default))?;
    let jobs = args::jobs(a.jobs)?;
    if external {
        return crate::cli::selftest_external::selftest_external(
            &crate::cli::selftest_external::ExternalRequest {
                suite: crate::selftest::external::ExternalSuite {
                    seeds,
                    cases,
                    passes: a.passes,
                    compactor,
                },
                jobs,
                out: a.out,
            },
        );
    }
    let run = if a.shrink_only {
        selftest::shrink_only
    } else {
        selftest::selftest
    };
    run(&selftest::SelftestRequest {
        suite: crate::selftest::SelftestSuite {
            seeds,
            cases,
            passes: a.passes,
        },
        jobs,
        shrink: crate::shrink::Budget {
            attempts_max: a.shrink_attempts,
            time_max: Some(shrink::shrink_time(a.shrink_time)?),
        },
        out: a.out,
    })
}

#[derive(clap::Args)]
pub struct DiffArgs {
    #[command(flatten)]
    pub case: CaseFlags,
    /// Number of cases.
    #[arg(long, default_value_t = args::CASES_DEFAULT)]
    pub cases: u32,
    /// Diff only these case ids, comma-separated (each below --cases), e.g. `--only 1,5,17`.
    #[arg(long, value_delimiter = ',')]
    pub only: Option<Vec<u32>>,
    /// Worker threads (default: all cores). The reports do not depend on it.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Output directory [default: target/compactsim/diff].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// No progress bar (it is shown only when stderr is a terminal).
    #[arg(long)]
    pub quiet: bool,
}

/// `diff`: the reference (with any `--bug`) is one side, `--adapter` the other.
pub fn diff_command(a: DiffArgs) -> Result<Exit, Failure> {
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
pub fn diff_only(mut ids: Vec<u32>, cases: u32) -> Result<Vec<u32>, Failure> {
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
