//! The one error type of the crate. Every variant names the file it concerns, so a
//! message printed by the CLI is enough to find the problem.

use std::io;
use std::path::PathBuf;

/// A report could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    #[error("{}: JSON: {source}", path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    #[error("{}: JUnit XML: {source}", path.display())]
    Junit {
        path: PathBuf,
        #[source]
        source: quick_junit::SerializeError,
    },

    #[error("{}: cannot read as JUnit XML: {source}", path.display())]
    JunitRead {
        path: PathBuf,
        #[source]
        source: quick_junit::DeserializeError,
    },

    #[error(
        "{}: case {case} handed over after case {previous}; case rows must arrive in strictly increasing case-id order",
        path.display()
    )]
    CaseOrder {
        path: PathBuf,
        previous: u32,
        case: u32,
    },

    #[error(
        "{}: summary counts {totals_cases} cases but {rows_written} case rows were written",
        path.display()
    )]
    CaseCountMismatch {
        path: PathBuf,
        rows_written: u64,
        totals_cases: u64,
    },

    #[error("{}: chart: {message}", path.display())]
    Chart { path: PathBuf, message: String },

    #[error("{}: line {index} contains a line break; one entry must be one line", path.display())]
    MultiLine { path: PathBuf, index: usize },

    #[error("{}: schema_version {found} is not supported (this build reads {supported})", path.display())]
    SchemaVersion {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
}

impl ReportError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> ReportError {
        let path = path.into();
        move |source| ReportError::Io { path, source }
    }

    pub(crate) fn json(path: impl Into<PathBuf>) -> impl FnOnce(serde_json::Error) -> ReportError {
        let path = path.into();
        move |source| ReportError::Json { path, source }
    }
}
