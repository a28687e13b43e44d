//! `compactsim merge DIR...`: join the run directories of `run --shard K/N` (K = 0..N)
//! into one run directory: `report.json` equal to the unsharded run's except for the
//! header parameter `shards = N` (in place of `shard = K/N`), `summary.md`,
//! `index.html`, `repro.txt` and `junit.xml` (the shards' test cases in case order, each
//! with the time its shard measured). Shards of different runs are refused (exit 2), and
//! so is a shard whose junit.xml is missing or does not list its report's cases.

use super::exit::{Exit, Failure};
use super::run::REPRO_LINES_MAX;
use compactsim_reports::{self as reports, JunitCase, JunitCases, ReportWriter, ShardReport};
use std::path::{Path, PathBuf};

/// Default output directory.
pub const OUT_DEFAULT: &str = "target/compactsim/merged";
/// Largest `repro.txt` a shard may hold, bytes.
pub const REPRO_BYTES_MAX: u64 = 64 << 20;
/// Largest `junit.xml` a shard may hold, bytes (100 000 listed cases of a few KiB each).
pub const JUNIT_BYTES_MAX: u64 = 1 << 30;

fn read_repro(dir: &Path) -> Result<Vec<String>, Failure> {
    let path = dir.join(reports::REPRO_TXT);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(Vec::new());
    }
    let text = crate::scenario::input::read_text_within(&path, REPRO_BYTES_MAX)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", path.display())))?;
    Ok(text.lines().map(str::to_string).collect())
}

/// Merges the shard directories `dirs` into `out`.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Exit, Failure> {
    if dirs.len() as u64 > reports::SHARDS_MAX as u64 {
        return Err(Failure::bad_input(format!(
            "at most {} shard directories",
            reports::SHARDS_MAX
        )));
    }
    super::outdir::refuse_inside_inputs(out, dirs)?;
    super::outdir::prepare(out)?;
    super::outdir::clear_stale(
        out,
        &[
            reports::REPORT_JSON,
            reports::SUMMARY_MD,
            reports::INDEX_HTML,
            reports::REPRO_TXT,
            reports::JUNIT_XML,
        ],
        &[super::failures::RUN_FAILURES],
    )?;
    let mut shards = Vec::new();
    let mut repro = Vec::new();
    let mut junit = Vec::new();
    for dir in dirs {
        let path = dir.join(reports::REPORT_JSON);
        crate::scenario::input::regular_file(&path)
            .map_err(|e| Failure::bad_input(format!("{}: {e}", path.display())))?;
        let report = reports::read_report(&path).map_err(|e| Failure::bad_input(e.to_string()))?;
        let index = reports::shard_of(&report.header).map_or(u32::MAX, |(k, _)| k);
        repro.push((index, read_repro(dir)?));
        let case_ids = report.cases.iter().map(|r| r.case).collect();
        junit.push((index, dir.as_path(), case_ids));
        shards.push(ShardReport {
            source: path.display().to_string(),
            report,
        });
    }
    let merged = reports::merge_reports(shards).map_err(Failure::bad_input)?;
    let junit = merged_junit(junit)?;
    repro.sort_by_key(|(k, _)| *k);
    let mut repro: Vec<String> = repro.into_iter().flat_map(|(_, lines)| lines).collect();
    repro.truncate(REPRO_LINES_MAX);
    let internal = |e: reports::ReportError| Failure::internal(e.to_string());
    let mut writer = ReportWriter::create(out, &merged.header).map_err(internal)?;
    for row in &merged.cases {
        writer.push(row).map_err(internal)?;
    }
    let path = writer.finish(&merged.summary).map_err(internal)?;
    reports::write_summary_md(out, &merged.header, &merged.summary).map_err(internal)?;
    reports::write_run_html(out, &merged.header, &merged.summary, &[]).map_err(internal)?;
    reports::write_repro(out, &repro).map_err(internal)?;
    let suite = super::run::junit_suite(merged.header.seed);
    reports::write_junit(out, &suite, &junit).map_err(internal)?;
    crate::out!("{}", reports::render_table(&merged.header, &merged.summary));
    crate::outln!("report: {}", path.display());
    let s = &merged.summary.totals;
    Ok(if s.cases_internal > 0 {
        Exit::Internal
    } else if s.cases_failed > 0 {
        Exit::Violation
    } else if s.cases_liveness > 0 {
        Exit::Liveness
    } else {
        Exit::Clean
    })
}

/// The shards' junit.xml test cases joined in shard order (each shard lists its cases in
/// case order, so the whole is in case order). A shard's junit.xml must list exactly its
/// report's `case_ids`, or the first of them and the test case counting the rest
/// ([`reports::JUNIT_TESTCASES_MAX`]).
fn merged_junit(mut shards: Vec<(u32, &Path, Vec<u32>)>) -> Result<Vec<JunitCase>, Failure> {
    shards.sort_by_key(|(k, _, _)| *k);
    let mut joined = JunitCases::new();
    for (_, dir, case_ids) in shards {
        let path = dir.join(reports::JUNIT_XML);
        let bad = |what: String| Failure::bad_input(format!("{}: {what}", path.display()));
        crate::scenario::input::regular_file(&path).map_err(|e| bad(e.to_string()))?;
        let text = crate::scenario::input::read_text_within(&path, JUNIT_BYTES_MAX)
            .map_err(|e| bad(e.to_string()))?;
        let cases =
            reports::parse_junit(&path, &text).map_err(|e| Failure::bad_input(e.to_string()))?;
        let listed: Vec<&str> = cases
            .iter()
            .map(|c| c.name.as_str())
            .filter(|n| *n != reports::JUNIT_OMITTED_NAME)
            .collect();
        let counted_rest = listed.len() < cases.len();
        let expected: Vec<String> = case_ids.iter().map(|c| format!("case-{c}")).collect();
        let same_names = listed.iter().zip(&expected).all(|(l, e)| l == e);
        let fits = same_names
            && (listed.len() == expected.len() || counted_rest && listed.len() < expected.len());
        if !fits {
            return Err(bad(format!(
                "lists {} test case(s) ({}..) where its report.json has {} case(s) ({}..): \
                 not the junit.xml of this shard",
                listed.len(),
                listed.first().unwrap_or(&"none"),
                expected.len(),
                expected.first().map_or("none", String::as_str)
            )));
        }
        cases.into_iter().for_each(|c| joined.push(c));
    }
    Ok(joined.into_cases())
}
