//! diff.json and diff.md: totals (share of passes that agree, disagreements by kind,
//! most frequent first) and, per case that disagreed, its first disagreement with the
//! rows around it. Everything is in case-id order and integer-counted, so the files are
//! byte-identical for the same parameters whatever the job count.

use super::observe::{Field, Observed};
use super::run::CaseDiff;
use super::tee::FirstDisagreement;
use crate::engine::CaseOutcome;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub const DIFF_JSON: &str = "diff.json";
pub const DIFF_MD: &str = "diff.md";
/// First disagreements printed in full in diff.md (all are in diff.json).
pub const MD_EXAMPLES_MAX: usize = 12;

/// One disagreement kind's counts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct KindCount {
    pub kind: &'static str,
    /// Disagreeing passes that differ in this field.
    pub passes: u64,
    /// Cases whose first disagreement differs in this field.
    pub cases_first: u64,
}

/// Passes of one pass kind (`micro`, `batch (preflight)`, ...).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PassKindCount {
    pub pass_kind: String,
    pub passes: u64,
    pub disagreeing: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Totals {
    pub cases: u64,
    /// Cases in which every pass agreed.
    pub cases_agreeing: u64,
    /// Cases the world did not finish cleanly (an invariant of the reference broke, or
    /// the other compactor failed: exit 4).
    pub cases_cut_short: u64,
    pub passes: u64,
    pub passes_agreeing: u64,
    /// `passes_agreeing / passes`, percent, two decimals.
    pub agreement_percent: String,
    /// Passes up to and including each case's first disagreement (before the other's
    /// in-memory state can follow its own thrown-away results).
    pub passes_until_first: u64,
    pub agreement_until_first_percent: String,
}

/// A case in diff.json: only cases that disagreed or were cut short are listed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CaseEntry {
    pub case: u32,
    pub family: &'static str,
    pub outcome: String,
    pub passes: u32,
    pub passes_agreeing: u32,
    pub first: Option<FirstEntry>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FirstEntry {
    pub pass: u32,
    pub turn: u32,
    pub pass_kind: String,
    pub fields: Vec<&'static str>,
    pub reference: Observed,
    pub other: Observed,
    pub before_rows: Vec<String>,
    pub reference_rows: Vec<String>,
    pub other_rows: Vec<String>,
}

/// The whole diff.json.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DiffReport {
    pub params: BTreeMap<String, String>,
    pub totals: Totals,
    pub kinds: Vec<KindCount>,
    pub by_pass_kind: Vec<PassKindCount>,
    pub cases: Vec<CaseEntry>,
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "100.00".into();
    }
    let hundredths = (part as u128 * 10_000 / whole as u128) as u64;
    format!("{}.{:02}", hundredths / 100, hundredths % 100)
}

