//! The clean run shared across the self-test's rows.
//!
//! A switched case runs exactly like the clean case until one of its switches is first
//! asked about ([`BugSet::has`] is the only way a switch changes a run). So when the
//! clean run of a case never asked about any switch of a row and ended clean, the row's
//! run of that case is the clean run, hence clean: the row stands it in instead of
//! running it. Each (strategy, seed, case) runs clean once, recording the switches it
//! asked about; a row then runs only the cases that asked about one of its switches (or
//! did not end clean). The tallies are exactly those of running every case.

use super::{credits, spec};
use compactsim_harness::engine::{run_case, CaseOutcome, CaseSpec, Record};
use compactsim_harness::sweep::{par_cases, tally_seeds_by, CaseTallied, SeedRange, Tally};
use compactsim_hermes::bug_set::{BugMask, BugSet, FirstAsked};
use compactsim_hermes::bugs::BugInfo;
use compactsim_hermes::strategy::Strategy;

/// What the clean run of one case leaves for the rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CleanCase {
    pub passes: u32,
    pub clean: bool,
    /// The switches the run asked about.
    pub consulted: BugMask,
    /// The turn each was first asked about in.
    pub first_asked: FirstAsked,
}

/// The clean runs of every case of every seed under some strategies.
#[derive(Clone, Debug, Default)]
pub struct CleanRuns {
    seeds: Option<SeedRange>,
    cases: u32,
    /// Per strategy, in (seed, case) order.
    per_strategy: Vec<(Strategy, Vec<CleanCase>)>,
}

impl CleanRuns {
    /// Runs every case of `seeds` clean under each of `strategies` (one parallel pass
    /// over all of them), recording what each asked about.
    pub fn run(
        strategies: &[Strategy],
        seeds: SeedRange,
        cases: u32,
        passes: u32,
        jobs: usize,
    ) -> Result<CleanRuns, String> {
        let per_strategy_cases = seeds.len() * cases as u64;
        // One pass over every strategy's seeds: seed index s * len + i is strategy s.
        let all = SeedRange::of_count(0, strategies.len() as u64 * seeds.len());
        let flat = par_cases(all, cases, jobs, |i, case| {
            let strategy = strategies[(i / seeds.len()) as usize];
            let spec = CaseSpec {
                root_seed: seeds.first + i % seeds.len(),
                case,
                passes,
                strategy,
                bugs: BugSet::none().recording(),
                plan: None,
                profile: None,
                compactor: Default::default(),
            };
            let r = run_case(&spec, Record::default());
            CleanCase {
                passes: r.passes,
                clean: r.outcome == CaseOutcome::Clean,
                consulted: spec.bugs.consulted(),
                first_asked: spec.bugs.first_asked(),
            }
        })?;
        let per_strategy = strategies
            .iter()
            .zip(flat.chunks(per_strategy_cases.max(1) as usize))
            .map(|(s, runs)| (*s, runs.to_vec()))
            .collect();
        Ok(CleanRuns {
            seeds: Some(seeds),
            cases,
            per_strategy,
        })
    }

    /// The clean run of `case` of `seed` under `strategy`, if it was run.
    pub fn get(&self, strategy: Strategy, seed: u64, case: u32) -> Option<CleanCase> {
        let seeds = self.seeds?;
        if seed < seeds.first || seed > seeds.last || case >= self.cases {
            return None;
        }
        let (_, runs) = self.per_strategy.iter().find(|(s, _)| *s == strategy)?;
        let i = (seed - seeds.first) * self.cases as u64 + case as u64;
        runs.get(i as usize).copied()
    }
}

