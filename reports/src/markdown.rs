//! `summary.md`: the run's header and summary as Markdown, for CI job summaries and
//! pull-request comments.

use crate::atomic::atomic_write;
use crate::error::ReportError;
use crate::schema::{Failure, Header, Summary};
use crate::table::{md_cell, Align, Table};
use crate::terminal::{family_table, invariant_table, unreached};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// File name of the Markdown summary inside a run directory.
pub const SUMMARY_MD: &str = "summary.md";

/// Writes `dir/summary.md` atomically; returns its path.
pub fn write_summary_md(
    dir: &Path,
    header: &Header,
    summary: &Summary,
) -> Result<PathBuf, ReportError> {
    let path = dir.join(SUMMARY_MD);
    atomic_write(&path, render_summary_md(header, summary).as_bytes())?;
    Ok(path)
}

/// Renders header, totals, per-invariant and per-family tables, coverage counters and
/// the kept failures with their repro commands. Deterministic in its inputs.
pub fn render_summary_md(header: &Header, summary: &Summary) -> String {
    let mut out = format!("# {} run, seed {}\n\n", md_cell(&header.tool), header.seed);
    out.push_str(&parameter_table(header).render_markdown());

    let t = &summary.totals;
    out.push_str("\n## Totals\n\n");
    let mut totals = Table::new(&[
        ("cases", Align::Right),
        ("failed", Align::Right),
        ("liveness", Align::Right),
        ("turns", Align::Right),
        ("passes", Align::Right),
        ("transitions", Align::Right),
    ]);
    totals.row(
        [
            t.cases,
            t.cases_failed,
            t.cases_liveness,
            t.turns,
            t.passes,
            t.transitions,
        ]
        .iter()
        .map(u64::to_string)
        .collect(),
    );
    out.push_str(&totals.render_markdown());

    out.push_str("\n## Invariants\n\n");
    out.push_str(&invariant_table(summary).render_markdown());
    out.push_str("\n## Families\n\n");
    out.push_str(&family_table(summary).render_markdown());
    out.push_str(&coverage_section(summary));
    out.push_str(&failures_section(summary));
    out
}

pub(crate) fn parameter_table(header: &Header) -> Table {
    let mut table = Table::new(&[("parameter", Align::Left), ("value", Align::Left)]);
    let bugs = if header.bugs.is_empty() {
        "none".to_string()
    } else {
        header.bugs.join(", ")
    };
    let fixed = [
        ("tool", format!("{} {}", header.tool, header.version)),
        ("seed", header.seed.to_string()),
        ("cases", header.cases.to_string()),
        ("passes", header.passes.to_string()),
        ("strategy", header.strategy.clone()),
        ("bugs", bugs),
    ];
    for (key, value) in fixed {
        table.row(vec![key.to_string(), value]);
    }
    for (key, value) in &header.params {
        table.row(vec![key.clone(), value.clone()]);
    }
    table.row(vec![
        "policies judged".to_string(),
        header.policies.describe(),
    ]);
    table
}

fn coverage_section(summary: &Summary) -> String {
    let mut out = String::from("\n## Coverage\n\n");
    if summary.coverage.is_empty() {
        out.push_str("No coverage counters were reported.\n");
        return out;
    }
    let mut table = Table::new(&[("counter", Align::Left), ("hits", Align::Right)]);
    for (name, hits) in &summary.coverage {
        table.row(vec![name.clone(), hits.to_string()]);
    }
    out.push_str(&table.render_markdown());
    let missing = unreached(summary);
    if !missing.is_empty() {
        let names: Vec<String> = missing.iter().map(|n| inline_code(n)).collect();
        let _ = writeln!(out, "\nNever reached: {}.", names.join(", "));
    }
    out
}

fn failures_section(summary: &Summary) -> String {
    let kept = summary.failures.len() as u64;
    let mut out = format!(
        "\n## Failures ({} kept, {} omitted)\n\n",
        kept, summary.failures_omitted
    );
    if summary.failures.is_empty() {
        out.push_str("None.\n");
        return out;
    }
    for failure in &summary.failures {
        out.push_str(&failure_block(failure));
    }
    out
}

fn failure_block(f: &Failure) -> String {
    let v = &f.violation;
    let mut out = format!(
        "### case {}: {} at turn {}, step {}\n\nfamily {}, case seed {}\n\n",
        f.case,
        inline_code(&v.invariant),
        v.turn,
        v.step,
        inline_code(&f.family),
        f.case_seed
    );
    for line in v.message.lines() {
        let _ = writeln!(out, "> {line}");
    }
    out.push('\n');
    out.push_str(&code_block("sh", &f.repro));
    if let Some(rows) = witness_table(v) {
        out.push('\n');
        out.push_str(&rows.render_markdown());
    }
    if !v.witness.facts.is_empty() {
        out.push('\n');
        for fact in &v.witness.facts {
            let _ = writeln!(out, "- {}", md_cell(fact));
        }
    }
    out.push('\n');
    out
}

/// The witness rows of a violation as a table (None without rows).
pub(crate) fn witness_table(v: &compactsim_model::Violation) -> Option<Table> {
    if v.witness.rows.is_empty() {
        return None;
    }
    {
        let mut rows = Table::new(&[
            ("index", Align::Right),
            ("id", Align::Left),
            ("role", Align::Left),
            ("marker", Align::Left),
            ("micro", Align::Left),
            ("tokens rough", Align::Right),
            ("tokens real", Align::Right),
            ("segments", Align::Right),
            ("tool calls", Align::Right),
            ("note", Align::Left),
        ]);
        for r in &v.witness.rows {
            rows.row(vec![
                r.index.to_string(),
                r.id.to_string(),
                r.role.as_str().to_string(),
                yes_no(r.marker),
                yes_no(r.micro_marker),
                r.tokens.rough.to_string(),
                r.tokens.real.to_string(),
                r.segments.to_string(),
                r.tool_calls.to_string(),
                r.note.clone(),
            ]);
        }
        Some(rows)
    }
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

/// Longest run of backticks in `s`.
fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// `s` as inline code, whatever backticks it contains.
fn inline_code(s: &str) -> String {
    let s = md_cell(s);
    let ticks = "`".repeat(longest_backtick_run(&s) + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{s}{pad}{ticks}")
}

/// A fenced code block whose fence is longer than any backtick run inside.
fn code_block(lang: &str, body: &str) -> String {
    let fence = "`".repeat(longest_backtick_run(body).max(2) + 1);
    format!("{fence}{lang}\n{body}\n{fence}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_code_survives_backticks() {
        assert_eq!(inline_code("plain"), "`plain`");
        assert_eq!(inline_code("a`b"), "``a`b``");
        assert_eq!(inline_code("`x"), "`` `x ``");
    }

    #[test]
    fn code_fence_is_longer_than_any_backtick_run() {
        assert_eq!(code_block("sh", "echo hi"), "```sh\necho hi\n```\n");
        assert_eq!(code_block("sh", "a ```` b"), "`````sh\na ```` b\n`````\n");
    }
}
