//! The engine: runs one case turn by turn, emits a trace event for every transition,
//! lets the oracle observe each one, applies the fault plan, and stops at the first
//! violation (or, with [`Verdicts::All`], goes on judging after it) or at the case's
//! turn budget.

mod agent_setup;
pub(crate) mod agent_world;
mod coverage;
pub mod draw;
mod fallback_loss;
pub mod fault_mix;
pub mod fork;
pub mod gateway;
mod loop_restarts;
pub(crate) mod observer;
pub mod opening_paste;
pub mod plan;
pub mod scramble;
mod setup;
pub mod summary_storm;
mod trace;
pub mod verdicts;
mod work_budget;

pub use agent_setup::AgentSetup;
pub use agent_world::{describe, oracle_config, STEPS_PER_TURN_BUDGET};
pub use coverage::{counters, Coverage, AGENT_COUNTERS, COUNTERS};
pub use setup::*;
pub use trace::TraceLine;
pub use verdicts::Verdicts;
pub use work_budget::{CASE_WORK_ROWS_MAX, WORK_BUDGET_REACHED};

use crate::shapes::Family;
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::rng::{self, chance};
use compactsim_fakes::seam::Compactor;
use compactsim_fakes::summarizer::{Summarizer, SummaryOutcome};
use compactsim_hermes::agent::micro_step::{micro_step, MicroParts, MicroStop};
use compactsim_hermes::agent::Sink;
use compactsim_hermes::compactor::batch::BatchConfig;
use compactsim_hermes::compactor::micro::MicroCompactor;
use compactsim_hermes::compactor::reference::Reference;
use compactsim_invariants::{Oracle, OracleConfig};
use compactsim_model::{tokens_rough_total, Event, Message, Violation};
use observer::Observer;
use plan::{CasePlan, Source};

/// How a case ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseOutcome {
    Clean,
    /// The first transition that broke an invariant; every invariant it broke.
    Violation(Vec<Violation>),
    /// The case did not make progress: the liveness invariant (`no-infinite-loop`) failed
    /// alone, or the case exceeded its step budget.
    Liveness(Violation),
    /// The harness itself failed (a panic inside the case).
    Internal(String),
}

impl CaseOutcome {
    /// The invariants behind a failed case: every one a violation broke, or the liveness
    /// one; empty for a clean case or a harness failure.
    pub fn violations(&self) -> &[Violation] {
        match self {
            CaseOutcome::Violation(vs) => vs,
            CaseOutcome::Liveness(v) => std::slice::from_ref(v),
            CaseOutcome::Clean | CaseOutcome::Internal(_) => &[],
        }
    }
}

/// Everything a case reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseResult {
    pub case: u32,
    pub case_seed: u64,
    pub family: Family,
    pub turns: u32,
    pub passes: u32,
    pub transitions: u32,
    pub outcome: CaseOutcome,
    /// Every invariant that fired, each with its first violation, in the order they
    /// fired (with [`Verdicts::First`]: those of the first failing transition). The
    /// liveness invariant is among them when the case ran out of its budget.
    pub verdicts: Vec<Violation>,
    pub tokens_max: u64,
    pub messages_max: u32,
    /// Transcript tokens after each turn's last transition.
    pub tokens_per_turn: Vec<u64>,
    pub checked: Vec<(&'static str, u64)>,
    pub coverage: Coverage,
    /// The event log, when asked for.
    pub trace: Vec<TraceLine>,
    /// The outcome of every summarizer call, in call order.
    pub summary_calls: Vec<SummaryOutcome>,
    /// Strategy `gateway`: the gateway's steps, when the trace is asked for, each with
    /// the transition step it came before.
    pub gateway_trace: Vec<(u32, String)>,
}

/// Options that change what a case records, never what it does up to its first
/// violation (with [`Verdicts::All`] it goes on after it; its outcome is the same).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub trace: bool,
    /// Whether the case is judged past its first violation.
    pub verdicts: Verdicts,
}

/// Builds the compactor under test of a case from the reference compactor the case's
/// configuration describes (`--compactor reference` returns it as is; tests wrap it).
pub type MakeCompactor<'a> = &'a dyn Fn(Reference) -> Box<dyn Compactor>;

/// The reference compactor, unwrapped.
pub fn reference(r: Reference) -> Box<dyn Compactor> {
    Box::new(r)
}

/// The simulated world of a micro-only case.
///
/// A micro-only case is bounded by its model window the way a real agent is: once the
/// transcript's rough tokens exceed the window no request could be sent, so the case
/// ends there (like its turn budget: not a failure). This keeps per-transition work
/// bounded however many passes a run asks for.
struct World {
    spec: CaseSpec,
    msgs: Vec<Message>,
    ids: IdAlloc,
    conversation: Source,
    summarizer: Summarizer,
    compactor: Box<dyn Compactor>,
    faults: rng::SimRng,
    restart_per_mille: u32,
    now_ms: u64,
    /// The model window in tokens (see the type docs).
    window_tokens: u64,
    observer: Observer,
}

