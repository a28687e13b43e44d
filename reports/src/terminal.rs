//! Plain-text rendering for the terminal: no colours, aligned columns. Wall time and
//! throughput are the caller's to print; they are not part of a report.

use crate::schema::{Header, Summary};
use crate::table::{Align, Table};

/// The run's parameters on one line: tool, version, seed and every chosen parameter,
/// as the first line of `compactsim run` output.
pub fn header_line(header: &Header) -> String {
    let mut line = format!(
        "{} {} seed={} cases={} passes={} strategy={}",
        header.tool, header.version, header.seed, header.cases, header.passes, header.strategy
    );
    if !header.bugs.is_empty() {
        line.push_str(&format!(" bugs={}", header.bugs.join(",")));
    }
    for (key, value) in &header.params {
        line.push_str(&format!(" {key}={value}"));
    }
    line
}

/// A totals line, a table per invariant (id, checked, cases it failed first, cases it
/// fired in at any step), a table per shape
/// family (cases, failed, liveness, turns, passes) and the coverage counters never
/// reached.
pub fn render_table(header: &Header, summary: &Summary) -> String {
    let t = &summary.totals;
    let clean = t
        .cases
        .saturating_sub(t.cases_failed)
        .saturating_sub(t.cases_liveness)
        .saturating_sub(t.cases_internal);
    let mut out = format!(
        "seed {}: {} cases, {clean} clean, {} failed, {} liveness, {} internal; {} turns, {} passes, {} transitions\n\n",
        header.seed, t.cases, t.cases_failed, t.cases_liveness, t.cases_internal, t.turns, t.passes, t.transitions
    );
    out.push_str(&invariant_table(summary).render_plain());
    out.push('\n');
    out.push_str(&family_table(summary).render_plain());
    out.push('\n');
    out.push_str(&coverage_line(summary));
    out.push('\n');
    out
}

pub(crate) fn invariant_table(summary: &Summary) -> Table {
    let mut table = Table::new(&[
        ("invariant", Align::Left),
        ("checked", Align::Right),
        ("violated first", Align::Right),
        ("fired (all verdicts)", Align::Right),
    ]);
    for row in &summary.invariants {
        table.row(vec![
            row.id.clone(),
            row.checked.to_string(),
            row.violated.to_string(),
            row.fired.to_string(),
        ]);
    }
    table
}

pub(crate) fn family_table(summary: &Summary) -> Table {
    let mut table = Table::new(&[
        ("family", Align::Left),
        ("cases", Align::Right),
        ("failed", Align::Right),
        ("liveness", Align::Right),
        ("turns", Align::Right),
        ("passes", Align::Right),
    ]);
    for row in &summary.families {
        table.row(vec![
            row.family.clone(),
            row.cases.to_string(),
            row.failed.to_string(),
            row.liveness.to_string(),
            row.turns.to_string(),
            row.passes.to_string(),
        ]);
    }
    table
}

/// Names of the coverage counters that stayed at 0, in name order.
pub(crate) fn unreached(summary: &Summary) -> Vec<&str> {
    summary
        .coverage
        .iter()
        .filter(|(_, hits)| **hits == 0)
        .map(|(name, _)| name.as_str())
        .collect()
}

fn coverage_line(summary: &Summary) -> String {
    let total = summary.coverage.len();
    let missing = unreached(summary);
    let mut line = format!(
        "coverage: {} of {total} paths reached",
        total - missing.len()
    );
    if !missing.is_empty() {
        line.push_str(&format!("; never reached: {}", missing.join(", ")));
    }
    line
}
