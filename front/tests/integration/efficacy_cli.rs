//! `compaction-effective` as a user sees it: the do-nothing adapter fixture
//! (adapters/reference/fixtures/do_nothing.py) speaks the protocol correctly and returns
//! every transcript unchanged; `run` fails it (exit 1) with a plain witness, where before
//! this invariant every case was clean.

use crate::common;

use common::{arg, compactsim, scratch};

#[test]
fn the_do_nothing_adapter_fails_compaction_effective() {
    let dir = scratch("efficacy_cli/do-nothing");
    let adapter = format!(
        "python3 {}/../adapters/reference/fixtures/do_nothing.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let o = compactsim(&[
        "run",
        "--cases",
        "3",
        "--shrink-time",
        "0",
        "--compactor",
        "external",
        "--adapter",
        &adapter,
        "--out",
        arg(&dir),
    ]);
    let out = format!("{}{}", o.stdout, o.stderr);
    assert_eq!(o.code, 1, "{out}");
    assert!(out.contains("3 cases, 0 clean, 3 failed"), "{out}");
    assert!(
        out.contains("compaction-effective at turn")
            && out.contains("still over the window")
            && out.contains("0 summaries served, none failed; rows unchanged"),
        "{out}"
    );
}
