//! `run --verdicts all|first` as a user sees it: a case judged past its first
//! violation lists every invariant that fired with its first step, the summary counts
//! cases per invariant beside the first-invariant count, the outcome is the same in
//! both modes, and the report does not depend on the job count.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CASES: &str = "24";
/// Two micro faults caught by different invariants.
const BUGS: [&str; 4] = ["--bug", "H-75345-A", "--bug", "H-M-defrag"];

fn run(name: &str, extra: &[&str]) -> (Output, PathBuf) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("verdicts_cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let mut args = vec!["run", "--cases", CASES, "--shrink-time", "0"];
    args.extend(BUGS);
    args.extend(extra);
    args.extend(["--out", dir.to_str().unwrap()]);
    let o = Command::new(env!("CARGO_BIN_EXE_compactsim"))
        .args(&args)
        .output()
        .expect("run compactsim");
    (o, dir)
}

fn report(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap()
}

/// (invariant, step, witness digest) of each verdict of `case`; every digest is 16 hex
/// digits.
fn verdicts(case: &Value) -> Vec<(String, u64, String)> {
    case["verdicts"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .map(|v| {
                    let id = v["invariant"].as_str().unwrap().to_string();
                    let witness = v["witness"].as_str().unwrap().to_string();
                    assert!(
                        witness.len() == 16 && witness.bytes().all(|b| b.is_ascii_hexdigit()),
                        "{v}"
                    );
                    (id, v["step"].as_u64().unwrap(), witness)
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn all_lists_every_invariant_per_case_and_first_only_the_first() {
    let (o_all, all) = run("all", &["--jobs", "1"]);
    let (o_first, first) = run("first", &["--verdicts", "first"]);
    assert_eq!(o_all.status.code(), Some(1));
    assert_eq!(o_first.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o_all.stdout);
    assert!(text.contains("also fired: "), "{text}");
    assert!(text.contains("fired (all verdicts)"), "{text}");
    let first_line = String::from_utf8_lossy(&o_first.stdout);
    assert!(first_line
        .lines()
        .next()
        .unwrap()
        .contains(" verdicts=first "));

    let (ra, rf) = (report(&all), report(&first));
    assert_eq!(rf["header"]["params"]["verdicts"], "first");
    assert!(ra["header"]["params"].get("verdicts").is_none());
    let (ca, cf) = (
        ra["cases"].as_array().unwrap(),
        rf["cases"].as_array().unwrap(),
    );
    let mut later = 0;
    for (a, f) in ca.iter().zip(cf) {
        assert_eq!(a["outcome"], f["outcome"], "case {}", a["case"]);
        let (va, vf) = (verdicts(a), verdicts(f));
        assert!(vf.iter().all(|v| v.1 == vf[0].1), "first mode: one step");
        // The same verdicts, the same witnesses: the first mode's evidence is the all mode's.
        assert_eq!(va[..vf.len()], vf[..], "all mode starts with the first");
        later += usize::from(va.len() > vf.len());
    }
    assert!(later > 0, "no case fired a second invariant");
    let rows = ra["summary"]["invariants"].as_array().unwrap();
    let fired = |r: &Value| r["fired"].as_u64().unwrap();
    assert!(rows
        .iter()
        .any(|r| fired(r) > r["violated"].as_u64().unwrap()));
    for row in rows {
        let cases = ca
            .iter()
            .filter(|c| verdicts(c).iter().any(|v| v.0 == row["id"]))
            .count();
        assert_eq!(fired(row), cases as u64, "{}", row["id"]);
    }
}

#[test]
fn all_is_byte_identical_whatever_the_job_count() {
    let (_, one) = run("jobs1", &["--jobs", "1"]);
    let (_, two) = run("jobs2", &["--jobs", "2"]);
    let a = std::fs::read(one.join("report.json")).unwrap();
    assert!(a == std::fs::read(two.join("report.json")).unwrap());
}

#[test]
fn a_bad_mode_is_bad_input() {
    let (o, _) = run("bad", &["--verdicts", "some"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("all or first"));
}
