//! The JSON Schemas of report.json, diff.json and matrix.json (docs/schemas/) are what the
//! Rust types generate, and real reports validate against them (Python `jsonschema`, the
//! version pinned in `JSONSCHEMA_PINNED`; matrix.json's in matrix_cli); a seed above 2^53
//! survives `jq` and Python's `json`.
//! `UPDATE_SCHEMAS=1 cargo test -p compactsim --test integration report_schemas`
//! rewrites the committed schemas.

use crate::common;

use common::{arg, compactsim, repo, scratch};
use std::path::Path;
use std::process::Command;

/// The Python `jsonschema` the validation step uses (`pip install jsonschema==4.26.0`).
const JSONSCHEMA_PINNED: &str = "4.26.0";

/// A seed above 2^53 (a JSON number readers round): u64::MAX minus 58, a prime.
const SEED_ABOVE_2_POW_53: &str = "18446744073709551557";

fn committed(name: &str, generated: &str) {
    let path = repo().join("docs/schemas").join(name);
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_SCHEMAS=1 writes it)", path.display()));
    assert!(
        on_disk == generated,
        "{} is not what the Rust types generate: UPDATE_SCHEMAS=1 cargo test -p compactsim \
         --test integration report_schemas, then read the diff",
        path.display()
    );
}

#[test]
fn the_committed_schemas_are_what_the_types_generate() {
    committed(
        "report.schema.json",
        &compactsim_reports::report_schema_json(),
    );
    committed(
        "diff.schema.json",
        &compactsim_harness::diff::diff_schema_json(),
    );
    committed(
        "matrix.schema.json",
        &compactsim::cli::matrix::matrix_schema_json(),
    );
}

/// Validates `doc` against `schema` with Python's `jsonschema` (the pinned version).
pub fn validate(schema: &Path, doc: &Path) {
    let script = format!(
        "import json, sys, importlib.metadata as m, jsonschema\n\
         v = m.version('jsonschema')\n\
         assert v == '{JSONSCHEMA_PINNED}', 'jsonschema ' + v + ', pinned {JSONSCHEMA_PINNED}'\n\
         schema = json.load(open(sys.argv[1]))\n\
         jsonschema.Draft202012Validator.check_schema(schema)\n\
         jsonschema.Draft202012Validator(schema).validate(json.load(open(sys.argv[2])))\n"
    );
    let out = Command::new("python3")
        .args(["-c", &script, arg(schema), arg(doc)])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{} against {}: {}\n(needs `pip install jsonschema=={JSONSCHEMA_PINNED}`)",
        doc.display(),
        schema.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_failing_report_and_a_diff_validate_against_their_schemas() {
    let dir = scratch("report_schemas/validate");
    let run = dir.join("run");
    let o = compactsim(&[
        "run",
        "--cases",
        "6",
        "--bug",
        "H-75345-B",
        "--shrink-time",
        "0",
        "--out",
        arg(&run),
    ]);
    assert_eq!(o.code, 1, "{}{}", o.stdout, o.stderr);
    let schemas = repo().join("docs/schemas");
    validate(
        &schemas.join("report.schema.json"),
        &run.join("report.json"),
    );
    let cmd = format!(
        "python3 {}",
        repo().join("adapters/reference/compactor.py").display()
    );
    let diff = dir.join("diff");
    let o = compactsim(&[
        "diff",
        "--cases",
        "2",
        "--passes",
        "3",
        "--adapter",
        &cmd,
        "--out",
        arg(&diff),
    ]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    validate(&schemas.join("diff.schema.json"), &diff.join("diff.json"));
}

#[test]
fn a_seed_above_2_pow_53_round_trips_through_jq_and_python_json() {
    let dir = scratch("report_schemas/seed");
    let o = compactsim(&[
        "run",
        "--seed",
        SEED_ABOVE_2_POW_53,
        "--cases",
        "2",
        "--passes",
        "2",
        "--out",
        arg(&dir),
    ]);
    assert!(o.code <= 1, "{}{}", o.stdout, o.stderr);
    let report = dir.join("report.json");
    let original = compactsim_reports::read_report(&report).unwrap();
    assert_eq!(original.header.seed.to_string(), SEED_ABOVE_2_POW_53);
    assert!(original.cases.iter().any(|c| c.case_seed > 1 << 53));
    // jq 1.6 holds numbers as doubles: the seeds are strings, so they come back exact.
    let jq = Command::new("jq")
        .args(["-r", ".header.seed, .cases[].case_seed", arg(&report)])
        .output()
        .expect("jq runs");
    assert!(
        jq.status.success(),
        "{}",
        String::from_utf8_lossy(&jq.stderr)
    );
    let want: Vec<String> = std::iter::once(original.header.seed)
        .chain(original.cases.iter().map(|c| c.case_seed))
        .map(|s| s.to_string())
        .collect();
    let got: Vec<String> = String::from_utf8(jq.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(got, want);
    // Whole files rewritten by jq and by Python's json read back to the same report.
    let by_jq = dir.join("by-jq.json");
    let jq = Command::new("jq")
        .args([".", arg(&report)])
        .output()
        .unwrap();
    assert!(jq.status.success());
    std::fs::write(&by_jq, jq.stdout).unwrap();
    let by_python = dir.join("by-python.json");
    let py = Command::new("python3")
        .args([
            "-c",
            "import json,sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2],'w'))",
            arg(&report),
            arg(&by_python),
        ])
        .output()
        .unwrap();
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    for copy in [by_jq, by_python] {
        assert_eq!(
            compactsim_reports::read_report(&copy).unwrap(),
            original,
            "{}",
            copy.display()
        );
    }
}
