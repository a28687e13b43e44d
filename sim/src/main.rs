//! The `compactsim` command line: flag parsing and dispatch, nothing else.

use clap::{Parser, Subcommand, ValueEnum};
use compactsim::cli::args::{self, CaseParams, Shard};
use compactsim::cli::exit::{Exit, Failure};
use compactsim::cli::{list, replay, run};
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

/// Flags that decide what a case does (shared by `run` and `replay`).
#[derive(clap::Args)]
struct CaseFlags {
    /// Root seed (printed first; the default is fixed).
    #[arg(long, default_value_t = args::SEED_DEFAULT)]
    seed: u64,
    /// Passes with work per case.
    #[arg(long, default_value_t = args::PASSES_DEFAULT)]
    passes: u32,
    /// Compaction strategy (see `compactsim list strategies`).
    #[arg(long, default_value = "micro")]
    strategy: String,
    /// Switch a catalogued bug back on (repeatable; see `compactsim list bugs`).
    #[arg(long = "bug", value_name = "ID")]
    bugs: Vec<String>,
    /// Hermes era preset for the agent loop: a, b or c (default c, the latest).
    #[arg(long, value_name = "ERA")]
    era: Option<String>,
    /// Anti-thrash policy of the agent loop: v1, v2 or v2.2 (default: the era's).
    #[arg(long = "anti-thrash", value_name = "POLICY")]
    anti_thrash: Option<String>,
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
    },
    /// Rerun one case and print its event log and the witness of its violation.
    Replay {
        #[command(flatten)]
        case_flags: CaseFlags,
        /// Case id.
        #[arg(long)]
        case: u32,
    },
    /// List invariants, bug switches, shape families or strategies.
    List { what: ListWhat },
}

#[derive(Clone, Copy, ValueEnum)]
enum ListWhat {
    Invariants,
    Bugs,
    Shapes,
    Strategies,
}

fn case_params(f: &CaseFlags) -> Result<CaseParams, Failure> {
    CaseParams::parse_with(
        f.seed,
        f.passes,
        &f.strategy,
        f.era.as_deref(),
        f.anti_thrash.as_deref(),
        &f.bugs,
    )
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
        } => {
            let jobs =
                jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            if jobs == 0 {
                return Err(Failure::bad_input("--jobs must be at least 1"));
            }
            let req = run::RunRequest {
                params: case_params(&case)?,
                cases: args::check_cases(cases)?,
                shard: shard.as_deref().map_or(Ok(Shard::WHOLE), Shard::parse)?,
                jobs,
                out: out.unwrap_or_else(|| PathBuf::from("target/compactsim").join(name)),
            };
            run::run(&req)
        }
        Command::Replay { case_flags, case } => {
            let (text, exit) = replay::replay(&case_params(&case_flags)?, case);
            print!("{text}");
            Ok(exit)
        }
        Command::List { what } => {
            let listing = match what {
                ListWhat::Invariants => list::Listing::Invariants,
                ListWhat::Bugs => list::Listing::Bugs,
                ListWhat::Shapes => list::Listing::Shapes,
                ListWhat::Strategies => list::Listing::Strategies,
            };
            print!("{}", list::render(listing));
            Ok(Exit::Clean)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(exit) => ExitCode::from(exit.code() as u8),
        Err(failure) => {
            eprintln!("error: {}", failure.message);
            ExitCode::from(failure.exit.code() as u8)
        }
    }
}
