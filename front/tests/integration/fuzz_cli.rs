//! A fuzz target in the test suite: scenario files mutated from the corpus in
//! `scenarios/`, and argument lists for the command line, run through the built binary.
//! Whatever the input: no panic, no abort, no hang, and an exit code of 0, 1, 2 or 3
//! (bad input is exit 2 and names the file). The seed is fixed so CI is reproducible;
//! `scripts/mutation_fuzz.py` runs the same idea on the release binary for as long as one
//! likes.

use crate::common;

use common::Ended;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Cases of each property (each runs the binary once).
const CASES: u32 = 96;
/// How long one run may take before it counts as a hang (a guard, not a speed test).
const HANG_GUARD: Duration = Duration::from_secs(240);
const EXITS_ALLOWED: [i32; 4] = [0, 1, 2, 3];

/// Numbers that sit on or across a limit.
const NUMBERS: [&str; 18] = [
    "0",
    "1",
    "2",
    "7",
    "12",
    "255",
    "1000",
    "1001",
    "65535",
    "100000",
    "100001",
    "1000000",
    "2000001",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "-1",
];

/// Lines a mutation may insert.
const SNIPPETS: [&str; 14] = [
    "turns_max = 100000",
    "passes = 10000",
    "[gateway]",
    "expect = \"clean\"",
    "strategy = \"batch\"",
    "strategy = \"both\"",
    "[[script.turns]]",
    "rows = [{ role = \"assistant\", chars = 5, calls = [{ tool = \"t\" }] }]",
    "rows = [{ role = \"tool\", chars = 5 }]",
    "[summarizer]\nexpansion_per_mille = 1000",
    "[faults]\nrestarts = [1, 1]",
    "\"",
    "x = [",
    "format = 2",
];

fn corpus() -> Vec<(PathBuf, String)> {
    let files = common::reference_scenarios();
    assert!(files.len() >= 10, "the corpus: {files:?}");
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap();
            (f, text)
        })
        .collect()
}

#[derive(Clone, Debug)]
enum Mutation {
    Number { nth: usize, value: usize },
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    InsertLine { at: usize, snippet: usize },
    Byte { at: usize, byte: u8 },
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), 0..NUMBERS.len()).prop_map(|(nth, value)| Mutation::Number { nth, value }),
        1 => any::<usize>().prop_map(Mutation::DeleteLine),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        2 => (any::<usize>(), 0..SNIPPETS.len()).prop_map(|(at, snippet)| Mutation::InsertLine { at, snippet }),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Byte { at, byte }),
        1 => any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// Byte ranges of the integer literals of `text`.
