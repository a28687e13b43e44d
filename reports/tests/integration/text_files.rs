//! repro.txt, summary.md and the terminal table.
use crate::common;

use common::*;
use compactsim_reports::*;
use std::fs;

fn summary_of(n: u32) -> (Header, Summary) {
    let mut header = header();
    header.cases = n;
    let mut agg = aggregator();
    rows(n).iter().for_each(|r| add(&mut agg, r));
    (header, agg.into_summary())
}

#[test]
fn repro_has_one_line_per_command_in_order() {
    let dir = scratch_dir("repro");
    let (_, summary) = summary_of(40);
    let commands: Vec<String> = summary.failures.iter().map(|f| f.repro.clone()).collect();
    assert!(commands.len() > 2);
    let path = write_repro(&dir, &commands).unwrap();
    assert_eq!(path, dir.join(REPRO_TXT));
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        commands.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert_eq!(entries(&dir), vec![REPRO_TXT]);
}

#[test]
fn repro_without_failures_is_empty() {
    let dir = scratch_dir("repro_empty");
    let path = write_repro(&dir, &[]).unwrap();
    assert_eq!(fs::read(path).unwrap(), b"");
}

#[test]
fn repro_rejects_a_multi_line_command_and_writes_nothing() {
    let dir = scratch_dir("repro_multiline");
    let commands = vec!["compactsim replay --case 1".to_string(), "a\nb".to_string()];
    let err = write_repro(&dir, &commands).unwrap_err();
    assert!(
        matches!(err, ReportError::MultiLine { index: 1, .. }),
        "{err}"
    );
    assert!(err.to_string().contains(REPRO_TXT));
    assert!(entries(&dir).is_empty());
}

#[test]
fn summary_md_has_tables_coverage_and_repro_commands() {
    let dir = scratch_dir("summary_md");
    let (header, summary) = summary_of(30);
    let path = write_summary_md(&dir, &header, &summary).unwrap();
    assert_eq!(path, dir.join(SUMMARY_MD));
    let text = fs::read_to_string(&path).unwrap();

    for section in [
        "## Totals",
        "## Invariants",
        "## Families",
        "## Coverage",
        "## Failures",
    ] {
        assert!(text.contains(section), "missing {section}");
    }
    for row in &summary.invariants {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("| {} ", row.id)))
            .unwrap_or_else(|| panic!("no row for {}", row.id));
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(cells[2], row.checked.to_string());
        assert_eq!(cells[3], row.violated.to_string());
    }
    for row in &summary.families {
        assert!(text
            .lines()
            .any(|l| l.starts_with(&format!("| {} ", row.family))));
    }
    assert!(text.contains("Never reached: `restart-during-compaction`."));
    for f in &summary.failures {
        assert!(
            text.contains(&format!("```sh\n{}\n```", f.repro)),
            "{}",
            f.repro
        );
    }
    // The pipe inside a witness note must not break the table.
    assert!(text.contains("second live summary \\| marker"));
    assert!(text.contains("| fault-rate "));
    assert_eq!(entries(&dir), vec![SUMMARY_MD]);
}

#[test]
fn summary_md_snapshot() {
    let (header, summary) = summary_of(12);
    insta::assert_snapshot!(render_summary_md(&header, &summary));
}

#[test]
fn summary_md_is_deterministic() {
    let (h1, s1) = summary_of(50);
    let (h2, s2) = summary_of(50);
    assert_eq!(render_summary_md(&h1, &s1), render_summary_md(&h2, &s2));
}

#[test]
fn terminal_table_has_aligned_rows_for_every_invariant_and_family() {
    let (header, summary) = summary_of(200);
    let text = render_table(&header, &summary);
    assert!(!text.contains('\u{1b}'), "no escape codes");
    assert!(text.lines().all(|l| l == l.trim_end()));

    let line_of = |first: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(first))
            .unwrap_or_else(|| panic!("no line for {first}"))
    };
    for row in &summary.invariants {
        let cells: Vec<&str> = line_of(&row.id).split_whitespace().collect();
        assert_eq!(
            cells,
            [
                row.id.clone(),
                row.checked.to_string(),
                row.violated.to_string(),
                row.fired.to_string()
            ]
        );
    }
    for row in &summary.families {
        let cells: Vec<String> = line_of(&row.family)
            .split_whitespace()
            .map(String::from)
            .collect();
        let expected = [row.cases, row.failed, row.liveness, row.turns, row.passes];
        assert_eq!(cells[0], row.family);
        assert_eq!(cells[1..], expected.map(|n| n.to_string()));
    }
    // Right-aligned numbers: every line of one table has the same length.
    let inv_lengths: Vec<usize> = text
        .lines()
        .skip_while(|l| !l.starts_with("invariant"))
        .take(2 + summary.invariants.len())
        .map(str::len)
        .collect();
    assert!(
        inv_lengths.windows(2).all(|w| w[0] == w[1]),
        "{inv_lengths:?}"
    );
    assert!(text.contains("never reached: restart-during-compaction"));
}

