//! The engine: runs one case turn by turn, emits a trace event for every transition,
//! lets the oracle observe each one, applies the fault plan, and stops at the first
//! violation or at the case's turn budget.

mod agent_setup;
mod agent_world;
mod coverage;
pub mod plan;
mod setup;
mod trace;
mod work_budget;

pub use agent_setup::AgentSetup;
pub use agent_world::{describe, oracle_config, STEPS_PER_TURN_BUDGET};
pub use coverage::{counters, Coverage, AGENT_COUNTERS, COUNTERS};
pub use setup::*;
pub use trace::TraceLine;
pub use work_budget::CASE_WORK_ROWS_MAX;
use work_budget::{work_budget_violation, WorkMeter};

use crate::compactor::micro::MicroCompactor;
use crate::compactor::repair;
use crate::ids::IdAlloc;
use crate::rng::{self, chance};
use crate::shapes::Family;
use crate::summarizer::{Summarizer, SummaryOutcome};
use compactsim_invariants::{Oracle, OracleConfig};
use compactsim_model::{Event, Message, MicroOutcome, Transition, Violation};
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
}

/// Options that change what a case records, never what it does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub trace: bool,
}

/// The simulated world of one case.
struct World {
    spec: CaseSpec,
    msgs: Vec<Message>,
    ids: IdAlloc,
    conversation: Source,
    summarizer: Summarizer,
    micro: MicroCompactor,
    oracle: Oracle,
    faults: rng::SimRng,
    restart_per_mille: u32,
    step: u32,
    work: WorkMeter,
    result: CaseResult,
    record: Record,
}

/// Runs one case. Never panics: a panic inside the case becomes `CaseOutcome::Internal`.
pub fn run_case(spec: &CaseSpec, record: Record) -> CaseResult {
    match std::panic::catch_unwind(|| run_case_unguarded(spec, record)) {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".to_string());
            let setup = CaseSetup::draw(spec);
            let mut r = empty_result(spec, setup.family());
            r.outcome = CaseOutcome::Internal(what);
            r
        }
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
        tokens_max: 0,
        messages_max: 0,
        tokens_per_turn: Vec::new(),
        checked: Vec::new(),
        coverage: Coverage::default(),
        trace: Vec::new(),
        summary_calls: Vec::new(),
    }
}

fn run_case_unguarded(spec: &CaseSpec, record: Record) -> CaseResult {
    if spec.strategy.loop_options().is_some() {
        return agent_world::run(spec, record);
    }
    let (setup, streams) = CaseSetup::draw_with_streams(spec);
    let mut world = World {
        spec: spec.clone(),
        msgs: Vec::new(),
        ids: IdAlloc::default(),
        conversation: Source::new(spec, &setup.shape),
        summarizer: Summarizer::new(setup.summarizer.clone(), streams.summarizer)
            .with_schedule(spec.plan.as_ref().and_then(|p| p.summary_outcomes.clone())),
        micro: MicroCompactor::new(setup.micro, spec.bugs.clone()),
        oracle: Oracle::with_only(
            OracleConfig {
                protect_first_n: setup.micro.protect_first_n,
                ..OracleConfig::default()
            },
            &CasePlan::narrow(
                spec.plan.as_deref(),
                compactsim_invariants::micro_catalogue_ids(),
            ),
        )
        .expect("catalogue ids"),
        faults: streams.faults,
        restart_per_mille: setup.restart_per_mille,
        step: 0,
        work: WorkMeter::default(),
        result: empty_result(spec, setup.family()),
        record,
    };
    world.run();
    world.result.checked = world.oracle.checked();
    world.result.summary_calls = world.summarizer.log().to_vec();
    world.result
}

impl World {
    fn run(&mut self) {
        if let Some(system) = self.conversation.system_prompt(&mut self.ids) {
            self.msgs.push(system);
        }
        let history = self.conversation.history(&mut self.ids);
        if !history.is_empty() {
            let (before, appended) = (self.msgs.clone(), history.len() as u32);
            self.msgs.extend(history);
            if !self.observe(Event::TurnAppended { turn: 0, appended }, &before) {
                return;
            }
        }
        for turn in 0..self.spec.turns_max() {
            self.result.turns = turn + 1;
            if !self.turn(turn) || self.result.passes >= self.spec.passes {
                break;
            }
        }
    }

    /// One turn: maybe a restart, the appended rows, a micro pass, the repair. False
    /// when the case must stop (a violation).
    fn turn(&mut self, turn: u32) -> bool {
        if self.restart_due(turn) {
            self.micro.restart();
            self.result.coverage.bump("restart");
            let before = self.msgs.clone();
            if !self.observe(Event::Restart { turn }, &before) {
                return false;
            }
        }
        let rows = self.conversation.next_turn(turn, &mut self.ids);
        let appended = rows.len() as u32;
        let before = self.msgs.clone();
        self.msgs.extend(rows);
        if !self.observe(Event::TurnAppended { turn, appended }, &before) {
            return false;
        }
        let before = self.msgs.clone();
        let pass = self
            .micro
            .pass(&mut self.msgs, turn, &mut self.summarizer, &mut self.ids);
        if !matches!(
            pass.outcome,
            MicroOutcome::Cadence | MicroOutcome::NoExchange
        ) {
            self.result.passes += 1;
        }
        self.result.coverage.bump(outcome_counter(pass.outcome));
        if !self.observe(Event::MicroPass(pass), &before) {
            return false;
        }
        let before = self.msgs.clone();
        let stats = repair::repair(&mut self.msgs);
        self.result
            .coverage
            .add("repair.merged_rows", stats.merged_rows as u64);
        let ok = self.observe(
            Event::Repair {
                turn,
                merged_rows: stats.merged_rows,
                dropped_rows: stats.dropped_rows,
                pruned_calls: stats.pruned_calls,
            },
            &before,
        );
        self.result
            .tokens_per_turn
            .push(compactsim_model::tokens_rough_total(&self.msgs));
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

    /// Lets the oracle see one transition; records it. False on a violation.
    fn observe(&mut self, event: Event, before: &[Message]) -> bool {
        let t = Transition {
            step: self.step,
            event: &event,
            before,
            after: &self.msgs,
        };
        let violations = self.oracle.observe(&t);
        if self.record.trace {
            self.result
                .trace
                .push(TraceLine::new(self.step, &event, before, &self.msgs));
        }
        self.step += 1;
        self.result.transitions = self.step;
        let tokens = compactsim_model::tokens_rough_total(&self.msgs);
        self.result.tokens_max = self.result.tokens_max.max(tokens);
        self.result.messages_max = self.result.messages_max.max(self.msgs.len() as u32);
        if !violations.is_empty() {
            self.result.outcome = CaseOutcome::Violation(violations);
            return false;
        }
        if !self.work.charge(before.len(), self.msgs.len()) {
            self.result.outcome =
                CaseOutcome::Liveness(work_budget_violation(event.turn(), self.step - 1));
            return false;
        }
        true
    }
}

fn outcome_counter(outcome: MicroOutcome) -> &'static str {
    match outcome {
        MicroOutcome::Cadence => "micro.cadence",
        MicroOutcome::NoExchange => "micro.no_exchange",
        MicroOutcome::Absorbed => "micro.absorbed",
        MicroOutcome::Defrag => "micro.defrag",
        MicroOutcome::DefragFailed => "micro.defrag_failed",
        MicroOutcome::SummarizeFailed => "micro.summarize_failed",
        MicroOutcome::ExchangeSkipped => "micro.exchange_skipped",
    }
}
