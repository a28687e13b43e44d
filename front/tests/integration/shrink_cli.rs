//! `compactsim shrink`, the shrinking hook of `compactsim run`, and `compactsim selftest`.

use crate::common;
use common::{arg, compactsim, scratch};
use compactsim::scenario;
use compactsim_hermes::strategy::StrategyKind;

#[test]
fn a_shrunk_h_75345_b_has_at_most_10_turns_fails_the_same_invariant_and_its_file_reproduces_it() {
    let out = scratch("shrink-h-75345-b");
    let r = compactsim(&[
        "shrink",
        "--seed",
        "20260731",
        "--case",
        "1",
        "--bug",
        "H-75345-B",
        "--out",
        arg(&out),
    ])
    .expect_code(0);
    assert!(r.stdout.contains("shrunk one-marker-max:"), "{}", r.stdout);
    assert!(r.stdout.contains("stopped by"), "{}", r.stdout);
    assert!(r
        .stdout
        .lines()
        .any(|l| l.trim_start().starts_with("attempt")));
    let file = out.join("failures/case-1.shrunk.toml");
    let s = scenario::load(&file).unwrap();
    let turns = s
        .spec
        .plan
        .as_ref()
        .unwrap()
        .script
        .as_ref()
        .unwrap()
        .turns
        .len();
    assert!(turns <= 10, "{turns} turns");
    assert!(
        matches!(&s.expect, scenario::Expect::Violated { invariant, .. } if invariant == "one-marker-max")
    );
    let g = compactsim(&["scenario", arg(&file), "--out", arg(&out.join("gate"))]).expect_code(0);
    assert!(g.stdout.contains("1 hold"));
    // The bug off, the same file is clean: it reproduces the bug, not something else.
    let fixed = std::fs::read_to_string(&file)
        .unwrap()
        .replace("bugs = [\"H-75345-B\"]", "bugs = []");
    std::fs::write(out.join("fixed.toml"), fixed).unwrap();
    let f = compactsim(&[
        "scenario",
        arg(&out.join("fixed.toml")),
        "--out",
        arg(&out.join("gate2")),
    ])
    .expect_code(1);
    assert!(f.stdout.contains("got clean"), "{}", f.stdout);
}

#[test]
fn shrink_refuses_a_clean_case_and_bad_flags() {
    let r = compactsim(&[
        "shrink",
        "--seed",
        "20260731",
        "--case",
        "0",
        "--out",
        arg(&scratch("shrink-clean")),
    ])
    .expect_code(2);
    assert!(r.stderr.contains("nothing to shrink"), "{}", r.stderr);
    compactsim(&["shrink", "--case", "0", "--shrink-time", "-1"]).expect_code(2);
    compactsim(&["shrink"]).expect_code(2);
}

#[test]
fn run_shrinks_its_first_failures_into_scenario_files_the_gate_reproduces() {
    let out = scratch("run-auto-shrink");
    let r = compactsim(&[
        "run",
        "--cases",
        "8",
        "--bug",
        "H-M-cursor",
        "--shrink-time",
        "20",
        "--out",
        arg(&out),
    ])
    .expect_code(1);
    let written: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("shrunk case "))
        .collect();
    assert_eq!(
        written.len(),
        compactsim::cli::failures::AUTO_SHRINK_CASES_MAX,
        "{}",
        r.stdout
    );
    let failures = out.join("failures");
    for line in &written {
        assert!(line.contains(&failures.display().to_string()), "{line}");
    }
    compactsim(&["scenario", arg(&failures), "--out", arg(&out.join("gate"))]).expect_code(0);
    let off = scratch("run-no-shrink");
    let r = compactsim(&[
        "run",
        "--cases",
        "4",
        "--bug",
        "H-M-cursor",
        "--shrink-time",
        "0",
        "--out",
        arg(&off),
    ])
    .expect_code(1);
    assert!(!r.stdout.contains("shrunk case") && !off.join("failures").exists());
}

