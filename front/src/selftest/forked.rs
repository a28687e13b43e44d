//! The rows of an agent-loop strategy (`batch`, `both`) in one pass over its cases:
//! each case a row must run (see [`super::shared`]) is forked from its clean run at the
//! first turn in which one of the row's switches is asked about
//! ([`compactsim_harness::engine::fork`]), instead of being run from its start once per row. The
//! tallies are exactly those of running every case.

use super::shared::{CleanCase, CleanRuns};
use super::{credits, spec, SelftestSuite};
use compactsim_harness::engine::fork::{run_forks, Fork};
use compactsim_harness::engine::{run_case, CaseOutcome, CaseResult, CaseSpec, Record};
use compactsim_harness::sweep::{par_cases, CaseTallied, Tally};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::bugs::BugInfo;
use compactsim_hermes::strategy::Strategy;
use std::time::Instant;

/// One row's tallies from [`tally_rows`].
#[derive(Clone, Debug)]
pub struct RowTallies {
    pub per_seed: Vec<Tally>,
    /// Cases run with the row's switches on (forked or from their start).
    pub ran: u64,
    /// Seconds the workers spent on the row's forks and runs (the shared clean
    /// prefixes not counted).
    pub cpu_s: f64,
}

/// How a row gets its result for one case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    /// The clean run stands in (it never asked about the row's switches, ended clean).
    StandIn,
    /// Forked from the clean run at this turn.
    Fork(u32),
    /// The clean run's own result (it asked about none of the row's switches).
    Clean,
    /// Run from its start (a switch was asked about before the first turn, or no
    /// clean run is known).
    Start,
}

fn way(clean: Option<CleanCase>, info: &BugInfo) -> Way {
    let switches = info.switches().mask();
    let Some(c) = clean else {
        return Way::Start;
    };
    if !c.consulted.meets(switches) {
        return if c.clean { Way::StandIn } else { Way::Clean };
    }
    c.first_asked
        .fork_turn(switches)
        .map_or(Way::Start, Way::Fork)
}

fn tallied(info: &BugInfo, r: &CaseResult) -> CaseTallied {
    CaseTallied {
        passes: r.passes,
        outcome: r.outcome.clone(),
        credited: credits(info, r.outcome.violations()),
    }
}

