//! `compactsim run`: the default suite, many cases in parallel, reports on disk.

use super::args::{CaseParams, Shard};
use super::exit::{Exit, Failure};
use super::failures;
use compactsim_harness::compactor::CompactorSpec;
use compactsim_harness::engine::{counters, CaseOutcome, CaseResult, CaseSpec, Record, Verdicts};
use compactsim_harness::external::argv::quote;
use compactsim_harness::runner::run_suite_timed;
use compactsim_harness::shapes::Family;
use compactsim_reports::{
    self as reports, Aggregator, CaseRow, Header, JunitCase, JunitCases, JunitOutcome, Outcome,
    PoliciesJudged, ReportWriter, Verdict,
};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Failures printed to the terminal; the rest are in the report files.
pub const FAILURES_PRINTED_MAX: usize = 10;
/// Repro lines kept for repro.txt (memory stays bounded on huge runs).
pub const REPRO_LINES_MAX: usize = 1_000;
/// Default `--shrink-time`: the outer wall-time cap, in seconds, on shrinking the first
/// failures after a run (each is bounded by an attempts budget; the cap is reported when
/// it ends a shrink).
pub const SHRINK_TIME_DEFAULT_S: f64 = 30.0;
/// Turns of trace printed for a liveness failure.
pub const LIVENESS_TRACE_TURNS: u32 = 3;
/// The agent-loop counters the summary line shows (all are in the report too).
pub const AGENT_SUMMARY_COUNTERS: [(&str, &str); 7] = [
    ("compactions", "batch.compacted"),
    ("fallback summaries", "batch.fallback"),
    ("preflight passes", "preflight.passes"),
    ("post-response passes", "postresponse.passes"),
    ("overflow recoveries", "overflow.recoveries"),
    ("exhaustions", "turns.exhausted"),
    ("session resets", "session.resets"),
];

/// A validated `run` request.
#[derive(Clone, Debug)]
pub struct RunRequest {
    pub params: CaseParams,
    pub cases: u32,
    pub shard: Shard,
    pub jobs: usize,
    pub out: PathBuf,
    /// Wall time for shrinking the first failing cases (zero: none).
    pub shrink_time: Duration,
    /// No progress bar even on a terminal.
    pub quiet: bool,
    /// `--verdicts`: judge each case past its first violation (`all`) or not.
    pub verdicts: Verdicts,
}

/// The report header: every parameter that decides the run, none that varies between
/// two runs of it (no job count, no output path, no time).
pub fn header(req: &RunRequest) -> Header {
    let mut params = std::collections::BTreeMap::new();
    if req.shard != Shard::WHOLE {
        params.insert(
            "shard".to_string(),
            format!("{}/{}", req.shard.index, req.shard.count),
        );
    }
    if let Some(o) = req.params.strategy.loop_options() {
        params.insert("era".to_string(), o.era.to_string());
        params.insert("anti_thrash".to_string(), o.anti_thrash.to_string());
    }
    match &req.params.compactor {
        CompactorSpec::Reference => {}
        c => {
            params.insert("compactor".to_string(), c.name().to_string());
        }
    }
    if let Some(adapter) = req.params.compactor.adapter() {
        params.insert("adapter".to_string(), adapter.command.clone());
    }
    if req.verdicts != Verdicts::All {
        params.insert("verdicts".to_string(), req.verdicts.to_string());
    }
    Header {
        tool: "compactsim".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        seed: req.params.seed,
        cases: req.cases,
        passes: req.params.passes,
        strategy: req.params.strategy.to_string(),
        bugs: req.params.bugs.ids(),
        params,
        policies: policies_judged(&req.params.compactor),
    }
}

/// The policies a run judges the compactor by, and who declared them.
pub fn policies_judged(compactor: &CompactorSpec) -> PoliciesJudged {
    let declared_by = match compactor {
        CompactorSpec::External(_) => "adapter",
        other => other.name(),
    };
    PoliciesJudged {
        declared_by: declared_by.to_string(),
        judged: compactor
            .policies()
            .declared()
            .into_iter()
            .map(|(name, params)| {
                let params = serde_json::from_str(&params).expect("policy parameters are JSON");
                (name.to_string(), params)
            })
            .collect(),
    }
}

