//! The compactor is a value a case carries: one in-process test compactor goes through
//! every entry point that runs cases — run, replay, scenario (and a scenario over a
//! built-in story), sweep, shrink, the self-test's clean rows, diff, study — and each
//! time it is the one that ran: its call counter moved, and a variant that never
//! micro-compacts changes what the entry point reports where the reference would have
//! compacted.

use crate::common;

use common::repo;
use compactsim::cli::args::CaseParams;
use compactsim::cli::replay::replay;
use compactsim::cli::scenario::{load_all, replay_file, run_all};
use compactsim::cli::sweep::{sweep, SweepRequest};
use compactsim::selftest::external::{clean_row, ExternalSuite};
use compactsim::shrink::{shrink, Budget, ShrinkError};
use compactsim_fakes::seam::{BatchReport, BatchRequest, Compactor, CompactorFailure, Harness};
use compactsim_harness::compactor::{CompactorSpec, Pools};
use compactsim_harness::diff::{diff_suite, Aggregator};
use compactsim_harness::engine::{run_case, CaseOutcome, Record};
use compactsim_harness::runner::{run_suite, Suite};
use compactsim_harness::sweep::SeedRange;
use compactsim_hermes::strategy::Strategy;
use compactsim_model::{Message, MicroPass};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The reference, counting every pass it is asked for; with `micro` off it answers
/// every micro pass "nothing to do" without asking the reference (it never
/// micro-compacts).
struct Probe {
    inner: Box<dyn Compactor>,
    calls: Arc<AtomicU64>,
    micro: bool,
}

impl Compactor for Probe {
    fn name(&self) -> String {
        "probe".into()
    }

    fn micro_pass(
        &mut self,
        msgs: &mut Vec<Message>,
        turn: u32,
        harness: &mut Harness<'_>,
    ) -> Result<MicroPass, CompactorFailure> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        if !self.micro {
            return Ok(MicroPass::no_exchange(turn, 0));
        }
        self.inner.micro_pass(msgs, turn, harness)
    }

    fn batch_pass(
        &mut self,
        msgs: &mut Vec<Message>,
        request: BatchRequest,
        harness: &mut Harness<'_>,
    ) -> Result<BatchReport, CompactorFailure> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.batch_pass(msgs, request, harness)
    }

    fn restart(&mut self) {
        self.inner.restart();
    }

    fn rewritten(&mut self) {
        self.inner.rewritten();
    }

    fn cooling_down(&mut self, now_ms: u64) -> Result<bool, CompactorFailure> {
        self.inner.cooling_down(now_ms)
    }

    fn fallback_streak(&mut self) -> Result<u32, CompactorFailure> {
        self.inner.fallback_streak()
    }
}

/// A probe compactor and its counter: `micro` off never micro-compacts.
fn probe_spec(micro: bool) -> (CompactorSpec, Arc<AtomicU64>) {
    let calls = Arc::new(AtomicU64::new(0));
    let counter = calls.clone();
    let name = if micro { "probe" } else { "probe-never-micro" };
    let spec = CompactorSpec::in_process(name, move |r| {
        Box::new(Probe {
            inner: Box::new(r),
            calls: calls.clone(),
            micro,
        })
    });
    (spec, counter)
}

fn suite(strategy: &str, cases: u32, compactor: CompactorSpec) -> Suite {
    Suite {
        root_seed: 20_260_731,
        case_first: 0,
        cases,
        passes: 25,
        strategy: Strategy::parse(strategy).unwrap(),
        bugs: Default::default(),
        compactor,
        profile: None,
    }
}

fn params(compactor: CompactorSpec) -> CaseParams {
    CaseParams {
        compactor,
        ..CaseParams::parse(20_260_731, 25, "micro", &[]).unwrap()
    }
}

/// Passes with work over the suite's cases (`runner::run_suite`, what `run` runs).
fn run_passes(suite: &Suite) -> u64 {
    let mut passes = 0;
    run_suite(suite, 2, Record::default(), |r| {
        passes += u64::from(r.passes);
        true
    })
    .unwrap();
    passes
}