/// Every row of `rows` (all under the agent-loop `strategy`) on case `case` of `seed`:
/// its result and the seconds it took, per row.
fn case_rows(
    rows: &[&'static BugInfo],
    strategy: Strategy,
    (seed, case): (u64, u32),
    passes: u32,
    clean: Option<CleanCase>,
) -> Vec<(CaseTallied, f64)> {
    let ways: Vec<Way> = rows.iter().map(|info| way(clean, info)).collect();
    let forks: Vec<Fork> = rows
        .iter()
        .zip(&ways)
        .filter_map(|(info, w)| match w {
            Way::Fork(turn) => Some(Fork {
                turn: *turn,
                switches: info.switches().mask(),
            }),
            Way::StandIn | Way::Clean | Way::Start => None,
        })
        .collect();
    let to_end = ways.contains(&Way::Clean);
    let forked = if forks.is_empty() && !to_end {
        Default::default()
    } else {
        let clean_spec = CaseSpec {
            bugs: BugSet::none().recording(),
            ..spec(rows[0], strategy, seed, passes, case)
        };
        run_forks(&clean_spec, &forks, to_end)
    };
    let mut next_fork = 0;
    let mut out = Vec::with_capacity(rows.len());
    for (info, w) in rows.iter().zip(&ways) {
        let known = match w {
            Way::StandIn => {
                let c = clean.expect("a stand-in has its clean run");
                out.push((
                    CaseTallied {
                        passes: c.passes,
                        outcome: CaseOutcome::Clean,
                        credited: false,
                    },
                    0.0,
                ));
                continue;
            }
            Way::Fork(_) => {
                next_fork += 1;
                let i = next_fork - 1;
                forked.forks[i].as_ref().map(|r| (r, forked.fork_s[i]))
            }
            Way::Clean => forked.clean.as_ref().map(|r| (r, 0.0)),
            Way::Start => None,
        };
        out.push(match known {
            Some((r, s)) => (tallied(info, r), s),
            None => {
                let started = Instant::now();
                let r = run_case(&spec(info, strategy, seed, passes, case), Record::default());
                (tallied(info, &r), started.elapsed().as_secs_f64())
            }
        });
    }
    out
}

/// The tallies of every row of `rows` (each under the agent-loop `strategy`) over
/// `seeds`, in one parallel pass over the cases: each case's forks share one run of its
/// clean prefix (see [`compactsim_harness::engine::fork`]).
pub fn tally_rows(
    rows: &[&'static BugInfo],
    strategy: Strategy,
    suite: SelftestSuite,
    jobs: usize,
    clean: &CleanRuns,
) -> Result<Vec<RowTallies>, String> {
    let SelftestSuite {
        seeds,
        cases,
        passes,
    } = suite;
    let mut out: Vec<RowTallies> = rows
        .iter()
        .map(|_| RowTallies {
            per_seed: vec![Tally::default(); seeds.len() as usize],
            ran: 0,
            cpu_s: 0.0,
        })
        .collect();
    if rows.is_empty() {
        return Ok(out);
    }
    let all = par_cases(seeds, cases, jobs, |seed, case| {
        case_rows(
            rows,
            strategy,
            (seed, case),
            passes,
            clean.get(strategy, seed, case),
        )
    })?;
    for (i, per_row) in all.iter().enumerate() {
        let seed_index = i / cases as usize;
        let case = (i % cases as usize) as u32;
        let clean_case = clean.get(strategy, seeds.first + seed_index as u64, case);
        for ((row, (c, s)), info) in out.iter_mut().zip(per_row).zip(rows) {
            row.per_seed[seed_index].add(case, c.passes, &c.outcome, c.credited);
            row.ran += u64::from(way(clean_case, info) != Way::StandIn);
            row.cpu_s += s;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_harness::engine::fork::Forked;
    use compactsim_harness::sweep::SeedRange;
    use compactsim_hermes::bug_set::BugMask;
    use compactsim_hermes::bugs::Bug;

    /// Forks a few switched cases of `strategy` from their clean runs: each result is
    /// the whole result of running the switched case from its start.
    fn forks_equal_full_runs(name: &str, bugs: &[Bug]) -> usize {
        let strategy = Strategy::parse(name).unwrap();
        let mut forked_after_start = 0;
        for case in 0..12 {
            for bug in bugs {
                let info = bug.info();
                let full = run_case(&spec(info, strategy, 1, 25, case), Record::default());
                let clean_spec = CaseSpec {
                    bugs: BugSet::none().recording(),
                    ..spec(info, strategy, 1, 25, case)
                };
                let clean = run_case(&clean_spec, Record::default());
                let switches = info.switches().mask();
                let Some(turn) = clean_spec.bugs.first_asked().fork_turn(switches) else {
                    continue;
                };
                let fresh = CaseSpec {
                    bugs: BugSet::none().recording(),
                    ..clean_spec.clone()
                };
                let fork = Fork { turn, switches };
                let Forked {
                    forks,
                    clean: rerun,
                    ..
                } = run_forks(&fresh, &[fork], true);
                let got = forks[0].as_ref().expect("forked");
                assert_eq!(got, &full, "{bug} {name} case {case} forked at {turn}");
                assert_eq!(rerun.as_ref(), Some(&clean), "{bug} {name} case {case}");
                forked_after_start += usize::from(turn > 0 && clean.turns > 1);
            }
        }
        forked_after_start
    }

    #[test]
    fn a_forked_case_is_the_switched_case_run_from_its_start() {
        let batch = [
            Bug::H2153,
            Bug::H52160,
            Bug::H019B3,
            Bug::H40803,
            Bug::H14694,
        ];
        assert!(forks_equal_full_runs("batch", &batch) > 0);
        let both = [Bug::H2153, Bug::IotM1, Bug::H019B3, Bug::HMCursor];
        assert!(forks_equal_full_runs("both", &both) > 0);
    }

    #[test]
    fn a_row_forks_at_the_first_turn_one_of_its_switches_was_asked_in() {
        let seeds = SeedRange::of_count(1, 1);
        let strategy = Strategy::parse("batch").unwrap();
        let clean = CleanRuns::run(&[strategy], seeds, 8, 25, 2).unwrap();
        let info = Bug::H2153.info();
        let ways: Vec<Way> = (0..8)
            .map(|c| way(clean.get(strategy, 1, c), info))
            .collect();
        assert!(
            ways.iter().any(|w| matches!(w, Way::Fork(t) if *t > 0)),
            "{ways:?}"
        );
        assert_eq!(way(None, info), Way::Start);
        let c = clean.get(strategy, 1, 0).unwrap();
        let never = CleanCase {
            consulted: BugMask(0),
            ..c
        };
        assert_eq!(way(Some(never), info), Way::StandIn);
        let failed = CleanCase {
            clean: false,
            ..never
        };
        assert_eq!(way(Some(failed), info), Way::Clean);
    }
}
