//! Streaming, atomic writer of `report.json`, and its reader.
//!
//! Layout (one case per line, so two reports diff line by line):
//! ```text
//! {"schema_version":1,
//! "header":{...},
//! "cases":[
//! {"case":0,...},
//! {"case":1,...}
//! ],
//! "summary":{
//!   ...pretty-printed...
//! }
//! }
//! ```

use crate::atomic::PendingFile;
use crate::error::ReportError;
use crate::schema::{CaseRow, Header, Report, Summary, SCHEMA_VERSION};
use serde::Deserialize;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// File name of the JSON report inside a run directory.
pub const REPORT_JSON: &str = "report.json";

/// Writes `report.json` one case row at a time, in memory independent of the number of
/// cases.
///
/// Contract: rows must be pushed in strictly increasing case-id order; the file appears
/// under its final name only when [`ReportWriter::finish`] succeeds. A writer dropped
/// before that (or after any error) removes its temporary file and leaves the directory
/// as it was. Identical inputs give byte-identical files.
pub struct ReportWriter {
    file: PendingFile,
    last_case: Option<u32>,
    rows_written: u64,
}

impl ReportWriter {
    /// Starts `dir/report.json` (creating `dir`) and writes the header.
    pub fn create(dir: &Path, header: &Header) -> Result<ReportWriter, ReportError> {
        let file = PendingFile::create(&dir.join(REPORT_JSON))?;
        let mut writer = ReportWriter {
            file,
            last_case: None,
            rows_written: 0,
        };
        let path = writer.path().to_path_buf();
        let out = writer.file.writer();
        write!(out, "{{\"schema_version\":{SCHEMA_VERSION},\n\"header\":")
            .map_err(ReportError::io(&path))?;
        serde_json::to_writer(&mut *out, header).map_err(ReportError::json(&path))?;
        out.write_all(b",\n\"cases\":[")
            .map_err(ReportError::io(&path))?;
        Ok(writer)
    }

    /// The final path of the report (which does not exist before `finish`).
    pub fn path(&self) -> &Path {
        self.file.final_path()
    }

    /// Case rows written so far.
    pub fn rows_written(&self) -> u64 {
        self.rows_written
    }

    /// Appends one case row. Fails if `row.case` is not greater than the previous one.
    pub fn push(&mut self, row: &CaseRow) -> Result<(), ReportError> {
        if let Some(previous) = self.last_case {
            if row.case <= previous {
                return Err(ReportError::CaseOrder {
                    path: self.path().to_path_buf(),
                    previous,
                    case: row.case,
                });
            }
        }
        let path = self.path().to_path_buf();
        let out = self.file.writer();
        let separator: &[u8] = if self.last_case.is_some() {
            b",\n"
        } else {
            b"\n"
        };
        out.write_all(separator).map_err(ReportError::io(&path))?;
        serde_json::to_writer(&mut *out, row).map_err(ReportError::json(&path))?;
        self.last_case = Some(row.case);
        self.rows_written += 1;
        Ok(())
    }

    /// Writes the summary, syncs and renames the file onto `report.json`; returns its
    /// path. Fails (writing nothing) if `summary.totals.cases` differs from the number of
    /// rows pushed.
    pub fn finish(mut self, summary: &Summary) -> Result<PathBuf, ReportError> {
        let path = self.path().to_path_buf();
        if summary.totals.cases != self.rows_written {
            return Err(ReportError::CaseCountMismatch {
                path,
                rows_written: self.rows_written,
                totals_cases: summary.totals.cases,
            });
        }
        let out = self.file.writer();
        out.write_all(b"\n],\n\"summary\":")
            .map_err(ReportError::io(&path))?;
        serde_json::to_writer_pretty(&mut *out, summary).map_err(ReportError::json(&path))?;
        out.write_all(b"\n}\n").map_err(ReportError::io(&path))?;
        self.file.commit()?;
        Ok(path)
    }
}

#[derive(Deserialize)]
struct Versioned {
    schema_version: u32,
}

/// Reads a whole `report.json` back into memory (tests, `compactsim merge`). Fails with
/// [`ReportError::SchemaVersion`] on a version this build does not write.
pub fn read_report(path: &Path) -> Result<Report, ReportError> {
    let bytes = fs::read(path).map_err(ReportError::io(path))?;
    let versioned: Versioned = serde_json::from_slice(&bytes).map_err(ReportError::json(path))?;
    if versioned.schema_version != SCHEMA_VERSION {
        return Err(ReportError::SchemaVersion {
            path: path.to_path_buf(),
            found: versioned.schema_version,
            supported: SCHEMA_VERSION,
        });
    }
    serde_json::from_slice(&bytes).map_err(ReportError::json(path))
}
