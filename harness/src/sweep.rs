//! The seed sweep: the same suite under many root seeds, every case of every seed run,
//! tallied per seed and in total. `compactsim sweep` prints it; the self-test measures
//! catch rates with it. Deterministic: the tallies are a function of the seeds, the
//! suite and the credit rule, never of the job count.

use crate::engine::{run_case, CaseOutcome, CaseSpec, Record};
use compactsim_model::Violation;
use rayon::prelude::*;
use std::fmt;

/// Most root seeds one sweep may run.
pub const SWEEP_SEEDS_MAX: u64 = 100_000;

/// An inclusive range of root seeds, `A..B` on the command line (`1..64` is 64 seeds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRange {
    pub first: u64,
    pub last: u64,
}

impl SeedRange {
    /// Parses `A..B` (inclusive, A <= B) or a single seed `A`.
    pub fn parse(text: &str) -> Result<SeedRange, String> {
        let bad = || format!("--seeds must be A..B (inclusive, A <= B) or one seed, got `{text}`");
        let (a, b) = text.split_once("..").unwrap_or((text, text));
        let first: u64 = a.trim().parse().map_err(|_| bad())?;
        let last: u64 = b.trim().parse().map_err(|_| bad())?;
        if first > last {
            return Err(bad());
        }
        let range = SeedRange { first, last };
        if range.len() > SWEEP_SEEDS_MAX {
            return Err(format!(
                "--seeds covers {} seeds, at most {SWEEP_SEEDS_MAX}",
                range.len()
            ));
        }
        Ok(range)
    }

    /// `count` seeds from `first`.
    pub fn of_count(first: u64, count: u64) -> SeedRange {
        SeedRange {
            first,
            last: first + count.max(1) - 1,
        }
    }

    pub fn len(self) -> u64 {
        self.last - self.first + 1
    }

    pub fn is_empty(self) -> bool {
        false
    }

    pub fn iter(self) -> impl Iterator<Item = u64> {
        self.first..=self.last
    }
}

impl fmt::Display for SeedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.first, self.last)
    }
}

/// The first failing case of a seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirstFailure {
    pub case: u32,
    /// The invariants broken at the failing transition (the liveness one for a loop; the
    /// harness message for an internal failure).
    pub invariants: Vec<String>,
    pub turn: u32,
}

/// Outcomes of the cases of one seed (or of a whole sweep).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub cases: u32,
    pub passes: u64,
    pub violations: u32,
    pub liveness: u32,
    pub internal: u32,
    /// Failing cases the credit rule accepts (the self-test: an expected invariant is
    /// among those broken at the failing transition).
    pub credited: u32,
    /// The first case the credit rule accepted.
    pub first_credited: Option<u32>,
    pub first_failure: Option<FirstFailure>,
}

impl Tally {
    /// Cases that did not end clean.
    pub fn failing(&self) -> u32 {
        self.violations + self.liveness + self.internal
    }

    /// Adds `other` (a later seed) into this total; keeps the first failure seen.
    pub fn absorb(&mut self, other: &Tally) {
        self.cases += other.cases;
        self.passes += other.passes;
        self.violations += other.violations;
        self.liveness += other.liveness;
        self.internal += other.internal;
        self.credited += other.credited;
        self.first_credited = self.first_credited.or(other.first_credited);
        if self.first_failure.is_none() {
            self.first_failure = other.first_failure.clone();
        }
    }

