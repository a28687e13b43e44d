//! Scenario files: a case (strategy, bug switches, a shape or a fixed script, a fault
//! plan, seed, passes) and the outcome it must have. `compactsim scenario` runs them as a
//! regression gate; `compactsim shrink` writes them. The format is documented in
//! `scenarios/README.md`.
//!
//! Loading checks everything before anything runs: TOML syntax, unknown keys, and every
//! id (invariant, bug, family, strategy, built-in script, summarizer outcome) against
//! its catalogue; each error names the file, line and column of the offending value.

mod convert;
mod discover;
mod doc;
mod error;
mod expect;
mod write;

pub use convert::{facts_default, ARGS_CHARS_DEFAULT, REPEAT_MAX};
pub use discover::discover;
pub use error::{line_column, ScenarioError};
pub use expect::{class_of, describe, Expect, OutcomeClass};
pub use write::{render, Header};

use crate::engine::CaseSpec;
use std::path::{Path, PathBuf};

/// The version of the file format this build reads and writes (`format = 1`).
pub const FORMAT_VERSION: u32 = 1;

/// A loaded, validated scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    pub path: PathBuf,
    /// `name` from the file, else the file stem.
    pub name: String,
    pub description: Option<String>,
    pub spec: CaseSpec,
    pub expect: Expect,
}

/// Reads and validates the scenario file at `path`.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let source = std::fs::read_to_string(path)
        .map_err(|e| ScenarioError::file(path, format!("cannot read: {e}")))?;
    parse(path, &source)
}

/// Validates `source` as the scenario file `path`.
pub fn parse(path: &Path, source: &str) -> Result<Scenario, ScenarioError> {
    let doc: doc::Doc = toml::from_str(source)
        .map_err(|e| ScenarioError::at(path, source, e.span(), e.message().trim_end()))?;
    convert::convert(doc, path)
        .map_err(|(span, message)| ScenarioError::at(path, source, span, message))
}

#[cfg(test)]
mod tests;