#[test]
fn run_and_replay_run_the_spec_s_compactor() {
    let (probe, calls) = probe_spec(true);
    let reference = run_passes(&suite("micro", 12, CompactorSpec::Reference));
    assert!(reference > 0);
    assert_eq!(run_passes(&suite("micro", 12, probe.clone())), reference);
    let ran = calls.swap(0, Ordering::Relaxed);
    assert!(ran > 0, "run: the probe ran");
    let (never, never_calls) = probe_spec(false);
    assert_eq!(run_passes(&suite("micro", 12, never.clone())), 0);
    assert!(never_calls.load(Ordering::Relaxed) > 0);
    // The agent loop and the gateway build the case's compactor too.
    for strategy in ["batch", "gateway"] {
        run_passes(&suite(strategy, 4, probe.clone()));
        assert!(
            calls.swap(0, Ordering::Relaxed) > 0,
            "run --strategy {strategy}"
        );
    }

    let (text, _) = replay(&params(probe.clone()), 3);
    assert!(
        calls.swap(0, Ordering::Relaxed) > 0,
        "replay: the probe ran"
    );
    assert!(text.contains("--compactor probe"), "{text}");
    let (reference_text, _) = replay(&params(CompactorSpec::Reference), 3);
    let (never_text, _) = replay(&params(never), 3);
    let last = |t: &str| t.lines().last().unwrap_or_default().to_string();
    assert!(last(&never_text).ends_with(" 0 passes"), "{never_text}");
    assert_ne!(last(&never_text), last(&reference_text));
}

/// `scenarios/seeds/h-75345-b.toml`: seed 004's built-in story with the bug on; the
/// reference stacks markers and breaks one-marker-max, as the file expects.
fn story_file() -> PathBuf {
    repo().join("scenarios/seeds/h-75345-b.toml")
}

#[test]
fn scenarios_stories_and_replayed_files_run_the_chosen_compactor() {
    let (probe, calls) = probe_spec(true);
    let (never, never_calls) = probe_spec(false);
    let files = vec![story_file()];
    let ran = run_all(
        load_all(&files, &CompactorSpec::Reference).unwrap(),
        1,
        false,
    )
    .unwrap();
    assert!(
        ran[0].holds,
        "the reference breaks the story's expected invariant"
    );
    let ran = run_all(load_all(&files, &probe).unwrap(), 1, false).unwrap();
    assert!(
        calls.swap(0, Ordering::Relaxed) > 0,
        "scenario: the probe ran"
    );
    assert!(ran[0].holds);
    let ran = run_all(load_all(&files, &never).unwrap(), 1, false).unwrap();
    assert!(never_calls.swap(0, Ordering::Relaxed) > 0);
    assert_eq!(ran[0].result.outcome, CaseOutcome::Clean, "never compacts");
    assert!(!ran[0].holds);

    let (text, _) = replay_file(&story_file(), &never).unwrap();
    assert!(never_calls.swap(0, Ordering::Relaxed) > 0, "replay FILE");
    assert!(text.contains(": FAILED"), "{text}");

    // A scenario parsed by a library caller, then put under the probe.
    let s = compactsim::scenario::load(&story_file())
        .unwrap()
        .under(&probe, &Pools::default());
    run_case(&s.spec, Record::default());
    assert!(calls.load(Ordering::Relaxed) > 0, "a story under the probe");
}

#[test]
fn sweep_runs_the_params_compactor() {
    let (never, calls) = probe_spec(false);
    let req = |compactor| SweepRequest {
        params: params(compactor),
        seeds: SeedRange::of_count(1, 1),
        cases: 4,
        jobs: 1,
        out: crate::common::scratch("compactor_value/sweep"),
    };
    sweep(&req(never)).unwrap();
    assert!(calls.load(Ordering::Relaxed) > 0, "sweep: the probe ran");
}

