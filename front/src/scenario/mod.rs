//! Scenario files: a case (strategy, bug switches, a shape or a fixed script, a fault
//! plan, seed, passes) and the outcome it must have. `compactsim scenario` runs them as a
//! regression gate; `compactsim shrink` writes them. The format is documented in
//! `scenarios/README.md`.
//!
//! Loading checks everything before anything runs: TOML syntax, unknown keys, and every
//! id (invariant, bug, family, strategy, era, anti-thrash policy, coverage counter,
//! built-in script, summarizer outcome) against its catalogue; each error names the file, line and column of the offending value.

mod convert;
mod counters;
mod discover;
mod doc;
mod error;
mod expect;
mod gateway;
pub(crate) mod input;
pub mod limits;
mod requires;
pub use requires::{missing_venv, venv_missing_reason, PINNED_VENVS};
mod toplevel;
mod verbatim;
mod write;

pub use convert::{facts_default, ARGS_CHARS_DEFAULT, REPEAT_MAX};
pub use counters::{Cmp, CounterExpect};
pub use discover::discover;
pub use error::{line_column, ScenarioError};
pub use expect::{class_of, describe, Expect, OutcomeClass};
pub use requires::{invariant_policy, Needed};
pub use toplevel::{checked_ids, switch_acts_under};
pub use write::{render, Header};

use compactsim_harness::compactor::{CompactorSpec, Pools};
use compactsim_harness::engine::{CaseResult, CaseSpec};
pub use convert::has_unmergeable_assistants;
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
    /// `expect_counters`: every one must hold too (in the file's key order, sorted).
    pub counters: Vec<CounterExpect>,
    /// `requires`: what the compactor under test must declare besides what the strategy
    /// and the named invariants imply (see [`Scenario::needs`]).
    pub requires: Vec<compactsim_harness::external::needs::Need>,
}

impl Scenario {
    /// Whether `result` meets the expectation and every counter expectation.
    pub fn holds(&self, result: &CaseResult) -> bool {
        self.expect.holds(result) && self.counters.iter().all(|c| c.holds(&result.coverage))
    }

    /// The expectation as reports show it: `expect`, then the counter expectations.
    pub fn expectation(&self) -> String {
        if self.counters.is_empty() {
            return self.expect.to_string();
        }
        let counters: Vec<String> = self.counters.iter().map(|c| c.to_string()).collect();
        format!("{}; {}", self.expect, counters.join(", "))
    }

    /// The counter expectations `result` misses, each as `counter = actual (expected ..)`.
    pub fn counters_missed(&self, result: &CaseResult) -> Vec<String> {
        self.counters
            .iter()
            .filter(|c| !c.holds(&result.coverage))
            .map(|c| c.describe_miss(&result.coverage))
            .collect()
    }
}

impl Scenario {
    /// This scenario under the command line's compactor `chosen` (see
    /// [`CompactorSpec::or_declared`]: an explicit choice wins over the file's
    /// `[compactor]`); a declared adapter's pool is shared through `pools`.
    pub fn under(mut self, chosen: &CompactorSpec, pools: &Pools) -> Scenario {
        let declared = self.spec.plan.as_ref().and_then(|p| p.compactor.as_ref());
        self.spec.compactor = chosen.or_declared(declared, pools);
        self
    }
}

/// Reads and validates the scenario file at `path`.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let source = input::read_text(path).map_err(|e| ScenarioError::file(path, e))?;
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
