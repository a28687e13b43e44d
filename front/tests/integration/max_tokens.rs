//! An adapter that asks for `max_tokens` on every summarize call (the fixture
//! `adapters/reference/fixtures/max_tokens.py`, the reference compactor with a cap): the
//! fake summarizer writes its answers to fit (the fixture fails the case on an answer
//! over the cap), the drawn `length` overruns are counted in the report's coverage, the
//! run is byte-identical whatever the job count, and the cap costs no compaction: the
//! capped adapter compacts in at least as many passes as the plain reference (± 5 %).

use crate::common;

use crate::external_cli::{adapter, run_external_cases};
use common::Run;
use serde_json::Value;
use std::path::{Path, PathBuf};

const CASES: &str = "16";

fn run(name: &str, adapter_cmd: &str, jobs: &str) -> (Run, PathBuf) {
    run_external_cases(
        &format!("max-tokens-{name}"),
        adapter_cmd,
        CASES,
        &["--jobs", jobs],
    )
}

fn coverage(dir: &Path) -> (Value, Vec<u8>) {
    let bytes = std::fs::read(dir.join("report.json")).expect("report.json");
    let report: Value = serde_json::from_slice(&bytes).expect("json");
    (report["summary"]["coverage"].clone(), bytes)
}

fn count(c: &Value, name: &str) -> u64 {
    c[name]
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {name}: {c}"))
}

#[test]
fn a_capped_adapter_gets_answers_within_its_max_tokens_and_compacts_as_often() {
    let capped = adapter("reference/fixtures/max_tokens.py --max-tokens 256");
    let (one, d1) = run("capped-j1", &capped, "1");
    let (two, d2) = run("capped-j2", &capped, "2");
    // Exit 0: no case failed, and no answer with `stop` was over the cap (the fixture
    // raises on one, an adapter error: exit 4).
    assert_eq!(one.code, 0, "{}{}", one.stdout, one.stderr);
    assert_eq!(two.code, 0, "{}{}", two.stdout, two.stderr);
    let (c, r1) = coverage(&d1);
    let (_, r2) = coverage(&d2);
    assert!(r1 == r2, "report.json differs between --jobs 1 and 2");

    let asked = count(&c, "summarizer.max_tokens.asked");
    let fitted = count(&c, "summarizer.max_tokens.fitted");
    let overrun = count(&c, "summarizer.max_tokens.length_overrun");
    let no_room = count(&c, "summarizer.max_tokens.length_no_room");
    assert!(count(&c, "summarizer.max_tokens.facts_dropped") > 0, "{c}");
    assert!(
        fitted > asked / 2,
        "most answers had to shrink to 256 tokens: {c}"
    );
    // Overruns are drawn at 0.2–1 % of the answers that had to shrink, and are failed
    // calls (counted among the micro pass's failed summaries).
    assert!(overrun > 0, "{c}");
    assert!(overrun * 1000 <= (fitted + overrun) * 60, "{c}");
    assert!(
        overrun + no_room <= count(&c, "micro.summarize_failed"),
        "{c}"
    );

    let (plain, d3) = run("plain", &adapter("reference/compactor.py"), "2");
    assert_eq!(plain.code, 0, "{}{}", plain.stdout, plain.stderr);
    let (p, _) = coverage(&d3);
    assert!(
        p.get("summarizer.max_tokens.asked").is_none(),
        "no cap asked, no cap counters: {p}"
    );
    let compacted = |c: &Value| count(c, "micro.absorbed") + count(c, "micro.defrag");
    assert!(
        compacted(&c) * 100 >= compacted(&p) * 95,
        "capped {} passes compacted, plain {}",
        compacted(&c),
        compacted(&p)
    );
}