#[test]
fn shrink_shrinks_the_spec_s_compactor_s_failure() {
    let story = compactsim::scenario::load(&story_file()).unwrap();
    assert!(shrink(
        &story.spec,
        Budget::timed(std::time::Duration::from_secs(30)),
        &mut |_| {}
    )
    .is_ok());
    let (probe, calls) = probe_spec(true);
    let under = |c: &CompactorSpec| story.clone().under(c, &Pools::default()).spec;
    let shrunk = shrink(
        &under(&probe),
        Budget::timed(std::time::Duration::from_secs(30)),
        &mut |_| {},
    );
    assert!(shrunk.is_ok(), "the probe fails as the reference does");
    assert_eq!(shrunk.unwrap().spec.compactor, probe);
    assert!(calls.load(Ordering::Relaxed) > 0, "shrink: the probe ran");
    let (never, _) = probe_spec(false);
    let clean = shrink(
        &under(&never),
        Budget::timed(std::time::Duration::from_secs(30)),
        &mut |_| {},
    );
    assert!(matches!(clean, Err(ShrinkError::Clean)), "{clean:?}");
}

#[test]
fn selftest_clean_rows_run_the_suite_s_compactor() {
    let row = |compactor| {
        let suite = ExternalSuite {
            seeds: SeedRange::of_count(1, 1),
            cases: 6,
            passes: 25,
            compactor,
        };
        clean_row(&suite, Strategy::parse("micro").unwrap(), 1).unwrap()
    };
    let (never, calls) = probe_spec(false);
    let reference: u64 = row(CompactorSpec::Reference)
        .per_seed
        .iter()
        .map(|t| t.passes)
        .sum();
    let never_row: u64 = row(never).per_seed.iter().map(|t| t.passes).sum();
    assert!(
        calls.load(Ordering::Relaxed) > 0,
        "selftest clean row: the probe ran"
    );
    assert!(reference > 0);
    assert_eq!(never_row, 0);
}

#[test]
fn diff_compares_the_reference_with_the_suite_s_compactor() {
    let report = |compactor| {
        let mut agg = Aggregator::new(BTreeMap::new());
        diff_suite(&suite("micro", 6, compactor), 1, |d| agg.add(&d)).unwrap();
        agg.finish()
    };
    let (probe, calls) = probe_spec(true);
    let same = report(probe);
    assert!(calls.swap(0, Ordering::Relaxed) > 0, "diff: the probe ran");
    assert_eq!(same.totals.passes_agreeing, same.totals.passes);
    let (never, never_calls) = probe_spec(false);
    let differs = report(never);
    assert!(never_calls.load(Ordering::Relaxed) > 0);
    assert!(differs.totals.passes_agreeing < differs.totals.passes);
}

#[test]
fn study_runs_the_given_compactor() {
    let file = repo().join("scenarios/studies/code-review-3h.toml");
    let spec = compactsim::study::spec::load(&file).unwrap();
    let study = |c: &CompactorSpec| compactsim::study::run(&spec, c).unwrap();
    let micro = |r: &compactsim_reports::study::StudyReport| {
        let s = r.strategies.iter().find(|s| s.name == "micro").unwrap();
        s.totals.clone()
    };
    let reference = study(&CompactorSpec::Reference);
    let (probe, calls) = probe_spec(true);
    assert_eq!(
        study(&probe),
        reference,
        "the probe passes the reference on"
    );
    assert!(calls.load(Ordering::Relaxed) > 0, "study: the probe ran");
    let (never, never_calls) = probe_spec(false);
    let never_report = study(&never);
    assert!(never_calls.load(Ordering::Relaxed) > 0);
    assert!(micro(&reference).micro_commits > 0);
    assert_eq!(
        micro(&never_report).micro_commits,
        0,
        "never micro-compacts"
    );
    assert_ne!(micro(&never_report), micro(&reference));
}
