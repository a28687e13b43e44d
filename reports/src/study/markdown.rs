//! `summary.md` of a study: the setting, the comparison table, the cost table and the
//! micro-compaction trajectory.

use super::schema::{StrategySeries, StudyReport};
use crate::table::{md_cell, Align, Table};
use std::fmt::Write as _;

/// Micro pass deltas listed in the trajectory section.
pub const PASS_DELTAS_SHOWN_MAX: usize = 8;

fn pct(x: f64) -> String {
    format!("{x:.1} %")
}

fn secs(x: f64) -> String {
    format!("{x:.0} s")
}

fn usd(x: f64) -> String {
    format!("${x:.2}")
}

/// The comparison table: one row per strategy.
pub(crate) fn comparison_table(report: &StudyReport) -> Table {
    let mut t = Table::new(&[
        ("strategy", Align::Left),
        ("occupancy peak", Align::Right),
        ("occupancy equilibrium", Align::Right),
        ("batch compactions", Align::Right),
        ("micro absorbs", Align::Right),
        ("micro defrags", Align::Right),
        ("handoffs", Align::Right),
        ("stall total", Align::Right),
        ("stall max", Align::Right),
        ("micro finalize total", Align::Right),
        ("facts retained final", Align::Right),
        ("facts retained min", Align::Right),
    ]);
    for s in &report.strategies {
        let x = &s.totals;
        t.row(vec![
            s.name.clone(),
            pct(x.occupancy_pct_peak),
            pct(x.occupancy_pct_equilibrium),
            x.batch_compactions.to_string(),
            x.micro_commits.to_string(),
            x.micro_defrags.to_string(),
            x.handoffs.to_string(),
            secs(x.stall_s_total),
            secs(x.stall_s_max),
            secs(x.finalize_s_total),
            pct(x.facts_retained_pct_final),
            pct(x.facts_retained_pct_min),
        ]);
    }
    t
}

/// The cost table: provider calls, cache breaks and what they cost.
pub(crate) fn cost_table(report: &StudyReport) -> Table {
    let mut t = Table::new(&[
        ("strategy", Align::Left),
        ("provider calls", Align::Right),
        ("cache breaks", Align::Right),
        ("input cached (tok)", Align::Right),
        ("input uncached (tok)", Align::Right),
        ("recached after breaks (tok)", Align::Right),
        ("output (tok)", Align::Right),
        ("cost of breaks", Align::Right),
        ("cost total", Align::Right),
    ]);
    for s in &report.strategies {
        let x = &s.totals;
        t.row(vec![
            s.name.clone(),
            x.provider_calls.to_string(),
            x.cache_breaks.to_string(),
            x.input_tokens_cached.to_string(),
            x.input_tokens_uncached.to_string(),
            x.recached_tokens.to_string(),
            x.output_tokens.to_string(),
            usd(x.cache_break_cost_usd),
            usd(x.cost_usd_total),
        ]);
    }
    t
}

/// One line per micro strategy: the first pass, break-even, the median pass duration.
pub(crate) fn micro_lines(report: &StudyReport) -> Vec<String> {
    report
        .strategies
        .iter()
        .filter(|s| s.totals.micro_commits > 0)
        .map(micro_line)
        .collect()
}

fn micro_line(s: &StrategySeries) -> String {
    let x = &s.totals;
    let shown: Vec<String> = s
        .micro_pass_deltas_tokens
        .iter()
        .take(PASS_DELTAS_SHOWN_MAX)
        .map(|d| format!("{d:+}"))
        .collect();
    let even = x
        .micro_break_even_pass
        .map_or("never".to_string(), |p| format!("pass {p}"));
    format!(
        "{}: first pass {:+} tokens, break-even at {}, median pass {:.1} s; first deltas {}",
        s.name,
        x.micro_first_pass_delta_tokens,
        even,
        x.micro_pass_s_median,
        shown.join(", ")
    )
}

/// Which compactor ran the strategies: the external adapter's command, or the Rust
/// reference.
pub(crate) fn compactor_line(r: &StudyReport) -> String {
    match &r.adapter {
        Some(command) => format!("compactor: external adapter `{command}`"),
        None => "compactor: the Rust reference".to_string(),
    }
}

/// The setting of the study, one line.
pub(crate) fn setting_line(r: &StudyReport) -> String {
    let p = &r.pricing;
    format!(
        "seed {}, family {}, window {} tokens, batch trigger {} tokens, tail budget {} \
         tokens, {} turns over {:.1} h of session, summarizer {} tokens/s; prices ({}) per \
         million tokens: input ${}, cache write ${}, cached input ${}, output ${}",
        r.seed,
        r.family,
        r.context_length,
        r.trigger_tokens,
        r.tail_budget_tokens,
        r.turns,
        r.session_s / 3600.0,
        r.summarizer_tokens_per_s,
        p.preset,
        p.input_usd_per_mtok,
        p.cache_write_usd_per_mtok,
        p.cached_input_usd_per_mtok,
        p.output_usd_per_mtok
    )
}

/// `summary.md` of a study.
pub fn render_study_md(r: &StudyReport) -> String {
    let mut out = format!("# Study {}\n\n{}\n", md_cell(&r.name), setting_line(r));
    if r.adapter.is_some() {
        out.push_str(&format!("\n{}\n", compactor_line(r)));
    }
    out.push_str("\n## Strategies\n\n");
    for s in &r.strategies {
        let _ = writeln!(out, "- `{}`: {}", s.name, md_cell(&s.description));
    }
    out.push_str("\n## Comparison\n\n");
    out.push_str(&comparison_table(r).render_markdown());
    out.push_str("\n## Provider cost and prompt cache\n\n");
    out.push_str(&cost_table(r).render_markdown());
    let micro = micro_lines(r);
    if !micro.is_empty() {
        out.push_str("\n## Micro-compaction trajectory\n\n");
        for line in micro {
            let _ = writeln!(out, "- {line}");
        }
    }
    out.push_str("\n## Charts\n\n");
    for chart in super::CHARTS {
        let _ = writeln!(out, "- [{}]({})", chart.title, chart.file);
    }
    out
}