/// The row report.json keeps for a case.
pub fn row(r: &CaseResult) -> CaseRow {
    let outcome = match &r.outcome {
        CaseOutcome::Clean => Outcome::Clean,
        CaseOutcome::Violation(v) => Outcome::Violation {
            invariant: v[0].invariant.clone(),
            turn: v[0].turn,
        },
        CaseOutcome::Liveness(v) => Outcome::Liveness {
            reason: format!("{} at turn {}: {}", v.invariant, v.turn, v.message),
        },
        CaseOutcome::Internal(what) => Outcome::Internal {
            reason: what.clone(),
        },
    };
    CaseRow {
        case: r.case,
        case_seed: r.case_seed,
        family: r.family.name().into(),
        turns: r.turns,
        passes: r.passes,
        outcome,
        verdicts: r
            .verdicts
            .iter()
            .map(|v| Verdict {
                invariant: v.invariant.clone(),
                step: v.step,
                turn: v.turn,
                witness: v.witness_digest(),
            })
            .collect(),
        tokens_max: r.tokens_max,
        messages_max: r.messages_max,
    }
}

pub(crate) fn exit_of(outcome: &CaseOutcome) -> Exit {
    match outcome {
        CaseOutcome::Clean => Exit::Clean,
        CaseOutcome::Violation(_) => Exit::Violation,
        CaseOutcome::Liveness(_) => Exit::Liveness,
        CaseOutcome::Internal(_) => Exit::Internal,
    }
}

/// The invariants a run of these parameters checks, in catalogue order (less the policy
/// invariants the compactor does not declare).
fn invariant_ids(params: &CaseParams) -> Vec<&'static str> {
    let ids = if params.strategy.loop_options().is_some() {
        compactsim_invariants::catalogue()
            .iter()
            .map(|i| i.id)
            .collect()
    } else {
        compactsim_invariants::micro_catalogue_ids()
    };
    compactsim_invariants::judged_ids(ids, params.compactor.policies())
}

/// The first output line: the seed and every parameter that decides the run.
fn seed_line(req: &RunRequest) -> String {
    let mut line = format!(
        "SEED={} cases={} passes={} strategy={}",
        req.params.seed, req.cases, req.params.passes, req.params.strategy
    );
    if let Some(o) = req.params.strategy.loop_options() {
        line.push_str(&format!(" era={} anti_thrash={}", o.era, o.anti_thrash));
        if let Some(m) = o.session_mode {
            line.push_str(&format!(" session_mode={m}"));
        }
    }
    if req.params.compactor != CompactorSpec::Reference {
        line.push_str(&format!(" compactor={}", req.params.compactor));
    }
    if let Some(adapter) = req.params.compactor.adapter() {
        line.push_str(&format!(" adapter={}", quote(&adapter.command)));
    }
    if req.verdicts != Verdicts::All {
        line.push_str(&format!(" verdicts={}", req.verdicts));
    }
    let bugs = if req.params.bugs.is_empty() {
        "none".to_string()
    } else {
        req.params.bugs.ids().join(",")
    };
    line.push_str(&format!(
        " bugs={bugs} shard={}/{} jobs={} out={}",
        req.shard.index,
        req.shard.count,
        req.jobs,
        req.out.display()
    ));
    line
}

