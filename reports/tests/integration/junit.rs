use crate::common;

use common::xml::{self, Element};
use common::*;
use compactsim_reports::*;
use quick_junit::{NonSuccessKind, Report, TestCaseStatus};
use std::fs;
use std::time::Duration;

fn cases() -> Vec<JunitCase> {
    vec![
        JunitCase {
            name: "case-0000".into(),
            classname: "compactsim.chatty".into(),
            outcome: JunitOutcome::Passed,
            wall_time: Duration::from_millis(1_250),
        },
        JunitCase {
            name: "case-0003".into(),
            classname: "compactsim.tool-heavy".into(),
            outcome: JunitOutcome::Failed {
                kind: "one-marker-max".into(),
                message: "one-marker-max at turn 3: 2 live markers <m7> & \"m9\"".into(),
                detail: "witness:\n  m7 assistant marker\n  m9 assistant marker\ncompactsim replay --seed 42 --case 3".into(),
            },
            wall_time: Duration::from_millis(800),
        },
        JunitCase {
            name: "case-0004".into(),
            classname: "compactsim.cron".into(),
            outcome: JunitOutcome::Passed,
            wall_time: Duration::from_millis(5),
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
fn junit_writes_each_case_s_wall_time_and_their_sum_and_no_timestamp() {
    let a = render_junit("s", &cases()).unwrap();
    assert_eq!(a, render_junit("s", &cases()).unwrap());
    let root = xml::parse(&a).unwrap();
    let suite = root.children_named("testsuite").next().unwrap();
    let times: Vec<&str> = suite
        .children_named("testcase")
        .map(|c| c.attr("time"))
        .collect();
    assert_eq!(times, ["1.250", "0.800", "0.005"]);
    assert_eq!(suite.attr("time"), "2.055");
    assert!(!a.contains("timestamp"));
    assert!(!a.contains("uuid"));
}

#[test]
fn the_root_has_no_skipped_attribute_the_common_schema_refuses() {
    let mut with_skip = cases();
    with_skip[2].outcome = JunitOutcome::Skipped {
        message: "no micro_pass".into(),
    };
    let text = render_junit("s", &with_skip).unwrap();
    let root = xml::parse(&text).unwrap();
    assert_eq!(root.name, "testsuites");
    assert!(!root.attrs.contains_key("skipped"), "{text}");
    assert_eq!(root.attr("tests"), "3");
    let suite = root.children_named("testsuite").next().unwrap();
    assert_eq!(suite.attr("skipped"), "1", "{text}");
}

fn violation(invariant: &str, turn: u32, message: &str) -> compactsim_model::Violation {
    compactsim_model::Violation {
        invariant: invariant.into(),
        turn,
        step: turn * 2,
        message: message.into(),
        witness: compactsim_model::Witness {
            rows: Vec::new(),
            facts: vec![format!("fact of {invariant}")],
        },
    }
}

#[test]
fn a_failure_s_type_is_its_first_invariant_its_text_every_witness_and_the_repro() {
    let vs = [
        violation("one-marker-max", 3, "2 live markers\nsecond line"),
        violation("tokens-non-growing", 3, "grew by 81"),
    ];
    let JunitOutcome::Failed {
        kind,
        message,
        detail,
    } = JunitOutcome::of_violations(&vs, "compactsim replay --seed 1 --case 4")
    else {
        panic!("a violation fails")
    };
    assert_eq!(kind, "one-marker-max");
    assert_eq!(message, "one-marker-max at turn 3 step 6: 2 live markers");
    assert_eq!(
        detail,
        "one-marker-max at turn 3 step 6: 2 live markers\n  second line\n  witness: fact of \
         one-marker-max\ntokens-non-growing at turn 3 step 6: grew by 81\n  witness: fact of \
         tokens-non-growing\nrepro: compactsim replay --seed 1 --case 4\n"
    );
    assert_eq!(JunitOutcome::of_violations(&[], "x"), JunitOutcome::Passed);
}

#[test]
fn past_its_bound_junit_counts_the_cases_in_one_skipped_case() {
    let mut all = JunitCases::new();
    let failing = cases()[1].clone();
    for i in 0..JUNIT_TESTCASES_MAX + 3 {
        let mut c = if i % 2 == 0 {
            cases()[0].clone()
        } else {
            failing.clone()
        };
        c.name = format!("case-{i}");
        all.push(c);
    }
    let listed = all.into_cases();
    assert_eq!(listed.len(), JUNIT_TESTCASES_MAX + 1);
    let last = listed.last().unwrap();
    assert_eq!(last.name, JUNIT_OMITTED_NAME);
    let JunitOutcome::Skipped { message } = &last.outcome else {
        panic!("{last:?}")
    };
    // Cases MAX, MAX+1, MAX+2 were left out; MAX+1 (odd) failed.
    assert!(
        message.starts_with("3 more case(s), 1 of them failing, not listed"),
        "{message}"
    );
    assert_eq!(
        last.wall_time,
        Duration::from_millis(1_250 * 2 + 800),
        "{message}"
    );
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
