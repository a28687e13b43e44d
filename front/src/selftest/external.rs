//! The self-test of the compactor under test when it is not the reference (`selftest
//! --compactor external`): bug switches do not apply to foreign code, so the table has
//! two parts.
//! - Clean rows: the compactor over every case of every seed, under each strategy its
//!   capabilities allow, tallied like a sweep. A clean row passes with no failing case.
//! - Mutant rows: each mutant of [`compactsim_harness::mutants`] whose pass the compactor implements,
//!   wrapped around it under the mutant's own strategy. Both runs of a case are judged
//!   past their first violation ([`Verdicts::All`]): a case is caught when one of the
//!   mutant's expected invariants fires anywhere in the mutated run and nowhere in the
//!   unmutated run of the same case (so a compactor's own bug is never credited to the
//!   mutant, and a compactor that fails early, at its first compaction, still shows a
//!   fault the mutant makes later in the case).
//!   A row passes when its rate is at least the switch rows' minimum on every seed: proof
//!   that the oracle can see that fault in *this* compactor's output.
//!
//! The functions run the suite's compactor (`ExternalSuite::compactor`), so the
//! reference and in-process compactors prove them in the tests.

use compactsim_harness::compactor::CompactorSpec;
use compactsim_harness::engine::{run_case, run_case_with, CaseResult, CaseSpec, Record, Verdicts};
use compactsim_harness::external::needs::serves;
use compactsim_harness::external::wire::Capabilities;
use compactsim_harness::mutants::{MutantInfo, MUTANTS};
use compactsim_harness::sweep::{par_cases, tally_seeds_by, CaseTallied, SeedRange, Tally};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::strategy::{Strategy, StrategyKind};
use compactsim_model::Violation;

/// Root seeds by default for an external compactor (a child process runs 6–200 passes/s,
/// the reference in-process tens of thousands).
pub const EXTERNAL_SEEDS_DEFAULT: u64 = 2;
/// Cases per seed by default for an external compactor.
pub const EXTERNAL_CASES_DEFAULT: u32 = 24;

/// The passes a compactor implements (its `hello` capabilities).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Passes {
    pub micro: bool,
    pub batch: bool,
}

impl Passes {
    /// The strategies a compactor with these passes runs: micro, batch, and both when it
    /// has both (the rule of `compactsim_harness::external::needs`).
    pub fn strategies(self) -> Vec<Strategy> {
        let caps = Capabilities {
            micro_pass: self.micro,
            batch_pass: self.batch,
            ..Capabilities::default()
        };
        [StrategyKind::Micro, StrategyKind::Batch, StrategyKind::Both]
            .into_iter()
            .filter(|k| serves(&caps, *k))
            .map(Strategy::of_kind)
            .collect()
    }
}

/// The suite of an external self-test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalSuite {
    pub seeds: SeedRange,
    pub cases: u32,
    pub passes: u32,
    /// The compactor under test every row runs (the mutants wrap it).
    pub compactor: CompactorSpec,
}

impl ExternalSuite {
    /// Case `case` of seed `seed` under `strategy`: the drawn case, no switch, the full
    /// oracle.
    pub fn spec(&self, strategy: Strategy, seed: u64, case: u32) -> CaseSpec {
        CaseSpec {
            root_seed: seed,
            case,
            passes: self.passes,
            strategy,
            bugs: BugSet::none(),
            plan: None,
            profile: None,
            compactor: self.compactor.clone(),
        }
    }
}

/// The unmutated runs of one strategy: per seed tallies, and the invariants each case
/// fired (in (seed, case) order) for the mutant rows' credit rule.
#[derive(Clone, Debug)]
pub struct CleanRow {
    pub strategy: Strategy,
    pub per_seed: Vec<Tally>,
    /// Every invariant each case fired, judged past its first violation (empty: clean).
    broken: Vec<Vec<String>>,
}

impl CleanRow {
    /// Cases that did not end clean, over every seed.
    pub fn failing(&self) -> u32 {
        self.per_seed.iter().map(Tally::failing).sum()
    }

    /// Cases whose adapter (or the harness) failed, over every seed.
    pub fn internal(&self) -> u32 {
        self.per_seed.iter().map(|t| t.internal).sum()
    }

