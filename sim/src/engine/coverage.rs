//! Coverage counters ("sometimes" assertions): how often each fault path and outcome
//! was reached, so a suite that never exercises a path shows it as 0.

use std::collections::BTreeMap;

/// Every counter a case can bump, so the report lists unreached ones as 0.
pub const COUNTERS: &[&str] = &[
    "micro.absorbed",
    "micro.cadence",
    "micro.defrag",
    "micro.defrag_failed",
    "micro.exchange_skipped",
    "micro.no_exchange",
    "micro.summarize_failed",
    "repair.merged_rows",
    "restart",
];

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage(BTreeMap<&'static str, u64>);

impl Coverage {
    pub fn bump(&mut self, counter: &'static str) {
        self.add(counter, 1);
    }

    pub fn add(&mut self, counter: &'static str, n: u64) {
        debug_assert!(
            COUNTERS.contains(&counter),
            "uncatalogued counter {counter}"
        );
        *self.0.entry(counter).or_default() += n;
    }

    pub fn get(&self, counter: &str) -> u64 {
        self.0.get(counter).copied().unwrap_or(0)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.0.iter().map(|(k, v)| (*k, *v))
    }
}
