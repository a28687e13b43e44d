//! `junit.xml` for CI test dashboards (`run`, `sweep`, `scenario`, `selftest`, `matrix`):
//! one test case per case, scenario, switch row or release × finding, each with the wall
//! time it took as measured. junit.xml is the one report with wall times: report.json and
//! the other reports stay byte-identical across runs and `--jobs`, junit.xml does not.
//! Valid against the common JUnit schema (docs/schemas/junit.xsd).

use crate::atomic::atomic_write;
use crate::error::ReportError;
use compactsim_model::Violation;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// File name of the JUnit report inside a run directory.
pub const JUNIT_XML: &str = "junit.xml";

/// Name of the `<testsuites>` root element.
pub const JUNIT_REPORT_NAME: &str = "compactsim";

/// Most test cases one junit.xml lists (it is built in memory); the cases past it are
/// counted in one skipped test case that names the bound and how many of them failed.
pub const JUNIT_TESTCASES_MAX: usize = 100_000;

/// Name of the test case that stands for the cases past [`JUNIT_TESTCASES_MAX`].
pub const JUNIT_OMITTED_NAME: &str = "more-cases-not-listed";

/// How one JUnit test case ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JunitOutcome {
    Passed,
    /// `kind` becomes the `type` attribute (the invariant that failed), `message` the
    /// `message` attribute (the witness's headline), `detail` the element's text (the
    /// witness and the repro line).
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

impl JunitOutcome {
    /// A case that broke `verdicts` (the first is the one it failed by): `type` is its
    /// invariant, `message` where and what it saw, the text every verdict's witness and
    /// `repro` last. Passed when `verdicts` is empty.
    pub fn of_violations(verdicts: &[Violation], repro: &str) -> JunitOutcome {
        let Some(first) = verdicts.first() else {
            return JunitOutcome::Passed;
        };
        JunitOutcome::Failed {
            kind: first.invariant.clone(),
            message: headline(first),
            detail: format!("{}repro: {repro}\n", witness_text(verdicts)),
        }
    }

    pub fn failed(&self) -> bool {
        matches!(self, JunitOutcome::Failed { .. })
    }
}

/// `invariant at turn T step S: message` (the message's first line).
pub fn headline(v: &Violation) -> String {
    format!(
        "{} at turn {} step {}: {}",
        v.invariant,
        v.turn,
        v.step,
        v.message.lines().next().unwrap_or("")
    )
}

/// Every verdict's headline, its witness rows and facts, one per line.
pub fn witness_text(verdicts: &[Violation]) -> String {
    let mut out = String::new();
    for v in verdicts {
        let _ = writeln!(out, "{}", headline(v));
        for line in v.message.lines().skip(1) {
            let _ = writeln!(out, "  {line}");
        }
        for r in &v.witness.rows {
            let _ = writeln!(
                out,
                "  row {} {} {}{}{} tokens {} segments {} tool calls {}{}",
                r.index,
                r.id,
                r.role.as_str(),
                if r.marker { " marker" } else { "" },
                if r.micro_marker { " micro-marker" } else { "" },
                r.tokens.real,
                r.segments,
                r.tool_calls,
                if r.note.is_empty() {
                    String::new()
                } else {
                    format!(": {}", r.note)
                }
            );
        }
        for fact in &v.witness.facts {
            let _ = writeln!(out, "  witness: {fact}");
        }
    }
    out
}

/// One JUnit test case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JunitCase {
    pub name: String,
    pub classname: String,
    pub outcome: JunitOutcome,
    /// Wall time of the case as measured (the only non-deterministic field).
    pub wall_time: Duration,
}

/// The test cases of one junit.xml, at most [`JUNIT_TESTCASES_MAX`] of them listed.
#[derive(Clone, Debug, Default)]
pub struct JunitCases {
    listed: Vec<JunitCase>,
    omitted: u64,
    omitted_failed: u64,
    omitted_wall_time: Duration,
}

impl JunitCases {
    pub fn new() -> JunitCases {
        JunitCases::default()
    }

    /// Adds a case (counted only, past [`JUNIT_TESTCASES_MAX`]).
    pub fn push(&mut self, case: JunitCase) {
        if self.listed.len() < JUNIT_TESTCASES_MAX {
            self.listed.push(case);
        } else {
            self.omitted += 1;
            self.omitted_failed += u64::from(case.outcome.failed());
            self.omitted_wall_time += case.wall_time;
        }
    }

    /// The listed cases, then one skipped case counting those past the bound, if any.
    pub fn into_cases(self) -> Vec<JunitCase> {
        let mut cases = self.listed;
        if self.omitted > 0 {
            cases.push(JunitCase {
                name: JUNIT_OMITTED_NAME.into(),
                classname: JUNIT_REPORT_NAME.into(),
                outcome: JunitOutcome::Skipped {
                    message: format!(
                        "{} more case(s), {} of them failing, not listed: junit.xml lists at \
                         most {JUNIT_TESTCASES_MAX} (JUNIT_TESTCASES_MAX); every case is in \
                         the run's other reports",
                        self.omitted, self.omitted_failed
                    ),
                },
                wall_time: self.omitted_wall_time,
            });
        }
        cases
    }
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

fn status_of(outcome: &JunitOutcome) -> TestCaseStatus {
    match outcome {
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
    }
}

fn render(suite_name: &str, cases: &[JunitCase]) -> Result<String, quick_junit::SerializeError> {
    let mut suite = TestSuite::new(suite_name);
    let mut wall_time_total = Duration::ZERO;
    for case in cases {
        wall_time_total += case.wall_time;
        let mut test_case = TestCase::new(case.name.as_str(), status_of(&case.outcome));
        test_case.set_classname(case.classname.as_str());
        test_case.set_time(case.wall_time);
        suite.add_test_case(test_case);
    }
    suite.set_time(wall_time_total);
    let mut report = Report::new(JUNIT_REPORT_NAME);
    report.set_time(wall_time_total);
    report.add_test_suite(suite);
    Ok(without_root_skipped(&report.to_string()?))
}

/// The common JUnit schema (docs/schemas/junit.xsd) has no `skipped` attribute on
/// `<testsuites>` (each `<testsuite>` keeps its own): drops the one quick-junit writes.
fn without_root_skipped(xml: &str) -> String {
    let Some(start) = xml.find("<testsuites ") else {
        return xml.to_string();
    };
    let end = start + xml[start..].find('>').unwrap_or(0);
    let root = &xml[start..end];
    let Some(at) = root.find(" skipped=\"") else {
        return xml.to_string();
    };
    let value_end =
        at + " skipped=\"".len() + root[at + " skipped=\"".len()..].find('"').unwrap_or(0) + 1;
    format!(
        "{}{}{}",
        &xml[..start + at],
        &root[value_end..],
        &xml[end..]
    )
}