/// Runs the suite, prints the header line first, failures as they come, and the tables;
/// writes report.json, summary.md and repro.txt. Returns the exit code.
pub fn run(req: &RunRequest) -> Result<Exit, Failure> {
    let (first, cases) = req.shard.checked_range(req.cases)?;
    super::outdir::prepare(&req.out)?;
    super::outdir::clear_stale(
        &req.out,
        &[
            reports::REPORT_JSON,
            reports::SUMMARY_MD,
            reports::INDEX_HTML,
            reports::REPRO_TXT,
            reports::JUNIT_XML,
        ],
        &[failures::RUN_FAILURES],
    )?;
    super::outdir::keep_adapter_stderr(&req.out, &req.params.compactor)?;
    let header = header(req);
    crate::outln!("{}", seed_line(req));
    let started = Instant::now();
    let mut writer =
        ReportWriter::create(&req.out, &header).map_err(|e| Failure::internal(e.to_string()))?;
    let mut agg = Aggregator::new()
        .with_invariants(invariant_ids(&req.params))
        .with_families(Family::ALL.iter().map(|f| f.name()))
        .with_coverage(counters(req.params.strategy));
    let mut repro = Vec::new();
    let mut exit = Exit::Clean;
    let mut failing: u64 = 0;
    let mut write_error = None;
    let mut to_shrink: Vec<CaseSpec> = Vec::new();
    let mut junit = JunitCases::new();
    let bar = super::progress::bar(cases as u64, "cases", req.quiet);
    run_suite_timed(
        &req.params.suite(first, cases),
        req.jobs,
        Record {
            trace: false,
            verdicts: req.verdicts,
        },
        |r, wall_time| {
            bar.inc(1);
            junit.push(junit_case(&req.params, &r, wall_time));
            exit = exit.worst(exit_of(&r.outcome));
            failing += u64::from(r.outcome != CaseOutcome::Clean);
            let row = row(&r);
            if let Err(e) = writer.push(&row) {
                write_error = Some(e.to_string());
                return false;
            }
            agg.add_case(
                &row,
                r.transitions as u64,
                r.checked.iter().copied(),
                r.coverage.iter(),
            );
            note_failure(&req.params, &r, &mut agg, &mut repro);
            if !r.outcome.violations().is_empty()
                && to_shrink.len() < failures::AUTO_SHRINK_CASES_MAX
            {
                to_shrink.push(req.params.suite(r.case, 1).spec(r.case));
            }
            true
        },
    )
    .map_err(Failure::internal)?;
    bar.finish_and_clear();
    if let Some(e) = write_error {
        return Err(Failure::internal(e));
    }
    if let Some(more) = failing
        .checked_sub(FAILURES_PRINTED_MAX as u64)
        .filter(|m| *m > 0)
    {
        crate::outln!(
            "... and {more} more failing case(s): all are in {}, the first {REPRO_LINES_MAX} in {}",
            reports::REPORT_JSON,
            reports::REPRO_TXT
        );
    }
    let summary = agg.into_summary();
    let report = writer
        .finish(&summary)
        .map_err(|e| Failure::internal(e.to_string()))?;
    reports::write_summary_md(&req.out, &header, &summary)
        .map_err(|e| Failure::internal(e.to_string()))?;
    // The shrink below writes failures/case-N.toml for each of `to_shrink` (a shrink its
    // time cap ends writes what it has): the page links them.
    let shrunk: Vec<u32> = if req.shrink_time.is_zero() {
        Vec::new()
    } else {
        to_shrink.iter().map(|s| s.case).collect()
    };
    reports::write_run_html(&req.out, &header, &summary, &shrunk)
        .map_err(|e| Failure::internal(e.to_string()))?;
    reports::write_repro(&req.out, &repro).map_err(|e| Failure::internal(e.to_string()))?;
    reports::write_junit(&req.out, &junit_suite(req.params.seed), &junit.into_cases())
        .map_err(|e| Failure::internal(e.to_string()))?;
    let wall_s = started.elapsed().as_secs_f64();
    crate::out!("\n{}", reports::render_table(&header, &summary));
    if req.params.strategy.loop_options().is_some() {
        crate::outln!("{}", agent_line(&summary.coverage));
    }
    if let Some(line) = work_budget_line(&summary.coverage) {
        crate::outln!("{line}");
    }
    crate::outln!(
        "\nwall {:.2} s, {} passes, {:.0} passes/s",
        wall_s,
        summary.totals.passes,
        summary.totals.passes as f64 / wall_s.max(1e-9)
    );
    crate::outln!("report: {}", report.display());
    if !repro.is_empty() {
        crate::outln!("repro:  {}", req.out.join(reports::REPRO_TXT).display());
    }
    if !req.shrink_time.is_zero() && !to_shrink.is_empty() {
        failures::auto(&to_shrink, req.shrink_time, &req.out);
    }
    Ok(exit)
}

/// Name of the `<testsuite>` of a run's (or a sweep seed's) junit.xml.
pub fn junit_suite(seed: u64) -> String {
    format!("compactsim seed {seed}")
}

/// The JUnit test case of one case of `params`'s suite: `case-N`, its class the root
/// seed and the family; a failure's `type` is its first invariant, its text the witness
/// and the repro line.
pub fn junit_case(params: &CaseParams, r: &CaseResult, wall_time: Duration) -> JunitCase {
    let outcome = match &r.outcome {
        CaseOutcome::Clean => JunitOutcome::Passed,
        CaseOutcome::Violation(vs) => JunitOutcome::of_violations(vs, &params.repro(r.case)),
        CaseOutcome::Liveness(v) => {
            JunitOutcome::of_violations(std::slice::from_ref(v), &params.repro(r.case))
        }
        CaseOutcome::Internal(what) => JunitOutcome::Failed {
            kind: "internal".into(),
            message: what.lines().next().unwrap_or("").to_string(),
            detail: format!("{what}\nrepro: {}\n", params.repro(r.case)),
        },
    };
    JunitCase {
        name: format!("case-{}", r.case),
        classname: format!("seed-{}.{}", params.seed, r.family.name()),
        outcome,
        wall_time,
    }
}

