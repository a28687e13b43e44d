//! `compactsim matrix FILE`: every release of a version matrix through its default
//! suite and every finding's shrunk scenario, judged past the first violation, so a
//! finding an older bug hides shows as masked, not as clean. Writes matrix.json (no
//! times: the same seed gives the same bytes), MATRIX.md and matrix.html; the wall time
//! is printed only.

pub mod file;
pub mod judge;
mod junit;
mod render;
mod suite;

use super::exit::{Exit, Failure};
use crate::scenario;
use compactsim_harness::compactor::{CompactorSpec, Pools};
use compactsim_harness::engine::{run_case, Record, Verdicts};
use file::{Finding, MatrixFile, Release};
use judge::{Bisect, Cell};
use rayon::prelude::*;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

pub use render::{MATRIX_HTML, MATRIX_JSON, MATRIX_MD};

/// matrix.json's JSON Schema, generated from [`Matrix`]: the text of
/// `docs/schemas/matrix.schema.json`.
pub fn matrix_schema_json() -> String {
    let schema = schemars::schema_for!(Matrix);
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
    text.push('\n');
    text
}
pub use suite::SuiteRow;

/// Schema version of matrix.json.
pub const MATRIX_SCHEMA_VERSION: u32 = 3;
/// Default output directory of `compactsim matrix`.
pub const OUT_DEFAULT: &str = "target/compactsim/matrix";

/// A validated `matrix` request.
#[derive(Clone, Debug)]
pub struct MatrixRequest {
    pub file: PathBuf,
    pub seed: u64,
    pub passes: u32,
    pub cases: u32,
    pub jobs: usize,
    pub out: PathBuf,
    /// `--release NAME` (repeatable): only these releases of the file (empty: all).
    pub only: Vec<String>,
    /// `--adapter-startup-timeout-ms` and `--adapter-timeout-ms` of every adapter.
    pub startup_timeout_ms: u64,
    pub timeout_ms: u64,
}

/// matrix.json: everything that decides the matrix and what it found, no times.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Matrix {
    pub schema_version: u32,
    pub file: String,
    /// A decimal string (a JSON number above 2^53 is rounded by readers).
    #[serde(with = "compactsim_reports::seed_text")]
    #[schemars(with = "String", regex(pattern = r"^[0-9]{1,20}$"))]
    pub seed: u64,
    pub passes: u32,
    pub cases: u32,
    pub releases: Vec<ReleaseRow>,
    pub findings: Vec<FindingRow>,
}

/// One release: what each adapter said in its hello (or why it did not start) and its
/// default suites.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ReleaseRow {
    pub name: String,
    /// Adapter kind -> `hello: NAME VERSION`, or `cannot run: WHY`.
    pub adapters: BTreeMap<String, String>,
    pub suites: Vec<SuiteRow>,
}

/// One finding across the releases (cells in release order) and its bisect answer.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct FindingRow {
    pub id: String,
    pub scenario: String,
    pub invariant: String,
    /// The text its invariant's witness must show (`witness` in the matrix file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<String>,
    pub cells: Vec<(String, Cell)>,
    pub bisect: Bisect,
}

