//! `compactsim scenario` and `compactsim replay FILE`: exit codes, the table, the
//! report files, malformed files.

use crate::common;
use common::{arg, compactsim, repo, scratch};
use quick_junit::{NonSuccessKind, Report, TestCaseStatus};

fn junit(dir: &std::path::Path) -> Report {
    let xml = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    Report::deserialize_from_str(&xml).expect("junit.xml parses back as JUnit XML")
}

#[test]
fn the_committed_scenarios_hold_and_junit_parses_back_with_one_case_each() {
    let out = scratch("scenarios-all");
    let files = common::reference_scenarios();
    let mut args = vec!["scenario", "--out", arg(&out)];
    args.extend(files.iter().map(|f| arg(f)));
    let r = compactsim(&args).expect_code(0);
    assert!(files.len() >= 11, "{files:?}");
    for f in &files {
        let shown = f.strip_prefix(repo()).unwrap().display().to_string();
        assert!(
            r.stdout.contains(&shown),
            "{shown} missing from\n{}",
            r.stdout
        );
    }
    assert!(r.stdout.contains(&format!(
        "{} scenarios, {} hold, 0 failed",
        files.len(),
        files.len()
    )));
    let report = junit(&out);
    assert_eq!(report.test_suites.len(), 1);
    let suite = &report.test_suites[0];
    assert_eq!(suite.test_cases.len(), files.len());
    assert_eq!((suite.failures, suite.errors), (0, 0));
    let summary = std::fs::read_to_string(out.join("scenarios.txt")).unwrap();
    assert_eq!(summary.lines().count(), files.len());
    assert!(summary.lines().all(|l| l.starts_with("ok ")), "{summary}");
}

#[test]
fn a_broken_expectation_exits_1_and_is_named_in_the_output_and_in_junit() {
    let dir = scratch("scenarios-broken");
    let seeds = repo().join("scenarios/seeds");
    let good = std::fs::read_to_string(seeds.join("h-m-resume.toml")).unwrap();
    std::fs::write(dir.join("a-good.toml"), &good).unwrap();
    let broken = good.replace(
        "expect = { violated = \"marker-contained\" }",
        "expect = \"clean\"",
    );
    assert_ne!(broken, good);
    std::fs::write(dir.join("b-broken.toml"), broken).unwrap();
    let out = dir.join("out");
    let r = compactsim(&["scenario", arg(&dir), "--out", arg(&out)]).expect_code(1);
    let failed: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("FAILED "))
        .collect();
    assert_eq!(failed.len(), 1, "{}", r.stdout);
    assert!(
        failed[0].contains("b-broken.toml")
            && failed[0].contains("expected clean, got violated marker-contained"),
        "{}",
        failed[0]
    );
    let report = junit(&out);
    let cases = &report.test_suites[0].test_cases;
    assert_eq!(cases.len(), 2);
    assert!(matches!(cases[0].status, TestCaseStatus::Success { .. }));
    match &cases[1].status {
        TestCaseStatus::NonSuccess { kind, message, .. } => {
            assert_eq!(*kind, NonSuccessKind::Failure);
            assert!(message.as_ref().unwrap().contains("expected clean"));
        }
        other => panic!("{other:?}"),
    }
    assert!(cases[1].name.contains("b-broken.toml"));
}

#[test]
fn a_malformed_file_exits_2_naming_file_line_and_column_before_anything_runs() {
    let dir = scratch("scenarios-malformed");
    std::fs::write(dir.join("a-good.toml"), "format = 1\nexpect = \"clean\"\n").unwrap();
    std::fs::write(
        dir.join("b-bad.toml"),
        "format = 1\nexpect = \"clean\"\n\n[micro]\nevery_n_turns = 1\ntail_budget = 600\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("c-bad.toml"),
        "format = 1\nexpect = { violated = \"one-marker-maximum\" }\n",
    )
    .unwrap();
    let r = compactsim(&["scenario", arg(&dir), "--out", arg(&dir.join("out"))]).expect_code(2);
    let b = format!("{}:6:1:", dir.join("b-bad.toml").display());
    let c = format!("{}:2:10:", dir.join("c-bad.toml").display());
    assert!(
        r.stderr.contains(&b) && r.stderr.contains("tail_budget"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(&c) && r.stderr.contains("one-marker-maximum"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("verdict"), "ran anyway:\n{}", r.stdout);
    assert!(!dir.join("out").exists());
    compactsim(&["scenario", arg(&dir.join("missing"))]).expect_code(2);
    compactsim(&["scenario", arg(&dir.join("out-none"))]).expect_code(2);
}

#[test]
fn a_malformed_gateway_table_is_exit_2_naming_file_and_line() {
    let dir = scratch("scenarios-gateway");
    let f = dir.join("g.toml");
    std::fs::write(
        &f,
        "format = 1\nstrategy = \"gateway\"\nexpect = \"clean\"\n\n[gateway]\ncrashes = [{ turn = 1, at = \"nowhere\" }]\n",
    )
    .unwrap();
    let r = compactsim(&["scenario", arg(&f)]).expect_code(2);
    assert!(
        r.stderr.contains("g.toml:6:") && r.stderr.contains("unknown crash point `nowhere`"),
        "{}",
        r.stderr
    );
}

#[test]
fn replay_and_trace_print_the_event_log_and_the_witness_of_a_scenario() {
    let file = "scenarios/seeds/h-m-resume.toml";
    // The exit code is that of `scenario FILE`: the expected violation happened.
    let r = compactsim(&["replay", file]).expect_code(0);
    assert!(
        r.stdout
            .starts_with(&format!("SCENARIO {file} name=h-m-resume")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("restart (in-memory state lost)"));
    assert!(r.stdout.contains("micro pass #1 absorbed"));
    assert!(r.stdout.contains("VIOLATION marker-contained at turn 4"));
    assert!(r.stdout.contains("  witness row "));
    assert!(r
        .stdout
        .ends_with("expectation violated marker-contained: holds\n"));
    let clean = compactsim(&["replay", "scenarios/seeds/h-m-resume.clean.toml"]).expect_code(0);
    assert!(clean.stdout.contains("CLEAN after 8 turns"));
    let out = scratch("scenarios-trace");
    let t = compactsim(&["scenario", "--trace", file, "--out", arg(&out)]).expect_code(0);
    assert!(t.stdout.contains("VIOLATION marker-contained") && t.stdout.contains("verdict"));
}

#[test]
fn replay_names_every_other_invariant_the_case_breaks_after_its_first() {
    // h-25747: the route names the rotated session (session-id-persisted, first); the
    // case judged past it also loads rows a compaction removed (loaded-is-compacted).
    let r = compactsim(&["replay", "scenarios/seeds/h-25747.toml"]).expect_code(0);
    let also: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("ALSO FIRED"))
        .collect();
    assert_eq!(also.len(), 1, "{}", r.stdout);
    assert!(
        also[0].starts_with("ALSO FIRED loaded-is-compacted at turn 43 step 40: session 1 loaded"),
        "{}",
        also[0]
    );
    let first = r
        .stdout
        .find("VIOLATION session-id-persisted")
        .expect("first");
    assert!(first < r.stdout.find("ALSO FIRED").unwrap(), "{}", r.stdout);
    // The first invariant is not repeated, and a case breaking one invariant, or none,
    // prints no such line.
    for quiet in [
        "scenarios/seeds/h-m-resume.toml",
        "scenarios/seeds/h-25747.clean.toml",
    ] {
        let q = compactsim(&["replay", quiet]).expect_code(0);
        assert!(!q.stdout.contains("ALSO FIRED"), "{quiet}: {}", q.stdout);
    }
}
