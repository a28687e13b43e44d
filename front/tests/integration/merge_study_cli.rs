//! `compactsim merge` and `compactsim study` as a user sees them: shards joined into
//! the unsharded report (apart from the `shards` header parameter), mismatched shards
//! refused with exit 2 (so is a shard whose junit.xml is not its own), a study writing
//! every file, a bad study file named by line.

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
    // junit.xml: the shards' test cases in case order, the same as the whole run's but
    // for the wall times each measured.
    let junit = |d: &Path| without_times(&std::fs::read_to_string(d.join("junit.xml")).unwrap());
    assert!(
        junit(&out).contains("type=\"one-marker-max\">"),
        "{}",
        junit(&out)
    );
    assert_eq!(junit(&out), junit(&root.join("whole")));
}

/// `text` with every `time="..."` attribute's value blanked.
fn without_times(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(" time=\"") {
        let value = at + " time=\"".len();
        out.push_str(&rest[..value]);
        rest = &rest[value..];
        rest = &rest[rest.find('"').expect("a closing quote")..];
    }
    out + rest
}

#[test]
fn a_shard_whose_junit_xml_is_missing_or_of_another_shard_exits_2() {
    let root = scratch("merge_junit");
    for (name, shard) in [("s0", "0/2"), ("s1", "1/2")] {
        run_shard(&root.join(name), Some(shard), "5");
    }
    let dir = |n: &str| root.join(n).to_str().unwrap().to_string();
    let out = dir("out");
    std::fs::copy(root.join("s0/junit.xml"), root.join("s1/junit.xml")).unwrap();
    let r = compactsim(&["merge", "--out", &out, &dir("s0"), &dir("s1")]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("s1/junit.xml") && r.stderr.contains("not the junit.xml of this shard"),
        "{}",
        r.stderr
    );
    std::fs::remove_file(root.join("s1/junit.xml")).unwrap();
    let r = compactsim(&["merge", "--out", &out, &dir("s0"), &dir("s1")]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("s1/junit.xml"), "{}", r.stderr);
    std::fs::write(root.join("s1/junit.xml"), "<testsuites").unwrap();
    let r = compactsim(&["merge", "--out", &out, &dir("s0"), &dir("s1")]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("cannot read as JUnit XML"),
        "{}",
        r.stderr
    );
    assert!(!root.join("out/report.json").exists());
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

/// Runs a 30-turn study of `strategies` (a TOML array) under the external `adapter`,
/// written into `dir/out`.
fn external_study(dir: &Path, strategies: &str, adapter: &str) -> common::Run {
    let text = std::fs::read_to_string(short_study(dir, 30))
        .unwrap()
        .replace(
            "strategies = [\"batch\", \"micro\", \"micro-gated\", \"handoff\"]",
            &format!("strategies = {strategies}"),
        );
    let file = dir.join("strategies.toml");
    std::fs::write(&file, text).unwrap();
    compactsim(&[
        "study",
        file.to_str().unwrap(),
        "--compactor",
        "external",
        "--adapter",
        adapter,
        "--out",
        dir.join("out").to_str().unwrap(),
    ])
}

/// The `micro` and `micro-gated` series of a 30-turn study under `adapter`: the cache
/// breaks of each and micro-gated's description.
fn micro_and_gated(dir: &Path, adapter: &str) -> (u64, u64, String) {
    let r = external_study(dir, "[\"micro\", \"micro-gated\"]", adapter);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = dir.join("out");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("study.json")).unwrap()).unwrap();
    let s = json["strategies"].as_array().unwrap();
    assert_eq!(s[1]["name"], "micro-gated");
    let breaks = |i: usize| s[i]["totals"]["cache_breaks"].as_u64().unwrap();
    let description = s[1]["description"].as_str().unwrap().to_string();
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains(&description), "{summary}");
    (breaks(0), breaks(1), description)
}

/// The gate is the compactor's (the micro_pass config's `reclaim_gate_tokens`): the
/// reference adapter applies it, so micro-gated breaks the cache less often than micro;
/// an adapter that ignores it runs micro twice, and the study says the gate was not
/// measured.
#[test]
fn micro_gated_measures_the_adapters_gate_or_says_it_was_not_applied() {
    let dir = scratch("study_gate");
    let (micro, gated, description) =
        micro_and_gated(&dir, "python3 adapters/reference/compactor.py");
    assert!(
        gated < micro,
        "micro {micro} cache breaks, micro-gated {gated}"
    );
    assert!(!description.contains("not measured"), "{description}");
    let (micro, gated, description) =
        micro_and_gated(&dir, "python3 adapters/reference/fixtures/no_gate.py");
    assert_eq!(gated, micro);
    assert!(
        description.ends_with("so the gate is not measured"),
        "{description}"
    );
}

#[test]
fn a_study_none_of_whose_strategies_an_adapter_serves_is_refused() {
    let dir = scratch("study_external_none");
    let r = external_study(
        &dir,
        "[\"micro\"]",
        "python3 adapters/reference/fixtures/batch_only.py",
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("serves none of the study's strategies (micro)"),
        "{}",
        r.stderr
    );
}
