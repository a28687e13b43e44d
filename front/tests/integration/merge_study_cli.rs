//! `compactsim merge` and `compactsim study` as a user sees them: shards joined into
//! the unsharded report (apart from the `shards` header parameter), mismatched shards
//! refused with exit 2, a study writing every file, a bad study file named by line.

use crate::common;

use common::{compactsim, repo, scratch};
use std::path::Path;

const CASES: &str = "36";

fn run_shard(dir: &Path, shard: Option<&str>, seed: &str) {
    let mut args = vec![
        "run",
        "--cases",
        CASES,
        "--seed",
        seed,
        "--bug",
        "H-75345-B",
    ];
    args.extend(["--shrink-time", "0", "--out", dir.to_str().unwrap()]);
    if let Some(s) = shard {
        args.extend(["--shard", s]);
    }
    let r = compactsim(&args);
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
}

#[test]
fn merged_shards_equal_the_unsharded_run_but_for_the_shards_field() {
    let root = scratch("merge_equal");
    run_shard(&root.join("whole"), None, "5");
    let mut dirs = Vec::new();
    for k in [2, 0, 1] {
        let dir = root.join(format!("s{k}"));
        run_shard(&dir, Some(&format!("{k}/3")), "5");
        dirs.push(dir.to_str().unwrap().to_string());
    }
    let out = root.join("merged");
    let mut args = vec!["merge", "--out", out.to_str().unwrap()];
    args.extend(dirs.iter().map(String::as_str));
    let r = compactsim(&args);
    let whole = std::fs::read_to_string(root.join("whole/report.json")).unwrap();
    assert!(
        whole.contains("\"kind\":\"violation\""),
        "the bug switch must fail cases"
    );
    assert_eq!(r.code, 1, "merge exits like the run: {}", r.stderr);
    let merged = std::fs::read_to_string(out.join("report.json")).unwrap();
    assert!(merged.contains("\"params\":{\"shards\":\"3\"}"));
    assert_eq!(
        merged.replacen("\"params\":{\"shards\":\"3\"}", "\"params\":{}", 1),
        whole
    );
    let repro = |d: &Path| std::fs::read_to_string(d.join("repro.txt")).unwrap();
    assert_eq!(repro(&out), repro(&root.join("whole")));
}

#[test]
fn shards_of_different_runs_or_a_missing_shard_exit_2() {
    let root = scratch("merge_mismatch");
    for (name, shard, seed) in [("a0", "0/2", "5"), ("a1", "1/2", "5"), ("b1", "1/2", "6")] {
        run_shard(&root.join(name), Some(shard), seed);
    }
    let dir = |n: &str| root.join(n).to_str().unwrap().to_string();
    let out = dir("out");
    let r = compactsim(&["merge", "--out", &out, &dir("a0"), &dir("b1")]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("different run") && r.stderr.contains("seed 6"),
        "{}",
        r.stderr
    );
    let r = compactsim(&["merge", "--out", &out, &dir("a0")]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("shard 1/2 is missing"), "{}", r.stderr);
    let r = compactsim(&["merge", "--out", &out, &dir("a0"), &dir("a0"), &dir("a1")]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("twice"), "{}", r.stderr);
    assert!(!root.join("out/report.json").exists());
}

#[test]
fn study_writes_json_charts_summary_and_html() {
    let out = scratch("study_files");
    let file = repo().join("scenarios/studies/code-review-3h.toml");
    let r = compactsim(&[
        "study",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for f in [
        "study.json",
        "summary.md",
        "index.html",
        "occupancy.svg",
        "cost.svg",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    let svg = std::fs::read_to_string(out.join("occupancy.svg")).unwrap();
    assert!(svg.contains("occupancy (% of batch trigger)") && svg.contains("micro-gated"));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("<img src=\"stalls.svg\""));
    // The Rust reference ran: no adapter is named.
    assert!(!html.contains("external adapter"));
    let json = std::fs::read_to_string(out.join("study.json")).unwrap();
    assert!(!json.contains("\"adapter\""), "{json}");
}

#[test]
fn bad_study_file_exits_2_naming_line_and_column() {
    let dir = scratch("study_bad");
    let text = std::fs::read_to_string(repo().join("scenarios/studies/code-review-3h.toml"))
        .unwrap()
        .replace("preset = \"anthropic-sonnet\"", "preset = \"acme\"");
    let file = dir.join("bad.toml");
    std::fs::write(&file, &text).unwrap();
    let line = text.lines().position(|l| l.starts_with("preset")).unwrap() + 1;
    let r = compactsim(&[
        "study",
        file.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains(&format!("bad.toml:{line}:1: unknown pricing preset")),
        "{}",
        r.stderr
    );
    assert!(!dir.join("study.json").exists());
}

/// The study file with `turns` turns (a shorter session for the external adapters).
fn short_study(dir: &Path, turns: u32) -> std::path::PathBuf {
    let text = std::fs::read_to_string(repo().join("scenarios/studies/code-review-3h.toml"))
        .unwrap()
        .replace("turns = 140", &format!("turns = {turns}"));
    let file = dir.join("short.toml");
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn a_study_under_an_external_adapter_runs_the_strategies_it_serves() {
    let dir = scratch("study_external");
    let file = short_study(&dir, 30);
    let out = dir.join("out");
    let r = compactsim(&[
        "study",
        file.to_str().unwrap(),
        "--compactor",
        "external",
        "--adapter",
        "python3 adapters/reference/fixtures/batch_only.py",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("study.json")).unwrap()).unwrap();
    let names: Vec<&str> = json["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    // batch_only.py declares no micro_pass: the micro strategies are not run.
    assert_eq!(names, ["batch", "handoff"]);
    // study.json, the page and the terminal name the adapter that ran.
    let command = "python3 adapters/reference/fixtures/batch_only.py";
    assert_eq!(json["adapter"], command);
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains(&format!(
            "compactor: external adapter <code>{command}</code>"
        )),
        "{html}"
    );
    assert!(
        r.stdout
            .contains(&format!("compactor: external adapter `{command}`")),
        "{}",
        r.stdout
    );
}

#[test]
fn a_study_none_of_whose_strategies_an_adapter_serves_is_refused() {
    let dir = scratch("study_external_none");
    let text = std::fs::read_to_string(short_study(&dir, 30))
        .unwrap()
        .replace(
            "strategies = [\"batch\", \"micro\", \"micro-gated\", \"handoff\"]",
            "strategies = [\"micro\"]",
        );
    let file = dir.join("micro.toml");
    std::fs::write(&file, text).unwrap();
    let r = compactsim(&[
        "study",
        file.to_str().unwrap(),
        "--compactor",
        "external",
        "--adapter",
        "python3 adapters/reference/fixtures/batch_only.py",
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("serves none of the study's strategies (micro)"),
        "{}",
        r.stderr
    );
}
