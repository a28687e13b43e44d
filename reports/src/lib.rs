//! compactsim-reports: the files a run leaves behind — `report.json` (versioned,
//! streamed), `summary.md`, `junit.xml`, `repro.txt` — and the terminal tables.
//!
//! Every file is written atomically ([`atomic_write`]) and is byte-identical for
//! identical inputs: no wall time, no thread count, no varying paths, `BTreeMap`s only.
//!
//! Typical use by the simulator:
//! ```no_run
//! # use compactsim_reports::*;
//! # fn run(dir: &std::path::Path, header: Header, rows: Vec<CaseRow>) -> Result<(), ReportError> {
//! let mut writer = ReportWriter::create(dir, &header)?;
//! let mut agg = Aggregator::new().with_invariants(["one-marker-max"]);
//! for row in &rows {
//!     writer.push(row)?;
//!     agg.add_case(row, 0, [("one-marker-max", 1)], []);
//! }
//! let summary = agg.into_summary();
//! writer.finish(&summary)?;
//! write_summary_md(dir, &header, &summary)?;
//! let repro: Vec<String> = summary.failures.iter().map(|f| f.repro.clone()).collect();
//! write_repro(dir, &repro)?;
//! print!("{}", render_table(&header, &summary));
//! # Ok(()) }
//! ```

mod aggregate;
mod atomic;
mod error;
mod html;
mod junit;
mod junit_read;
mod markdown;
mod merge;
mod repro;
mod run_page;
mod schema;
mod schema_shapes;
pub mod seed_text;
pub mod study;
mod table;
mod terminal;
mod writer;

pub use aggregate::{Aggregator, FAILURES_KEPT_MAX};
pub use atomic::{atomic_write, is_temp_name_of, remove_pending_files};
pub use error::ReportError;
pub use html::INDEX_HTML;
pub use html::{
    render_scenarios_html, render_scenarios_md, scenarios_count_line, write_scenarios_pages,
    ScenarioRow, SKIPPED,
};
pub use junit::{
    headline, render_junit, witness_text, write_junit, JunitCase, JunitCases, JunitOutcome,
    JUNIT_OMITTED_NAME, JUNIT_REPORT_NAME, JUNIT_TESTCASES_MAX, JUNIT_XML,
};
pub use junit_read::parse_junit;
pub use markdown::{render_summary_md, write_summary_md, SUMMARY_MD};
pub use merge::{
    merge_reports, shard_of, shard_range, ShardReport, SHARDS_MAX, SHARDS_PARAM, SHARD_PARAM,
};
pub use repro::{write_repro, REPRO_TXT};
pub use run_page::{render_run_html, rerun_command, write_run_html};
pub use schema::{
    CaseRow, Failure, FamilyRow, Header, InvariantRow, Outcome, PoliciesJudged, Report, Summary,
    Totals, Verdict, SCHEMA_VERSION,
};
pub use schema_shapes::report_schema_json;
pub use terminal::{header_line, render_table};
pub use writer::{read_report, ReportWriter, REPORT_JSON};