fn numbers(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

fn apply(text: &[u8], m: &Mutation) -> Vec<u8> {
    let s = String::from_utf8_lossy(text).into_owned();
    let mut lines: Vec<String> = s.lines().map(str::to_string).collect();
    let n = lines.len().max(1);
    match m {
        Mutation::Number { nth, value } => {
            let found = numbers(&s);
            if found.is_empty() {
                return text.to_vec();
            }
            let (a, b) = found[nth % found.len()];
            return format!("{}{}{}", &s[..a], NUMBERS[*value], &s[b..]).into_bytes();
        }
        Mutation::DeleteLine(i) if !lines.is_empty() => {
            lines.remove(i % n);
        }
        Mutation::DuplicateLine(i) if !lines.is_empty() => {
            let l = lines[i % n].clone();
            lines.insert(i % n, l);
        }
        Mutation::SwapLines(a, b) if !lines.is_empty() => lines.swap(a % n, b % n),
        Mutation::InsertLine { at, snippet } => {
            lines.insert(at % (lines.len() + 1), SNIPPETS[*snippet].into())
        }
        Mutation::Byte { at, byte } => {
            let mut t = text.to_vec();
            if !t.is_empty() {
                let i = at % t.len();
                t[i] = *byte;
            }
            return t;
        }
        Mutation::Truncate(at) => return text[..at % (text.len() + 1)].to_vec(),
        _ => {}
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out.into_bytes()
}

fn run(dir: &Path, args: &[String]) -> Ended {
    let child = Command::new(env!("CARGO_BIN_EXE_compactsim"))
        .args(args)
        .current_dir(dir)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_guarded(child, HANG_GUARD)
}

fn check(e: &Ended, what: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        e.code.is_some_and(|c| EXITS_ALLOWED.contains(&c)),
        "{what}: exit {:?} (a signal if None)\n{}",
        e.code,
        e.stderr
    );
    prop_assert!(!e.stderr.contains("panicked"), "{what}: {}", e.stderr);
    Ok(())
}

fn config() -> Config {
    Config {
        cases: CASES,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(20_260_731),
        ..Config::default()
    }
}

/// Runs `property` over `strategy` with [`config`]; returns the exit-code histogram.
fn fuzz<S: Strategy>(
    strategy: S,
    property: impl Fn(S::Value) -> Result<Option<i32>, TestCaseError>,
) -> BTreeMap<Option<i32>, u32> {
    let histogram = RefCell::new(BTreeMap::new());
    let mut runner = TestRunner::new(config());
    let result = runner.run(&strategy, |input| {
        let code = property(input)?;
        *histogram.borrow_mut().entry(code).or_insert(0) += 1;
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    histogram.into_inner()
}

#[test]
fn mutated_scenario_files_never_panic_hang_or_fail_the_harness() {
    let corpus = corpus();
    let strategy = (any::<usize>(), prop::collection::vec(mutation(), 1..5));
    let histogram = fuzz(strategy, |(pick, mutations)| {
        let (path, text) = &corpus[pick % corpus.len()];
        let mut bytes = text.clone().into_bytes();
        for m in &mutations {
            bytes = apply(&bytes, m);
        }
        let dir = common::scratch("fuzz-scenario");
        std::fs::write(dir.join("m.toml"), &bytes).unwrap();
        let e = run(
            &dir,
            &[
                "scenario".into(),
                "m.toml".into(),
                "--out".into(),
                "out".into(),
            ],
        );
        let what = format!("{} with {mutations:?}", path.display());
        check(&e, &what)?;
        if e.code == Some(2) {
            prop_assert!(
                e.stderr.contains("m.toml"),
                "{what}: bad input names the file: {}",
                e.stderr
            );
        }
        Ok(e.code)
    });
    println!("mutated scenario files: exit codes {histogram:?}");
    // The mutants reach both the loader's errors and the engine.
    assert!(histogram.contains_key(&Some(2)), "{histogram:?}");
    assert!(
        histogram.contains_key(&Some(0)) || histogram.contains_key(&Some(1)),
        "{histogram:?}"
    );
}

#[test]
fn generated_argument_lists_never_panic_hang_or_fail_the_harness() {
    let commands = vec!["run", "replay", "scenario", "list", "shrink", "bogus"];
    let strategy = (
        prop::sample::select(commands),
        prop::collection::vec((0..FLAGS.len(), any::<usize>()), 0..4),
        prop::option::of(any::<usize>()),
    );
    let histogram = fuzz(strategy, |(command, flags, positional)| {
        let dir = common::scratch("fuzz-args");
        let mut args: Vec<String> = vec![command.into()];
        if let Some(p) = positional {
            let pool = if command == "list" { LISTS } else { FILES };
            args.push(value(pool[p % pool.len()]));
        }
        for (f, v) in &flags {
            let (flag, pool) = FLAGS[*f];
            args.push(flag.into());
            if !pool.is_empty() {
                args.push(value(pool[v % pool.len()]));
            }
        }
        if command == "run" && !args.iter().any(|a| a == "--cases") {
            args.extend(["--cases".into(), "3".into()]);
        }
        if command == "shrink" && !args.iter().any(|a| a == "--shrink-time") {
            args.extend(["--shrink-time".into(), "1".into()]);
        }
        let e = run(&dir, &args);
        check(&e, &format!("{args:?}"))?;
        Ok(e.code)
    });
    println!("argument lists: exit codes {histogram:?}");
    assert!(histogram.contains_key(&Some(2)), "{histogram:?}");
    assert!(histogram.contains_key(&Some(0)), "{histogram:?}");
}

/// Flags with their values: valid ones, and ones on or across a limit.
const FLAGS: [(&str, &[&str]); 15] = [
    (
        "--seed",
        &[
            "0",
            "7",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
        ],
    ),
    ("--cases", &["1", "3", "0", "10000001", "x"]),
    ("--passes", &["1", "5", "25", "0", "10001"]),
    ("--strategy", &["micro", "batch", "both", "nope"]),
    ("--bug", &["H-75345-B", "H-M-cursor", "h-2153", "nope"]),
    ("--era", &["a", "b", "c", "z"]),
    ("--anti-thrash", &["v1", "v2", "v2.2", "v9"]),
    ("--jobs", &["1", "2", "0", "257", "18446744073709551615"]),
    ("--out", &["out", "/proc/x", "/", "/dev/zero", ""]),
    ("--shard", &["0/1", "1/2", "0/16", "1/0", "a/b"]),
    ("--shrink-time", &["0", "1", "-1", "NaN", "1e300", "inf"]),
    ("--case", &["0", "3", "4294967295", "-1"]),
    ("--name", &["n", "/", "/proc/x"]),
    ("--trace", &[]),
    ("--nope", &["x"]),
];

/// Positional arguments: scenario files and directories (`SEED` stands for a file of the
/// corpus), and `list` catalogues.
const FILES: &[&str] = &[
    "SEED",
    "SEED",
    "/dev/zero",
    "absent.toml",
    ".",
    "/proc/self/status",
];
const LISTS: &[&str] = &["invariants", "bugs", "shapes", "strategies", "nope"];

/// A value; `SEED` stands for a scenario of the corpus.
fn value(v: &str) -> String {
    match v {
        "SEED" => common::repo()
            .join("scenarios/seeds/h-75345-b.toml")
            .display()
            .to_string(),
        v => v.into(),
    }
}