/// Runs one case with its compactor under test (`spec.compactor`). Never panics: a
/// panic inside the case becomes `CaseOutcome::Internal`.
pub fn run_case(spec: &CaseSpec, record: Record) -> CaseResult {
    run_case_with(spec, record, &|r| spec.compactor.make(r))
}

/// [`run_case`] with the compactor built by `make` instead of `spec.compactor` (the
/// diff's tee wraps the spec's compactor in its own).
pub fn run_case_with(spec: &CaseSpec, record: Record, make: MakeCompactor<'_>) -> CaseResult {
    run_case_labels(spec, record, make, scramble::Labels::AsReported)
}

/// [`run_case_with`], showing the oracle the events' labels as `labels` says.
pub fn run_case_labels(
    spec: &CaseSpec,
    record: Record,
    make: MakeCompactor<'_>,
    labels: scramble::Labels,
) -> CaseResult {
    let key = crate::external::record::CaseKey {
        root_seed: spec.root_seed,
        case: spec.case,
    };
    let guarded = std::panic::AssertUnwindSafe(|| {
        crate::external::record::within_case(key, || run_case_unguarded(spec, record, make, labels))
    });
    match std::panic::catch_unwind(guarded) {
        Ok(mut result) => {
            quote_adapter_stderr(spec, key, &mut result);
            result
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".to_string());
            let setup = draw::draw(spec).setup;
            let mut r = empty_result(spec, setup.family());
            r.outcome = CaseOutcome::Internal(what);
            r
        }
    }
}

/// Stderr lines quoted in a witness, at most (the adapter's last lines of the case).
pub const WITNESS_STDERR_LINES_MAX: usize = 10;

/// An external adapter's stderr during the case, quoted (its last lines) in the witness
/// of every violation of a failing case.
fn quote_adapter_stderr(
    spec: &CaseSpec,
    key: crate::external::record::CaseKey,
    result: &mut CaseResult,
) {
    let crate::compactor::CompactorSpec::External(pool) = &spec.compactor else {
        return;
    };
    let lines = pool.take_case_stderr(key);
    if lines.is_empty() {
        return;
    }
    let skip = lines.len().saturating_sub(WITNESS_STDERR_LINES_MAX);
    let quote = |w: &mut compactsim_model::Witness| {
        w.facts.push(format!(
            "adapter stderr during the case (last {} lines):",
            lines.len() - skip
        ));
        w.facts
            .extend(lines[skip..].iter().map(|l| format!("  | {l}")));
    };
    match &mut result.outcome {
        CaseOutcome::Violation(vs) => vs.iter_mut().for_each(|v| quote(&mut v.witness)),
        CaseOutcome::Liveness(v) => quote(&mut v.witness),
        CaseOutcome::Clean | CaseOutcome::Internal(_) => {}
    }
}

/// The outcome of a case whose compactor failed (`what`): a harness failure, unless an
/// invariant failed before (a case judged past its first violation keeps it: the
/// outcome is the same as if it had stopped there).
pub(crate) fn internal_unless_failed(outcome: CaseOutcome, what: String) -> CaseOutcome {
    match outcome {
        CaseOutcome::Clean | CaseOutcome::Internal(_) => CaseOutcome::Internal(what),
        failed => failed,
    }
}

pub(crate) fn empty_result(spec: &CaseSpec, family: Family) -> CaseResult {
    CaseResult {
        case: spec.case,
        case_seed: spec.case_seed(),
        family,
        turns: 0,
        passes: 0,
        transitions: 0,
        outcome: CaseOutcome::Clean,
        verdicts: Vec::new(),
        tokens_max: 0,
        messages_max: 0,
        tokens_per_turn: Vec::new(),
        checked: Vec::new(),
        coverage: Coverage::default(),
        trace: Vec::new(),
        summary_calls: Vec::new(),
        gateway_trace: Vec::new(),
    }
}

