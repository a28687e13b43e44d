//! Capabilities are read: an external adapter's `hello` chooses the default strategy and
//! refuses a strategy it does not serve (exit 2, before any case, naming the
//! capability); scenario files it cannot serve are skipped with the reason; a malformed
//! `requires` is a located error (exit 2).

use crate::common;
use common::{arg, compactsim, repo, scratch};
use std::path::{Path, PathBuf};

const BATCH_ONLY: &str = "python3 adapters/reference/fixtures/batch_only.py";
const REFERENCE_PY: &str = "python3 adapters/reference/compactor.py";

/// A Python adapter in `dir` serving the reference batch pass, with `caps` (a Python
/// dict literal) as its hello capabilities.
fn batch_adapter(dir: &Path, name: &str, caps: &str) -> String {
    let path = dir.join(name);
    let reference = repo().join("adapters/reference");
    let text = format!(
        "import sys\nsys.path.insert(0, {reference:?})\nfrom batch import Batch\nfrom protocol import serve\n\
         b = Batch()\n\
         def restart(req, summarize):\n    b.restart()\n    return {{}}\n\
         serve('t', '0', {caps}, {{'batch_pass': b.pass_, 'restart': restart}})\n",
        reference = reference.display().to_string()
    );
    std::fs::write(&path, text).unwrap();
    format!("python3 {}", path.display())
}

#[test]
fn a_batch_only_adapter_runs_batch_by_default() {
    let dir = scratch("caps-default-batch");
    let r = compactsim(&[
        "run",
        "--compactor",
        "external",
        "--adapter",
        BATCH_ONLY,
        "--cases",
        "2",
        "--passes",
        "3",
        "--shrink-time",
        "0",
        "--out",
        arg(&dir.join("run")),
    ])
    .expect_code(0);
    assert!(r.stdout.contains(" strategy=batch "), "{}", r.stdout);
    // `--era` applies to the agent loop: with the adapter's default it is accepted.
    compactsim(&[
        "sweep",
        "--seeds",
        "1..1",
        "--cases",
        "1",
        "--passes",
        "2",
        "--era",
        "b",
        "--compactor",
        "external",
        "--adapter",
        BATCH_ONLY,
    ])
    .expect_code(0);
}

/// `compactsim args... --compactor external --adapter adapter`: exit 2 with `needle` on
/// stderr and nothing on stdout (no case ran).
fn refused(args: &[&str], adapter: &str, needle: &str) {
    let mut all = args.to_vec();
    if args[0] != "diff" {
        all.extend(["--compactor", "external"]);
    }
    all.extend(["--adapter", adapter]);
    let r = compactsim(&all).expect_code(2);
    assert!(r.stderr.contains(needle), "{needle}\nnot in\n{}", r.stderr);
    assert!(r.stdout.is_empty(), "no case ran: {}", r.stdout);
}

#[test]
fn a_strategy_the_adapter_does_not_serve_is_refused_before_any_case() {
    let dir = scratch("caps-refused");
    let out = dir.join("run");
    for strategy in ["micro", "both"] {
        let want = format!(
            "adapter '{BATCH_ONLY}' does not declare capability micro_pass, which --strategy \
             {strategy} needs"
        );
        refused(
            &["run", "--strategy", strategy, "--out", arg(&out)],
            BATCH_ONLY,
            &want,
        );
        assert!(!out.exists(), "nothing was written");
    }
    // The same rule in every command that runs cases.
    let diff_out = dir.join("diff");
    for args in [
        &["sweep", "--seeds", "1..2", "--strategy", "micro"][..],
        &["diff", "--strategy", "micro", "--out", arg(&diff_out)],
        &["replay", "--case", "0", "--strategy", "both"],
        &[
            "shrink",
            "--case",
            "0",
            "--strategy",
            "micro",
            "--out",
            arg(&out),
        ],
    ] {
        refused(args, BATCH_ONLY, "capability micro_pass, which --strategy");
    }
    // Gateway needs batch_pass; an adapter with no pass serves no strategy.
    let micro_only = batch_adapter(&dir, "micro_only.py", "{'micro_pass': True}");
    refused(
        &["run", "--strategy", "gateway", "--out", arg(&out)],
        &micro_only,
        "capability batch_pass, which --strategy gateway needs",
    );
    let none = batch_adapter(&dir, "none.py", "{'hooks': []}");
    refused(
        &["run", "--out", arg(&out)],
        &none,
        "declares neither micro_pass nor batch_pass",
    );
}

/// Writes `name` into `dir` with `body` after `format = 1`.
fn scenario(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("format = 1\npasses = 2\n{body}")).unwrap();
    path
}

/// `compactsim scenario files --out out --compactor external --adapter adapter`, exit 0.
fn scenario_under(files: &Path, out: &Path, adapter: &str) -> common::Run {
    compactsim(&[
        "scenario",
        arg(files),
        "--out",
        arg(out),
        "--compactor",
        "external",
        "--adapter",
        adapter,
    ])
    .expect_code(0)
}

