//! `compactsim sweep` as a user sees it: a line per seed and a total, the same lines
//! whatever the job count, the worst outcome as the exit code, bad seeds refused.

use std::process::{Command, Output};

fn compactsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_compactsim"))
        .args(args)
        .output()
        .expect("run compactsim")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The output without the lines that name the job count and the wall time.
fn without_wall(text: &str) -> String {
    text.lines()
        .skip(1)
        .filter(|l| !l.starts_with("wall "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_clean_sweep_prints_every_seed_and_the_same_lines_whatever_the_jobs() {
    let run = |jobs| {
        compactsim(&[
            "sweep", "--seeds", "3..5", "--cases", "30", "--passes", "10", "--jobs", jobs,
        ])
    };
    let (a, b) = (run("1"), run("2"));
    let text = stdout(&a);
    assert_eq!(a.status.code(), Some(0), "{text}");
    assert!(
        text.starts_with("SEEDS=3..5 cases=30 --passes 10 --strategy micro"),
        "{text}"
    );
    for seed in ["3", "4", "5"] {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().next() == Some(seed)),
            "seed {seed}: {text}"
        );
    }
    let total = text
        .lines()
        .find(|l| l.trim_start().starts_with("total"))
        .unwrap();
    assert_eq!(total.split_whitespace().nth(1), Some("90"), "{total}");
    assert_eq!(without_wall(&text), without_wall(&stdout(&b)));
}

#[test]
fn a_bug_switch_fails_the_sweep_with_a_repro_per_failing_seed() {
    let o = compactsim(&[
        "sweep",
        "--seeds",
        "1..2",
        "--cases",
        "30",
        "--bug",
        "H-75345-B",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    for seed in [1, 2] {
        let line = format!("seed {seed}: ");
        let repro = text.lines().find(|l| l.starts_with(&line)).expect(&line);
        assert!(
            repro.contains(&format!("compactsim replay --seed {seed} "))
                && repro.contains("--bug H-75345-B"),
            "{repro}"
        );
    }
}

#[test]
fn bad_seed_ranges_are_bad_input() {
    for bad in ["9..1", "x", "1..100001"] {
        let o = compactsim(&["sweep", "--seeds", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("--seeds"),
            "{bad}"
        );
    }
}

/// `--compactor external` judges the adapter, not the reference model: an adapter that
/// crashes on its first pass fails every case of the sweep (exit 4, the adapter named).
#[test]
fn a_sweep_with_an_external_compactor_runs_the_adapter() {
    let crash = format!(
        "python3 {}/../adapters/reference/fixtures/crash.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let o = compactsim(&[
        "sweep",
        "--seeds",
        "1..1",
        "--cases",
        "2",
        "--compactor",
        "external",
        "--adapter",
        &crash,
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(4), "{text}");
    assert!(
        text.contains("adapter failure") && text.contains("crash.py"),
        "{text}"
    );
    let total = text
        .lines()
        .find(|l| l.trim_start().starts_with("total"))
        .unwrap();
    assert_eq!(total.split_whitespace().last(), Some("2"), "{total}");
}