    fn broken(&self, suite: &ExternalSuite, seed: u64, case: u32) -> &[String] {
        let i = (seed - suite.seeds.first) * suite.cases as u64 + case as u64;
        self.broken.get(i as usize).map_or(&[], Vec::as_slice)
    }
}

/// One mutant under one strategy over every seed.
#[derive(Clone, Debug)]
pub struct MutantRow {
    pub info: &'static MutantInfo,
    pub strategy: Strategy,
    /// `credited`: caught by an expected invariant the unmutated run did not break.
    pub per_seed: Vec<Tally>,
}

impl MutantRow {
    /// The lowest catch rate over the seeds, per mille of the cases.
    pub fn min_per_mille(&self) -> u64 {
        super::min_per_mille(&self.per_seed)
    }

    /// Every seed at or above the minimum rate.
    pub fn deep_enough(&self) -> bool {
        super::deep_enough(&self.per_seed)
    }
}

fn names(violations: &[Violation]) -> Vec<String> {
    violations.iter().map(|v| v.invariant.clone()).collect()
}

/// How both runs of a case are judged: past the first violation, every invariant that
/// fires recorded (the outcome, and so the tally, is that of the first violation).
const JUDGED: Record = Record {
    trace: false,
    verdicts: Verdicts::All,
};

fn tallied(r: CaseResult, credited: bool) -> CaseTallied {
    CaseTallied {
        passes: r.passes,
        outcome: r.outcome,
        credited,
    }
}

/// The compactor under test over every case of `suite` under `strategy`.
pub fn clean_row(
    suite: &ExternalSuite,
    strategy: Strategy,
    jobs: usize,
) -> Result<CleanRow, String> {
    clean_row_judged(suite, strategy, jobs, JUDGED)
}

/// [`clean_row`] with its cases judged as `judged` says.
fn clean_row_judged(
    suite: &ExternalSuite,
    strategy: Strategy,
    jobs: usize,
    judged: Record,
) -> Result<CleanRow, String> {
    let results = par_cases(suite.seeds, suite.cases, jobs, |seed, case| {
        run_case(&suite.spec(strategy, seed, case), judged)
    })?;
    let broken = results.iter().map(|r| names(&r.verdicts)).collect();
    let per_seed = tally_seeds_by(suite.seeds, suite.cases, 1, |seed, case| {
        let i = (seed - suite.seeds.first) * suite.cases as u64 + case as u64;
        tallied(results[i as usize].clone(), false)
    })?;
    Ok(CleanRow {
        strategy,
        per_seed,
        broken,
    })
}

/// `info`'s mutant around the compactor under test over every case of `suite` under
/// `clean.strategy`; `clean` is the unmutated row of that strategy.
pub fn mutant_row(
    suite: &ExternalSuite,
    info: &'static MutantInfo,
    clean: &CleanRow,
    jobs: usize,
) -> Result<MutantRow, String> {
    mutant_row_judged(suite, info, clean, jobs, JUDGED)
}

/// [`mutant_row`] with its cases judged as `judged` says (`clean` judged the same way).
fn mutant_row_judged(
    suite: &ExternalSuite,
    info: &'static MutantInfo,
    clean: &CleanRow,
    jobs: usize,
    judged: Record,
) -> Result<MutantRow, String> {
    let strategy = clean.strategy;
    let make = |r| info.mutant.wrap(suite.compactor.make(r));
    let per_seed = tally_seeds_by(suite.seeds, suite.cases, jobs, |seed, case| {
        let r = run_case_with(&suite.spec(strategy, seed, case), judged, &make);
        let already = clean.broken(suite, seed, case);
        let credited = r.verdicts.iter().any(|v| {
            info.expected.contains(&v.invariant.as_str()) && !already.contains(&v.invariant)
        });
        tallied(r, credited)
    })?;
    Ok(MutantRow {
        info,
        strategy,
        per_seed,
    })
}

