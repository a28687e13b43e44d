//! Forked runs of an agent-loop case (strategies `batch` and `both`), for the
//! self-test: a case run with some switches on is its clean run up to the first turn
//! in which one of them is asked about ([`compactsim_hermes::bug_set::BugSet::has`] is the only way
//! a switch changes a run). So the clean run is run once, and at the start of each such
//! turn a copy of its state continues with the switches on, to the end: the result of
//! running the switched case from its start.

use super::agent_world::CaseLoop;
use super::scramble::Labels;
use super::{CaseResult, CaseSpec, Record};
use compactsim_hermes::bug_set::BugMask;
use compactsim_hermes::strategy::Strategy;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// One fork: from the start of turn `turn`, with `switches` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fork {
    pub turn: u32,
    pub switches: BugMask,
}

/// What [`run_forks`] gives back.
#[derive(Debug, Default)]
pub struct Forked {
    /// Per fork of the request, its result; `None` where it could not fork (the case
    /// ended before the turn, its compactor cannot be copied, a panic): run that one
    /// from its start.
    pub forks: Vec<Option<CaseResult>>,
    /// The result of the run with no switch on, when asked for and it ended normally.
    pub clean: Option<CaseResult>,
    /// CPU-bound seconds spent on each fork after its copy (for the self-test's table).
    pub fork_s: Vec<f64>,
}

/// Runs the agent-loop case `spec` (its bug set recording, none of `forks`' switches on
/// in it) with its compactor (`spec.compactor`), and each of `forks` as a copy of it from the start of
/// its turn with its switches on. The run itself goes on to its end when `to_end`
/// (its result is [`Forked::clean`]), else only to the last fork's turn.
pub fn run_forks(spec: &CaseSpec, forks: &[Fork], to_end: bool) -> Forked {
    let mut out = Forked {
        forks: vec![None; forks.len()],
        clean: None,
        fork_s: vec![0.0; forks.len()],
    };
    let agent_loop = matches!(spec.strategy, Strategy::Batch(_) | Strategy::Both(_));
    if !agent_loop || !spec.bugs.force(BugMask(0)) {
        return out;
    }
    let mut order: Vec<usize> = (0..forks.len()).collect();
    order.sort_by_key(|&i| forks[i].turn);
    let run = AssertUnwindSafe(|| {
        let mut case = CaseLoop::open(
            spec,
            Record::default(),
            &|r| spec.compactor.make(r),
            Labels::AsReported,
        );
        let mut next = 0;
        while let Some(turn) = case.next_turn() {
            while next < order.len() && forks[order[next]].turn <= turn {
                let i = order[next];
                if forks[i].turn == turn {
                    let started = std::time::Instant::now();
                    out.forks[i] = run_fork(&case, forks[i].switches);
                    out.fork_s[i] = started.elapsed().as_secs_f64();
                }
                next += 1;
            }
            if next == order.len() && !to_end {
                return None;
            }
            case.step();
        }
        to_end.then(|| case.finish().0)
    });
    let key = crate::external::record::CaseKey {
        root_seed: spec.root_seed,
        case: spec.case,
    };
    out.clean = crate::external::record::within_case(key, || catch_unwind(run).ok().flatten());
    spec.bugs.force(BugMask(0));
    out
}

/// A copy of `case` run to its end with `switches` on; `None` if it cannot be copied or
/// panics.
fn run_fork(case: &CaseLoop<'_>, switches: BugMask) -> Option<CaseResult> {
    let mut fork = case.fork()?;
    fork.spec().bugs.force(switches);
    let run = AssertUnwindSafe(move || {
        while fork.next_turn().is_some() {
            fork.step();
        }
        fork.finish().0
    });
    let result = catch_unwind(run).ok();
    case.spec().bugs.force(BugMask(0));
    result
}
