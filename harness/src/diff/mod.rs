//! Differential mode (`compactsim diff`): the Rust reference and another compactor get
//! the same transcript before every pass and the same summarizer answers; every pass is
//! observed on both sides and compared field by field (see [`observe::Field`]).
//!
//! Design (see `tee`): the reference drives the world, the other compactor runs on
//! copies and its results are thrown away. The other is served the reference's
//! summarizer answers in call order (then a fork of the case's summarizer), so a
//! disagreement is never the fake summarizer answering differently.

pub mod observe;
pub mod report;
pub mod run;
pub mod tee;

pub use observe::{Field, Observed};
pub use report::{diff_schema_json, Aggregator, DiffReport, DIFF_JSON, DIFF_MD};
pub use run::{diff_case, diff_cases, diff_suite, CaseDiff};
pub use tee::{CaseLog, Tee};
