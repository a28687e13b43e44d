//! Protocol 2 (adapters/PROTOCOL.md, "Protocol 2"): the SDK adapters answer the harness's
//! offer with 2 and passes cross the pipe as edits, with reports byte-identical to
//! protocol 1 (`--protocol 1`); a raw protocol 1 adapter stays on 1; a desynchronised
//! adapter is refused whichever side finds it (exit 4, failure kind `desync`).

use crate::common::{arg, scratch};
use crate::external_cli::{adapter, run_external_cases, text};
use serde_json::Value;
use std::path::Path;

/// The messages of case 0's record file, by direction.
fn record(dir: &Path) -> (Vec<Value>, Vec<Value>) {
    let file = std::fs::read_to_string(dir.join("seed-20260731-case-0.jsonl")).unwrap();
    let (mut to, mut from) = (Vec::new(), Vec::new());
    for line in file.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        match v["dir"].as_str() {
            Some("to_adapter") => to.push(v["msg"].clone()),
            Some("from_adapter") => from.push(v["msg"].clone()),
            _ => {}
        }
    }
    (to, from)
}

fn passes(msgs: &[Value]) -> Vec<&Value> {
    msgs.iter()
        .filter(|m| m["type"] == "micro_pass" || m["type"] == "batch_pass")
        .collect()
}

#[test]
fn the_sdk_speaks_protocol_2_and_the_report_is_protocol_1s() {
    let cmd = adapter("reference/compactor.py");
    let rec = scratch("protocol_v2/records");
    let (r2, rec2) = (rec.join("v2"), rec.join("v1"));
    let (v2, d2) = run_external_cases("v2-p2", &cmd, "3", &["--record", arg(&r2)]);
    let (v1, d1) = run_external_cases(
        "v2-p1",
        &cmd,
        "3",
        &["--record", arg(&rec2), "--protocol", "1"],
    );
    assert_eq!(v2.code, 0, "{}", text(&v2));
    assert_eq!(v1.code, 0, "{}", text(&v1));
    let report = |d: &Path| std::fs::read(d.join("report.json")).unwrap();
    assert!(
        report(&d2) == report(&d1),
        "report.json differs between protocols 1 and 2"
    );

    let (to, from) = record(&r2);
    assert_eq!(to[0]["protocols"], serde_json::json!([1, 2]), "{}", to[0]);
    assert_eq!(from[0]["protocol"], 2, "{}", from[0]);
    let sent = passes(&to);
    assert!(!sent.is_empty());
    for p in &sent {
        assert!(p.get("transcript").is_none(), "{p}");
        assert!(p["edits"].is_array() && p["digest"].is_string(), "{p}");
    }
    // A later pass copies the rows the adapter already holds.
    assert!(sent.iter().any(|p| p["edits"][0].is_array()), "no copy");
    let results = from
        .iter()
        .filter(|m| m["type"] == "result" && m.get("edits").is_some());
    assert!(results.count() > 0, "no result sent as edits");

    let (to, from) = record(&rec2);
    assert!(to[0].get("protocols").is_none(), "{}", to[0]);
    assert_eq!(from[0]["protocol"], 1, "{}", from[0]);
    assert!(passes(&to).iter().all(|p| p["transcript"].is_array()));
}

#[test]
fn a_raw_protocol_1_adapter_stays_on_protocol_1() {
    let rec = scratch("protocol_v2/echo-record");
    let (o, _) = run_external_cases(
        "echo-v1",
        &adapter("reference/fixtures/echo_v1.py"),
        "2",
        &["--record", arg(&rec)],
    );
    // It never compacts (compaction-effective may fire), but it is served: no failure.
    assert_ne!(o.code, 4, "{}", text(&o));
    let (to, from) = record(&rec);
    assert_eq!(to[0]["protocols"], serde_json::json!([1, 2]));
    assert_eq!(from[0]["protocol"], 1);
    let sent = passes(&to);
    assert!(!sent.is_empty());
    assert!(sent
        .iter()
        .all(|p| p["transcript"].is_array() && p.get("edits").is_none()));
}

#[test]
fn an_adapter_holding_another_transcript_refuses_the_delta_exit_4() {
    let cmd = adapter("reference/fixtures/desync.py");
    let (o, _) = run_external_cases("desync-held", &cmd, "1", &[]);
    let out = text(&o);
    assert_eq!(o.code, 4, "{out}");
    assert!(out.contains("adapter failure [desync]"), "{out}");
    assert!(
        out.contains(&format!("`{cmd}` at request 3 (micro_pass turn 1)")),
        "{out}"
    );
    assert!(
        out.contains("does not match the transcript its edits make"),
        "{out}"
    );
    assert!(
        out.contains("fixture desync: corrupting the kept transcript"),
        "{out}"
    );
    // The same adapter under protocol 1 keeps nothing and is served.
    let (o, _) = run_external_cases("desync-p1", &cmd, "1", &["--protocol", "1"]);
    assert_ne!(o.code, 4, "{}", text(&o));
}

#[test]
fn a_result_with_a_wrong_digest_is_refused_by_the_harness_exit_4() {
    let cmd = format!("{} reply", adapter("reference/fixtures/desync.py"));
    let (o, _) = run_external_cases("desync-reply", &cmd, "1", &[]);
    let out = text(&o);
    assert_eq!(o.code, 4, "{out}");
    assert!(out.contains("adapter failure [desync]"), "{out}");
    assert!(
        out.contains("at request 2 (micro_pass turn 0)")
            && out.contains("the result's edits of the request: digest \"0000000000000000\""),
        "{out}"
    );
}

#[test]
fn protocol_outside_1_and_2_is_bad_input() {
    let (o, _) = run_external_cases(
        "bad-protocol",
        &adapter("reference/compactor.py"),
        "1",
        &["--protocol", "3"],
    );
    assert_eq!(o.code, 2, "{}", text(&o));
    assert!(
        text(&o).contains("--protocol must be 1..=2, got 3"),
        "{}",
        text(&o)
    );
}
