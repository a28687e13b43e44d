//! The framework adapters' translation round trips (adapters/langchain/roundtrip_test.py,
//! adapters/adk/roundtrip_test.py): a transcript through the framework's own types and
//! back is identical. Each runs in its pinned venv (`bash adapters/<name>/setup-venv.sh`);
//! without the venv the test says so on one line and passes (`.ci/run` creates them).

use crate::common::repo;
use std::process::Command;

/// Runs `script` with the venv's python; `None` when the venv is absent.
fn run_in_venv(venv: &str, script: &str) -> Option<std::process::Output> {
    let python = repo()
        .join("target/framework-venvs")
        .join(venv)
        .join("bin/python");
    if !python.exists() {
        eprintln!(
            "skipped: {} is absent (create it: bash adapters/{}/setup-venv.sh)",
            python.display(),
            venv.split('-').next().unwrap_or(venv)
        );
        return None;
    }
    Some(
        Command::new(python)
            .args(["-W", "ignore", script])
            .current_dir(repo())
            .output()
            .expect("python runs"),
    )
}

fn expect_round_trip(venv: &str, script: &str) {
    let Some(out) = run_in_venv(venv, script) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.starts_with("ok: "),
        "{script}: {}\n--- stdout\n{stdout}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_transcript_through_langchain_messages_and_back_is_identical() {
    expect_round_trip("langchain-1.5.0", "adapters/langchain/roundtrip_test.py");
}

#[test]
fn a_transcript_through_adk_events_and_back_is_identical() {
    expect_round_trip("adk-2.13.0", "adapters/adk/roundtrip_test.py");
}
