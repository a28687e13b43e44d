//! An external study of the reference adapter measures what the in-process study of the
//! Rust reference it ports measures: the same session, the same summarizer, the same
//! figures per strategy (adapters/PROTOCOL.md, `purpose`: a defrag asks for a condense).

use crate::common;

use common::{compactsim, repo, scratch};
use std::path::Path;

/// The code-review study, `turns` turns of it, with `strategies` (a TOML array).
fn study_file(dir: &Path, turns: u32, strategies: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(repo().join("scenarios/studies/code-review-3h.toml"))
        .unwrap()
        .replace("turns = 140", &format!("turns = {turns}"))
        .replace(
            "strategies = [\"batch\", \"micro\", \"micro-gated\", \"handoff\"]",
            &format!("strategies = {strategies}"),
        );
    let file = dir.join("study.toml");
    std::fs::write(&file, text).unwrap();
    file
}

/// The study's `totals` per strategy, in-process (`adapter` None) or under `adapter`.
fn totals(dir: &Path, file: &Path, adapter: Option<&str>) -> Vec<(String, serde_json::Value)> {
    let out = dir.join(if adapter.is_some() { "external" } else { "in" });
    let mut args = vec![
        "study",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    if let Some(a) = adapter {
        args.extend(["--compactor", "external", "--adapter", a]);
    }
    let r = compactsim(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("study.json")).unwrap()).unwrap();
    json["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap().to_string(), s["totals"].clone()))
        .collect()
}

/// Occupancy peaks of the two runs differ by at most this many percentage points: an
/// absorb's input size is what the prompt quotes of the exchange (the harness measures
/// the text it reads, `summaries.rs`) where the Rust reference sums the rows' rough
/// tokens, so a marker of the external run is a few tokens smaller (e.g. -2,146 against
/// -2,137 tokens on the second pass); over 60 turns that is 0.1 point of a 400K window.
const OCCUPANCY_PEAK_POINTS_MAX: f64 = 0.5;

/// 60 turns reach the micro defrags of both micro strategies (micro's rolling summary
/// passes the threshold near pass 32): each defrag asks for a condense, which the
/// harness serves with the fake summarizer's `condense` as it serves the in-process
/// reference's `condense_within`.
/// Without it (a plain `summarize` of the summary) a defrag answered the summary at its
/// own size, never shorter, and the external run defragged on every pass from there.
#[test]
fn the_external_reference_adapter_measures_the_in_process_micro_figures() {
    let dir = scratch("study_agrees_micro");
    let file = study_file(&dir, 60, "[\"micro\", \"micro-gated\"]");
    let inside = totals(&dir, &file, None);
    let outside = totals(&dir, &file, Some("python3 adapters/reference/compactor.py"));
    assert_eq!(inside.len(), 2);
    for ((name, a), (_, b)) in inside.iter().zip(&outside) {
        assert!(
            a["micro_defrags"].as_u64().unwrap() > 0,
            "{name}: a defrag: {a}"
        );
        for key in ["micro_commits", "micro_defrags", "batch_compactions"] {
            assert_eq!(a[key], b[key], "{name} {key}: in-process {a} external {b}");
        }
        let peak = |t: &serde_json::Value| t["occupancy_pct_peak"].as_f64().unwrap();
        assert!(
            (peak(a) - peak(b)).abs() <= OCCUPANCY_PEAK_POINTS_MAX,
            "{name} occupancy peak: in-process {a} external {b}"
        );
    }
}