#[test]
fn terminal_table_snapshot() {
    let (header, summary) = summary_of(12);
    insta::assert_snapshot!(render_table(&header, &summary));
}

#[test]
fn header_line_names_seed_and_every_parameter() {
    let line = header_line(&header());
    assert_eq!(
        line,
        "compactsim 0.1.0 seed=42 cases=0 passes=50 strategy=batch bugs=H-75345-B families=all fault-rate=0.05"
    );
}

#[test]
fn run_html_snapshot() {
    let (header, summary) = summary_of(12);
    insta::assert_snapshot!(render_run_html(
        &header,
        &summary,
        &[summary.failures[0].case]
    ));
}

#[test]
fn run_html_escapes_and_carries_failures_with_repro_commands() {
    let (header, summary) = summary_of(12);
    let html = render_run_html(&header, &summary, &[summary.failures[0].case]);
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
    for f in &summary.failures {
        let repro = f.repro.replace('&', "&amp;").replace('<', "&lt;");
        assert!(html.contains(&repro), "{}", f.repro);
    }
    assert!(!summary.failures.is_empty());
}

fn scenario_rows() -> Vec<ScenarioRow> {
    vec![
        ScenarioRow {
            verdict: "ok".into(),
            file: "scenarios/seeds/a.toml".into(),
            expect: "clean".into(),
            got: "clean".into(),
            turns: 12,
            detail: String::new(),
        },
        ScenarioRow {
            verdict: "FAILED".into(),
            file: "scenarios/seeds/b.toml".into(),
            expect: "violated one-marker-max within 7 turns".into(),
            got: "clean".into(),
            turns: 30,
            detail: "expected violated one-marker-max within 7 turns, got clean\n".into(),
        },
    ]
}

#[test]
fn scenarios_md_snapshot() {
    insta::assert_snapshot!(render_scenarios_md(&scenario_rows()));
}

#[test]
fn skipped_scenarios_are_counted_apart_and_never_replayed_as_failures() {
    let mut rows = scenario_rows();
    rows.push(ScenarioRow {
        verdict: SKIPPED.into(),
        file: "scenarios/seeds/c.toml".into(),
        expect: "clean".into(),
        got: "skipped: adapter 'a' does not declare capability micro_pass".into(),
        turns: 0,
        detail: "skipped: adapter 'a' does not declare capability micro_pass".into(),
    });
    assert_eq!(
        scenarios_count_line(&rows),
        "3 scenarios, 1 hold, 1 failed, 1 skipped: adapter 'a' does not declare capability micro_pass"
    );
    let md = render_scenarios_md(&rows);
    let html = render_scenarios_html(&rows);
    assert!(
        !md.contains("compactsim replay scenarios/seeds/c.toml"),
        "{md}"
    );
    assert!(
        !html.contains("compactsim replay scenarios/seeds/c.toml"),
        "{html}"
    );
    assert!(html.contains("1 skipped"), "{html}");
    let xml = render_junit(
        "s",
        &[JunitCase {
            name: "c.toml".into(),
            classname: "s".into(),
            outcome: JunitOutcome::Skipped {
                message: "no micro_pass".into(),
            },
            wall_time: std::time::Duration::ZERO,
        }],
    )
    .unwrap();
    assert!(xml.contains("<skipped message=\"no micro_pass\""), "{xml}");
}

#[test]
fn scenarios_pages_list_every_file_and_replay_the_failed_ones() {
    let rows = scenario_rows();
    let md = render_scenarios_md(&rows);
    let html = render_scenarios_html(&rows);
    assert!(md.contains("2 scenarios, 1 hold, 1 failed"));
    assert!(md.contains("compactsim replay scenarios/seeds/b.toml"));
    assert!(!md.contains("compactsim replay scenarios/seeds/a.toml"));
    assert!(html.contains("<pre>compactsim replay scenarios/seeds/b.toml</pre>"));
    assert!(html.contains("<td>scenarios/seeds/a.toml</td>"));
}