    pub fn add(&mut self, case: u32, passes: u32, outcome: &CaseOutcome, credit: bool) {
        self.cases += 1;
        self.passes += passes as u64;
        match outcome {
            CaseOutcome::Clean => return,
            CaseOutcome::Violation(_) => self.violations += 1,
            CaseOutcome::Liveness(_) => self.liveness += 1,
            CaseOutcome::Internal(_) => self.internal += 1,
        }
        self.credited += credit as u32;
        if credit && self.first_credited.is_none() {
            self.first_credited = Some(case);
        }
        if self.first_failure.is_none() {
            let vs = outcome.violations();
            self.first_failure = Some(FirstFailure {
                case,
                invariants: match outcome {
                    CaseOutcome::Internal(what) => vec![format!("internal: {what}")],
                    CaseOutcome::Clean | CaseOutcome::Violation(_) | CaseOutcome::Liveness(_) => {
                        vs.iter().map(|v| v.invariant.clone()).collect()
                    }
                },
                turn: vs.first().map_or(0, |v| v.turn),
            });
        }
    }
}

/// Most cases one parallel pass of [`tally_seeds`] holds (their outcomes wait in memory
/// until the pass ends); more seeds are run in several passes.
pub const TALLY_CASES_PER_PASS_MAX: u64 = 16_384;

/// Runs every case `0..cases` of `spec_of(case)` on `jobs` threads and tallies them;
/// `credit` decides, for a failing case, whether its violations count as `credited`.
pub fn tally_seed(
    cases: u32,
    jobs: usize,
    spec_of: impl Fn(u32) -> CaseSpec + Sync,
    credit: impl Fn(&[Violation]) -> bool + Sync,
) -> Result<Tally, String> {
    let one = SeedRange::of_count(0, 1);
    let mut tallies = tally_seeds(one, cases, jobs, |_, case| spec_of(case), credit)?;
    Ok(tallies.pop().unwrap_or_default())
}

/// [`tally_seed`] for every seed of `seeds` (`spec_of(seed, case)`), one tally per seed
/// in seed order. The cases of many seeds run in one parallel pass with no barrier
/// between seeds or chunks, so one long case never leaves the other workers idle while
/// its chunk drains; the tallies are added in (seed, case) order, so they do not depend
/// on `jobs`.
pub fn tally_seeds(
    seeds: SeedRange,
    cases: u32,
    jobs: usize,
    spec_of: impl Fn(u64, u32) -> CaseSpec + Sync,
    credit: impl Fn(&[Violation]) -> bool + Sync,
) -> Result<Vec<Tally>, String> {
    tally_seeds_by(seeds, cases, jobs, |seed, case| {
        let r = run_case(&spec_of(seed, case), Record::default());
        let credited = credit(r.outcome.violations());
        CaseTallied {
            passes: r.passes,
            outcome: r.outcome,
            credited,
        }
    })
}

/// What a tally needs of one case.
#[derive(Clone, Debug)]
pub struct CaseTallied {
    pub passes: u32,
    pub outcome: CaseOutcome,
    /// The credit rule accepts its violations.
    pub credited: bool,
}

/// [`tally_seeds`] with each case's result given by `run(seed, case)` (which may run the
/// case or know its result otherwise).
pub fn tally_seeds_by(
    seeds: SeedRange,
    cases: u32,
    jobs: usize,
    run: impl Fn(u64, u32) -> CaseTallied + Sync,
) -> Result<Vec<Tally>, String> {
    let outcomes = par_cases(seeds, cases, jobs, run)?;
    if cases == 0 {
        return Ok(vec![Tally::default(); seeds.len() as usize]);
    }
    Ok(outcomes.chunks(cases as usize).map(tally_of).collect())
}

/// The tally of one seed's cases, `per_case[i]` being case `i`'s.
pub fn tally_of(per_case: &[CaseTallied]) -> Tally {
    let mut tally = Tally::default();
    for (case, c) in per_case.iter().enumerate() {
        tally.add(case as u32, c.passes, &c.outcome, c.credited);
    }
    tally
}