fn run_case_unguarded(
    spec: &CaseSpec,
    record: Record,
    make: MakeCompactor<'_>,
    labels: scramble::Labels,
) -> CaseResult {
    if matches!(
        spec.strategy,
        compactsim_hermes::strategy::Strategy::Gateway(_)
    ) {
        return crate::engine::gateway::run(spec, record, make, labels);
    }
    if spec.strategy.loop_options().is_some() {
        return agent_world::run(spec, record, make, labels);
    }
    let draw::Case { setup, streams, .. } = draw::draw(spec);
    let micro = MicroCompactor::new(setup.micro, spec.bugs.clone());
    let oracle = Oracle::with_only(
        agent_world::declared(
            OracleConfig {
                protect_first_n: setup.micro.protect_first_n,
                window_tokens: setup.shape.context_length as u64,
                trigger_passes: agent_world::REFERENCE_TRIGGER_PASSES,
                // The world ends the case after the turn whose pass left the transcript
                // over the window: the compactor gets that one pass.
                window_passes_max: 1,
                ..OracleConfig::default()
            },
            spec,
        ),
        &CasePlan::narrow(
            spec.plan.as_deref(),
            compactsim_invariants::micro_catalogue_ids(),
        ),
    )
    .expect("catalogue ids");
    let mut world = World {
        spec: spec.clone(),
        msgs: Vec::new(),
        ids: IdAlloc::default(),
        conversation: Source::new(spec, &setup.shape),
        summarizer: setup.summarizer(
            streams.summarizer,
            spec.plan.as_ref().and_then(|p| p.summary_outcomes.clone()),
        ),
        compactor: make(
            Reference::new(BatchConfig::default(), Some(micro))
                .with_context_window(setup.shape.context_length),
        ),
        faults: streams.faults,
        restart_per_mille: setup.restart_per_mille,
        now_ms: 0,
        window_tokens: setup.shape.context_length as u64,
        observer: Observer::new(oracle, u32::MAX, record, empty_result(spec, setup.family()))
            .with_labels(labels),
    };
    world.run();
    let mut result = world.observer.result;
    result.checked = world.observer.oracle.checked();
    result.summary_calls = world.summarizer.log().to_vec();
    coverage::add_caps(&mut result.coverage, world.summarizer.cap_counts());
    result
}

impl World {
    fn run(&mut self) {
        if let Some(system) = self.conversation.system_prompt(&mut self.ids) {
            self.msgs.push(system);
        }
        self.observer.tokens = tokens_rough_total(&self.msgs);
        let history = self.conversation.history(&mut self.ids);
        if !history.is_empty() && !self.append(0, history) {
            return;
        }
        for turn in 0..self.spec.turns_max() {
            self.observer.result.turns = turn + 1;
            if !self.turn(turn) || self.observer.result.passes >= self.spec.passes {
                break;
            }
            if self.observer.tokens > self.window_tokens {
                break;
            }
        }
    }

    /// Appends rows and reports them as one transition. False when the case must stop.
    fn append(&mut self, turn: u32, rows: Vec<Message>) -> bool {
        let n = self.msgs.len();
        let appended = rows.len() as u32;
        self.msgs.extend(rows);
        let event = Event::TurnAppended { turn, appended };
        self.observer.observe(event, &self.msgs[..n], &self.msgs)
    }

    /// One turn: maybe a restart, the appended rows, a micro pass, the repair. False
    /// when the case must stop (a violation or a compactor failure).
    fn turn(&mut self, turn: u32) -> bool {
        if self.restart_due(turn) {
            self.compactor.restart();
            self.observer.bump("restart");
            if !self
                .observer
                .observe(Event::Restart { turn }, &self.msgs, &self.msgs)
            {
                return false;
            }
        }
        let rows = self.conversation.next_turn(turn, &mut self.ids);
        if !self.append(turn, rows) {
            return false;
        }
        let parts = MicroParts {
            compactor: self.compactor.as_mut(),
            msgs: &mut self.msgs,
            summarizer: &mut self.summarizer,
            ids: &mut self.ids,
            now_ms: self.now_ms,
        };
        let ok = match micro_step(parts, turn, &mut self.observer) {
            Ok(end) => {
                self.now_ms += end.latency_ms;
                if end.found_work {
                    self.observer.result.passes += 1;
                }
                true
            }
            Err(MicroStop::Sink) => false,
            Err(MicroStop::Failure(f)) => {
                let outcome =
                    std::mem::replace(&mut self.observer.result.outcome, CaseOutcome::Clean);
                self.observer.result.outcome = internal_unless_failed(outcome, f.to_string());
                false
            }
        };
        let tokens = self.observer.tokens;
        self.observer.result.tokens_per_turn.push(tokens);
        ok
    }

    /// Whether the process restarts before `turn`: drawn, unless the plan lists restarts
    /// (the draw happens either way, so the fault stream stays in step).
    fn restart_due(&mut self, turn: u32) -> bool {
        let drawn = turn > 0 && chance(&mut self.faults, self.restart_per_mille);
        self.spec
            .plan
            .as_ref()
            .map_or(drawn, |p| p.restart(turn, drawn))
    }
}
#[cfg(test)]
mod profile_tests;
#[cfg(test)]
mod verdicts_tests;
