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
        let out = Command::new("python3")
            .arg(repo().join("scripts/floor-replay.py"))
            .arg(repo().join("adapters/reference/compactor.py"))
            .arg(&rec)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stdout}{stderr}");
        assert!(stdout.contains("cases 2, requests "), "{stdout}");
        assert!(stdout.contains("floor CPU "), "{stdout}");
        assert!(
            stdout.contains("mismatches: 0 replies, 0 summarize calls, 0 requests not replayed"),
            "{stdout}"
        );
        let out = Command::new("python3")
            .arg(repo().join("scripts/child-replay.py"))
            .arg("--sdk-split")
            .arg(&rec)
            .arg("python3")
            .arg(repo().join("adapters/reference/compactor.py"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stdout}{stderr}");
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
