//! `--compactor external` as a user sees it: the reference Python adapter runs the suite
//! through the protocol, byte-identically whatever the job count; a misbehaving adapter
//! ends the run with exit 4, every case reported, each message naming the adapter; bad
//! combinations are exit 2.

use crate::common;

use common::{arg, compactsim, scratch, Run};
use std::path::PathBuf;

pub(crate) fn adapter(rel: &str) -> String {
    format!("python3 {}/../adapters/{rel}", env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn text(o: &Run) -> String {
    format!("{}{}", o.stdout, o.stderr)
}

fn run_external(name: &str, adapter_cmd: &str, extra: &[&str]) -> (Run, PathBuf) {
    run_external_cases(name, adapter_cmd, "8", extra)
}

pub(crate) fn run_external_cases(
    name: &str,
    adapter_cmd: &str,
    cases: &str,
    extra: &[&str],
) -> (Run, PathBuf) {
    let dir = scratch(&format!("external_cli/{name}"));
    let mut args = vec![
        "run",
        "--cases",
        cases,
        "--shrink-time",
        "0",
        "--compactor",
        "external",
        "--adapter",
        adapter_cmd,
        "--out",
        arg(&dir),
    ];
    args.extend_from_slice(extra);
    (compactsim(&args), dir)
}

#[test]
fn the_reference_adapter_runs_clean_and_deterministically() {
    let cmd = adapter("reference/compactor.py");
    let (one, d1) = run_external("ref-j1", &cmd, &["--jobs", "1"]);
    let (two, d2) = run_external("ref-j2", &cmd, &["--jobs", "2"]);
    assert_eq!(one.code, 0, "{}", text(&one));
    assert_eq!(two.code, 0, "{}", text(&two));
    let first = text(&one).lines().next().unwrap().to_string();
    assert!(
        first.contains("compactor=external adapter='python3 "),
        "{first}"
    );
    let r1 = std::fs::read(d1.join("report.json")).unwrap();
    let r2 = std::fs::read(d2.join("report.json")).unwrap();
    assert!(r1 == r2, "report.json differs between --jobs 1 and 2");
    assert!(String::from_utf8_lossy(&r1).contains("\"compactor\":\"external\""));
}

#[test]
fn a_crashing_adapter_is_exit_4_and_the_run_goes_on() {
    let cmd = adapter("reference/fixtures/crash.py");
    let (o, _) = run_external(
        "crash",
        &cmd,
        &["--jobs", "2", "--adapter-timeout-ms", "5000"],
    );
    let out = text(&o);
    assert_eq!(o.code, 4, "{out}");
    // Every case ran and was reported as an adapter failure naming the command.
    assert!(
        out.contains("8 cases, 0 clean, 0 failed, 0 liveness, 8 internal"),
        "{out}"
    );
    assert!(
        out.contains(&format!("`{cmd}` at request 2 (micro_pass turn 0)")),
        "{out}"
    );
    assert!(out.contains("RuntimeError: fixture crash"), "{out}");
    assert!(
        out.contains("--compactor external --adapter 'python3 "),
        "{out}"
    );
}

#[test]
fn a_hanging_adapter_is_exit_4_naming_the_timeout() {
    let cmd = adapter("reference/fixtures/hang.py");
    let (o, _) = run_external_cases("hang", &cmd, "1", &["--adapter-timeout-ms", "5000"]);
    let out = text(&o);
    assert_eq!(o.code, 4, "{out}");
    assert!(
        out.contains("1 cases, 0 clean, 0 failed, 0 liveness, 1 internal"),
        "{out}"
    );
    assert!(
        out.contains(&format!("`{cmd}` at request 2 (micro_pass turn 0)")),
        "{out}"
    );
    assert!(
        out.contains("no message from the adapter within 5000 ms, the per-request limit"),
        "{out}"
    );
    assert!(out.contains("--adapter-timeout-ms MS"), "{out}");
    assert!(out.contains("fixture hang: sleeping forever"), "{out}");
}

/// An adapter that stops reading (it asks a summary, then neither reads the answer nor
/// writes): both pipes empty, both sides waiting. The watchdog (bound given small,
/// under the per-request limit) ends the run with exit 4 naming the case, the request
/// and both sides' state; no report is half-written.
#[test]
fn a_stall_is_exit_4_naming_the_case_the_request_and_both_sides() {
    let cmd = adapter("reference/fixtures/stall.py");
    let (o, dir) = run_external_cases("stall", &cmd, "1", &["--adapter-watchdog-ms", "3000"]);
    let out = text(&o);
    assert_eq!(o.code, 4, "{out}");
    for want in [
        format!("adapter stall: no message crossed the pipes of `{cmd}` for "),
        "the watchdog bound is 3000 ms; --adapter-watchdog-ms raises it".into(),
        "case: seed 20260731 case 0".into(),
        "request in flight: request 2 (micro_pass turn 0)".into(),
        "harness: waits for the adapter's next message of request 2".into(),
        r#"since it sent: {"type":"summary","id":2,"call":0"#.into(),
        r#"adapter: last said: {"type": "summarize", "id": 2, "call": 0"#.into(),
        ", alive, ".into(),
        "| fixture stall: asked a summary, stopped reading".into(),
    ] {
        assert!(out.contains(&want), "{want:?} missing:\n{out}");
    }
    assert!(
        !dir.join("report.json").exists(),
        "a stalled run writes no report"
    );
}

#[test]
fn bad_combinations_are_bad_input() {
    let cmd = adapter("reference/compactor.py");
    let cases: [&[&str]; 5] = [
        &["run", "--compactor", "external"],
        &["run", "--adapter", &cmd],
        &[
            "run",
            "--compactor",
            "external",
            "--adapter",
            &cmd,
            "--bug",
            "H-75345-B",
        ],
        &["run", "--compactor", "nope"],
        &[
            "run",
            "--compactor",
            "external",
            "--adapter",
            "python3 'unclosed",
        ],
    ];
    for args in cases {
        let o = compactsim(args);
        assert_eq!(o.code, 2, "{args:?}: {}", text(&o));
        assert!(!text(&o).contains("panicked"), "{args:?}");
    }
}

#[test]
fn declared_hooks_are_asked_and_answered_over_the_wire() {
    // The reference adapter declares cooling_down, fallback_streak and usage: the batch
    // agent loop asks them, deterministically. (Its simplified batch pass fails some
    // batch invariants, see its docstring: exit 1 is allowed, an adapter failure not.)
    let cmd = adapter("reference/compactor.py");
    let extra = ["--strategy", "batch", "--passes", "5"];
    let (one, d1) = run_external("hooks-j1", &cmd, &[&extra[..], &["--jobs", "1"]].concat());
    let (two, d2) = run_external("hooks-j2", &cmd, &[&extra[..], &["--jobs", "2"]].concat());
    for o in [&one, &two] {
        assert!(matches!(o.code, 0 | 1), "{}", text(o));
        assert!(!text(o).contains("adapter failure"), "{}", text(o));
    }
    let r1 = std::fs::read(d1.join("report.json")).unwrap();
    assert!(r1 == std::fs::read(d2.join("report.json")).unwrap());
    // A hook that crashes, or answers a value of the wrong type, is an adapter failure
    // naming the hook: so the hook was really sent.
    for (mode, needle) in [
        ("crash", "cooling_down exploded"),
        ("type", "answered \"not a boolean\", not a boolean"),
    ] {
        let cmd = format!("{} {mode}", adapter("reference/fixtures/bad_hook.py"));
        let (o, _) = run_external(&format!("bad-hook-{mode}"), &cmd, &extra);
        assert_eq!(o.code, 4, "{mode}: {}", text(&o));
        let all = text(&o);
        assert!(all.contains("hook cooling_down"), "{mode}: {all}");
        assert!(all.contains(needle), "{mode}: {all}");
    }
}

#[test]
fn gate_state_pushed_as_labels_answers_the_hooks() {
    // The reference without hooks, its cooldown and fallback streak labelled on every
    // pass (as the Hermes driver does): the harness answers the hooks from the labels,
    // and the run is the hooked reference's, byte for byte.
    let extra = ["--strategy", "both", "--passes", "8", "--jobs", "1"];
    let (hooked, d1) = run_external("gate-hooked", &adapter("reference/compactor.py"), &extra);
    let labels = adapter("reference/fixtures/gate_labels.py");
    let rec = scratch("external_cli/gate-labels-rec");
    let rec_args = [&extra[..], &["--record", arg(&rec)]].concat();
    let (labelled, d2) = run_external("gate-labels", &labels, &rec_args);
    for o in [&hooked, &labelled] {
        assert!(matches!(o.code, 0 | 1), "{}", text(o));
    }
    // The same report but the adapter command its header names.
    let report = |d: &PathBuf| {
        let text = std::fs::read_to_string(d.join("report.json")).unwrap();
        let mut r: serde_json::Value = serde_json::from_str(&text).unwrap();
        let params = r["header"]["params"].as_object_mut().unwrap();
        assert!(params.remove("adapter").is_some(), "{text}");
        r
    };
    assert!(
        report(&d1) == report(&d2),
        "labels answered the hooks differently"
    );
    assert_eq!(automatic_batch_passes(&rec).1, 0, "a hook was sent");
    // A micro pass's labels count too: a micro pass labelling a cooldown that never ends
    // holds every automatic batch pass after it, until a restart or another batch pass
    // (an exempt `overflow` one, whose labels clear it) sets the state again.
    let cools = format!("{labels} micro-cools");
    let rec_cools = scratch("external_cli/gate-cools-rec");
    let cools_args = [&extra[..], &["--record", arg(&rec_cools)]].concat();
    let (o, _) = run_external("gate-cools", &cools, &cools_args);
    assert!(!text(&o).contains("adapter failure"), "{}", text(&o));
    assert!(
        automatic_batch_passes(&rec).0 > 0,
        "no automatic batch pass to hold"
    );
    assert_eq!(automatic_batch_passes(&rec_cools).0, 0);
}

/// In the record `dir`: the automatic batch passes (trigger `preflight` or
/// `post_response`) whose newest pass was a micro pass (no restart since), and the hooks.
fn automatic_batch_passes(dir: &std::path::Path) -> (usize, usize) {
    let (mut held, mut hooks) = (0, 0);
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let mut after_micro = false;
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let rec: serde_json::Value = serde_json::from_str(line).unwrap();
            if rec["dir"] != "to_adapter" {
                continue;
            }
            let msg = &rec["msg"];
            match msg["type"].as_str() {
                Some("restart") => after_micro = false,
                Some("micro_pass") => after_micro = true,
                Some("hook") => hooks += 1,
                Some("batch_pass") => {
                    let automatic =
                        matches!(msg["trigger"].as_str(), Some("preflight" | "post_response"));
                    held += usize::from(after_micro && automatic);
                    after_micro = false;
                }
                _ => {}
            }
        }
    }
    (held, hooks)
}

/// The children of the files in `dir/adapter-stderr` (one stderr file per child).
fn children_started(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join("adapter-stderr")).map_or(0, |d| d.count())
}

/// A child per worker, started once: the agent-loop cases read the adapter's declared
/// trigger from its first hello, never starting (or borrowing) another child to greet.
#[test]
fn each_worker_starts_one_child_for_all_its_cases() {
    let cmd = adapter("reference/compactor.py");
    for (jobs, most) in [("1", 1), ("2", 2)] {
        let name = format!("children-j{jobs}");
        let extra = ["--strategy", "batch", "--jobs", jobs];
        let (o, dir) = run_external_cases(&name, &cmd, "6", &extra);
        assert_ne!(o.code, 4, "{}", text(&o));
        let n = children_started(&dir);
        assert!((1..=most).contains(&n), "--jobs {jobs}: {n} children");
    }
}
