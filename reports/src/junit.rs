//! `junit.xml` for CI test dashboards: one test case per case (or case group), with
//! virtual (simulated) durations so the file is deterministic.

use crate::atomic::atomic_write;
use crate::error::ReportError;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// File name of the JUnit report inside a run directory.
pub const JUNIT_XML: &str = "junit.xml";

/// Name of the `<testsuites>` root element.
pub const JUNIT_REPORT_NAME: &str = "compactsim";

/// How one JUnit test case ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JunitOutcome {
    Passed,
    /// `kind` becomes the `type` attribute (the invariant that failed), `message` the
    /// `message` attribute, `detail` the element's text (witness and repro line).
    Failed {
        kind: String,
        message: String,
        detail: String,
    },
    /// Not run; `message` says why.
    Skipped {
        message: String,
    },
}

/// One JUnit test case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JunitCase {
    pub name: String,
    pub classname: String,
    pub outcome: JunitOutcome,
    /// Virtual time of the case in milliseconds (never wall time).
    pub time_ms: u64,
}

/// Renders `<testsuites>` with one `<testsuite name=suite_name>` holding `cases` in the
/// given order. Suite and report times are the sum of the case times.
pub fn render_junit(suite_name: &str, cases: &[JunitCase]) -> Result<String, ReportError> {
    let path = PathBuf::from(JUNIT_XML);
    render(suite_name, cases).map_err(|source| ReportError::Junit { path, source })
}

/// Writes `dir/junit.xml` atomically (see [`render_junit`]); returns its path.
pub fn write_junit(
    dir: &Path,
    suite_name: &str,
    cases: &[JunitCase],
) -> Result<PathBuf, ReportError> {
    let path = dir.join(JUNIT_XML);
    let xml = render(suite_name, cases).map_err(|source| ReportError::Junit {
        path: path.clone(),
        source,
    })?;
    atomic_write(&path, xml.as_bytes())?;
    Ok(path)
}

fn render(suite_name: &str, cases: &[JunitCase]) -> Result<String, quick_junit::SerializeError> {
    let mut suite = TestSuite::new(suite_name);
    let mut time_ms_total: u64 = 0;
    for case in cases {
        time_ms_total = time_ms_total.saturating_add(case.time_ms);
        let status = match &case.outcome {
            JunitOutcome::Passed => TestCaseStatus::success(),
            JunitOutcome::Failed {
                kind,
                message,
                detail,
            } => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_type(kind.as_str());
                status.set_message(message.as_str());
                status.set_description(detail.as_str());
                status
            }
            JunitOutcome::Skipped { message } => {
                let mut status = TestCaseStatus::skipped();
                status.set_message(message.as_str());
                status
            }
        };
        let mut test_case = TestCase::new(case.name.as_str(), status);
        test_case.set_classname(case.classname.as_str());
        test_case.set_time(Duration::from_millis(case.time_ms));
        suite.add_test_case(test_case);
    }
    suite.set_time(Duration::from_millis(time_ms_total));
    let mut report = Report::new(JUNIT_REPORT_NAME);
    report.set_time(Duration::from_millis(time_ms_total));
    report.add_test_suite(suite);
    report.to_string()
}
