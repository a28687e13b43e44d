//! `index.html` beside `report.json` (run, merge) and `scenarios.txt` (scenario): the
//! same content as `summary.md` on one self-contained page.

use crate::atomic::atomic_write;
use crate::error::ReportError;
use crate::markdown::{parameter_table, witness_table};
use crate::schema::{Failure, Header, Summary};
use crate::table::{html_escape, Align, Table};
use crate::terminal::{family_table, invariant_table, unreached};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// File name of the HTML page inside a run directory.
pub const INDEX_HTML: &str = "index.html";

/// Shared page style of the HTML reports.
const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:1100px}\
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #bbb;padding:3px 8px}\
th{background:#eee}td.num,th.num{text-align:right}img{display:block;margin:1em 0;\
border:1px solid #ddd}code,pre{background:#f5f5f5}pre{padding:6px;overflow-x:auto}\
.failed{color:#b00}";

/// The head of an HTML page titled `title`, up to and including its `<h1>`.
pub(crate) fn page_head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{t}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{t}</h1>\n",
        t = html_escape(title)
    )
}

/// The end of a page.
pub(crate) const PAGE_END: &str = "</body>\n</html>\n";

/// Writes `dir/index.html` for a run; returns its path.
pub fn write_run_html(
    dir: &Path,
    header: &Header,
    summary: &Summary,
) -> Result<PathBuf, ReportError> {
    let path = dir.join(INDEX_HTML);
    atomic_write(&path, render_run_html(header, summary).as_bytes())?;
    Ok(path)
}

/// The run page: parameters, totals, invariants, families, coverage, failures with
/// their repro commands and witnesses.
pub fn render_run_html(header: &Header, summary: &Summary) -> String {
    let mut out = page_head(&format!("{} run, seed {}", header.tool, header.seed));
    out.push_str(&parameter_table(header).render_html());
    let t = &summary.totals;
    let _ = writeln!(
        out,
        "<h2>Totals</h2>\n<p>{} cases: {} failed, {} liveness, {} internal; {} turns, {} \
         passes, {} transitions</p>",
        t.cases,
        t.cases_failed,
        t.cases_liveness,
        t.cases_internal,
        t.turns,
        t.passes,
        t.transitions
    );
    out.push_str("<h2>Invariants</h2>\n");
    out.push_str(&invariant_table(summary).render_html());
    out.push_str("<h2>Families</h2>\n");
    out.push_str(&family_table(summary).render_html());
    out.push_str("<h2>Coverage</h2>\n");
    let mut coverage = Table::new(&[("counter", Align::Left), ("hits", Align::Right)]);
    for (name, hits) in &summary.coverage {
        coverage.row(vec![name.clone(), hits.to_string()]);
    }
    out.push_str(&coverage.render_html());
    let missing = unreached(summary);
    if !missing.is_empty() {
        let _ = writeln!(
            out,
            "<p>Never reached: {}.</p>",
            html_escape(&missing.join(", "))
        );
    }
    let _ = writeln!(
        out,
        "<h2>Failures ({} kept, {} omitted)</h2>",
        summary.failures.len(),
        summary.failures_omitted
    );
    if summary.failures.is_empty() {
        out.push_str("<p>None.</p>\n");
    }
    for f in &summary.failures {
        out.push_str(&failure_html(f));
    }
    out.push_str(PAGE_END);
    out
}

fn failure_html(f: &Failure) -> String {
    let v = &f.violation;
    let mut out = format!(
        "<h3 class=\"failed\">case {}: {} at turn {}, step {}</h3>\n<p>family {}, case seed \
         {}</p>\n<blockquote>{}</blockquote>\n<pre>{}</pre>\n",
        f.case,
        html_escape(&v.invariant),
        v.turn,
        v.step,
        html_escape(&f.family),
        f.case_seed,
        html_escape(&v.message),
        html_escape(&f.repro)
    );
    if let Some(rows) = witness_table(v) {
        out.push_str(&rows.render_html());
    }
    if !v.witness.facts.is_empty() {
        out.push_str("<ul>\n");
        for fact in &v.witness.facts {
            let _ = writeln!(out, "<li>{}</li>", html_escape(fact));
        }
        out.push_str("</ul>\n");
    }
    out
}