#[test]
fn scenarios_an_adapter_cannot_serve_are_skipped_with_the_reason() {
    let dir = scratch("caps-skip");
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    scenario(
        &files,
        "a-batch.toml",
        "strategy = \"batch\"\nexpect = \"clean\"\n",
    );
    scenario(
        &files,
        "b-micro.toml",
        "strategy = \"micro\"\nexpect = \"clean\"\n",
    );
    scenario(
        &files,
        "c-policy.toml",
        "strategy = \"batch\"\nrequires = [\"policy:protect_first_n\"]\nexpect = \"clean\"\n",
    );
    scenario(
        &files,
        "d-bug.toml",
        "strategy = \"batch\"\nbugs = [\"H-52160\"]\nexpect = \"clean\"\n",
    );
    scenario(
        &files,
        "e-head.toml",
        "strategy = \"batch\"\ninvariants = [\"api-valid\", \"head-protected\"]\nexpect = \"clean\"\n",
    );
    let out = dir.join("out");
    let r = scenario_under(&files, &out, BATCH_ONLY);
    let quoted = format!("adapter '{BATCH_ONLY}'");
    for want in [
        format!("SKIPPED {}: {quoted} does not declare capability micro_pass, needed by strategy micro", arg(&files.join("b-micro.toml"))),
        format!("SKIPPED {}: {quoted} does not declare policy protect_first_n, needed by requires", arg(&files.join("c-policy.toml"))),
        format!("SKIPPED {}: bug switches (H-52160) act in the built-in model only, not in {quoted}", arg(&files.join("d-bug.toml"))),
        format!("SKIPPED {}: {quoted} does not declare policy protect_first_n, needed by invariant head-protected", arg(&files.join("e-head.toml"))),
    ] {
        assert!(r.stdout.contains(&want), "{want}\nmissing from\n{}", r.stdout);
    }
    assert!(
        r.stdout
            .contains("5 scenarios, 1 hold, 0 failed, 4 skipped"),
        "{}",
        r.stdout
    );
    let summary = std::fs::read_to_string(out.join("scenarios.txt")).unwrap();
    assert_eq!(
        summary
            .lines()
            .filter(|l| l.starts_with("SKIPPED "))
            .count(),
        4,
        "{summary}"
    );
    let xml = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    let suite = &report.test_suites[0];
    assert_eq!((suite.failures, suite.errors), (0, 0));
    let skipped = suite
        .test_cases
        .iter()
        .filter(|c| matches!(c.status, quick_junit::TestCaseStatus::Skipped { .. }))
        .count();
    assert_eq!(skipped, 4);
    // The built-in model serves every file; an adapter declaring the policy serves the
    // policy's files (the micro and bug files stay skipped).
    compactsim(&["scenario", arg(&files), "--out", arg(&out)]).expect_code(0);
    let declares = batch_adapter(
        &dir,
        "declares.py",
        "{'batch_pass': True, 'policies': {'protect_first_n': {}}}",
    );
    let r = scenario_under(&files, &out, &declares);
    assert!(
        r.stdout
            .contains("5 scenarios, 3 hold, 0 failed, 2 skipped"),
        "{}",
        r.stdout
    );
    // `replay FILE` of a skipped file says why, with the exit of `scenario FILE`.
    let r = compactsim(&[
        "replay",
        arg(&files.join("b-micro.toml")),
        "--compactor",
        "external",
        "--adapter",
        BATCH_ONLY,
    ])
    .expect_code(0);
    assert!(r.stdout.contains("SKIPPED: "), "{}", r.stdout);
}

#[test]
fn a_malformed_requires_is_a_located_error() {
    let dir = scratch("caps-malformed");
    let bad = scenario(
        &dir,
        "bad.toml",
        "strategy = \"batch\"\nrequires = [\"batch_pass\", \"hook:should_compress\"]\nexpect = \"clean\"\n",
    );
    let r = compactsim(&["scenario", arg(&bad), "--out", arg(&dir.join("out"))]).expect_code(2);
    let want = format!(
        "{}:4:27: unknown requirement `hook:should_compress` (known: micro_pass, batch_pass, \
         hook:cooling_down",
        arg(&bad)
    );
    assert!(r.stderr.contains(&want), "{want}\nin\n{}", r.stderr);
    let twice = scenario(
        &dir,
        "twice.toml",
        "requires = [\"micro_pass\", \"micro_pass\"]\nexpect = \"clean\"\n",
    );
    let r = compactsim(&["scenario", arg(&twice), "--out", arg(&dir.join("out"))]).expect_code(2);
    assert!(
        r.stderr
            .contains("twice.toml:3:27: requirement `micro_pass` is listed twice"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_neutral_set_holds_on_the_reference_python_adapter() {
    let out = scratch("caps-neutral");
    let r = scenario_under(&repo().join("scenarios/neutral"), &out, REFERENCE_PY);
    assert!(r.stdout.contains(" 0 failed, "), "{}", r.stdout);
    assert!(!r.stdout.contains("FAILED"), "{}", r.stdout);
}
