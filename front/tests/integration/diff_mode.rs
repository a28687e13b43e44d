//! Differential mode: the reference against an in-process twin agrees on every pass and
//! the report does not depend on the job count; a test-only mutant disagrees in the
//! field it changes and nowhere it does not; through the CLI the reference Python
//! adapter agrees with the reference on every pass, and a crashing adapter is exit 4.

use crate::common;

use common::{arg, compactsim, scratch};
use compactsim_fakes::seam::{BatchReport, Compactor};
use compactsim_harness::compactor::CompactorSpec;
use compactsim_harness::diff::{diff_cases, diff_suite, Aggregator, DiffReport};
use compactsim_harness::mutants::{Hooks, Wrapped};
use compactsim_harness::runner::Suite;
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::compactor::reference::Reference;
use compactsim_hermes::strategy::Strategy;
use compactsim_model::{Message, MicroPass, Role};
use std::collections::BTreeMap;

fn suite(strategy: &str, cases: u32) -> Suite {
    Suite {
        root_seed: 20_260_731,
        case_first: 0,
        cases,
        passes: 25,
        strategy: Strategy::parse(strategy).unwrap(),
        bugs: BugSet::default(),
        compactor: CompactorSpec::Reference,
        profile: None,
    }
}

/// `suite` with the compactor `other` on the other side of the diff.
fn against(suite: &Suite, other: &CompactorSpec) -> Suite {
    Suite {
        compactor: other.clone(),
        ..suite.clone()
    }
}

fn diff(suite: &Suite, jobs: usize, other: &CompactorSpec) -> DiffReport {
    let mut agg = Aggregator::new(BTreeMap::new());
    diff_suite(&against(suite, other), jobs, |d| agg.add(&d)).unwrap();
    agg.finish()
}

#[test]
fn the_reference_against_its_twin_agrees_on_every_pass_whatever_the_jobs() {
    for strategy in ["micro", "batch", "both"] {
        let s = suite(strategy, 48);
        let twin =
            CompactorSpec::in_process("twin", |r: Reference| -> Box<dyn Compactor> { Box::new(r) });
        let one = diff(&s, 1, &twin);
        let t = &one.totals;
        assert!(t.passes > 100, "{strategy}: {t:?}");
        assert_eq!(
            t.passes_agreeing,
            t.passes,
            "{strategy}: {}",
            one.markdown()
        );
        assert_eq!(t.agreement_percent, "100.00");
        assert_eq!(t.cases_agreeing, t.cases);
        assert!(one.kinds.is_empty() && one.cases.is_empty());
        assert_eq!(one.json(), diff(&s, 2, &twin).json(), "{strategy}: --jobs");
    }
}

/// A twin whose summaries come out as `user` rows where the reference writes
/// `assistant` ones (and the other way round).
struct RoleFlip;

fn flip(msgs: &mut [Message], before: &[Message]) {
    for m in msgs.iter_mut().filter(|m| m.is_summary()) {
        if before.iter().any(|b| b == m) {
            continue;
        }
        m.role = match m.role {
            Role::User => Role::Assistant,
            _ => Role::User,
        };
    }
}

impl Hooks for RoleFlip {
    fn after_micro(&mut self, before: &[Message], msgs: &mut Vec<Message>, _: &MicroPass) {
        flip(msgs, before);
    }

    fn after_batch(&mut self, before: &[Message], msgs: &mut Vec<Message>, _: &BatchReport) {
        flip(msgs, before);
    }
}

/// The reference wrapped in [`RoleFlip`].
fn role_flip() -> CompactorSpec {
    CompactorSpec::in_process("role-flip", |r: Reference| -> Box<dyn Compactor> {
        Box::new(Wrapped {
            inner: Box::new(r),
            hooks: RoleFlip,
            name: "role-flip".into(),
        })
    })
}

#[test]
fn a_mutant_disagrees_in_summary_role_only() {
    for strategy in ["micro", "batch"] {
        let s = suite(strategy, 32);
        let mutant = role_flip();
        let report = diff(&s, 2, &mutant);
        let t = &report.totals;
        assert!(t.passes_agreeing < t.passes, "{strategy}: {t:?}");
        assert_eq!(
            report.kinds.first().map(|k| k.kind),
            Some("summary-role"),
            "{strategy}: {}",
            report.markdown()
        );
        let first = report.cases[0].first.as_ref().unwrap();
        assert_eq!(first.fields, vec!["summary-role"], "{strategy}");
        assert!(first.other_rows.iter().any(|r| r.contains("(role ")));
        // Only summary roles differ (the mutant's later state is the reference's).
        for k in &report.kinds {
            assert_eq!(k.kind, "summary-role", "{strategy}: {}", report.markdown());
        }
    }
}

