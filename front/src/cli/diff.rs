//! `compactsim diff --adapter 'CMD' [run flags]`: the Rust reference against an external
//! compactor, pass by pass (see `compactsim_harness::diff`). Writes diff.json and diff.md to `--out`.
//!
//! Exit codes: 0 when every case ran (agreeing or not: a disagreement is a finding, not
//! a failure); 4 when the adapter failed in a case (as in `run`); 1 or 3 when the
//! reference itself broke an invariant (only with `--bug`), so the case was cut short.

use super::args::CaseParams;
use super::exit::{Exit, Failure};
use super::run::exit_of;
use compactsim_harness::compactor::CompactorSpec;
use compactsim_harness::diff::{diff_cases, Aggregator, DIFF_JSON, DIFF_MD};
use compactsim_harness::external::argv::quote;
use compactsim_harness::runner::Suite;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

/// A validated `diff` request.
#[derive(Clone, Debug)]
pub struct DiffRequest {
    pub params: CaseParams,
    pub cases: u32,
    /// `--only`: the case ids to diff (each below `cases`); all of them when `None`.
    pub only: Option<Vec<u32>>,
    pub jobs: usize,
    pub out: PathBuf,
    /// The other side: an external adapter, its pool of children (the strategy was
    /// checked against its `hello`; that child runs the first cases).
    pub compactor: CompactorSpec,
    /// The `--profile` named, if any (printed in the reports).
    pub profile: Option<String>,
    pub quiet: bool,
}

/// The parameters as diff.json and diff.md print them (no job count, no paths: the
/// files do not depend on them).
fn params(req: &DiffRequest) -> BTreeMap<String, String> {
    let p = &req.params;
    let mut m = BTreeMap::new();
    m.insert("seed".into(), p.seed.to_string());
    m.insert("cases".into(), req.cases.to_string());
    if let Some(ids) = &req.only {
        let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
        m.insert("only".into(), ids.join(","));
    }
    m.insert("passes".into(), p.passes.to_string());
    m.insert("strategy".into(), p.strategy.to_string());
    if let Some(o) = p.strategy.loop_options() {
        m.insert("era".into(), o.era.to_string());
        m.insert("anti_thrash".into(), o.anti_thrash.to_string());
        if let Some(mode) = o.session_mode {
            m.insert("session_mode".into(), mode.to_string());
        }
    }
    if !p.bugs.is_empty() {
        m.insert("bugs".into(), p.bugs.ids().join(","));
    }
    if let Some(profile) = &req.profile {
        m.insert("profile".into(), profile.clone());
    }
    if let Some(adapter) = req.compactor.adapter() {
        m.insert("adapter".into(), adapter.command.clone());
    }
    m
}

pub fn diff(req: &DiffRequest) -> Result<Exit, Failure> {
    super::outdir::prepare(&req.out)?;
    super::outdir::clear_stale(&req.out, &[DIFF_JSON, DIFF_MD], &[])?;
    super::outdir::keep_adapter_stderr(&req.out, &req.compactor)?;
    let suite = Suite {
        compactor: req.compactor.clone(),
        ..req.params.suite(0, req.cases)
    };
    let params = params(req);
    let line: Vec<String> = params
        .iter()
        .map(|(k, v)| match k.as_str() {
            "adapter" => format!("{k}={}", quote(v)),
            _ => format!("{k}={v}"),
        })
        .collect();
    crate::outln!(
        "diff {} jobs={} out={}",
        line.join(" "),
        req.jobs,
        req.out.display()
    );
    let started = Instant::now();
    let mut agg = Aggregator::new(params);
    let mut exit = Exit::Clean;
    let ids: Vec<u32> = match &req.only {
        Some(ids) => ids.clone(),
        None => (0..req.cases).collect(),
    };
    let bar = super::progress::bar(ids.len() as u64, "cases", req.quiet);
    diff_cases(&suite, &ids, req.jobs, |d| {
        bar.inc(1);
        exit = exit.worst(exit_of(&d.outcome));
        agg.add(&d);
    })
    .map_err(Failure::internal)?;
    bar.finish_and_clear();
    let report = agg.finish();
    let write = |name: &str, text: String| {
        compactsim_reports::atomic_write(&req.out.join(name), text.as_bytes())
            .map_err(|e| Failure::internal(e.to_string()))
    };
    write(DIFF_JSON, report.json())?;
    write(DIFF_MD, report.markdown())?;
    crate::out!("{}", report.headline());
    if let Some(c) = report
        .cases
        .iter()
        .find(|c| c.outcome.starts_with("internal"))
    {
        crate::outln!("adapter failure, case {}: {}", c.case, c.outcome);
    }
    crate::outln!(
        "wrote {} and {} to {} in {:.1} s",
        DIFF_JSON,
        DIFF_MD,
        req.out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(exit)
}
