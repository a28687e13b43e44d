//! Streaming aggregation of case results into a [`Summary`].

use crate::schema::{CaseRow, Failure, FamilyRow, InvariantRow, Outcome, Summary, Totals};
use std::collections::BTreeMap;

/// At most this many failures are kept in a summary (those of the lowest case ids);
/// the rest are only counted (`Summary::failures_omitted`, `Totals`).
pub const FAILURES_KEPT_MAX: usize = 100;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct InvariantCounts {
    checked: u64,
    violated: u64,
    fired: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct FamilyCounts {
    cases: u64,
    failed: u64,
    liveness: u64,
    turns: u64,
    passes: u64,
}

/// Accumulates a [`Summary`] from case results.
///
/// Contract: memory is bounded by the number of distinct invariant ids, family names and
/// counter names plus [`FAILURES_KEPT_MAX`] failures, never by the number of cases. The
/// result does not depend on the order cases are added in, nor on how the cases are
/// split between aggregators joined with [`Aggregator::merge`], so parallel and sharded
/// runs summarize identically.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Aggregator {
    totals: Totals,
    invariants: BTreeMap<String, InvariantCounts>,
    families: BTreeMap<String, FamilyCounts>,
    coverage: BTreeMap<String, u64>,
    failures: Vec<Failure>,
    failures_omitted: u64,
}

impl Aggregator {
    pub fn new() -> Aggregator {
        Aggregator::default()
    }

    /// Lists these invariants in the summary even if no case reports them.
    pub fn with_invariants<S: AsRef<str>>(mut self, ids: impl IntoIterator<Item = S>) -> Self {
        for id in ids {
            slot(&mut self.invariants, id.as_ref());
        }
        self
    }

    /// Lists these families in the summary even if no case is drawn from them.
    pub fn with_families<S: AsRef<str>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        for name in names {
            slot(&mut self.families, name.as_ref());
        }
        self
    }

    /// Lists these coverage counters even if never reached, so a path the run never
    /// exercised shows as 0 instead of being absent.
    pub fn with_coverage<S: AsRef<str>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        for name in names {
            slot(&mut self.coverage, name.as_ref());
        }
        self
    }

    /// Adds one finished case: its row, the number of transitions it ran, how many
    /// transitions each invariant checked, and how often each coverage counter fired.
    /// A `Violation` outcome counts as one violation of its invariant; every verdict of
    /// the row counts once in its invariant's `fired`.
    pub fn add_case<'a>(
        &mut self,
        row: &CaseRow,
        transitions: u64,
        checks: impl IntoIterator<Item = (&'a str, u64)>,
        coverage: impl IntoIterator<Item = (&'a str, u64)>,
    ) {
        let turns = u64::from(row.turns);
        let passes = u64::from(row.passes);
        self.totals.cases += 1;
        self.totals.turns += turns;
        self.totals.passes += passes;
        self.totals.transitions += transitions;

        let family = slot(&mut self.families, &row.family);
        family.cases += 1;
        family.turns += turns;
        family.passes += passes;
        match &row.outcome {
            Outcome::Clean => {}
            Outcome::Violation { invariant, .. } => {
                self.totals.cases_failed += 1;
                family.failed += 1;
                slot(&mut self.invariants, invariant).violated += 1;
            }
            Outcome::Internal { .. } => self.totals.cases_internal += 1,
            Outcome::Liveness { .. } => {
                self.totals.cases_liveness += 1;
                family.liveness += 1;
            }
        }
        for v in &row.verdicts {
            slot(&mut self.invariants, &v.invariant).fired += 1;
        }
        for (id, checked) in checks {
            slot(&mut self.invariants, id).checked += checked;
        }
        for (name, hits) in coverage {
            *slot(&mut self.coverage, name) += hits;
        }
    }

    /// Offers a failure for the summary. Kept if it is among the [`FAILURES_KEPT_MAX`]
    /// lowest case ids seen so far (failures of one case keep their arrival order);
    /// otherwise only counted in `failures_omitted`.
    pub fn add_failure(&mut self, failure: Failure) {
        let at = self.failures.partition_point(|f| f.case <= failure.case);
        if at >= FAILURES_KEPT_MAX {
            self.failures_omitted += 1;
            return;
        }
        self.failures.insert(at, failure);
        if self.failures.len() > FAILURES_KEPT_MAX {
            self.failures.pop();
            self.failures_omitted += 1;
        }
    }

    /// Joins the counts of `other` (e.g. another thread's or shard's cases) into `self`.
    pub fn merge(&mut self, other: Aggregator) {
        let t = &mut self.totals;
        t.cases += other.totals.cases;
        t.cases_failed += other.totals.cases_failed;
        t.cases_liveness += other.totals.cases_liveness;
        t.cases_internal += other.totals.cases_internal;
        t.turns += other.totals.turns;
        t.passes += other.totals.passes;
        t.transitions += other.totals.transitions;
        for (id, c) in other.invariants {
            let mine = slot(&mut self.invariants, &id);
            mine.checked += c.checked;
            mine.violated += c.violated;
            mine.fired += c.fired;
        }
        for (name, c) in other.families {
            let mine = slot(&mut self.families, &name);
            mine.cases += c.cases;
            mine.failed += c.failed;
            mine.liveness += c.liveness;
            mine.turns += c.turns;
            mine.passes += c.passes;
        }
        for (name, hits) in other.coverage {
            *slot(&mut self.coverage, &name) += hits;
        }
        self.failures_omitted += other.failures_omitted;
        for failure in other.failures {
            self.add_failure(failure);
        }
    }

    /// The summary of everything added so far.
    /// The aggregator a finished summary came from (for joining shard summaries with
    /// [`Aggregator::merge`]).
    pub fn from_summary(summary: Summary) -> Aggregator {
        Aggregator {
            totals: summary.totals,
            invariants: summary
                .invariants
                .into_iter()
                .map(|r| {
                    let counts = InvariantCounts {
                        checked: r.checked,
                        violated: r.violated,
                        fired: r.fired,
                    };
                    (r.id, counts)
                })
                .collect(),
            families: summary
                .families
                .into_iter()
                .map(|r| {
                    let counts = FamilyCounts {
                        cases: r.cases,
                        failed: r.failed,
                        liveness: r.liveness,
                        turns: r.turns,
                        passes: r.passes,
                    };
                    (r.family, counts)
                })
                .collect(),
            coverage: summary.coverage,
            failures: summary.failures,
            failures_omitted: summary.failures_omitted,
        }
    }

    pub fn summary(&self) -> Summary {
        self.clone().into_summary()
    }

    pub fn into_summary(self) -> Summary {
        Summary {
            totals: self.totals,
            invariants: self
                .invariants
                .into_iter()
                .map(|(id, c)| InvariantRow {
                    id,
                    checked: c.checked,
                    violated: c.violated,
                    fired: c.fired,
                })
                .collect(),
            families: self
                .families
                .into_iter()
                .map(|(family, c)| FamilyRow {
                    family,
                    cases: c.cases,
                    failed: c.failed,
                    liveness: c.liveness,
                    turns: c.turns,
                    passes: c.passes,
                })
                .collect(),
            coverage: self.coverage,
            failures: self.failures,
            failures_omitted: self.failures_omitted,
        }
    }
}

/// The value under `key`, inserted as default if absent; allocates only on insertion.
fn slot<'m, V: Default>(map: &'m mut BTreeMap<String, V>, key: &str) -> &'m mut V {
    if !map.contains_key(key) {
        map.insert(key.to_owned(), V::default());
    }
    map.get_mut(key).expect("inserted above")
}