/// The agent-loop coverage counters on one line (0 when a path was never reached).
pub fn agent_line(coverage: &std::collections::BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = AGENT_SUMMARY_COUNTERS
        .iter()
        .map(|(label, key)| format!("{label} {}", coverage.get(*key).copied().unwrap_or(0)))
        .collect();
    format!("agent loop: {}", parts.join(", "))
}

/// The line naming the cases the harness's work budget stopped (`None`: none was).
pub fn work_budget_line(coverage: &std::collections::BTreeMap<String, u64>) -> Option<String> {
    use compactsim_harness::engine::{CASE_WORK_ROWS_MAX, WORK_BUDGET_REACHED};
    let stopped = coverage
        .get(WORK_BUDGET_REACHED)
        .copied()
        .filter(|&n| n > 0)?;
    Some(format!(
        "{stopped} case(s) stopped at the harness's work budget ({CASE_WORK_ROWS_MAX} rows \
         observed per case): judged up to there, not failed; fewer --passes judges them whole"
    ))
}

/// The trace of the last turns of a case (rerun deterministically with the trace on).
fn last_turns(params: &CaseParams, case: u32) -> Vec<String> {
    let spec = params.suite(case, 1).spec(case);
    let r = compactsim_harness::engine::run_case(
        &spec,
        Record {
            trace: true,
            ..Record::default()
        },
    );
    let last = r.trace.last().map_or(0, |l| l.event.turn());
    let from = last.saturating_sub(LIVENESS_TRACE_TURNS - 1);
    r.trace
        .iter()
        .filter(|l| l.event.turn() >= from)
        .map(|l| l.to_string())
        .collect()
}

/// The invariants a failing case broke after its first one, with where each first
/// fired (`None` when there are none).
fn also_fired(verdicts: &[compactsim_model::Violation]) -> Option<String> {
    let later: Vec<String> = verdicts
        .iter()
        .skip(1)
        .map(|v| format!("{} at turn {} (step {})", v.invariant, v.turn, v.step))
        .collect();
    (!later.is_empty()).then(|| later.join(", "))
}

/// Prints a failure (the first few), records it in the summary and in repro.txt.
fn note_failure(
    params: &CaseParams,
    r: &CaseResult,
    agg: &mut Aggregator,
    repro: &mut Vec<String>,
) {
    let (violation, what) = match &r.outcome {
        CaseOutcome::Clean => return,
        CaseOutcome::Violation(v) => (
            Some(v[0].clone()),
            format!("{} at turn {}: {}", v[0].invariant, v[0].turn, v[0].message),
        ),
        CaseOutcome::Liveness(v) => (
            Some(v.clone()),
            format!(
                "liveness: {} at turn {}: {}",
                v.invariant, v.turn, v.message
            ),
        ),
        CaseOutcome::Internal(what) => (None, format!("internal failure: {what}")),
    };
    let line = params.repro(r.case);
    if repro.len() < FAILURES_PRINTED_MAX {
        crate::outln!(
            "FAIL case {} ({}, case seed {}): {what}",
            r.case,
            r.family.name(),
            r.case_seed
        );
        if matches!(r.outcome, CaseOutcome::Liveness(_)) {
            crate::outln!("  trace of the last {LIVENESS_TRACE_TURNS} turns:");
            for l in last_turns(params, r.case) {
                crate::outln!("    {l}");
            }
        }
        if let Some(also) = also_fired(&r.verdicts) {
            crate::outln!("  also fired: {also}");
        }
        crate::outln!("  repro: {line}");
    }
    if repro.len() < REPRO_LINES_MAX {
        repro.push(line.clone());
    }
    if let Some(violation) = violation {
        agg.add_failure(reports::Failure {
            case: r.case,
            case_seed: r.case_seed,
            family: r.family.name().into(),
            violation,
            repro: line,
        });
    }
}