/// Runs the matrix; exit 0 when it was written (cells that cannot run are reported in
/// it, not failures of the command), 2 on a bad file, 4 when a report cannot be written.
pub fn matrix(req: &MatrixRequest) -> Result<Exit, Failure> {
    let m = file::load(&req.file).map_err(Failure::bad_input)?;
    let releases = chosen(&m, &req.only)?;
    let findings = load_findings(&m.findings)?;
    super::outdir::prepare(&req.out)?;
    super::outdir::clear_stale(&req.out, &[compactsim_reports::JUNIT_XML], &[])?;
    let started = Instant::now();
    let mut rows = Vec::with_capacity(releases.len());
    let mut cells: Vec<Vec<Cell>> = vec![Vec::new(); findings.len()];
    let mut junit = compactsim_reports::JunitCases::new();
    for r in &releases {
        let release_started = Instant::now();
        crate::outln!("== {}", r.name);
        let adapters = start_adapters(r, req);
        let suites = suite::run_all(r, &adapters, req)?;
        for (i, judged) in judge_findings(&findings, &adapters, req.jobs)?
            .into_iter()
            .enumerate()
        {
            crate::outln!("   {}: {}", findings[i].0.id, judged.cell.text());
            junit.push(junit::finding_case(&r.name, &findings[i], &judged));
            cells[i].push(judged.cell);
        }
        crate::outln!(
            "   {} done, wall {:.1} s",
            r.name,
            release_started.elapsed().as_secs_f64()
        );
        rows.push(ReleaseRow {
            name: r.name.clone(),
            adapters: adapters
                .iter()
                .map(|(k, a)| {
                    (
                        k.clone(),
                        a.as_ref()
                            .map_or_else(|e| format!("cannot run: {e}"), |s| s.hello.clone()),
                    )
                })
                .collect(),
            suites,
        });
        // The releases done so far, so an interrupted matrix leaves its rows behind.
        let partial = assemble(&m, req, rows.clone(), &findings, cells.clone());
        render::write_all(&req.out, &partial).map_err(Failure::internal)?;
    }
    let matrix = assemble(&m, req, rows, &findings, cells);
    render::write_all(&req.out, &matrix).map_err(Failure::internal)?;
    compactsim_reports::write_junit(&req.out, junit::JUNIT_SUITE, &junit.into_cases())
        .map_err(|e| Failure::internal(e.to_string()))?;
    crate::out!("\n{}", render::findings_table(&matrix));
    crate::outln!(
        "\nmatrix of {} release(s), {} finding(s): wall {:.1} s",
        matrix.releases.len(),
        matrix.findings.len(),
        started.elapsed().as_secs_f64()
    );
    crate::outln!("matrix: {}", req.out.join(MATRIX_JSON).display());
    Ok(Exit::Clean)
}

/// matrix.json's data from the release rows and the finding cells (one per row).
fn assemble(
    m: &MatrixFile,
    req: &MatrixRequest,
    rows: Vec<ReleaseRow>,
    findings: &[(Finding, scenario::Scenario)],
    cells: Vec<Vec<Cell>>,
) -> Matrix {
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    let finding_rows = findings
        .iter()
        .zip(cells)
        .map(|((f, s), cells)| FindingRow {
            id: f.id.clone(),
            scenario: f.scenario.display().to_string(),
            invariant: finding_invariant(s).unwrap_or_default(),
            witness: f.witness.clone(),
            bisect: judge::bisect(&names, &cells),
            cells: names.iter().map(|n| n.to_string()).zip(cells).collect(),
        })
        .collect();
    Matrix {
        schema_version: MATRIX_SCHEMA_VERSION,
        file: m.path.display().to_string(),
        seed: req.seed,
        passes: req.passes,
        cases: req.cases,
        releases: rows,
        findings: finding_rows,
    }
}

/// The releases `--release` names, in file order (all when none is named).
fn chosen<'a>(m: &'a MatrixFile, only: &[String]) -> Result<Vec<&'a Release>, Failure> {
    if let Some(unknown) = only
        .iter()
        .find(|n| !m.releases.iter().any(|r| &r.name == *n))
    {
        let known: Vec<&str> = m.releases.iter().map(|r| r.name.as_str()).collect();
        return Err(Failure::bad_input(format!(
            "--release {unknown}: not in {} (known: {})",
            m.path.display(),
            known.join(", ")
        )));
    }
    Ok(m.releases
        .iter()
        .filter(|r| only.is_empty() || only.contains(&r.name))
        .collect())
}