/// The mutants a compactor with `passes` can be measured with, in catalogue order.
pub fn mutants_for(passes: Passes) -> Vec<&'static MutantInfo> {
    MUTANTS
        .iter()
        .filter(|m| match m.strategy {
            StrategyKind::Micro => passes.micro,
            StrategyKind::Batch | StrategyKind::Gateway => passes.batch,
            StrategyKind::Both => passes.micro && passes.batch,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: Passes = Passes {
        micro: true,
        batch: true,
    };

    fn suite(cases: u32) -> ExternalSuite {
        ExternalSuite {
            seeds: SeedRange::of_count(1, 1),
            cases,
            passes: 25,
            compactor: CompactorSpec::Reference,
        }
    }

    #[test]
    fn capabilities_choose_the_strategies_and_the_mutants() {
        let names = |p: Passes| -> Vec<&str> { p.strategies().iter().map(|s| s.name()).collect() };
        assert_eq!(names(BOTH), ["micro", "batch", "both"]);
        let micro = Passes {
            micro: true,
            batch: false,
        };
        assert_eq!(names(micro), ["micro"]);
        assert!(mutants_for(micro)
            .iter()
            .all(|m| m.strategy == StrategyKind::Micro));
        assert_eq!(mutants_for(BOTH).len(), MUTANTS.len());
    }

    #[test]
    fn the_reference_runs_clean_and_its_mutants_are_caught() {
        let s = suite(24);
        let micro = clean_row(&s, Strategy::parse("micro").unwrap(), 2).unwrap();
        assert_eq!((micro.failing(), micro.per_seed[0].cases), (0, 24));
        assert!(micro.per_seed[0].passes > 0);
        let info = compactsim_harness::mutants::Mutant::StripsMarkerFlag.info();
        let row = mutant_row(&s, info, &micro, 2).unwrap();
        assert!(row.deep_enough() && row.min_per_mille() > 0, "{row:?}");
        let one_job = mutant_row(&s, info, &micro, 1).unwrap();
        assert_eq!(
            one_job.per_seed, row.per_seed,
            "the job count changes nothing"
        );
    }

    #[test]
    fn a_mutant_is_credited_past_the_first_violation_of_a_compactor_that_fails_early() {
        // The compactor under test drops a row at every compaction (no-silent-drop at its
        // first one); the mutant empties the window of its no-op passes
        // (summary-failure-safe), often only after that first compaction.
        use compactsim_harness::mutants::Mutant;
        let failing = Mutant::BatchDropsUnsummarizedRow.info();
        let s = ExternalSuite {
            compactor: CompactorSpec::in_process("drops", move |r| {
                failing.mutant.wrap(Box::new(r))
            }),
            ..suite(12)
        };
        let batch = Strategy::parse("batch").unwrap();
        let info = Mutant::UnchangedPassDropsWindow.info();
        let first = Record::default();
        let clean = clean_row_judged(&s, batch, 2, first).unwrap();
        assert!(clean.failing() > 0, "the compactor fails: {clean:?}");
        let by_first = mutant_row_judged(&s, info, &clean, 2, first).unwrap();
        let clean = clean_row(&s, batch, 2).unwrap();
        let by_all = mutant_row(&s, info, &clean, 2).unwrap();
        let credited = |r: &MutantRow| r.per_seed[0].credited;
        assert!(
            credited(&by_all) > credited(&by_first),
            "all {:?}, first {:?}",
            by_all.per_seed,
            by_first.per_seed
        );
    }

    #[test]
    fn an_invariant_the_unmutated_run_broke_is_not_credited_to_the_mutant() {
        let s = suite(8);
        let info = compactsim_harness::mutants::Mutant::StripsMarkerFlag.info();
        let mut micro = clean_row(&s, Strategy::parse("micro").unwrap(), 2).unwrap();
        let first = mutant_row(&s, info, &micro, 2).unwrap().per_seed[0].clone();
        assert!(first.credited > 0, "the mutant is caught in 8 cases");
        micro.broken = vec![vec!["marker-pristine".to_string()]; 8];
        let row = mutant_row(&s, info, &micro, 2).unwrap();
        assert_eq!(row.per_seed[0].credited, 0, "{row:?}");
        assert_eq!(
            row.per_seed[0].violations, first.violations,
            "failing, not credited"
        );
    }
}
