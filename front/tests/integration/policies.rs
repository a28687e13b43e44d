//! Two classes of invariant (adapters/PROTOCOL.md, "Policies"): the universal ones judge
//! every compactor; a policy invariant or rule judges only a compactor that declares its
//! policy. A third-party-style adapter that keeps no protected head is clean when it
//! declares nothing and caught by head-protected when it declares `protect_first_n`;
//! `list invariants` shows each one's class; a report names the policies judged; a bad
//! declaration is bad input (exit 2) naming the adapter.

use crate::common;

use common::{arg, compactsim, scratch, Run};
use serde_json::Value;
use std::path::PathBuf;

fn no_head(declare: &str) -> String {
    format!(
        "python3 {}/../adapters/reference/fixtures/no_head.py {declare}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn text(o: &Run) -> String {
    format!("{}{}", o.stdout, o.stderr)
}

fn run(name: &str, extra: &[&str]) -> (Run, PathBuf) {
    let dir = scratch(&format!("policies/{name}"));
    let mut args = vec![
        "run",
        "--cases",
        "6",
        "--shrink-time",
        "0",
        "--out",
        arg(&dir),
    ];
    args.extend_from_slice(extra);
    (compactsim(&args), dir)
}

fn report(dir: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap()
}

#[test]
fn an_adapter_declaring_no_policy_is_judged_by_universal_invariants_only() {
    let quiet = no_head("");
    let (o, dir) = run("none", &["--compactor", "external", "--adapter", &quiet]);
    assert_eq!(o.code, 0, "{}", text(&o));
    let r = report(&dir);
    assert_eq!(r["header"]["policies"]["declared_by"], "adapter");
    assert_eq!(r["header"]["policies"]["judged"], serde_json::json!({}));
    let ids: Vec<&str> = r["summary"]["invariants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"head-protected"), "universal: {ids:?}");
    assert!(
        !ids.contains(&"exchange-absorbed-once"),
        "a policy invariant nobody declared is not judged: {ids:?}"
    );
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    let line = md.lines().find(|l| l.starts_with("| policies judged "));
    assert!(
        line.is_some_and(|l| l.contains("none: universal invariants only (declared by adapter)")),
        "{md}"
    );

    let held = no_head("protect_first_n");
    let (o, dir) = run("head", &["--compactor", "external", "--adapter", &held]);
    assert_eq!(o.code, 1, "{}", text(&o));
    let r = report(&dir);
    assert_eq!(
        r["header"]["policies"]["judged"],
        serde_json::json!({"protect_first_n": {}})
    );
    let violated: Vec<(&str, u64)> = r["summary"]["invariants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["violated"].as_u64() != Some(0))
        .map(|i| (i["id"].as_str().unwrap(), i["violated"].as_u64().unwrap()))
        .collect();
    assert_eq!(violated.len(), 1, "{violated:?}");
    assert_eq!(violated[0].0, "head-protected");
}

#[test]
fn a_report_names_the_policies_judged() {
    let (o, dir) = run("reference", &["--strategy", "micro"]);
    assert_eq!(o.code, 0, "{}", text(&o));
    let policies = &report(&dir)["header"]["policies"];
    assert_eq!(policies["declared_by"], "reference");
    assert_eq!(
        policies["judged"],
        serde_json::json!({
            "absorb_exchanges": {},
            "failure_cooldown": {"ms": 60000, "connection_dropped_ms": 30000},
            "newest_reply_verbatim": {},
            "protect_first_n": {},
            "static_fallback": {},
            "tool_output_prune": {},
        })
    );
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains("<td>policies judged</td>"), "{html}");
    assert!(html.contains("absorb_exchanges {}"), "{html}");
}

#[test]
fn list_invariants_shows_each_class_and_the_policy_rules() {
    let o = compactsim(&["list", "invariants"]);
    assert_eq!(o.code, 0);
    let out = o.stdout;
    let class_lines = out.lines().filter(|l| l.contains("class: ")).count();
    let entries = compactsim_invariants::catalogue().len()
        + compactsim_invariants::gateway::gateway_catalogue().len();
    assert_eq!(class_lines, entries, "{out}");
    assert!(out.contains("class: policy:absorb_exchanges"), "{out}");
    assert!(out.contains("class: universal"), "{out}");
    for rule in [
        "rule of policy protect_first_n:",
        "rule of policy newest_reply_verbatim:",
        "rule of policy failure_cooldown:",
    ] {
        assert!(out.contains(rule), "{rule}: {out}");
    }
}

#[test]
fn a_bad_policy_declaration_is_bad_input_naming_the_adapter() {
    let bad = no_head("protect_head");
    let (o, _) = run("bad", &["--compactor", "external", "--adapter", &bad]);
    let out = text(&o);
    assert_eq!(o.code, 2, "{out}");
    assert!(out.contains("unknown policy `protect_head`"), "{out}");
    assert!(out.contains("no_head.py protect_head"), "{out}");
    assert!(!out.contains("panicked"), "{out}");
}
