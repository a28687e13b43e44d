use crate::common;

use common::xml::{self, Element};
use common::*;
use compactsim_reports::*;
use quick_junit::{NonSuccessKind, Report, TestCaseStatus};
use std::fs;

fn cases() -> Vec<JunitCase> {
    vec![
        JunitCase {
            name: "case-0000".into(),
            classname: "compactsim.chatty".into(),
            outcome: JunitOutcome::Passed,
            time_ms: 1_250,
        },
        JunitCase {
            name: "case-0003".into(),
            classname: "compactsim.tool-heavy".into(),
            outcome: JunitOutcome::Failed {
                kind: "one-marker-max".into(),
                message: "one-marker-max at turn 3: 2 live markers <m7> & \"m9\"".into(),
                detail: "witness:\n  m7 assistant marker\n  m9 assistant marker\ncompactsim replay --seed 42 --case 3".into(),
            },
            time_ms: 800,
        },
        JunitCase {
            name: "case-0004".into(),
            classname: "compactsim.cron".into(),
            outcome: JunitOutcome::Passed,
            time_ms: 5,
        },
    ]
}

/// Writes junit.xml into a directory of the calling test's own (tests run in parallel).
fn written(test: &str) -> (String, Element) {
    let dir = scratch_dir(&format!("junit-{test}"));
    let path = write_junit(&dir, "compactsim run seed 42", &cases()).unwrap();
    assert_eq!(path, dir.join(JUNIT_XML));
    assert_eq!(entries(&dir), vec![JUNIT_XML]);
    let text = fs::read_to_string(path).unwrap();
    let root = xml::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    (text, root)
}

#[test]
fn junit_is_well_formed_testsuites_testsuite_testcase() {
    let (_, root) = written("well-formed");
    assert_eq!(root.name, "testsuites");
    assert_eq!(root.attr("name"), JUNIT_REPORT_NAME);
    assert_eq!(root.attr("tests"), "3");
    assert_eq!(root.attr("failures"), "1");
    assert_eq!(root.attr("errors"), "0");
    assert_eq!(root.attr("time"), "2.055");

    let suites: Vec<&Element> = root.children_named("testsuite").collect();
    assert_eq!(suites.len(), 1);
    let suite = suites[0];
    assert_eq!(suite.attr("name"), "compactsim run seed 42");
    assert_eq!(suite.attr("tests"), "3");
    assert_eq!(suite.attr("failures"), "1");

    let testcases: Vec<&Element> = suite.children_named("testcase").collect();
    assert_eq!(testcases.len(), suite.children.len());
    let names: Vec<&str> = testcases.iter().map(|c| c.attr("name")).collect();
    assert_eq!(names, ["case-0000", "case-0003", "case-0004"]);
    assert_eq!(testcases[0].attr("classname"), "compactsim.chatty");
    assert_eq!(testcases[0].attr("time"), "1.250");
    assert!(testcases[0].children.is_empty());

    let failures: Vec<&Element> = testcases[1].children_named("failure").collect();
    assert_eq!(failures.len(), 1);
    let JunitOutcome::Failed {
        kind,
        message,
        detail,
    } = &cases()[1].outcome
    else {
        unreachable!()
    };
    assert_eq!(failures[0].attr("type"), kind);
    assert_eq!(failures[0].attr("message"), message);
    assert_eq!(failures[0].text.trim(), detail.as_str());
}

#[test]
fn junit_parses_back_with_quick_junit() {
    let (text, _) = written("parse-back");
    let report = Report::deserialize_from_str(&text).unwrap();
    assert_eq!(report.tests, 3);
    assert_eq!(report.failures, 1);
    let suite = &report.test_suites[0];
    assert_eq!(suite.test_cases.len(), 3);
    match &suite.test_cases[1].status {
        TestCaseStatus::NonSuccess { kind, message, .. } => {
            assert_eq!(*kind, NonSuccessKind::Failure);
            assert!(message
                .as_ref()
                .unwrap()
                .as_str()
                .starts_with("one-marker-max"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn junit_is_deterministic_and_has_no_wall_clock_fields() {
    let a = render_junit("s", &cases()).unwrap();
    let b = render_junit("s", &cases()).unwrap();
    assert_eq!(a, b);
    assert!(!a.contains("timestamp"));
    assert!(!a.contains("uuid"));
}

#[test]
fn empty_suite_is_valid() {
    let text = render_junit("empty", &[]).unwrap();
    let root = xml::parse(&text).unwrap();
    assert_eq!(root.attr("tests"), "0");
    assert_eq!(root.children_named("testsuite").count(), 1);
}

#[test]
fn junit_snapshot() {
    insta::assert_snapshot!(render_junit("compactsim run seed 42", &cases()).unwrap());
}

#[test]
fn test_xml_reader_rejects_malformed_input() {
    assert!(xml::parse("<a><b></a></b>").is_err());
    assert!(xml::parse("<a x=1/>").is_err());
    assert!(xml::parse("<a>").is_err());
    assert!(xml::parse("<a/><b/>").is_err());
    assert!(xml::parse("<a>&bogus;</a>").is_err());
    assert!(xml::parse("<a>1 < 2</a>").is_err());
    let ok = xml::parse("<?xml version=\"1.0\"?>\n<a k=\"&lt;v&gt;\"><b/>t&amp;u</a>\n").unwrap();
    assert_eq!(ok.attr("k"), "<v>");
    assert_eq!(ok.children.len(), 1);
    assert_eq!(ok.text, "t&u");
}
