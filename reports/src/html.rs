//! The shared page frame of the HTML reports, and `index.html` beside `scenarios.txt`
//! (scenario); the run page is `run_page.rs`.

use crate::atomic::atomic_write;
use crate::error::ReportError;
use crate::table::{html_escape, Align, Table};
use std::fmt::Write as _;
use std::path::Path;

/// File name of the HTML page inside a run directory.
pub const INDEX_HTML: &str = "index.html";

/// Shared page style of the HTML reports.
pub(crate) const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:1100px}\
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #bbb;padding:3px 8px}\
th{background:#eee}td.num,th.num{text-align:right}img{display:block;margin:1em 0;\
border:1px solid #ddd}code,pre{background:#f5f5f5}pre{padding:6px;overflow-x:auto}\
.failed{color:#b00}.banner{padding:10px 14px;margin:1em 0;border-radius:4px;color:#fff}\
.banner.pass{background:#1a7f37}.banner.fail{background:#b00}.banner p{margin:4px 0}\
code.repro{display:block;white-space:pre-wrap;word-break:break-all;padding:6px;\
color:#000}button.copy{margin:2px 0 8px 0}";

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
/// (`11 skipped: venv not installed: target/hermes-venvs (…)`), so one line says what is
/// missing.
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
