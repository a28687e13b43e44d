//! `selftest --compactor external`: the reference Python adapter's clean rows are clean
//! and every mutant around it is caught, with the same table whatever the job count; an
//! adapter that crashes is exit 4, named, and no mutant row runs.

use crate::common;

use common::{compactsim, Run};

fn adapter(rel: &str) -> String {
    format!("python3 {}/../adapters/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn selftest(adapter_cmd: &str, jobs: &str) -> Run {
    compactsim(&[
        "selftest",
        "--seeds",
        "1..1",
        "--cases",
        "4",
        "--jobs",
        jobs,
        "--compactor",
        "external",
        "--adapter",
        adapter_cmd,
    ])
}

/// The table without its wall times and the job count (the only figures that may
/// differ between runs).
fn table(o: &Run) -> Vec<String> {
    o.stdout
        .lines()
        .filter(|l| !l.starts_with("SEEDS="))
        .map(|l| {
            let l = l.split(", total ").next().unwrap_or(l);
            match l.strip_suffix(" s") {
                Some(rest) => rest.rsplit_once("  ").map_or(rest, |(a, _)| a).to_string(),
                None => l.to_string(),
            }
        })
        .collect()
}

#[test]
fn the_reference_adapter_is_clean_and_its_mutants_are_caught_whatever_the_jobs() {
    let cmd = adapter("reference/compactor.py");
    let one = selftest(&cmd, "1");
    let two = selftest(&cmd, "2");
    assert_eq!(one.code, 0, "{}{}", one.stdout, one.stderr);
    assert_eq!(table(&one), table(&two));
    let text = &two.stdout;
    for strategy in ["micro", "batch", "both"] {
        let row = format!("clean            {strategy}");
        assert!(
            text.lines()
                .any(|l| l.starts_with(&row) && l.contains("clean (")),
            "{text}"
        );
    }
    for m in compactsim_harness::mutants::MUTANTS {
        let row = text
            .lines()
            .find(|l| l.starts_with(m.id))
            .unwrap_or_default();
        assert!(row.contains("%  ok ["), "{}: {text}", m.id);
    }
    assert!(text.contains("defaults for an external compactor: 2 seeds, 24 cases"));
    let n = compactsim_harness::mutants::MUTANTS.len();
    let summary = format!("3 of 3 clean rows clean, {n} of {n} mutant rows deep enough");
    assert!(text.contains(&summary), "{text}");
}

#[test]
fn a_crashing_adapter_is_exit_4_named_and_no_mutant_runs() {
    let o = selftest(&adapter("reference/fixtures/crash.py"), "2");
    assert_eq!(o.code, 4, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains("adapter failure") && o.stdout.contains("crash.py"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("the mutant rows were not run"));
    assert!(!o.stdout.contains("M-no-flag"));
}