/// Every finding's scenario, loaded and checked before anything runs.
fn load_findings(findings: &[Finding]) -> Result<Vec<(Finding, scenario::Scenario)>, Failure> {
    findings
        .iter()
        .map(|f| {
            let s = scenario::load(&f.scenario).map_err(|e| Failure::bad_input(e.to_string()))?;
            if finding_invariant(&s).is_none() {
                return Err(Failure::bad_input(format!(
                    "finding `{}`: scenario {} expects no violated invariant",
                    f.id,
                    f.scenario.display()
                )));
            }
            Ok((f.clone(), s))
        })
        .collect()
}

/// The invariant a finding's scenario expects violated.
fn finding_invariant(s: &scenario::Scenario) -> Option<String> {
    match &s.expect {
        scenario::Expect::Violated { invariant, .. } => Some(invariant.clone()),
        _ => None,
    }
}

/// A started adapter: its compactor (the pool of its children) and its hello line.
pub struct Started {
    pub compactor: CompactorSpec,
    pub hello: String,
}

/// Every adapter of release `r`, started and greeted once (or why it cannot run).
fn start_adapters(r: &Release, req: &MatrixRequest) -> BTreeMap<String, Result<Started, String>> {
    r.adapters
        .iter()
        .map(|(kind, command)| {
            let started = match r.cannot_run() {
                Some(why) => Err(why),
                None => start(command, req),
            };
            (kind.clone(), started)
        })
        .collect()
}

fn start(command: &str, req: &MatrixRequest) -> Result<Started, String> {
    let spec = compactsim_harness::external::AdapterSpec::new(command, req.timeout_ms)
        .with_startup_timeout_ms(req.startup_timeout_ms);
    let compactor = CompactorSpec::external(spec)?;
    let CompactorSpec::External(pool) = &compactor else {
        return Err("not an external compactor".into());
    };
    let info = pool.hello().map_err(|e| first_line(&e.to_string()))?;
    Ok(Started {
        hello: format!("hello: {} {}", info.name, info.version),
        compactor,
    })
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}

/// A finding's cell on one release, how long judging it took (junit.xml only) and what
/// junit.xml says of it.
pub struct Judged {
    pub cell: Cell,
    pub wall_time: std::time::Duration,
    /// The witness of every invariant that fired (empty when none did).
    pub witness: String,
    /// The line that replays the finding's scenario on the release (empty when it
    /// cannot run).
    pub repro: String,
}

/// Each finding's cell on one release: its scenario under the release's adapter of the
/// finding's kind, judged past the first violation (`jobs` scenarios at a time).
fn judge_findings(
    findings: &[(Finding, scenario::Scenario)],
    adapters: &BTreeMap<String, Result<Started, String>>,
    jobs: usize,
) -> Result<Vec<Judged>, Failure> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| Failure::internal(format!("cannot start worker threads: {e}")))?;
    let pools = Pools::default();
    Ok(pool.install(|| {
        findings
            .par_iter()
            .map(|(f, s)| {
                let started = Instant::now();
                let invariant = finding_invariant(s).unwrap_or_default();
                let cannot_run = |reason: String| Judged {
                    cell: Cell::CannotRun { reason },
                    wall_time: started.elapsed(),
                    witness: String::new(),
                    repro: String::new(),
                };
                match adapters.get(&f.adapter) {
                    None => cannot_run(format!("the release has no `{}` adapter", f.adapter)),
                    Some(Err(why)) => cannot_run(why.clone()),
                    Some(Ok(a)) => {
                        let s = s.clone().under(&a.compactor, &pools);
                        let result = run_case(
                            &s.spec,
                            Record {
                                trace: false,
                                verdicts: Verdicts::All,
                            },
                        );
                        Judged {
                            cell: judge::classify(&invariant, f.witness.as_deref(), &result),
                            wall_time: started.elapsed(),
                            witness: compactsim_reports::witness_text(&result.verdicts),
                            repro: format!(
                                "compactsim replay {}{}",
                                f.scenario.display(),
                                a.compactor.repro_flags()
                            ),
                        }
                    }
                }
            })
            .collect()
    }))
}