fn outcome_name(o: &CaseOutcome) -> String {
    match o {
        CaseOutcome::Clean => "clean".into(),
        CaseOutcome::Violation(vs) => format!(
            "violation: {}",
            vs.iter()
                .map(|v| v.invariant.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        CaseOutcome::Liveness(v) => format!("liveness: {}", v.invariant),
        CaseOutcome::Internal(what) => format!("internal: {what}"),
    }
}

fn first_entry(f: &FirstDisagreement) -> FirstEntry {
    FirstEntry {
        pass: f.pass,
        turn: f.turn,
        pass_kind: f.kind.name(),
        fields: f.fields.iter().map(|k| k.name()).collect(),
        reference: f.reference.clone(),
        other: f.other.clone(),
        before_rows: f.before_rows.clone(),
        reference_rows: f.reference_rows.clone(),
        other_rows: f.other_rows.clone(),
    }
}

/// Folds case diffs (in case-id order) into a report.
#[derive(Default)]
pub struct Aggregator {
    report: DiffReport,
    field_passes: BTreeMap<Field, u64>,
    field_first: BTreeMap<Field, u64>,
    pass_kinds: BTreeMap<String, (u64, u64)>,
}

impl Aggregator {
    pub fn new(params: BTreeMap<String, String>) -> Self {
        let mut a = Aggregator::default();
        a.report.params = params;
        a
    }

    pub fn add(&mut self, d: &CaseDiff) {
        let t = &mut self.report.totals;
        let log = &d.log;
        t.cases += 1;
        t.passes += log.passes as u64;
        t.passes_agreeing += log.passes_agreeing as u64;
        t.passes_until_first += log.passes_until_first as u64;
        let clean = d.outcome == CaseOutcome::Clean;
        t.cases_cut_short += u64::from(!clean);
        t.cases_agreeing += u64::from(log.first.is_none());
        for (f, n) in &log.fields {
            *self.field_passes.entry(*f).or_default() += *n as u64;
        }
        for (k, n, bad) in &log.by_pass_kind {
            let e = self.pass_kinds.entry(k.clone()).or_default();
            e.0 += *n as u64;
            e.1 += *bad as u64;
        }
        if let Some(first) = &log.first {
            for f in &first.fields {
                *self.field_first.entry(*f).or_default() += 1;
            }
        }
        if log.first.is_some() || !clean {
            self.report.cases.push(CaseEntry {
                case: d.case,
                family: d.family.name(),
                outcome: outcome_name(&d.outcome),
                passes: log.passes,
                passes_agreeing: log.passes_agreeing,
                first: log.first.as_ref().map(first_entry),
            });
        }
    }

    pub fn finish(mut self) -> DiffReport {
        let t = &mut self.report.totals;
        t.agreement_percent = percent(t.passes_agreeing, t.passes);
        let disagreeing_cases = t.cases - t.cases_agreeing;
        t.agreement_until_first_percent = percent(
            t.passes_until_first - disagreeing_cases,
            t.passes_until_first,
        );
        let mut kinds: Vec<KindCount> = self
            .field_passes
            .iter()
            .map(|(f, n)| KindCount {
                kind: f.name(),
                passes: *n,
                cases_first: self.field_first.get(f).copied().unwrap_or(0),
            })
            .collect();
        kinds.sort_by(|a, b| b.passes.cmp(&a.passes).then(a.kind.cmp(b.kind)));
        self.report.kinds = kinds;
        self.report.by_pass_kind = self
            .pass_kinds
            .into_iter()
            .map(|(pass_kind, (passes, disagreeing))| PassKindCount {
                pass_kind,
                passes,
                disagreeing,
            })
            .collect();
        self.report
    }
}

/// The JSON Schema of `diff.json` (draft 2020-12), pretty-printed with a final line
/// break: the text of `docs/schemas/diff.schema.json`.
pub fn diff_schema_json() -> String {
    let schema = schemars::schema_for!(DiffReport);
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
    text.push('\n');
    text
}

impl DiffReport {
    /// diff.json, pretty-printed, ending in a newline.
    pub fn json(&self) -> String {
        let mut s =
            serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
        s.push('\n');
        s
    }

    /// The totals on a few lines (also the head of diff.md).
    pub fn headline(&self) -> String {
        let t = &self.totals;
        let mut s = format!(
            "passes agreeing: {} of {} ({} %); until each case's first disagreement: {} %\n\
             cases agreeing in every pass: {} of {}; cut short: {}\n",
            t.passes_agreeing,
            t.passes,
            t.agreement_percent,
            t.agreement_until_first_percent,
            t.cases_agreeing,
            t.cases,
            t.cases_cut_short
        );
        let top: Vec<String> = self
            .kinds
            .iter()
            .take(5)
            .map(|k| format!("{} {}", k.kind, k.passes))
            .collect();
        if !top.is_empty() {
            let _ = writeln!(s, "top disagreements (passes): {}", top.join(", "));
        }
        s
    }

    /// diff.md.
    pub fn markdown(&self) -> String {
        let mut s = String::from("# compactsim diff: the reference against another compactor\n\n");
        for (k, v) in &self.params {
            let _ = writeln!(s, "- {k}: `{v}`");
        }
        let _ = write!(s, "\n```\n{}```\n\n", self.headline());
        s.push_str("## Disagreements by kind\n\n| kind | passes | cases (first disagreement) |\n|---|--:|--:|\n");
        for k in &self.kinds {
            let _ = writeln!(s, "| {} | {} | {} |", k.kind, k.passes, k.cases_first);
        }
        s.push_str("\n## Passes by kind\n\n| pass | passes | disagreeing |\n|---|--:|--:|\n");
        for p in &self.by_pass_kind {
            let _ = writeln!(s, "| {} | {} | {} |", p.pass_kind, p.passes, p.disagreeing);
        }
        let firsts: Vec<&CaseEntry> = self.cases.iter().filter(|c| c.first.is_some()).collect();
        let _ = write!(
            s,
            "\n## First disagreements ({} cases; the first {} shown, all in {DIFF_JSON})\n",
            firsts.len(),
            firsts.len().min(MD_EXAMPLES_MAX)
        );
        for c in firsts.iter().take(MD_EXAMPLES_MAX) {
            if let Some(f) = &c.first {
                example(&mut s, c, f);
            }
        }
        let cut: Vec<&CaseEntry> = self.cases.iter().filter(|c| c.outcome != "clean").collect();
        if !cut.is_empty() {
            s.push_str("\n## Cases cut short\n\n");
            for c in cut {
                let _ = writeln!(s, "- case {} ({}): {}", c.case, c.family, c.outcome);
            }
        }
        s
    }
}

fn example(s: &mut String, c: &CaseEntry, f: &FirstEntry) {
    let _ = write!(
        s,
        "\n### case {} ({}), pass {} at turn {}: {}\n\ndiffers in: {}\n\n",
        c.case,
        c.family,
        f.pass,
        f.turn,
        f.pass_kind,
        f.fields.join(", ")
    );
    let _ = writeln!(
        s,
        "| | reference | other |\n|---|---|---|\n| removed | {} | {} |\n| rewritten | {} | {} |\n\
         | new rows | {} | {} |\n| head end / tail start | {} / {} | {} / {} |\n\
         | summaries at | {:?} | {:?} |\n| messages / tokens | {} / {} | {} / {} |\n\
         | summarizer calls | {} | {} |",
        compactsim_model::describe::id_span(&f.reference.removed_rows),
        compactsim_model::describe::id_span(&f.other.removed_rows),
        compactsim_model::describe::id_span(&f.reference.rewritten_rows),
        compactsim_model::describe::id_span(&f.other.rewritten_rows),
        f.reference.new_rows,
        f.other.new_rows,
        f.reference.head_end,
        f.reference.tail_start,
        f.other.head_end,
        f.other.tail_start,
        positions(&f.reference),
        positions(&f.other),
        f.reference.messages,
        f.reference.tokens,
        f.other.messages,
        f.other.tokens,
        f.reference.summarizer_calls,
        f.other.summarizer_calls,
    );
    for (title, rows) in [
        ("before", &f.before_rows),
        ("reference after", &f.reference_rows),
        ("other after", &f.other_rows),
    ] {
        let _ = write!(s, "\n{title}:\n```\n");
        for r in rows {
            let _ = writeln!(s, "{r}");
        }
        s.push_str("```\n");
    }
}

fn positions(o: &Observed) -> Vec<String> {
    o.summary_positions
        .iter()
        .zip(&o.summary_roles)
        .map(|(p, r)| format!("{p} {}", r.as_str()))
        .collect()
}
