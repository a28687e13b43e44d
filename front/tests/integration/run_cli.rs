//! The `run` / `replay` / `list` command line as a user sees it: exit codes, the first
//! line, determinism across job counts, bug switches caught with a working repro line,
//! and bad input rejected without a panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CASES: &str = "60";

fn compactsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_compactsim"))
        .args(args)
        .output()
        .expect("run compactsim")
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("run_cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn clean_run_exits_zero_and_names_the_seed_first() {
    let dir = out_dir("clean");
    let o = compactsim(&["run", "--cases", CASES, "--out", dir.to_str().unwrap()]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("SEED=20260731 cases=60 passes=25 strategy=micro bugs=none"),
        "{first}"
    );
    assert!(
        text.contains("one-marker-max") && text.contains("passes/s"),
        "{text}"
    );
    for file in ["report.json", "summary.md", "repro.txt"] {
        assert!(dir.join(file).exists(), "{file}");
    }
    assert_eq!(std::fs::read_to_string(dir.join("repro.txt")).unwrap(), "");
}

#[test]
fn report_is_byte_identical_whatever_the_job_count() {
    let (a, b) = (out_dir("jobs1"), out_dir("jobs2"));
    for (dir, jobs) in [(&a, "1"), (&b, "2")] {
        let o = compactsim(&[
            "run",
            "--cases",
            CASES,
            "--seed",
            "99",
            "--jobs",
            jobs,
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    }
    let ra = std::fs::read(a.join("report.json")).unwrap();
    let rb = std::fs::read(b.join("report.json")).unwrap();
    assert!(!ra.is_empty());
    assert!(
        ra == rb,
        "report.json differs between --jobs 1 and --jobs 2"
    );
    // junit.xml is the one report with wall times: the same but for them.
    let junit =
        |d: &std::path::Path| times_masked(&std::fs::read_to_string(d.join("junit.xml")).unwrap());
    let ja = junit(&a);
    assert_eq!(
        ja.matches("<testcase ").count(),
        CASES.parse::<usize>().unwrap()
    );
    assert_eq!(ja, junit(&b), "junit.xml differs beyond its times");
}

/// junit.xml with every `time="…"` value replaced by `time="T"`.
fn times_masked(xml: &str) -> String {
    let mut out = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(at) = rest.find(" time=\"") {
        let value = at + " time=\"".len();
        out.push_str(&rest[..value]);
        out.push('T');
        let end = rest[value..].find('"').map_or(rest.len(), |e| value + e);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Every micro bug switch is caught by one of its expected invariants, and the repro
/// line written to repro.txt replays the same violation.
#[test]
fn every_micro_bug_switch_is_caught_and_its_repro_replays() {
    let bugs = [
        (
            "H-75345-A",
            &["api-valid", "marker-contained", "tokens-non-growing"][..],
        ),
        ("H-75345-B", &["one-marker-max", "tokens-non-growing"][..]),
        ("H-M-cursor", &["exchange-absorbed-once", "api-valid"][..]),
        ("H-M-resume", &["marker-contained"][..]),
        ("H-M-defrag", &["user-turns-intact"][..]),
    ];
    for (bug, expected) in bugs {
        let dir = out_dir(bug);
        let o = compactsim(&[
            "run",
            "--cases",
            CASES,
            "--bug",
            bug,
            "--out",
            dir.to_str().unwrap(),
        ]);
        let text = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "{bug}: {text}");
        let fail = text
            .lines()
            .find(|l| l.starts_with("FAIL case"))
            .unwrap_or_else(|| panic!("{bug}: {text}"));
        let invariant = expected
            .iter()
            .find(|i| fail.contains(*i))
            .unwrap_or_else(|| panic!("{bug}: {fail}"));
        let repro = std::fs::read_to_string(dir.join("repro.txt")).unwrap();
        let line = repro.lines().next().unwrap();
        assert!(
            line.starts_with("compactsim replay ") && line.contains(&format!("--bug {bug}")),
            "{line}"
        );
        let args: Vec<&str> = line.split_whitespace().skip(1).collect();
        let replay = compactsim(&args);
        let trace = stdout(&replay);
        assert_eq!(replay.status.code(), Some(1), "{bug}: {trace}");
        assert!(
            trace.contains(&format!("VIOLATION {invariant}")),
            "{bug}: replay names another invariant"
        );
        assert!(trace.contains("witness"), "{bug}: no witness");
        assert!(
            trace.lines().any(|l| l.contains("micro pass #")),
            "{bug}: no event log"
        );
    }
}

#[test]
fn bad_input_exits_two_with_a_message_and_no_panic() {
    let cases: [&[&str]; 8] = [
        &["run", "--bug", "H-0"],
        &["run", "--bug", "H-35054"],
        &["run", "--strategy", "batch", "--era", "z"],
        &["run", "--strategy", "magic"],
        &["run", "--cases", "0"],
        &["run", "--passes", "0"],
        &["run", "--shard", "3/2"],
        &["run", "--cases", "many"],
    ];
    for args in cases {
        let o = compactsim(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.to_lowercase().contains("error"), "{args:?}: {err}");
        assert!(
            o.stdout.is_empty(),
            "{args:?}: nothing may run before the input is validated"
        );
    }
}

#[test]
fn list_prints_every_catalogue() {
    let bugs = stdout(&compactsim(&["list", "bugs"]));
    for id in [
        "H-75345-A",
        "H-75345-B",
        "H-M-cursor",
        "H-M-resume",
        "H-M-defrag",
    ] {
        assert!(bugs.contains(id), "{id}");
    }
    assert!(bugs.contains("caught by:"));
    let invariants = stdout(&compactsim(&["list", "invariants"]));
    assert!(invariants.contains("exchange-absorbed-once") && invariants.contains("catches:"));
    let shapes = stdout(&compactsim(&["list", "shapes"]));
    assert_eq!(shapes.lines().count(), 8, "{shapes}");
    assert_eq!(compactsim(&["list", "nothing"]).status.code(), Some(2));
}

/// `--session-mode` fixes how every case's compactions land: rotate never compacts in
/// place and in-place never rotates (the drawn suite has both); it is in the first line
/// and refused for micro (exit 2).
#[test]
fn session_mode_fixes_rotation_or_in_place_for_every_case() {
    let count = |summary: &str, counter: &str| -> u64 {
        summary
            .lines()
            .find(|l| l.starts_with(&format!("| {counter} ")))
            .and_then(|l| l.split('|').nth(2))
            .map_or(0, |v| v.trim().replace(',', "").parse().unwrap())
    };
    let mut seen = Vec::new();
    for mode in ["", "rotate", "in-place"] {
        let dir = out_dir(&format!("session-mode-{mode}"));
        let mut args = vec!["run", "--strategy", "gateway", "--cases", "40"];
        if !mode.is_empty() {
            args.extend(["--session-mode", mode]);
        }
        args.extend(["--out", dir.to_str().unwrap()]);
        let o = compactsim(&args);
        let text = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{text}");
        let first = text.lines().next().unwrap();
        assert_eq!(
            first.contains(&format!("session_mode={mode}")),
            !mode.is_empty(),
            "{first}"
        );
        let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        seen.push((
            count(&summary, "gateway.rotations"),
            count(&summary, "gateway.in_place_compactions"),
        ));
    }
    let [drawn, rotate, in_place] = [seen[0], seen[1], seen[2]];
    assert!(drawn.0 > 0 && drawn.1 > 0, "{seen:?}");
    assert!(
        rotate.0 > drawn.0 && in_place.0 == 0 && in_place.1 > drawn.1,
        "{seen:?}"
    );
    let o = compactsim(&["run", "--session-mode", "rotate", "--cases", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--session-mode applies"));
}
