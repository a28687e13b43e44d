//! scripts/floor-replay.py (adapters/hermes/FLOOR.md): a recorded run of the reference
//! adapter replays into its handlers in one process with every reply and summarize call
//! equal to the record, under both protocol versions; scripts/child-replay.py feeds the same
//! record to a fresh child and splits out the SDK's protocol path (`--sdk-split`).

use crate::common::{arg, repo, scratch};
use crate::external_cli::{adapter, run_external_cases, text};
use std::process::Command;

#[test]
fn a_recorded_run_replays_faithfully_into_the_handlers() {
    for protocol in ["1", "2"] {
        let rec = scratch(&format!("floor_replay/rec-{protocol}"));
        let (o, _) = run_external_cases(
            &format!("floor-{protocol}"),
            &adapter("reference/compactor.py"),
            "2",
            &["--record", arg(&rec), "--protocol", protocol, "--jobs", "1"],
        );
        assert_eq!(o.code, 0, "{}", text(&o));
        let compactor = repo().join("adapters/reference/compactor.py");
        let stdout = python3_ok(&[
            repo().join("scripts/floor-replay.py").as_os_str(),
            compactor.as_os_str(),
            rec.as_os_str(),
        ]);
        assert!(stdout.contains("cases 2, requests "), "{stdout}");
        assert!(stdout.contains("floor CPU "), "{stdout}");
        assert!(
            stdout.contains("mismatches: 0 replies, 0 summarize calls, 0 requests not replayed"),
            "{stdout}"
        );
        let stdout = python3_ok(&[
            repo().join("scripts/child-replay.py").as_os_str(),
            "--sdk-split".as_ref(),
            rec.as_os_str(),
            "python3".as_ref(),
            compactor.as_os_str(),
        ]);
        assert!(stdout.contains("mismatches: 0 replies"), "{stdout}");
        let split = stdout
            .lines()
            .find(|l| l.starts_with("SDK path CPU "))
            .unwrap_or_else(|| panic!("no split: {stdout}"));
        for part in ["read ", "request ", "reply ", "send "] {
            assert!(split.contains(part), "{split}");
        }
    }
}

/// `python3 ARGS` run to success; its stdout.
fn python3_ok(args: &[&std::ffi::OsStr]) -> String {
    let out = Command::new("python3").args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    stdout
}
