//! The oracle believes observations, not labels (issue 7, DESIGN "The system under
//! test, and what the oracle may believe"):
//! - every label scrambled (compactor outcomes, exchange/skip lists, cursors, fallback
//!   and failure flags, preflight decisions, error classes) while the transcript and the
//!   observations stay as they are gives the same verdicts;
//! - mutants (`compactsim_harness::mutants`): the reference compactor wrapped so that it
//!   misbehaves while its labels stay as they were; each is caught by a named invariant.

use compactsim::cli::args::{CaseParams, SEED_DEFAULT};
use compactsim::selftest;
use compactsim_fakes::seam::Compactor;
use compactsim_harness::engine::scramble::Labels;
use compactsim_harness::engine::{
    reference, run_case_labels, CaseOutcome, CaseResult, CaseSpec, Record,
};
use compactsim_harness::mutants::{Mutant, MUTANTS};
use compactsim_hermes::bugs::CATALOGUE;
use compactsim_hermes::compactor::reference::Reference;
use compactsim_hermes::strategy::Strategy;

/// Cases per default suite the scramble test compares (of 480; the whole suites run in
/// `.ci/run` — this keeps `cargo test` short while covering every family).
const SCRAMBLE_CASES: u32 = 160;
/// Cases a mutant may take to be caught.
const MUTANT_CASES_MAX: u32 = 96;

/// What a verdict is made of: the outcome kind, the invariants and where.
fn verdict(r: &CaseResult) -> (String, Vec<String>, u32) {
    let kind = match &r.outcome {
        CaseOutcome::Clean => "clean",
        CaseOutcome::Violation(_) => "violation",
        CaseOutcome::Liveness(_) => "liveness",
        CaseOutcome::Internal(_) => "internal",
    };
    let ids = r
        .outcome
        .violations()
        .iter()
        .map(|v| format!("{}@{}", v.invariant, v.step))
        .collect();
    (kind.to_string(), ids, r.transitions)
}

fn both_views(spec: &CaseSpec) -> (CaseResult, CaseResult) {
    let plain = run_case_labels(spec, Record::default(), &reference, Labels::AsReported);
    let scrambled = run_case_labels(spec, Record::default(), &reference, Labels::Scrambled);
    (plain, scrambled)
}

#[test]
fn scrambled_labels_give_the_same_verdicts_on_the_default_suites() {
    let mut failing = 0;
    for strategy in ["micro", "batch", "both"] {
        let suite = CaseParams::parse(SEED_DEFAULT, 25, strategy, &[])
            .unwrap()
            .suite(0, SCRAMBLE_CASES);
        for case in 0..SCRAMBLE_CASES {
            let (plain, scrambled) = both_views(&suite.spec(case));
            assert_eq!(
                verdict(&plain),
                verdict(&scrambled),
                "{strategy} case {case}"
            );
            failing += u32::from(plain.outcome != CaseOutcome::Clean);
        }
    }
    assert_eq!(failing, 0, "the default suites are clean");
}

#[test]
fn scrambled_labels_give_the_same_verdicts_with_every_bug_switch() {
    let mut caught = 0;
    for info in CATALOGUE {
        let strategy = Strategy::of_kind(info.strategy);
        for case in 0..24 {
            let spec = selftest::spec(info, strategy, SEED_DEFAULT, 25, case);
            let (plain, scrambled) = both_views(&spec);
            assert_eq!(
                verdict(&plain),
                verdict(&scrambled),
                "{} case {case}",
                info.id
            );
            caught += u32::from(plain.outcome != CaseOutcome::Clean);
        }
    }
    assert!(
        caught > 0,
        "some switch fails a case, so verdicts were compared"
    );
}

/// The first case of the default suite of `strategy` that catches `how`, with every
/// invariant that failed on its failing transition.
fn caught_by(how: Mutant, strategy: &str) -> Option<(u32, Vec<String>)> {
    let suite = CaseParams::parse(SEED_DEFAULT, 25, strategy, &[])
        .unwrap()
        .suite(0, MUTANT_CASES_MAX);
    let make = |inner: Reference| -> Box<dyn Compactor> { how.wrap(Box::new(inner)) };
    (0..MUTANT_CASES_MAX).find_map(|case| {
        let r = run_case_labels(
            &suite.spec(case),
            Record::default(),
            &make,
            Labels::AsReported,
        );
        let ids: Vec<String> = r
            .outcome
            .violations()
            .iter()
            .map(|v| v.invariant.clone())
            .collect();
        (!ids.is_empty()).then_some((case, ids))
    })
}

#[test]
fn every_mutant_is_caught_by_its_named_invariant() {
    let mut seen = Vec::new();
    let mut missed = Vec::new();
    for m in MUTANTS {
        let (how, strategy, want) = (m.mutant, m.strategy, m.expected);
        let got = caught_by(how, strategy.name());
        seen.push(format!("{how:?} ({strategy}): {got:?}"));
        let caught = got
            .as_ref()
            .is_some_and(|(_, ids)| want.iter().all(|w| ids.iter().any(|i| i == w)));
        if !caught {
            missed.push(format!("{how:?} not caught by all of {want:?}"));
        }
    }
    println!("{}", seen.join("\n"));
    assert!(missed.is_empty(), "{missed:#?}\n{seen:#?}");
}
