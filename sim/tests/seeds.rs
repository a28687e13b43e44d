//! Every bug switch in the catalogue has its seed scenario and its clean twin, and the
//! twin is the same case with the bug off.

use compactsim::bugs::{BugSet, CATALOGUE};
use compactsim::engine::{run_case, Record};
use compactsim::scenario::{self, Expect};
use std::path::Path;

fn seeds() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/seeds")
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
            BugSet::of(&[info.bug]),
            "{}: exactly its own switch",
            info.id
        );
        match &on.expect {
            Expect::Violated { invariant, .. } => assert!(
                info.expected.contains(&invariant.as_str()),
                "{}: expects {invariant}, catalogue lists {:?}",
                info.id,
                info.expected
            ),
            other => panic!("{}: expects {other}", info.id),
        }
        assert_eq!(off.expect, Expect::Clean, "{}", info.id);
        let mut twin = off.spec.clone();
        twin.bugs = on.spec.bugs.clone();
        assert_eq!(
            twin, on.spec,
            "{}: the twin must differ only in the bug switch",
            info.id
        );
        for s in [&on, &off] {
            let r = run_case(&s.spec, Record::default());
            assert!(
                s.expect.holds(&r),
                "{}: expected {}, got {:?}",
                s.path.display(),
                s.expect,
                r.outcome
            );
        }
    }
    assert!(
        missing.is_empty(),
        "bug switches without scenarios/seeds/<id>.toml and <id>.clean.toml: {missing:?}"
    );
}
