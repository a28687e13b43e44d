//! The `report.json` schema, version [`SCHEMA_VERSION`]. Field order here is the order
//! on disk; maps are `BTreeMap`s; nothing depends on wall time, paths or thread count.
//! Any change that renames, removes or re-types a field bumps [`SCHEMA_VERSION`].

use compactsim_model::Violation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the `report.json` layout written by this crate.
pub const SCHEMA_VERSION: u32 = 2;

/// A 64-bit seed as a decimal string (`crate::seed_text`).
#[derive(JsonSchema)]
#[schemars(transparent)]
#[allow(dead_code)]
struct SeedText(#[schemars(regex(pattern = r"^[0-9]{1,20}$"))] String);

/// Run parameters: everything needed to rerun the same run, nothing that varies
/// between two runs of it (no wall time, no job count, no output path).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Header {
    pub tool: String,
    pub version: String,
    /// The root seed, a decimal string (a JSON number above 2^53 is rounded by readers).
    #[serde(with = "crate::seed_text")]
    #[schemars(with = "SeedText")]
    pub seed: u64,
    pub cases: u32,
    pub passes: u32,
    pub strategy: String,
    pub bugs: Vec<String>,
    /// Every other chosen parameter, rendered as the CLI would accept it.
    pub params: BTreeMap<String, String>,
    /// The policies the run judged the compactor by (absent in reports of older builds).
    #[serde(default)]
    pub policies: PoliciesJudged,
}

/// Which policies a run judged (adapters/PROTOCOL.md, "Policies"): a policy invariant or
/// a policy rule runs only for a compactor that declares its policy; the universal
/// invariants judge every compactor.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PoliciesJudged {
    /// Who declared them: `reference` (the Rust reference model declares every Hermes
    /// policy), `adapter` (the external adapter's hello), or an in-process compactor's
    /// name.
    pub declared_by: String,
    /// Policy name -> its parameters as a JSON object (`{}`: none or the configured
    /// value). Empty: universal invariants only.
    pub judged: BTreeMap<String, serde_json::Value>,
}

impl PoliciesJudged {
    /// One line: `name {params}, …` (declared by …), or that only universal invariants
    /// judged.
    pub fn describe(&self) -> String {
        let by = if self.declared_by.is_empty() {
            String::new()
        } else {
            format!(" (declared by {})", self.declared_by)
        };
        if self.judged.is_empty() {
            return format!("none: universal invariants only{by}");
        }
        let list: Vec<String> = self
            .judged
            .iter()
            .map(|(name, params)| format!("{name} {params}"))
            .collect();
        format!("{}{by}", list.join(", "))
    }
}

/// How one case ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// Every invariant held until the case's end.
    Clean,
    /// The first invariant that failed, and on which turn.
    Violation { invariant: String, turn: u32 },
    /// The case did not finish within its budget (loop, stall).
    Liveness { reason: String },
    /// The harness itself failed inside the case (a panic, an adapter crash).
    Internal { reason: String },
}

impl Outcome {
    pub fn is_clean(&self) -> bool {
        matches!(self, Outcome::Clean)
    }
}

/// One line of `cases`: a case's identity and outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CaseRow {
    pub case: u32,
    /// A decimal string (a JSON number above 2^53 is rounded by readers).
    #[serde(with = "crate::seed_text")]
    #[schemars(with = "SeedText")]
    pub case_seed: u64,
    pub family: String,
    pub turns: u32,
    pub passes: u32,
    pub outcome: Outcome,
    /// Every invariant that fired in the case, each once with its first step, in the
    /// order they fired (`--verdicts first`: those of the first failing transition).
    /// Absent for a clean case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<Verdict>,
    pub tokens_max: u64,
    pub messages_max: u32,
}

/// One invariant that fired in a case: where it first fired.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Verdict {
    pub invariant: String,
    pub step: u32,
    pub turn: u32,
    /// The digest of its first witness (`Violation::witness_digest`: 16 hex digits of
    /// FNV-1a 64 over the message, facts and rows as printed): two runs' verdicts of one
    /// case are the same verdict when invariant, step and digest agree.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub witness: String,
}

/// Run-wide counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Totals {
    pub cases: u64,
    /// Cases that ended with [`Outcome::Violation`].
    pub cases_failed: u64,
    /// Cases that ended with [`Outcome::Liveness`] (not counted in `cases_failed`).
    pub cases_liveness: u64,
    /// Cases that ended with [`Outcome::Internal`].
    pub cases_internal: u64,
    pub turns: u64,
    pub passes: u64,
    pub transitions: u64,
}

/// Per-invariant counts: how many transitions it checked, how many cases it failed
/// first, how many cases it fired in at all.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InvariantRow {
    pub id: String,
    pub checked: u64,
    /// Cases whose first violation is of this invariant (their outcome).
    pub violated: u64,
    /// Cases in which this invariant fired at any step (every verdict of the case,
    /// the liveness one included).
    #[serde(default)]
    pub fired: u64,
}

/// Per-shape-family counts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FamilyRow {
    pub family: String,
    pub cases: u64,
    /// Cases of this family that ended with a violation.
    pub failed: u64,
    /// Cases of this family that ended with a liveness failure.
    pub liveness: u64,
    pub turns: u64,
    pub passes: u64,
}

/// One kept failure, with its evidence and the command that replays it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Failure {
    pub case: u32,
    /// A decimal string (a JSON number above 2^53 is rounded by readers).
    #[serde(with = "crate::seed_text")]
    #[schemars(with = "SeedText")]
    pub case_seed: u64,
    pub family: String,
    #[schemars(with = "crate::schema_shapes::ViolationShape")]
    pub violation: Violation,
    /// One shell command line.
    pub repro: String,
}

/// The run's aggregate. Its size does not grow with the number of cases: rows are keyed
/// by invariant id, family and counter name, and `failures` keeps at most
/// [`crate::FAILURES_KEPT_MAX`] entries (those of the lowest case ids).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    pub totals: Totals,
    /// Sorted by id.
    pub invariants: Vec<InvariantRow>,
    /// Sorted by family name.
    pub families: Vec<FamilyRow>,
    /// "Sometimes" counters: how often each fault path was reached. A counter at 0 is a
    /// path the run never exercised.
    pub coverage: BTreeMap<String, u64>,
    /// Sorted by case id.
    pub failures: Vec<Failure>,
    /// Failures reported beyond the kept bound.
    pub failures_omitted: u64,
}

/// A whole `report.json` as read back (the writer streams it; see [`crate::ReportWriter`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    pub schema_version: u32,
    pub header: Header,
    pub cases: Vec<CaseRow>,
    pub summary: Summary,
}
