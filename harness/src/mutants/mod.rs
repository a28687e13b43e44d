//! Mutants: compactor-agnostic faults. Each wraps any compactor behind the seam (the
//! reference, or an external adapter) and rewrites the transcript a pass returned while
//! the pass's labels stay as the compactor reported them, so only what the harness
//! observes can catch it. `compactsim selftest --compactor external` measures, per
//! mutant, how often the oracle catches it around the adapter under test; the tests
//! prove each is caught around the reference (front/tests/integration/labels_untrusted.rs).

mod batch;
mod micro;
mod wrapper;

use compactsim_fakes::seam::{BatchReport, Compactor};
use compactsim_hermes::strategy::StrategyKind;
use compactsim_model::{Message, MicroPass};
pub use wrapper::{Hooks, Wrapped};

/// How a mutant misbehaves; its labels stay as the wrapped compactor reported them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutant {
    /// A batch pass that says aborted or no-op drops its window anyway.
    UnchangedPassDropsWindow,
    /// A micro pass deletes the marker it just wrote.
    DeletesFreshMarker,
    /// A micro pass that absorbed one exchange removes the next one too.
    AbsorbsTwoReportsOne,
    /// A micro pass rewrites an older user row by appending the marker's text to it.
    RewritesUserRow,
    /// A micro pass that found nothing to do drops the oldest exchange (no summary call).
    DropsWithoutSummaryCall,
    /// A micro pass whose exchange end is off by one: the user row after the exchange
    /// goes too (the resume cursor itself cannot be off by one observably: the row after
    /// a marker is a user or summary row, which the exchange search skips either way).
    ExchangeEndOffByOne,
    /// A micro pass whose exchange start is off by one: the first row of the exchange
    /// (the assistant row that made the calls) stays in front of the marker.
    ExchangeStartOffByOne,
    /// A batch pass that summarized its window also drops the first reply after it,
    /// which no summary call saw.
    BatchDropsUnsummarizedRow,
    /// A micro pass keeps the previous marker's text in the fresh marker (the summary
    /// served last is lost).
    StaleNewestMarker,
    /// A micro pass writes its marker without the micro-marker flag.
    StripsMarkerFlag,
    /// A micro pass that supersedes an older marker writes a fresh marker whose summary
    /// segment still lists every fact while its text is cut to a few words (it spells
    /// almost none of them).
    MarkerListsWhatItsTextDropped,
    /// A micro pass that absorbed one exchange also removes the next one (one that spells
    /// a fact) and spells its facts in the marker, though no summary call saw them.
    SwallowsUnsummarizedExchange,
    /// A batch pass that says aborted or no-op rewrites an old tool output (0.19.0's
    /// prune returned by an abort).
    UnchangedPassRewritesToolOutput,
}

/// A mutant, the loop it needs, and the invariants that must catch it.
#[derive(Clone, Copy, Debug)]
pub struct MutantInfo {
    pub mutant: Mutant,
    /// Short id for tables and names.
    pub id: &'static str,
    /// `Micro` or `Batch`: the pass it rewrites.
    pub strategy: StrategyKind,
    /// Every one is among the invariants broken on the transition that first catches
    /// it around the reference (the tests); a selftest row credits a case when any is.
    pub expected: &'static [&'static str],
}

const fn info(
    mutant: Mutant,
    id: &'static str,
    strategy: StrategyKind,
    expected: &'static [&'static str],
) -> MutantInfo {
    MutantInfo {
        mutant,
        id,
        strategy,
        expected,
    }
}

/// Every mutant, in a fixed order.
pub const MUTANTS: &[MutantInfo] = &[
    info(
        Mutant::UnchangedPassDropsWindow,
        "M-abort-drops",
        StrategyKind::Batch,
        &["summary-failure-safe"],
    ),
    info(
        Mutant::DeletesFreshMarker,
        "M-no-marker",
        StrategyKind::Micro,
        &["api-valid", "no-silent-drop"],
    ),
    info(
        Mutant::AbsorbsTwoReportsOne,
        "M-absorb-two",
        StrategyKind::Micro,
        &["exchange-absorbed-once"],
    ),
    info(
        Mutant::RewritesUserRow,
        "M-user-edit",
        StrategyKind::Micro,
        &["user-turns-intact"],
    ),
    info(
        Mutant::DropsWithoutSummaryCall,
        "M-silent-drop",
        StrategyKind::Micro,
        &["no-silent-drop"],
    ),
    info(
        Mutant::ExchangeEndOffByOne,
        "M-end-plus-1",
        StrategyKind::Micro,
        &["user-turns-intact"],
    ),
    info(
        Mutant::ExchangeStartOffByOne,
        "M-start-plus-1",
        StrategyKind::Micro,
        &["count-non-growing"],
    ),
    info(
        Mutant::BatchDropsUnsummarizedRow,
        "M-batch-drop",
        StrategyKind::Batch,
        &["no-silent-drop"],
    ),
    info(
        Mutant::StaleNewestMarker,
        "M-stale-marker",
        StrategyKind::Micro,
        &["marker-pristine"],
    ),
    info(
        Mutant::StripsMarkerFlag,
        "M-no-flag",
        StrategyKind::Micro,
        &["marker-pristine"],
    ),
    info(
        Mutant::MarkerListsWhatItsTextDropped,
        "M-lying-marker",
        StrategyKind::Micro,
        &["marker-contained", "no-silent-drop"],
    ),
    info(
        Mutant::SwallowsUnsummarizedExchange,
        "M-swallow",
        StrategyKind::Micro,
        &["no-silent-drop"],
    ),
    info(
        Mutant::UnchangedPassRewritesToolOutput,
        "M-abort-prunes",
        StrategyKind::Batch,
        &["summary-failure-safe"],
    ),
];

impl Mutant {
    /// Its catalogue entry.
    pub fn info(self) -> &'static MutantInfo {
        MUTANTS
            .iter()
            .find(|i| i.mutant == self)
            .expect("every mutant is catalogued")
    }

    /// `inner` with this mutant around its passes.
    pub fn wrap(self, inner: Box<dyn Compactor>) -> Box<dyn Compactor> {
        let name = format!("mutant:{}({})", self.info().id, inner.name());
        Box::new(Wrapped {
            inner,
            hooks: self,
            name,
        })
    }
}

impl Hooks for Mutant {
    fn after_micro(&mut self, old: &[Message], msgs: &mut Vec<Message>, pass: &MicroPass) {
        micro::apply(*self, old, msgs, pass);
    }

    fn after_batch(&mut self, _before: &[Message], msgs: &mut Vec<Message>, report: &BatchReport) {
        batch::apply(*self, msgs, report);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mutant_is_catalogued_once_with_a_known_strategy_and_invariants() {
        for (i, m) in MUTANTS.iter().enumerate() {
            assert!(
                matches!(m.strategy, StrategyKind::Micro | StrategyKind::Batch),
                "{}",
                m.id
            );
            assert!(!m.expected.is_empty(), "{}", m.id);
            assert!(!MUTANTS[..i]
                .iter()
                .any(|o| o.mutant == m.mutant || o.id == m.id));
            assert_eq!(m.mutant.info().id, m.id);
        }
    }
}
