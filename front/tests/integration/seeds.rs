//! Every bug switch in the catalogue has its seed scenario and its clean twin, and the
//! twin is the same case with the bug off (the switches it requires stay on).

use compactsim::scenario::{self, Expect, OutcomeClass, Scenario};
use compactsim_harness::engine::{run_case, Record};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::bugs::{BugInfo, CATALOGUE};
use compactsim_invariants::NO_INFINITE_LOOP;
use std::path::{Path, PathBuf};

fn seeds() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/seeds")
}

/// The seed expects what the catalogue says catches the bug: one of its invariants, or
/// a liveness ending for a bug the liveness invariant catches.
fn expects_a_catalogued_invariant(info: &BugInfo, expect: &Expect) {
    match expect {
        Expect::Violated { invariant, .. } => assert!(
            info.expected.contains(&invariant.as_str()),
            "{}: expects {invariant}, catalogue lists {:?}",
            info.id,
            info.expected
        ),
        Expect::Exit(OutcomeClass::Liveness) => assert!(
            info.expected.contains(&NO_INFINITE_LOOP),
            "{}: expects a liveness ending, catalogue lists {:?}",
            info.id,
            info.expected
        ),
        other => panic!("{}: expects {other}", info.id),
    }
}

fn holds(s: &Scenario) {
    let r = run_case(&s.spec, Record::default());
    assert!(
        s.holds(&r),
        "{}: expected {}, got {:?}",
        s.path.display(),
        s.expectation(),
        r.outcome
    );
}

#[test]
fn every_catalogued_bug_has_a_seed_scenario_and_its_clean_twin() {
    let mut missing = Vec::new();
    for info in CATALOGUE {
        let id = info.id.to_lowercase();
        let (on, off) = (
            seeds().join(format!("{id}.toml")),
            seeds().join(format!("{id}.clean.toml")),
        );
        if !on.is_file() || !off.is_file() {
            missing.push(info.id);
            continue;
        }
        let on = scenario::load(&on).unwrap_or_else(|e| panic!("{e}"));
        let off = scenario::load(&off).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            on.spec.bugs,
            info.switches(),
            "{}: its own switch and the ones it requires, nothing else",
            info.id
        );
        assert_eq!(
            off.spec.bugs,
            BugSet::of(info.requires),
            "{}: the twin keeps only the required switches",
            info.id
        );
        expects_a_catalogued_invariant(info, &on.expect);
        assert_eq!(off.expect, Expect::Clean, "{}", info.id);
        let mut twin = off.spec.clone();
        twin.bugs = on.spec.bugs.clone();
        assert_eq!(
            twin, on.spec,
            "{}: the twin must differ only in the bug switch",
            info.id
        );
        holds(&on);
        holds(&off);
    }
    assert!(
        missing.is_empty(),
        "bug switches without scenarios/seeds/<id>.toml and <id>.clean.toml: {missing:?}"
    );
}

/// Story files (`seed-NNN-*.toml`) pair up the same way when they have a twin: the
/// twin is clean and differs only in bug switches.
#[test]
fn every_clean_twin_has_its_seed_and_differs_only_in_bug_switches() {
    let mut twins = 0;
    for entry in std::fs::read_dir(seeds()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".clean.toml") else {
            continue;
        };
        twins += 1;
        let on = seeds().join(format!("{stem}.toml"));
        assert!(on.is_file(), "{name} has no {stem}.toml");
        let on = scenario::load(&on).unwrap_or_else(|e| panic!("{e}"));
        let off = scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(off.expect, Expect::Clean, "{name}");
        assert_ne!(on.expect, Expect::Clean, "{stem}.toml must show a failure");
        assert!(
            off.spec.bugs.iter().all(|b| on.spec.bugs.has(b)) && off.spec.bugs != on.spec.bugs,
            "{name}: the twin turns switches off, never on"
        );
        let mut twin = off.spec.clone();
        twin.bugs = on.spec.bugs.clone();
        assert_eq!(twin, on.spec, "{name}: differs only in bug switches");
    }
    assert!(twins >= CATALOGUE.len(), "{twins} twins");
}