/// `each(seed, case)` for every case `0..cases` of every seed on `jobs` threads, in
/// (seed, case) order whatever `jobs`; at most [`TALLY_CASES_PER_PASS_MAX`] cases per
/// parallel pass.
pub fn par_cases<T: Send>(
    seeds: SeedRange,
    cases: u32,
    jobs: usize,
    each: impl Fn(u64, u32) -> T + Sync,
) -> Result<Vec<T>, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| format!("cannot start {jobs} worker threads: {e}"))?;
    let mut out = Vec::new();
    if cases == 0 {
        return Ok(out);
    }
    let seeds_per_pass = (TALLY_CASES_PER_PASS_MAX / cases as u64).max(1);
    let mut first = seeds.first;
    while first <= seeds.last {
        let last = seeds.last.min(first + seeds_per_pass - 1);
        let n = (last - first + 1) * cases as u64;
        let pass: Vec<T> = pool.install(|| {
            (0..n)
                .into_par_iter()
                .map(|i| each(first + i / cases as u64, (i % cases as u64) as u32))
                .collect()
        });
        out.extend(pass);
        first = last + 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_hermes::bug_set::BugSet;
    use compactsim_hermes::bugs::Bug;
    use compactsim_hermes::strategy::Strategy;

    #[test]
    fn seed_ranges_are_inclusive_and_bad_ones_are_refused() {
        let r = SeedRange::parse("1..64").unwrap();
        assert_eq!(
            (r.len(), r.iter().next(), r.iter().last()),
            (64, Some(1), Some(64))
        );
        assert_eq!(SeedRange::parse("7").unwrap(), SeedRange::of_count(7, 1));
        assert_eq!(r.to_string(), "1..64");
        for bad in ["", "a..b", "5..4", "1..", "..3", "-1..2"] {
            assert!(SeedRange::parse(bad).is_err(), "{bad}");
        }
        assert!(SeedRange::parse("0..100000")
            .unwrap_err()
            .contains("at most"));
    }

    fn spec(seed: u64, bugs: &[Bug]) -> impl Fn(u32) -> CaseSpec + Sync {
        let bugs = BugSet::of(bugs);
        move |case| CaseSpec {
            root_seed: seed,
            case,
            passes: 10,
            strategy: Strategy::parse("micro").unwrap(),
            bugs: bugs.clone(),
            plan: None,
            profile: None,
            compactor: Default::default(),
        }
    }

    #[test]
    fn many_seeds_in_one_pass_tally_as_each_seed_alone() {
        let credit = |vs: &[Violation]| vs.iter().any(|v| v.invariant == "one-marker-max");
        let bugs = [Bug::H75345B];
        let seeds = SeedRange::of_count(3, 3);
        let spec_of = |seed: u64, case: u32| spec(seed, &bugs)(case);
        let all = tally_seeds(seeds, 30, 2, spec_of, credit).unwrap();
        let alone: Vec<Tally> = seeds
            .iter()
            .map(|seed| tally_seed(30, 1, spec(seed, &bugs), credit).unwrap())
            .collect();
        assert_eq!(all, alone);
        assert!(all.iter().any(|t| t.credited > 0), "{all:?}");
        assert_ne!(all[0], all[1], "each seed draws its own cases");
        let none = tally_seeds(seeds, 0, 2, spec_of, credit).unwrap();
        assert_eq!(none, vec![Tally::default(); 3]);
    }

    #[test]
    fn a_tally_counts_every_case_whatever_the_job_count() {
        let credit = |vs: &[Violation]| vs.iter().any(|v| v.invariant == "one-marker-max");
        let one = tally_seed(40, 1, spec(3, &[Bug::H75345B]), credit).unwrap();
        let two = tally_seed(40, 2, spec(3, &[Bug::H75345B]), credit).unwrap();
        assert_eq!(one, two);
        assert_eq!(one.cases, 40);
        assert!(
            one.failing() > 0 && one.credited <= one.failing(),
            "{one:?}"
        );
        let clean = tally_seed(40, 2, spec(3, &[]), credit).unwrap();
        assert_eq!((clean.failing(), clean.credited), (0, 0), "{clean:?}");
        let mut total = clean.clone();
        total.absorb(&one);
        assert_eq!(total.cases, 80);
        assert_eq!(total.first_failure, one.first_failure);
    }
}
