//! `compactsim matrix`: a small matrix over fixture adapters (no venv needed): a release
//! with the planted fault catches the finding, the reference adapter is clean, a
//! release whose interpreter is missing cannot run and says why; the same matrix twice
//! gives the same matrix.json, and it validates against docs/schemas/matrix.schema.json.

use crate::common::{compactsim, scratch};

const MATRIX: &str = r#"
format = 1

[[finding]]
id = "F1"
scenario = "scenarios/fixtures/rewrite-tail.toml"
adapter = "batch"

[[release]]
name = "reference"
python = "python3"
adapters = { batch = "{python} adapters/reference/compactor.py" }

[[release]]
name = "planted"
python = "python3"
adapters = { batch = "{python} adapters/reference/fixtures/rewrite_tail.py" }
suites = [{ strategy = "batch", adapter = "batch" }]

[[release]]
name = "gone"
python = "target/no-such-venv/bin/python"
recipe = "make the venv"
adapters = { batch = "{python} adapters/reference/compactor.py" }
suites = [{ strategy = "batch", adapter = "batch" }]
"#;

fn run_matrix(dir: &std::path::Path, out: &str) -> (i32, String, serde_json::Value, Vec<u8>) {
    let file = dir.join("m.toml");
    std::fs::write(&file, MATRIX).unwrap();
    let out = dir.join(out);
    let r = compactsim(&[
        "matrix",
        file.to_str().unwrap(),
        "--cases",
        "2",
        "--jobs",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let bytes = std::fs::read(out.join("matrix.json")).unwrap_or_default();
    let json = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
    let md = std::fs::read_to_string(out.join("MATRIX.md")).unwrap_or_default();
    assert!(out.join("matrix.html").exists());
    (r.code, r.stdout + &r.stderr + &md, json, bytes)
}

#[test]
fn a_fixture_matrix_catches_the_planted_fault_and_names_what_cannot_run() {
    let dir = scratch("matrix-fixtures");
    let (code, text, json, first) = run_matrix(&dir, "a");
    assert_eq!(code, 0, "{text}");
    let f1 = &json["findings"][0];
    assert_eq!(f1["invariant"], "kept-rows-intact");
    let cell = |i: usize| f1["cells"][i][1]["status"].as_str().unwrap().to_string();
    assert_eq!(cell(0), "clean", "{text}");
    assert_eq!(cell(1), "caught", "{text}");
    assert_eq!(cell(2), "cannot_run", "{text}");
    let reason = f1["cells"][2][1]["reason"].as_str().unwrap();
    assert!(
        reason.contains("target/no-such-venv/bin/python does not exist"),
        "{reason}"
    );
    assert!(reason.contains("make the venv"), "{reason}");
    assert_eq!(f1["bisect"]["first_affected"], "planted");
    assert_eq!(
        f1["bisect"]["answer"],
        "introduced between reference and planted; still affected in the newest (planted)"
    );
    let planted = &json["releases"][1];
    assert_eq!(planted["suites"][0]["status"], "ran");
    assert_eq!(planted["suites"][0]["totals"]["cases"], 2);
    assert!(
        planted["suites"][0]["invariants"]["kept-rows-intact"][1]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(json["releases"][2]["suites"][0]["status"]
        .as_str()
        .unwrap()
        .starts_with("cannot run: "));
    assert!(text.contains("| planted | caught |"), "{text}");

    crate::report_schemas::validate(
        &crate::common::repo().join("docs/schemas/matrix.schema.json"),
        &dir.join("a/matrix.json"),
    );

    let (_, _, _, second) = run_matrix(&dir, "b");
    assert_eq!(
        first, second,
        "the same matrix twice gives the same matrix.json"
    );
}

#[test]
fn an_unknown_release_or_a_bad_file_is_bad_input() {
    let dir = scratch("matrix-bad");
    let file = dir.join("m.toml");
    std::fs::write(&file, MATRIX).unwrap();
    let r = compactsim(&["matrix", file.to_str().unwrap(), "--release", "nope"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--release nope"), "{}", r.stderr);
    std::fs::write(&file, "format = 1\n[[release]]\nname = \"x\"\n").unwrap();
    let r = compactsim(&["matrix", file.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("matrix file"), "{}", r.stderr);
}