fn adapter(rel: &str) -> String {
    format!("python3 {}/../adapters/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// The reference Python adapter follows the reference model but judges a few edges by
/// text (an answer longer than its prompt is an expansion; a marker's body is the served
/// text, which spells every fact): it agrees on almost every pass and never on the
/// structure of summaries.
#[test]
fn the_reference_python_adapter_agrees_with_the_reference() {
    let dir = scratch("diff_mode/python");
    let cmd = adapter("reference/compactor.py");
    let o = compactsim(&[
        "diff",
        "--cases",
        "24",
        "--adapter",
        &cmd,
        "--jobs",
        "2",
        "--out",
        arg(&dir),
    ]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let md = std::fs::read_to_string(dir.join("diff.md")).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("diff.json")).unwrap()).unwrap();
    let t = &json["totals"];
    let (agree, passes) = (
        t["passes_agreeing"].as_u64().unwrap(),
        t["passes"].as_u64().unwrap(),
    );
    assert!(passes > 300 && agree * 100 >= passes * 95, "{md}");
    for k in json["kinds"].as_array().unwrap() {
        let kind = k["kind"].as_str().unwrap();
        assert!(
            !["summary-role", "summary-position", "marker-count"].contains(&kind),
            "{md}"
        );
    }
    assert!(o.stdout.contains("passes agreeing:"), "{}", o.stdout);
}

/// The reference drives a diff's world, so the reference's declarations judge it: the
/// Python adapter declares no `tool_output_prune`, and judged by its hello the
/// reference's pruned tool results read as silent drops (case 1 of this suite was cut
/// short by no-silent-drop and kept-rows-intact while `run` of the same suite is clean).
#[test]
fn a_diff_judges_the_world_by_the_reference_declarations_as_run_does() {
    let dir = scratch("diff_mode/judged");
    let cmd = adapter("reference/compactor.py");
    let flags = ["--cases", "2", "--passes", "3", "--strategy", "batch"];
    let run = compactsim(&[&["run"][..], &flags, &["--out", arg(&dir.join("run"))]].concat());
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let o = compactsim(
        &[
            &["diff"][..],
            &flags,
            &["--adapter", &cmd, "--out", arg(&dir)],
        ]
        .concat(),
    );
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("cut short: 0"), "{}", o.stdout);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("diff.json")).unwrap()).unwrap();
    for case in json["cases"].as_array().unwrap() {
        assert_eq!(case["outcome"], "clean", "{case}");
    }
}

#[test]
fn a_crashing_adapter_is_exit_4_and_bad_flags_exit_2() {
    let dir = scratch("diff_mode/crash");
    let cmd = adapter("reference/fixtures/crash.py");
    let o = compactsim(&[
        "diff",
        "--cases",
        "2",
        "--adapter",
        &cmd,
        "--adapter-timeout-ms",
        "5000",
        "--out",
        arg(&dir),
    ]);
    assert_eq!(o.code, 4, "{}{}", o.stdout, o.stderr);
    assert!(std::fs::read_to_string(dir.join("diff.md"))
        .unwrap()
        .contains("internal"));
    let none = compactsim(&["diff", "--cases", "2", "--out", arg(&dir)]);
    assert_eq!(none.code, 2, "{}", none.stderr);
    assert!(none.stderr.contains("--adapter"), "{}", none.stderr);
    let ext = compactsim(&[
        "diff",
        "--compactor",
        "external",
        "--adapter",
        &cmd,
        "--out",
        arg(&dir),
    ]);
    assert_eq!(ext.code, 2, "{}", ext.stderr);
}

/// `diff_cases` (the CLI's `--only`) diffs the named cases and nothing else: each comes
/// out as in the full run; `--only` with an id at or past `--cases` is bad input.
#[test]
fn only_diffs_the_named_cases_as_the_full_run_does() {
    let s = suite("batch", 12);
    let mutant = role_flip();
    let all = diff(&s, 2, &mutant);
    let mut agg = Aggregator::new(BTreeMap::new());
    diff_cases(&against(&s, &mutant), &[3, 9], 2, |d| agg.add(&d)).unwrap();
    let some = agg.finish();
    assert_eq!(some.totals.cases, 2);
    let named: Vec<_> = all
        .cases
        .iter()
        .filter(|c| [3, 9].contains(&c.case))
        .collect();
    assert_eq!(named.len(), 2, "{}", all.markdown());
    assert_eq!(some.cases.iter().collect::<Vec<_>>(), named);
    let passes: u64 = named.iter().map(|c| c.passes as u64).sum();
    assert_eq!(some.totals.passes, passes);

    let dir = scratch("diff_mode/only");
    let cmd = adapter("reference/fixtures/crash.py");
    for only in ["12", ""] {
        let o = compactsim(&[
            "diff",
            "--cases",
            "12",
            "--only",
            only,
            "--adapter",
            &cmd,
            "--out",
            arg(&dir),
        ]);
        assert_eq!(o.code, 2, "--only {only:?}: {}{}", o.stdout, o.stderr);
    }
}

/// `diff --session-mode` is validated and applied as `run` does it (one function builds
/// both): refused with `micro`, refused when unknown, and under `batch` the reference
/// world runs in that mode, which diff.json names.
#[test]
fn diff_honours_session_mode_as_run_does() {
    let dir = scratch("diff_mode/session_mode");
    let cmd = adapter("reference/compactor.py");
    let out = dir.join("run");
    for (strategy, mode) in [("micro", "in-place"), ("batch", "sideways")] {
        let flags = [
            "--cases",
            "1",
            "--strategy",
            strategy,
            "--session-mode",
            mode,
        ];
        let diff_args = [
            &["diff"][..],
            &flags,
            &["--adapter", &cmd, "--out", arg(&dir)],
        ];
        let run_args = [&["run"][..], &flags, &["--out", arg(&out)]];
        let refused = compactsim(&diff_args.concat());
        let run = compactsim(&run_args.concat());
        assert_eq!(refused.code, 2, "{strategy} {mode}: {}", refused.stderr);
        assert_eq!(run.code, 2, "{strategy} {mode}: {}", run.stderr);
        assert_eq!(refused.stderr, run.stderr, "the same refusal as run");
    }
    let o = compactsim(&[
        "diff",
        "--cases",
        "1",
        "--passes",
        "3",
        "--strategy",
        "batch",
        "--session-mode",
        "in-place",
        "--adapter",
        &cmd,
        "--out",
        arg(&dir),
    ]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("session_mode=in-place"), "{}", o.stdout);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("diff.json")).unwrap()).unwrap();
    assert_eq!(json["params"]["session_mode"], "in-place", "{json}");
}
