//! `index.html` of a study: the tables and the charts on one self-contained page (the
//! SVGs are referenced next to it).

use super::markdown::{comparison_table, cost_table, micro_lines, setting_line};
use super::schema::StudyReport;
use crate::html::{page_head, PAGE_END};
use crate::table::html_escape;
use std::fmt::Write as _;

/// The whole page.
pub fn render_study_html(r: &StudyReport) -> String {
    let mut out = page_head(&format!("Study {}", r.name));
    let _ = writeln!(out, "<p>{}</p>", html_escape(&setting_line(r)));
    if let Some(command) = &r.adapter {
        let _ = writeln!(
            out,
            "<p class=\"compactor\">compactor: external adapter <code>{}</code></p>",
            html_escape(command)
        );
    }
    out.push_str("<h2>Strategies</h2>\n<ul>\n");
    for s in &r.strategies {
        let _ = writeln!(
            out,
            "<li><code>{}</code>: {}</li>",
            html_escape(&s.name),
            html_escape(&s.description)
        );
    }
    out.push_str("</ul>\n<h2>Comparison</h2>\n");
    out.push_str(&comparison_table(r).render_html());
    out.push_str("<h2>Provider cost and prompt cache</h2>\n");
    out.push_str(&cost_table(r).render_html());
    let micro = micro_lines(r);
    if !micro.is_empty() {
        out.push_str("<h2>Micro-compaction trajectory</h2>\n<ul>\n");
        for line in micro {
            let _ = writeln!(out, "<li>{}</li>", html_escape(&line));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("<h2>Charts</h2>\n");
    for chart in super::CHARTS {
        let _ = writeln!(
            out,
            "<img src=\"{}\" alt=\"{}\" width=\"900\" height=\"420\">",
            chart.file,
            html_escape(chart.title)
        );
    }
    out.push_str(PAGE_END);
    out
}
