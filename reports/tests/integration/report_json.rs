use crate::common;

use common::*;
use compactsim_reports::*;
use std::fs;
use std::path::{Path, PathBuf};

/// Writes a complete report of `n` cases into `dir`; returns the expected values.
fn write_run(dir: &Path, n: u32) -> (Header, Vec<CaseRow>, Summary, PathBuf) {
    let mut header = header();
    header.cases = n;
    let rows = rows(n);
    let mut agg = aggregator();
    let mut writer = ReportWriter::create(dir, &header).unwrap();
    for row in &rows {
        writer.push(row).unwrap();
        add(&mut agg, row);
    }
    let summary = agg.into_summary();
    let path = writer.finish(&summary).unwrap();
    (header, rows, summary, path)
}

#[test]
fn streamed_report_reads_back_into_the_same_values() {
    let dir = scratch_dir("reads_back");
    let (header, rows, summary, path) = write_run(&dir, 60);
    assert_eq!(path, dir.join(REPORT_JSON));
    assert_eq!(entries(&dir), vec![REPORT_JSON]);
    let report = read_report(&path).unwrap();
    assert_eq!(report.schema_version, SCHEMA_VERSION);
    assert_eq!(report.header, header);
    assert_eq!(report.cases, rows);
    assert_eq!(report.summary, summary);
    assert!(!report.summary.failures.is_empty());
}

#[test]
fn report_is_plain_json_with_one_case_per_line() {
    let dir = scratch_dir("one_per_line");
    let (_, rows, _, path) = write_run(&dir, 25);
    let text = fs::read_to_string(&path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["schema_version"], 2);
    assert!(
        value["cases"][0]["case_seed"].is_string(),
        "seeds are strings"
    );
    assert_eq!(value["cases"].as_array().unwrap().len(), 25);
    assert_eq!(value["cases"][3]["outcome"]["kind"], "violation");
    assert!(text.ends_with("}\n"));

    let case_lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("{\"case\":"))
        .collect();
    assert_eq!(case_lines.len(), rows.len());
    for (line, row) in case_lines.iter().zip(&rows) {
        let parsed: CaseRow = serde_json::from_str(line.trim_end_matches(',')).unwrap();
        assert_eq!(&parsed, row);
    }
}

#[test]
fn empty_run_is_valid() {
    let dir = scratch_dir("empty");
    let (header, _, summary, path) = write_run(&dir, 0);
    let report = read_report(&path).unwrap();
    assert!(report.cases.is_empty());
    assert_eq!(report.header, header);
    assert_eq!(report.summary, summary);
}

#[test]
fn identical_inputs_give_identical_bytes() {
    let a = scratch_dir("identical_a");
    let b = scratch_dir("identical_b");
    let (_, _, _, pa) = write_run(&a, 40);
    let (_, _, _, pb) = write_run(&b, 40);
    assert_eq!(fs::read(pa).unwrap(), fs::read(pb).unwrap());
}

#[test]
fn summary_bytes_do_not_depend_on_aggregation_order_or_split() {
    let rows = rows(300);
    let mut sequential = aggregator();
    rows.iter().for_each(|r| add(&mut sequential, r));

    // As a parallel runner would: chunks in reverse, each on its own, merged backwards.
    let mut merged = aggregator();
    for chunk in rows.chunks(37).rev() {
        let mut part = Aggregator::new();
        chunk.iter().rev().for_each(|r| add(&mut part, r));
        merged.merge(part);
    }
    let a = serde_json::to_vec(&sequential.into_summary()).unwrap();
    let b = serde_json::to_vec(&merged.into_summary()).unwrap();
    assert_eq!(a, b);
}

#[test]
fn dropped_writer_leaves_no_report_and_no_temp_file() {
    let dir = scratch_dir("dropped");
    let mut writer = ReportWriter::create(&dir, &header()).unwrap();
    for row in rows(10) {
        writer.push(&row).unwrap();
    }
    assert_eq!(
        entries(&dir).len(),
        1,
        "the temporary file exists while writing"
    );
    drop(writer);
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
}

#[test]
fn previous_report_is_replaced_only_at_finish() {
    let dir = scratch_dir("replace");
    let (_, _, _, path) = write_run(&dir, 5);
    let old = fs::read(&path).unwrap();

    let mut writer = ReportWriter::create(&dir, &header()).unwrap();
    writer.push(&row(0)).unwrap();
    assert_eq!(fs::read(&path).unwrap(), old);
    drop(writer);
    assert_eq!(fs::read(&path).unwrap(), old);
    assert_eq!(entries(&dir), vec![REPORT_JSON]);

    let (_, _, _, path) = write_run(&dir, 8);
    assert_ne!(fs::read(&path).unwrap(), old);
    assert_eq!(read_report(&path).unwrap().cases.len(), 8);
}

#[test]
fn rows_out_of_case_order_are_rejected() {
    let dir = scratch_dir("order");
    let mut writer = ReportWriter::create(&dir, &header()).unwrap();
    writer.push(&row(3)).unwrap();
    let err = writer.push(&row(3)).unwrap_err();
    assert!(
        matches!(
            err,
            ReportError::CaseOrder {
                previous: 3,
                case: 3,
                ..
            }
        ),
        "{err}"
    );
    let err = writer.push(&row(2)).unwrap_err();
    assert!(err.to_string().contains(REPORT_JSON), "{err}");
    writer.push(&row(9)).unwrap();
    assert_eq!(writer.rows_written(), 2);
    drop(writer);
    assert!(entries(&dir).is_empty());
}

#[test]
fn summary_disagreeing_with_rows_is_rejected_and_nothing_appears() {
    let dir = scratch_dir("mismatch");
    let mut writer = ReportWriter::create(&dir, &header()).unwrap();
    writer.push(&row(0)).unwrap();
    let err = writer.finish(&Summary::default()).unwrap_err();
    assert!(
        matches!(
            err,
            ReportError::CaseCountMismatch {
                rows_written: 1,
                totals_cases: 0,
                ..
            }
        ),
        "{err}"
    );
    assert!(entries(&dir).is_empty());
}

#[test]
fn writer_streams_rows_to_disk_before_finish() {
    let dir = scratch_dir("streams");
    let mut writer = ReportWriter::create(&dir, &header()).unwrap();
    for row in rows(2_000) {
        writer.push(&row).unwrap();
    }
    let temp = dir.join(&entries(&dir)[0]);
    let on_disk = fs::metadata(temp).unwrap().len();
    // Each row is ~150 bytes; only the buffer's tail may still be in memory.
    assert!(on_disk > 200_000, "only {on_disk} bytes on disk");
}

#[test]
fn reader_rejects_another_schema_version() {
    let dir = scratch_dir("version");
    let (_, _, _, path) = write_run(&dir, 3);
    let text = fs::read_to_string(&path).unwrap();
    let future = text.replacen("{\"schema_version\":2,", "{\"schema_version\":3,", 1);
    assert_ne!(future, text);
    fs::write(&path, future).unwrap();
    let err = read_report(&path).unwrap_err();
    assert!(
        matches!(
            err,
            ReportError::SchemaVersion {
                found: 3,
                supported: 2,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn report_json_snapshot() {
    let dir = scratch_dir("snapshot");
    let (_, _, _, path) = write_run(&dir, 12);
    insta::assert_snapshot!(fs::read_to_string(path).unwrap());
}