/// One row's tallies: every seed of `seeds`, each case run with the switches of `info`
/// unless its clean run in `clean` proves the result; also the cases actually run.
pub fn tally_row(
    info: &'static BugInfo,
    strategy: Strategy,
    seeds: SeedRange,
    cases: u32,
    passes: u32,
    jobs: usize,
    clean: &CleanRuns,
) -> Result<(Vec<Tally>, u64), String> {
    let switches = info.switches().mask();
    let stand_in = |seed: u64, case: u32| {
        clean
            .get(strategy, seed, case)
            .filter(|c| c.clean && !c.consulted.meets(switches))
    };
    let ran = seeds
        .iter()
        .flat_map(|seed| (0..cases).map(move |case| (seed, case)))
        .filter(|&(seed, case)| stand_in(seed, case).is_none())
        .count() as u64;
    let tallies = tally_seeds_by(seeds, cases, jobs, |seed, case| {
        if let Some(c) = stand_in(seed, case) {
            return CaseTallied {
                passes: c.passes,
                outcome: CaseOutcome::Clean,
                credited: false,
            };
        }
        let r = run_case(&spec(info, strategy, seed, passes, case), Record::default());
        let credited = credits(info, r.outcome.violations());
        CaseTallied {
            passes: r.passes,
            outcome: r.outcome,
            credited,
        }
    })?;
    Ok((tallies, ran))
}

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_hermes::bugs::Bug;

    fn case(passes: u32, clean: bool, consulted: BugMask) -> CleanCase {
        CleanCase {
            passes,
            clean,
            consulted,
            first_asked: BugSet::none().first_asked(),
        }
    }

    #[test]
    fn only_a_clean_run_that_never_asked_about_the_row_s_switches_stands_in() {
        let info = Bug::H40803.info();
        let strategy = Strategy::parse("batch").unwrap();
        let seeds = SeedRange::of_count(1, 1);
        let other = BugMask::of([Bug::H14694]);
        let clean = CleanRuns {
            seeds: Some(seeds),
            cases: 3,
            per_strategy: vec![(
                strategy,
                vec![
                    case(0, false, BugMask(0)),
                    case(0, true, BugMask::of([Bug::H40803])),
                    case(777, true, other),
                ],
            )],
        };
        let (tallies, ran) = tally_row(info, strategy, seeds, 3, 25, 1, &clean).unwrap();
        assert_eq!(
            ran, 2,
            "the failed clean run and the one that asked are run"
        );
        let real = compactsim_harness::sweep::tally_seed(
            2,
            1,
            |c| spec(info, strategy, 1, 25, c),
            |_| false,
        )
        .unwrap();
        assert_eq!(
            tallies[0].passes,
            real.passes + 777,
            "case 2 is its clean run"
        );
        assert_eq!(tallies[0].cases, 3);
        let none = CleanRuns::default();
        let (_, ran) = tally_row(info, strategy, seeds, 3, 25, 1, &none).unwrap();
        assert_eq!(ran, 3, "without clean runs every case runs");
        let other_strategy = Strategy::parse("both").unwrap();
        assert_eq!(clean.get(other_strategy, 1, 2), None);
        assert_eq!(clean.get(strategy, 2, 0), None);
        assert_eq!(clean.get(strategy, 1, 3), None);
    }

    /// Switches asked only where they decide (`bugs.has` behind the condition where the
    /// switched branch differs): some clean case never asks (the row stands its clean run
    /// in), and among the cases that ask, the switch changes some run (the ask was not
    /// moved past the place it decides).
    #[test]
    fn a_narrowed_switch_is_asked_where_it_decides_and_only_there() {
        let seeds = SeedRange::of_count(1, 1);
        let cases = 48;
        let narrowed = [
            ("batch", Bug::H35054),
            ("batch", Bug::H29559),
            ("batch", Bug::H57771),
            ("gateway", Bug::H25747),
            ("micro", Bug::HMResume),
        ];
        for (name, bug) in narrowed {
            let strategy = Strategy::parse(name).unwrap();
            let clean = CleanRuns::run(&[strategy], seeds, cases, 25, 2).unwrap();
            let info = bug.info();
            let asked: Vec<(u32, CleanCase)> = (0..cases)
                .map(|c| (c, clean.get(strategy, 1, c).unwrap()))
                .filter(|(_, c)| c.consulted.meets(BugMask::of([bug])))
                .collect();
            assert!(asked.len() < cases as usize, "{bug}: every case asked");
            let decided = asked.iter().any(|&(case, c)| {
                let r = run_case(&spec(info, strategy, 1, 25, case), Record::default());
                r.passes != c.passes || (r.outcome == CaseOutcome::Clean) != c.clean
            });
            assert!(
                decided,
                "{bug}: asked in {} cases, decided in none",
                asked.len()
            );
        }
    }

    #[test]
    fn a_clean_run_notes_the_switches_its_path_asks_about() {
        let seeds = SeedRange::of_count(1, 1);
        let strategies: Vec<Strategy> = ["micro", "batch", "gateway"]
            .iter()
            .map(|s| Strategy::parse(s).unwrap())
            .collect();
        let clean = CleanRuns::run(&strategies, seeds, 6, 10, 2).unwrap();
        let micro = clean.get(strategies[0], 1, 0).unwrap();
        assert!(micro.clean && micro.passes > 0, "{micro:?}");
        assert!(
            micro.consulted.meets(BugMask::of([Bug::H75345A])),
            "{micro:?}"
        );
        assert!(
            !micro.consulted.meets(BugMask::of([Bug::H29335])),
            "{micro:?}"
        );
        let batch = clean.get(strategies[1], 1, 0).unwrap();
        assert!(
            !batch.consulted.meets(BugMask::of([Bug::HMCursor])),
            "{batch:?}"
        );
        let asked = |i: usize, bug: Bug| {
            (0..6).any(|c| {
                clean
                    .get(strategies[i], 1, c)
                    .unwrap()
                    .consulted
                    .meets(BugMask::of([bug]))
            })
        };
        assert!(asked(1, Bug::H11996) && asked(2, Bug::H4095));
    }
}
