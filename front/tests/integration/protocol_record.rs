//! A protocol a stranger can use: `--record DIR` writes one case's exchange as JSON
//! lines that replay into a fresh adapter without the harness; each child's stderr is
//! kept in the output directory, quoted in exit-4 messages and in the witness of a
//! failing case; a hello naming a hook the harness never sends is refused (exit 2).

use crate::common;

use crate::external_cli::{adapter, run_external_cases, text};
use common::{arg, compactsim, scratch, Run};
use compactsim_harness::external::delta::Edit;
use compactsim_harness::external::wire::{AdapterMsg, HarnessMsg};
use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

fn adapter_path(rel: &str) -> String {
    format!("{}/../adapters/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// One case with `--jobs 1`; the output directory is the returned one.
fn run_one(name: &str, adapter_cmd: &str, extra: &[&str]) -> (Run, std::path::PathBuf) {
    let mut args = vec!["--jobs", "1"];
    args.extend_from_slice(extra);
    run_external_cases(&format!("protocol-{name}"), adapter_cmd, "1", &args)
}

/// The record of case 0: every line is `{"dir", "msg"}` with a protocol message of its
/// direction, starting with the hello exchange; fed to a fresh reference adapter, the
/// `to_adapter` lines make it answer exactly the recorded `from_adapter` lines.
#[test]
fn a_recorded_case_replays_into_a_fresh_adapter() {
    let dir = scratch("protocol_record/record");
    let rec = dir.join("rec");
    let (o, run_dir) = run_one(
        "record-run",
        &adapter("reference/compactor.py"),
        &["--record", arg(&rec)],
    );
    assert_eq!(o.code, 0, "{}", text(&o));
    let file = rec.join("seed-20260731-case-0.jsonl");
    let body = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
    let mut to = Vec::new();
    let mut from = Vec::new();
    for (i, line) in body.lines().enumerate() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {i}: {e}"));
        let msg = v["msg"].clone();
        match v["dir"].as_str() {
            Some("to_adapter") => {
                // A protocol 2 pass carries edits instead of the transcript.
                match msg.get("edits") {
                    Some(edits) => serde_json::from_value::<Vec<Edit>>(edits.clone()).map(drop),
                    None => serde_json::from_value::<HarnessMsg>(msg.clone()).map(drop),
                }
                .unwrap_or_else(|e| panic!("line {i}: {e}"));
                to.push(serde_json::to_string(&msg).unwrap());
            }
            Some("from_adapter") => {
                serde_json::from_value::<AdapterMsg>(msg.clone())
                    .unwrap_or_else(|e| panic!("line {i}: {e}"));
                from.push(msg);
            }
            other => panic!("line {i}: direction {other:?}"),
        }
    }
    assert!(to[0].contains("\"type\":\"hello\""), "{}", to[0]);
    assert!(to[1].contains("\"type\":\"restart\""), "{}", to[1]);
    assert!(
        to.len() > 4 && from.len() >= to.len() - 1,
        "{} {}",
        to.len(),
        from.len()
    );
    // Replay without the harness: the same adapter, the recorded requests, in order.
    let mut child = Command::new("python3")
        .arg(adapter_path("reference/compactor.py"))
        .env("PYTHONHASHSEED", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = to.join("\n") + "\n";
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let replayed: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replayed.len(), from.len());
    assert!(
        replayed == from,
        "the replayed answers differ from the record"
    );
    // The child's stderr file is kept in the output directory.
    let logs = std::fs::read_dir(run_dir.join("adapter-stderr"))
        .unwrap()
        .count();
    assert!(logs >= 1);
}

#[test]
fn a_crashing_adapters_stderr_is_quoted_in_the_exit_4_message_and_kept() {
    let dir = scratch("protocol_record/crash");
    let rec = dir.join("rec");
    let (o, run_dir) = run_one(
        "crash-run",
        &adapter("reference/fixtures/crash.py"),
        &["--record", arg(&rec), "--adapter-timeout-ms", "5000"],
    );
    let out = text(&o);
    assert_eq!(o.code, 4, "{out}");
    assert!(out.contains("adapter failure [exited]"), "{out}");
    assert!(
        out.contains("| fixture crash: about to fail on micro_pass"),
        "{out}"
    );
    assert!(out.contains("RuntimeError: fixture crash"), "{out}");
    let logs: Vec<_> = std::fs::read_dir(run_dir.join("adapter-stderr"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(
        logs.iter()
            .any(|l| l.contains("RuntimeError: fixture crash: compactor exploded")),
        "{logs:?}"
    );
    let record = std::fs::read_to_string(rec.join("seed-20260731-case-0.jsonl")).unwrap();
    let last: Value = serde_json::from_str(record.lines().last().unwrap()).unwrap();
    assert_eq!(last["dir"], "failure", "{last}");
    assert_eq!(last["kind"], "exited", "{last}");
}

#[test]
fn a_failing_cases_witness_quotes_the_adapters_stderr() {
    let cmd = adapter("reference/fixtures/drop_user.py");
    let o = compactsim(&[
        "replay",
        "--case",
        "0",
        "--compactor",
        "external",
        "--adapter",
        &cmd,
    ]);
    let out = text(&o);
    assert_eq!(o.code, 1, "{out}");
    assert!(out.contains("user-turns-intact"), "{out}");
    assert!(
        out.contains("witness: adapter stderr during the case (last "),
        "{out}"
    );
    assert!(
        out.contains("witness:   | fixture drop_user: dropping row"),
        "{out}"
    );
}

#[test]
fn an_unknown_hook_in_hello_is_refused_before_any_case() {
    let cmd = adapter("reference/fixtures/unknown_hook.py");
    let (o, _) = run_one("unknown-hook", &cmd, &[]);
    let out = text(&o);
    assert_eq!(o.code, 2, "{out}");
    assert!(out.contains(&format!("`{cmd}`")), "{out}");
    assert!(out.contains("\"should_compress\""), "{out}");
    assert!(
        out.contains("the known hooks are cooling_down, fallback_streak, usage"),
        "{out}"
    );
    assert!(!out.contains("request 1"), "no case ran: {out}");
}
