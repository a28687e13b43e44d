//! `compactsim shrink`, the shrinking hook of `compactsim run`, and `compactsim selftest`.

mod common;
use common::{arg, compactsim, scratch};
use compactsim::scenario;

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
    let file = out.join("failures/case-1.toml");
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
        compactsim::shrink::AUTO_SHRINK_CASES_MAX,
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

#[test]
fn selftest_lists_every_bug_switch_as_caught_with_figures() {
    let out = scratch("selftest");
    let r = compactsim(&["selftest", "--out", arg(&out)]).expect_code(0);
    for info in compactsim::bugs::CATALOGUE {
        let line = r
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{} ", info.id)))
            .unwrap_or_else(|| panic!("{} missing:\n{}", info.id, r.stdout));
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells[2], "yes", "{line}");
        assert!(info.expected.contains(&cells[3]), "{line}");
        assert_eq!(cells[4], "yes", "{line}");
        assert!(
            cells[5].parse::<u32>().unwrap() >= 1 && cells[6].parse::<u64>().is_ok(),
            "{line}"
        );
        assert!(line.contains(" turns, "), "{line}");
        for required in info.requires {
            assert!(
                line.contains(&format!("[caught with {}", required.id())),
                "{line}"
            );
        }
    }
    let n = compactsim::bugs::CATALOGUE.len();
    assert!(
        r.stdout
            .contains(&format!("selftest: {n} of {n} bug switches caught")),
        "{}",
        r.stdout
    );
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
