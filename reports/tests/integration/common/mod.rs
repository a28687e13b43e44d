//! Fixtures shared by the integration tests.
#![allow(dead_code)]

pub mod xml;

use compactsim_model::{MsgId, Role, Tokens, Violation, Witness, WitnessRow};
use compactsim_reports::{Aggregator, CaseRow, Failure, Header, Outcome, Verdict};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

pub const INVARIANTS: [&str; 3] = ["api-valid", "count-non-growing", "one-marker-max"];
pub const FAMILIES: [&str; 3] = ["chatty", "code-review", "tool-heavy"];
pub const COVERAGE: [&str; 3] = [
    "overflow-during-compaction",
    "restart-during-compaction",
    "summarizer-timeout",
];

/// A fresh, empty directory for one test.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("compactsim-reports-tests")
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Sorted file names in `dir`, hidden ones included.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

pub fn header() -> Header {
    let mut params = BTreeMap::new();
    params.insert("families".to_string(), "all".to_string());
    params.insert("fault-rate".to_string(), "0.05".to_string());
    Header {
        tool: "compactsim".to_string(),
        version: "0.1.0".to_string(),
        seed: 42,
        cases: 0,
        passes: 50,
        strategy: "batch".to_string(),
        bugs: vec!["H-75345-B".to_string()],
        params,
        policies: compactsim_reports::PoliciesJudged {
            declared_by: "reference".to_string(),
            judged: BTreeMap::from([
                ("newest_reply_verbatim".to_string(), serde_json::json!({})),
                ("protect_first_n".to_string(), serde_json::json!({"n": 2})),
            ]),
        },
    }
}

/// Deterministic case rows: every 7th case violates an invariant, every 11th (not 7th)
/// hits the step budget.
pub fn rows(n: u32) -> Vec<CaseRow> {
    (0..n).map(row).collect()
}

pub fn row(case: u32) -> CaseRow {
    let outcome = if case % 7 == 3 {
        Outcome::Violation {
            invariant: INVARIANTS[(case / 7) as usize % INVARIANTS.len()].to_string(),
            turn: case % 13,
        }
    } else if case % 11 == 5 {
        Outcome::Liveness {
            reason: format!("step budget {} exhausted", 1000 + case),
        }
    } else {
        Outcome::Clean
    };
    CaseRow {
        case,
        case_seed: 0x9e37_79b9_7f4a_7c15_u64.wrapping_mul(u64::from(case) + 1),
        family: FAMILIES[case as usize % FAMILIES.len()].to_string(),
        turns: 10 + case % 5,
        passes: 2 + case % 3,
        verdicts: verdicts(case, &outcome),
        outcome,
        tokens_max: 1000 * u64::from(case % 9 + 1),
        messages_max: 20 + case % 4,
    }
}

/// The verdicts of a row: its first violation, and for every other violating case a
/// second invariant fired later (the next one in `INVARIANTS`).
fn verdicts(case: u32, outcome: &Outcome) -> Vec<Verdict> {
    let Outcome::Violation { invariant, turn } = outcome else {
        return Vec::new();
    };
    let first = Verdict {
        invariant: invariant.clone(),
        step: case * 3,
        turn: *turn,
        witness: format!("{:016x}", u64::from(case) * 3),
    };
    if case % 14 != 3 {
        return vec![first];
    }
    let at = INVARIANTS.iter().position(|i| i == invariant).unwrap_or(0);
    let later = Verdict {
        invariant: INVARIANTS[(at + 1) % INVARIANTS.len()].to_string(),
        step: case * 3 + 5,
        turn: turn + 1,
        witness: format!("{:016x}", u64::from(case) * 3 + 5),
    };
    vec![first, later]
}

pub fn failure(row: &CaseRow) -> Option<Failure> {
    let Outcome::Violation { invariant, turn } = &row.outcome else {
        return None;
    };
    let witness = Witness {
        rows: vec![WitnessRow {
            index: 1,
            id: MsgId(7),
            role: Role::Assistant,
            marker: true,
            micro_marker: false,
            tokens: Tokens {
                rough: 120,
                real: 141,
            },
            segments: 2,
            tool_calls: 0,
            note: "second live summary | marker".to_string(),
        }],
        facts: vec![format!("live markers: 2 (case {})", row.case)],
    };
    Some(Failure {
        case: row.case,
        case_seed: row.case_seed,
        family: row.family.clone(),
        violation: Violation {
            invariant: invariant.clone(),
            turn: *turn,
            step: turn * 3,
            message: format!("{invariant} failed on case {}", row.case),
            witness,
        },
        repro: format!("compactsim replay --seed 42 --case {}", row.case),
    })
}

/// Invariant checks one case reports: every invariant checked once per turn.
pub fn checks(row: &CaseRow) -> Vec<(&'static str, u64)> {
    INVARIANTS
        .iter()
        .map(|id| (*id, u64::from(row.turns)))
        .collect()
}

/// Coverage one case reports: the first counter every 4th case, the second never.
pub fn coverage(row: &CaseRow) -> Vec<(&'static str, u64)> {
    let mut hits = vec![(COVERAGE[0], u64::from(row.case.is_multiple_of(4)))];
    hits.push((COVERAGE[2], u64::from(row.case % 3)));
    hits
}

pub fn transitions(row: &CaseRow) -> u64 {
    u64::from(row.turns) * 4 + u64::from(row.passes)
}

pub fn aggregator() -> Aggregator {
    Aggregator::new()
        .with_invariants(INVARIANTS)
        .with_families(FAMILIES)
        .with_coverage(COVERAGE)
}

pub fn add(agg: &mut Aggregator, row: &CaseRow) {
    agg.add_case(row, transitions(row), checks(row), coverage(row));
    if let Some(f) = failure(row) {
        agg.add_failure(f);
    }
}
