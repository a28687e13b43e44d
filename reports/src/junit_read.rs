//! Reading back a `junit.xml` this crate wrote: `merge` joins the test cases of the
//! shards' junit.xml files (with the wall times each shard measured) into the merged
//! run's one.

use crate::error::ReportError;
use crate::junit::{JunitCase, JunitOutcome};
use quick_junit::{Report, TestCaseStatus, XmlString};
use std::path::Path;
use std::time::Duration;

/// The test cases of `xml` (the text of `path`), every suite's in document order. A
/// `<failure>` or `<error>` becomes [`JunitOutcome::Failed`], a `<skipped>`
/// [`JunitOutcome::Skipped`]; a test case without a time takes zero. The reader trims
/// the line break a failure's text ends with; it is put back, so a junit.xml read and
/// written again is the same file.
pub fn parse_junit(path: &Path, xml: &str) -> Result<Vec<JunitCase>, ReportError> {
    let report = Report::deserialize_from_str(xml).map_err(|source| ReportError::JunitRead {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(report
        .test_suites
        .into_iter()
        .flat_map(|suite| suite.test_cases)
        .map(|case| JunitCase {
            name: case.name.to_string(),
            classname: text(case.classname),
            outcome: outcome_of(case.status),
            wall_time: case.time.unwrap_or(Duration::ZERO),
        })
        .collect())
}

fn text(s: Option<XmlString>) -> String {
    s.map(|s| s.to_string()).unwrap_or_default()
}

fn ending_in_line_break(mut s: String) -> String {
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

fn outcome_of(status: TestCaseStatus) -> JunitOutcome {
    match status {
        TestCaseStatus::Success { .. } => JunitOutcome::Passed,
        TestCaseStatus::NonSuccess {
            message,
            ty,
            description,
            ..
        } => JunitOutcome::Failed {
            kind: text(ty),
            message: text(message),
            detail: ending_in_line_break(text(description)),
        },
        TestCaseStatus::Skipped { message, .. } => JunitOutcome::Skipped {
            message: text(message),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::junit::render_junit;

    fn case(name: &str, outcome: JunitOutcome, ms: u64) -> JunitCase {
        JunitCase {
            name: name.into(),
            classname: "seed-5.plain".into(),
            outcome,
            wall_time: Duration::from_millis(ms),
        }
    }

    #[test]
    fn what_render_junit_writes_reads_back_the_same() {
        let cases = vec![
            case("case-0", JunitOutcome::Passed, 12),
            case(
                "case-1",
                JunitOutcome::Failed {
                    kind: "one-marker-max".into(),
                    message: "one-marker-max at turn 3 step 1: two markers".into(),
                    detail: "one-marker-max at turn 3 step 1: two markers\n  row 2 m2\nrepro: compactsim replay --seed 5 --case 1\n".into(),
                },
                1500,
            ),
            case(
                "case-2",
                JunitOutcome::Skipped {
                    message: "not run".into(),
                },
                0,
            ),
        ];
        let xml = render_junit("compactsim seed 5", &cases).unwrap();
        let read = parse_junit(Path::new("junit.xml"), &xml).unwrap();
        assert_eq!(read, cases);
        assert_eq!(render_junit("compactsim seed 5", &read).unwrap(), xml);
    }

    #[test]
    fn text_that_is_not_junit_is_an_error_naming_the_file() {
        let err = parse_junit(Path::new("shard-1/junit.xml"), "<testsuites><testsuite")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("shard-1/junit.xml: cannot read as JUnit XML"),
            "{err}"
        );
    }
}