/// The files under `dir`, name -> bytes.
fn files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (p.display().to_string(), std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn selftest_prints_a_catch_rate_per_switch_strategy_and_seed_and_shrinks_reproducibly() {
    let run = |name: &str| {
        let out = scratch(name);
        let args = [
            "selftest",
            "--seeds",
            "4..5",
            "--cases",
            "30",
            "--passes",
            "8",
            "--shrink-attempts",
            "40",
            "--out",
            arg(&out),
        ];
        let o = compactsim(&args);
        (o, out)
    };
    let ((a, a_dir), (b, b_dir)) = (run("selftest-a"), run("selftest-b"));
    // A row too shallow, or a repro (here from 40 attempts) over 10 turns or failing
    // another invariant, fails the selftest.
    let failed = a.stdout.lines().any(|l| {
        ["TOO LOW", "TOO LONG:", "WRONG INVARIANT:", "NOT SHRUNK:"]
            .iter()
            .any(|p| l.starts_with(p))
    });
    assert_eq!(a.code, if failed { 1 } else { 0 }, "{}", a.stdout);
    for info in compactsim_hermes::bugs::CATALOGUE {
        let strategies: &[&str] = if info.strategy == StrategyKind::Gateway {
            &["gateway"]
        } else {
            &[info.strategy.name(), "both"]
        };
        for &strategy in strategies {
            let line = a
                .stdout
                .lines()
                .find(|l| l.starts_with(&format!("{:<12} {:<6}", info.id, strategy)))
                .unwrap_or_else(|| panic!("{} {strategy} missing:\n{}", info.id, a.stdout));
            let cells: Vec<&str> = line.split_whitespace().collect();
            let caught: Vec<u32> = cells[2..4].iter().map(|c| c.parse().unwrap()).collect();
            assert!(caught.iter().all(|&c| c <= 30), "{line}");
            assert!(cells[4].ends_with('%'), "{line}");
            let low = caught.iter().any(|&c| c * 1000 < 10 * 30);
            assert_eq!(
                line.contains("TOO LOW") || line.contains("exempt, "),
                low,
                "{line}"
            );
        }
    }
    let files_a = files(&a_dir.join("failures"));
    assert!(!files_a.is_empty(), "{}", a.stdout);
    let names = |f: &[(String, Vec<u8>)]| -> Vec<(String, Vec<u8>)> {
        f.iter()
            .map(|(n, c)| (n.rsplit('/').next().unwrap().to_string(), c.clone()))
            .collect()
    };
    assert_eq!(names(&files_a), names(&files(&b_dir.join("failures"))));
    assert!(b.stdout.contains("selftest: "), "{}", b.stdout);
}

#[test]
fn a_scenario_file_can_be_shrunk_too() {
    let out = scratch("shrink-file");
    compactsim(&[
        "shrink",
        "scenarios/seeds/h-m-defrag.toml",
        "--out",
        arg(&out),
    ])
    .expect_code(0);
    let file = out.join("failures/h-m-defrag.shrunk.toml");
    let s = scenario::load(&file).unwrap();
    assert!(
        matches!(&s.expect, scenario::Expect::Violated { invariant, .. } if invariant == "user-turns-intact")
    );
    compactsim(&["scenario", arg(&file), "--out", arg(&out.join("gate"))]).expect_code(0);
}

/// Case 6 of seed 20260731 with H-10896 and H-M-defrag under `both` first breaks
/// user-turns-intact as "newest user text (of mN) left the verbatim tail" (H-10896);
/// H-M-defrag's "real user text of mN lost or changed" is the same invariant.
const TWO_KINDS: [&str; 11] = [
    "shrink",
    "--seed",
    "20260731",
    "--strategy",
    "both",
    "--bug",
    "H-10896",
    "--bug",
    "H-M-defrag",
    "--case",
    "6",
];

/// Shrinks [`TWO_KINDS`] for user-turns-intact with `extra` flags into `out`; the shrunk
/// file's text and the first VIOLATION line its replay prints.
fn shrink_two_kinds(out: &std::path::Path, extra: &[&str]) -> (String, String) {
    let mut args = TWO_KINDS.to_vec();
    args.extend(["--invariant", "user-turns-intact", "--out", arg(out)]);
    args.extend(extra);
    compactsim(&args).expect_code(0);
    let file = out.join("failures/case-6.shrunk.toml");
    // Exit 0: the file expects the violation it shows.
    let replay = compactsim(&["replay", arg(&file)]).expect_code(0);
    let violation = replay
        .stdout
        .lines()
        .find(|l| l.starts_with("VIOLATION user-turns-intact"))
        .unwrap_or_else(|| panic!("{}", replay.stdout))
        .to_string();
    (std::fs::read_to_string(&file).unwrap(), violation)
}

#[test]
fn shrink_witness_keeps_the_kind_of_the_witness_where_the_invariant_alone_drifts() {
    // Without --witness the shrink keeps user-turns-intact and ends on the other kind.
    let (_, drifted) = shrink_two_kinds(&scratch("shrink-witness-off"), &[]);
    assert!(drifted.contains("real user text of"), "{drifted}");
    // With it, every kept reduction says the original's words.
    let kept = ["--witness", "newest user text"];
    let (text, violation) = shrink_two_kinds(&scratch("shrink-witness-on"), &kept);
    assert!(violation.contains("newest user text (of m"), "{violation}");
    assert!(
        text.contains("--invariant user-turns-intact --witness 'newest user text'"),
        "the Shrunk by line repeats the flag: {text}"
    );
    // The same input gives the same file, byte for byte.
    let (again, _) = shrink_two_kinds(&scratch("shrink-witness-again"), &kept);
    assert_eq!(text, again);
}

#[test]
fn shrink_witness_refuses_empty_text_a_missing_invariant_and_text_the_case_never_says() {
    let out = scratch("shrink-witness-bad");
    let with = |extra: &[&str]| {
        let mut args = TWO_KINDS.to_vec();
        args.extend(["--out", arg(&out)]);
        args.extend(extra);
        compactsim(&args)
    };
    let empty = with(&["--invariant", "user-turns-intact", "--witness", ""]).expect_code(2);
    assert!(
        empty.stderr.contains("--witness: empty TEXT"),
        "{}",
        empty.stderr
    );
    let alone = with(&["--witness", "newest user text"]).expect_code(2);
    assert!(alone.stderr.contains("--invariant"), "{}", alone.stderr);
    // The text is case-sensitive: "Newest" is not what the case says.
    for text in ["newest visible reply", "Newest user text"] {
        let r = with(&["--invariant", "user-turns-intact", "--witness", text]).expect_code(2);
        assert!(
            r.stderr
                .contains(&format!("no violation of it says `{text}`"))
                && r.stderr.contains("newest user text (of m"),
            "{}",
            r.stderr
        );
    }
    assert!(
        !out.join("failures").exists()
            || std::fs::read_dir(out.join("failures"))
                .unwrap()
                .next()
                .is_none()
    );
    // A scenario file is shrunk the same way.
    let file = |witness: &str, code: i32| {
        compactsim(&[
            "shrink",
            "scenarios/seeds/h-m-defrag.toml",
            "--invariant",
            "user-turns-intact",
            "--witness",
            witness,
            "--out",
            arg(&scratch("shrink-witness-file")),
        ])
        .expect_code(code)
    };
    file("real user text of", 0);
    let r = file("newest visible reply", 2);
    assert!(r.stderr.contains("no violation of it says"), "{}", r.stderr);
}
