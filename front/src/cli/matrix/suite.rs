//! A release's default suites: `compactsim run` of each (every case judged past its
//! first violation, no shrinking) into `<out>/runs/<release>/<strategy>/`, and the
//! per-invariant counts its report.json holds.

use super::file::Release;
use super::{MatrixRequest, Started};
use crate::cli::args::{CaseParams, Shard};
use crate::cli::exit::Failure;
use crate::cli::run::{self, RunRequest};
use compactsim_harness::engine::Verdicts;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One default suite of a release as matrix.json keeps it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SuiteRow {
    pub strategy: String,
    pub adapter: String,
    /// The run directory (relative to the matrix output directory), or none.
    pub run: Option<String>,
    /// `ran`, or `cannot run: WHY`.
    pub status: String,
    /// The run's totals: cases, cases_failed, cases_liveness, cases_internal, passes.
    pub totals: BTreeMap<String, u64>,
    /// Invariant id -> [cases whose first violation it is, cases where it fired].
    pub invariants: BTreeMap<String, [u64; 2]>,
}

/// Runs every default suite of `r`; a suite whose adapter did not start, or whose run
/// fails as a whole, is a row saying why.
pub fn run_all(
    r: &Release,
    adapters: &BTreeMap<String, Result<Started, String>>,
    req: &MatrixRequest,
) -> Result<Vec<SuiteRow>, Failure> {
    let mut rows = Vec::with_capacity(r.suites.len());
    for s in &r.suites {
        let mut row = SuiteRow {
            strategy: s.strategy.clone(),
            adapter: s.adapter.clone(),
            run: None,
            status: String::new(),
            totals: BTreeMap::new(),
            invariants: BTreeMap::new(),
        };
        match adapters.get(&s.adapter) {
            Some(Ok(a)) => {
                let rel = run_dir(&r.name, &s.strategy);
                let params = CaseParams::parse_with(
                    req.seed,
                    req.passes,
                    &s.strategy,
                    s.era.as_deref(),
                    None,
                    &[],
                )?;
                let run_req = RunRequest {
                    params: CaseParams {
                        compactor: a.compactor.clone(),
                        ..params
                    },
                    cases: req.cases,
                    shard: Shard::WHOLE,
                    jobs: req.jobs,
                    out: req.out.join(&rel),
                    shrink_time: Duration::ZERO,
                    quiet: true,
                    verdicts: Verdicts::All,
                };
                match run::run(&run_req) {
                    Ok(_) => {
                        read_counts(&run_req.out, &mut row)?;
                        row.status = "ran".into();
                        row.run = Some(rel.display().to_string());
                    }
                    Err(e) => row.status = format!("cannot run: {}", e.message),
                }
            }
            Some(Err(why)) => row.status = format!("cannot run: {why}"),
            None => row.status = format!("cannot run: no `{}` adapter", s.adapter),
        }
        rows.push(row);
    }
    Ok(rows)
}

/// `runs/<release>/<strategy>`, the release name made a path segment.
fn run_dir(release: &str, strategy: &str) -> PathBuf {
    let slug: String = release
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    PathBuf::from("runs").join(slug).join(strategy)
}

/// The totals and per-invariant counts of the report.json in `dir`.
fn read_counts(dir: &Path, row: &mut SuiteRow) -> Result<(), Failure> {
    let path = dir.join(compactsim_reports::REPORT_JSON);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Failure::internal(format!("{}: {e}", path.display())))?;
    let report: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failure::internal(format!("{}: {e}", path.display())))?;
    let summary = &report["summary"];
    if let Some(totals) = summary["totals"].as_object() {
        for key in [
            "cases",
            "cases_failed",
            "cases_liveness",
            "cases_internal",
            "passes",
        ] {
            row.totals.insert(
                key.to_string(),
                totals.get(key).and_then(|v| v.as_u64()).unwrap_or(0),
            );
        }
    }
    for inv in summary["invariants"].as_array().into_iter().flatten() {
        let id = inv["id"].as_str().unwrap_or_default().to_string();
        let violated = inv["violated"].as_u64().unwrap_or(0);
        let fired = inv["fired"].as_u64().unwrap_or(0);
        row.invariants.insert(id, [violated, fired]);
    }
    Ok(())
}
