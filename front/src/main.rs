//! The `compactsim` command line: the commands and their dispatch. The shared flags
//! live in `cli::flags`, the larger commands' flags and checks in `cli::requests`.

use clap::{Parser, Subcommand, ValueEnum};
use compactsim::cli::args::{self, Shard};
use compactsim::cli::exit::{Exit, Failure};
use compactsim::cli::flags::{case_params, choose_compactor, file_alone, knob_params};
use compactsim::cli::flags::{CaseFlags, CompactorFlags};
use compactsim::cli::requests::{
    diff_command, matrix_command, selftest_command, shrink_command, DiffArgs, MatrixArgs,
    SelftestArgs, ShrinkArgs, SweepArgs,
};
use compactsim::cli::{console, list, merge, replay, run, scenario, shrink, study, sweep};
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

#[derive(Clone, Copy, ValueEnum)]
enum ListWhat {
    Invariants,
    Bugs,
    Shapes,
    Strategies,
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
            out: a.out,
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