/// The verdict of a scenario the compactor under test cannot serve (neither held nor
/// failed).
pub const SKIPPED: &str = "SKIPPED";

/// One scenario file's result, for the scenario pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioRow {
    /// `ok`, `FAILED`, `ERROR` or [`SKIPPED`].
    pub verdict: String,
    pub file: String,
    pub expect: String,
    pub got: String,
    pub turns: u32,
    /// Why it failed and the witness, or why it was skipped (empty when it holds).
    pub detail: String,
}

fn scenario_table(rows: &[ScenarioRow]) -> Table {
    let mut t = Table::new(&[
        ("verdict", Align::Left),
        ("file", Align::Left),
        ("expect", Align::Left),
        ("got", Align::Left),
        ("turns", Align::Right),
    ]);
    for r in rows {
        t.row(vec![
            r.verdict.clone(),
            r.file.clone(),
            r.expect.clone(),
            r.got.clone(),
            r.turns.to_string(),
        ]);
    }
    t
}

fn failed(rows: &[ScenarioRow]) -> impl Iterator<Item = &ScenarioRow> {
    rows.iter()
        .filter(|r| r.verdict != "ok" && r.verdict != SKIPPED)
}

/// `N scenarios, H hold, F failed, S skipped`.
///
/// When every skipped file was skipped for one reason, the line ends with it
/// (`11 skipped: need target/hermes-venvs (…)`), so one line says what is missing.
pub fn scenarios_count_line(rows: &[ScenarioRow]) -> String {
    let n_failed = failed(rows).count();
    let skipped: Vec<&str> = rows
        .iter()
        .filter(|r| r.verdict == SKIPPED)
        .map(|r| {
            r.detail
                .strip_prefix(SKIPPED_DETAIL_PREFIX)
                .unwrap_or(&r.detail)
        })
        .collect();
    let n_skipped = skipped.len();
    let why = match skipped.split_first() {
        Some((first, rest)) if rest.iter().all(|r| r == first) => format!(": {first}"),
        _ => String::new(),
    };
    format!(
        "{} scenarios, {} hold, {n_failed} failed, {n_skipped} skipped{why}",
        rows.len(),
        rows.len() - n_failed - n_skipped,
    )
}

/// How a skipped row's `detail` starts, before the reason.
pub const SKIPPED_DETAIL_PREFIX: &str = "skipped: ";

/// `summary.md` of a scenario run: one row per file, then each failure with its replay
/// command.
pub fn render_scenarios_md(rows: &[ScenarioRow]) -> String {
    let mut out = format!(
        "# compactsim scenarios\n\n{}\n\n",
        scenarios_count_line(rows)
    );
    out.push_str(&scenario_table(rows).render_markdown());
    for r in failed(rows) {
        let _ = write!(
            out,
            "\n## {}\n\n```sh\ncompactsim replay {}\n```\n\n```text\n{}\n```\n",
            r.file,
            r.file,
            r.detail.trim_end()
        );
    }
    out
}

/// `index.html` of a scenario run.
pub fn render_scenarios_html(rows: &[ScenarioRow]) -> String {
    let mut out = page_head("compactsim scenarios");
    let _ = writeln!(out, "<p>{}</p>", scenarios_count_line(rows));
    out.push_str(&scenario_table(rows).render_html());
    for r in failed(rows) {
        let _ = writeln!(
            out,
            "<h2 class=\"failed\">{f}</h2>\n<pre>compactsim replay {f}</pre>\n<pre>{}</pre>",
            html_escape(r.detail.trim_end()),
            f = html_escape(&r.file)
        );
    }
    out.push_str(PAGE_END);
    out
}

/// Writes `summary.md` and `index.html` of a scenario run into `dir`.
pub fn write_scenarios_pages(dir: &Path, rows: &[ScenarioRow]) -> Result<(), ReportError> {
    atomic_write(
        &dir.join(crate::SUMMARY_MD),
        render_scenarios_md(rows).as_bytes(),
    )?;
    atomic_write(
        &dir.join(INDEX_HTML),
        render_scenarios_html(rows).as_bytes(),
    )
}
