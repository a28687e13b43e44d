//! Study reports: one seed, several compaction strategies side by side (`compactsim
//! study`). `study.json` (the data), one SVG line chart per measure, `summary.md` (the
//! comparison and cost tables) and `index.html` (all of it on one page).
//!
//! Every file is a pure function of the [`StudyReport`] and written atomically.

mod charts;
mod html;
mod markdown;
mod schema;

pub use crate::html::INDEX_HTML;
pub use charts::{render_chart, Chart, CHARTS};
pub use html::render_study_html;
pub use markdown::render_study_md;
pub use schema::*;

use crate::atomic::atomic_write;
use crate::error::ReportError;
use std::path::Path;

/// `study.json`.
pub const STUDY_JSON: &str = "study.json";

/// Writes `study.json`, every chart, `summary.md` and `index.html` under `dir`.
pub fn write_study(dir: &Path, report: &StudyReport) -> Result<(), ReportError> {
    let json_path = dir.join(STUDY_JSON);
    let mut json = serde_json::to_string_pretty(report).map_err(ReportError::json(&json_path))?;
    json.push('\n');
    atomic_write(&json_path, json.as_bytes())?;
    for chart in CHARTS {
        let path = dir.join(chart.file);
        let svg = render_chart(report, chart).map_err(|message| ReportError::Chart {
            path: path.clone(),
            message,
        })?;
        atomic_write(&path, svg.as_bytes())?;
    }
    atomic_write(
        &dir.join(crate::SUMMARY_MD),
        render_study_md(report).as_bytes(),
    )?;
    atomic_write(&dir.join(INDEX_HTML), render_study_html(report).as_bytes())
}
