//! The world of an agent-loop case (strategies `batch` and `both`): the conversation
//! generator (or a plan's script) feeds turn scripts to the [`AgentLoop`], and every
//! transition it reports is shown to the oracle. The case ends at the first violation,
//! after `passes` passes, at its turn budget, when a script runs out, or — a liveness
//! outcome — when it exceeds its step budget.
//!
//! A [`CasePlan`] is honoured as in the micro world (script, family and window,
//! summarizer configuration and outcome schedule, micro knobs for `both`, turn budget,
//! invariant subset), plus the agent parameters, the provider configuration and the
//! provider's outcome schedule. Under `both`, the process restarts between turns (its
//! own fault stream, [`LoopRestarts`]), or where the plan lists restarts.

use super::agent_setup::AgentSetup;
use super::draw::{self, Case};
use super::loop_restarts::LoopRestarts;
use super::observer::Observer;
use super::plan::{CasePlan, Source};
use super::scramble::Labels;
use super::setup::SummarizerStreams;
use super::{empty_result, CaseResult, CaseSetup, CaseSpec, MakeCompactor, Record};
use compactsim_fakes::provider::{Provider, ProviderOutcome};
use compactsim_fakes::rng::SimRng;
use compactsim_hermes::agent::{AgentConfig, AgentLoop, Sink, RECOVERY_WINDOW_MS};
use compactsim_hermes::agent::{AntiThrashPolicy, LoopOptions};
use compactsim_hermes::compactor::micro::MicroCompactor;
use compactsim_hermes::compactor::micro::MicroConfig;
use compactsim_hermes::compactor::reference::Reference;
use compactsim_hermes::strategy::Strategy;
use compactsim_invariants::threshold::TriggerSpec;
use compactsim_invariants::{DeclaredTrigger, Oracle, OracleConfig, TriggerPasses};
use compactsim_model::{tokens_rough_total, Message};

/// Transitions one turn may take before the case counts as looping. Every loop of the
/// agent is bounded far below this; exceeding it is a liveness failure.
pub const STEPS_PER_TURN_BUDGET: u32 = 512;

/// Every invariant id of the catalogue.
pub(crate) fn all_ids() -> Vec<&'static str> {
    compactsim_invariants::catalogue()
        .iter()
        .map(|i| i.id)
        .collect()
}

/// The oracle's contract parameters for an agent case, from its declared
/// configuration: the trigger through the oracle's own derivation
/// ([`compactsim_invariants::threshold`]), never the compactor's.
///
/// The compactor is held by `compaction-effective` to the window, by its batch passes
/// (the reference: Hermes promises no size under its own trigger — its anti-thrash guard
/// stops compacting a transcript it could not bring under, and an overflow brings it
/// back); [`declared`] puts the compactor's own declarations in place (its policies; an
/// external adapter's trigger).
pub fn oracle_config(config: &AgentConfig) -> OracleConfig {
    let trigger_tokens = compactsim_invariants::threshold::trigger_tokens(trigger_spec(config));
    OracleConfig {
        policies: compactsim_invariants::Policies::HERMES,
        protect_first_n: config.batch.protect_first_n,
        trigger_tokens,
        max_attempts: config.max_attempts,
        request_overhead_tokens: config.overhead_rough_tokens,
        recovery_window_ms: (config.policy() == AntiThrashPolicy::V2_2)
            .then_some(RECOVERY_WINDOW_MS),
        declared_trigger: DeclaredTrigger::Window,
        window_tokens: config.thresholds.context_length as u64,
        trigger_passes: REFERENCE_TRIGGER_PASSES,
        window_passes_max: compactsim_invariants::EFFICACY_PASSES_MAX,
    }
}

/// `config` with what the case's compactor declares: its policies, and the trigger when
/// it declares one (an external adapter: its hello's `capabilities.trigger`, else the
/// window).
pub fn declared(mut config: OracleConfig, spec: &CaseSpec) -> OracleConfig {
    config.policies = spec.compactor.policies();
    if let Some((trigger, passes)) = spec.compactor.declared_trigger() {
        config.declared_trigger = trigger;
        config.trigger_passes = passes;
    }
    config
}

/// The passes of the reference held to its trigger: batch compaction keeps the size
/// under the Hermes trigger; micro-compaction folds one exchange per turn and promises
/// no size (a micro-only case outgrows the window with it: the Hermes design leaves the
/// size to batch compaction).
pub const REFERENCE_TRIGGER_PASSES: TriggerPasses = TriggerPasses {
    micro: false,
    batch: true,
};

/// The declared keys that decide the trigger of `config`'s case.
pub fn trigger_spec(config: &AgentConfig) -> TriggerSpec {
    let declared = config.options.era.threshold_config();
    TriggerSpec {
        context_length: config.thresholds.context_length,
        threshold_per_mille: declared.threshold_per_mille,
        threshold_tokens_cap: declared.threshold_tokens_cap,
        max_output_tokens: declared.max_output_tokens,
    }
}

/// One line describing an agent-loop case's drawn setup (for `replay`); `None` for
/// other strategies.
pub fn describe(spec: &CaseSpec) -> Option<String> {
    let options = spec.strategy.loop_options()?;
    let case = draw::draw(spec);
    let (setup, agent) = (case.setup, case.agent?);
    let provider = agent.provider.clone();
    let c = AgentConfig::new(
        options,
        &spec.bugs,
        setup.shape.context_length,
        agent.params,
    );
    Some(format!(
        "agent: era={} anti_thrash={} trigger={} tail_budget={} overhead={}t rough/{}t real \
         in_place={} think={}..{}ms resume_fill={}permille overflow_shape={:?} \
         disconnect={}permille server_error={}permille bugs={}",
        options.era,
        options.anti_thrash,
        c.trigger_tokens(),
        c.thresholds.tail_budget_tokens,
        c.overhead_rough_tokens,
        c.overhead_real_tokens,
        c.in_place,
        c.params.think_ms.0,
        c.params.think_ms.1,
        c.params.resume_fill_per_mille,
        provider.overflow_shape,
        provider.disconnect_per_mille,
        provider.server_error_per_mille,
        if c.bugs.is_empty() {
            "none".to_string()
        } else {
            c.bugs.ids().join(",")
        }
    ))
}

/// Runs one agent-loop case.
pub(super) fn run(
    spec: &CaseSpec,
    record: Record,
    make: MakeCompactor<'_>,
    labels: Labels,
) -> CaseResult {
    run_logged(spec, record, make, labels).0
}

/// The turn budget that sets the step budget: the plan's or the suite's, whatever the
/// length of a script (so a shorter script does not tighten the liveness bound).
pub(crate) fn budget_turns(spec: &CaseSpec) -> u32 {
    let suite = CaseSpec {
        plan: None,
        ..spec.clone()
    }
    .turns_max();
    spec.plan
        .as_ref()
        .and_then(|p| p.turns_max)
        .unwrap_or(suite)
}

/// The agent loop of an agent-loop or gateway case, built from the case's draw: the
/// agent setup and the provider's stream are taken out of `case`, the summarizer's
/// stream is copied (the copy left in `case` is never drawn from).
pub(crate) fn agent_of(spec: &CaseSpec, case: &mut Case, make: MakeCompactor<'_>) -> AgentLoop {
    let options = spec
        .strategy
        .loop_options()
        .expect("an agent-loop strategy");
    let agent_setup = case
        .agent
        .take()
        .expect("an agent-loop case draws its agent setup");
    let provider = case
        .streams
        .provider
        .take()
        .expect("and its provider stream");
    build_agent(
        spec,
        options,
        &case.setup,
        agent_setup,
        case.streams.summarizer.clone(),
        provider,
        make,
    )
}

/// The agent loop of a drawn case (`setup`, its `agent_setup`, its summarizer and
/// provider streams; see [`super::draw::draw`]), with `spec`'s plan overrides and
/// schedules applied.
pub(crate) fn build_agent(
    spec: &CaseSpec,
    options: LoopOptions,
    setup: &CaseSetup,
    agent_setup: AgentSetup,
    summarizer_rngs: SummarizerStreams,
    provider_rng: SimRng,
    make: MakeCompactor<'_>,
) -> AgentLoop {
    let plan = spec.plan.as_deref();
    let mut config = AgentConfig::new(
        options,
        &spec.bugs,
        setup.shape.context_length,
        agent_setup.params,
    );
    if let Some(p) = spec.profile {
        p.tune_batch(&mut config.batch);
    }
    let micro = both_micro(spec, &config, setup)
        .map(|micro| MicroCompactor::new(micro, config.bugs.clone()));
    let summarizer = setup.summarizer(
        summarizer_rngs,
        plan.and_then(|p| p.summary_outcomes.clone()),
    );
    let provider = Provider::new(agent_setup.provider, provider_rng)
        .with_schedule(plan.and_then(|p| p.provider_outcomes.clone()));
    let runs_micro = micro.is_some();
    let compactor = make(
        Reference::new(config.batch.clone(), micro).with_context_window(setup.shape.context_length),
    );
    AgentLoop::new(config, summarizer, provider, compactor, runs_micro)
}

/// Strategy `both`: the micro configuration of its micro passes (the agent's tail
/// budget, the drawn cadence, the plan's micro knobs); `None` for other strategies.
fn both_micro(spec: &CaseSpec, config: &AgentConfig, setup: &CaseSetup) -> Option<MicroConfig> {
    matches!(spec.strategy, Strategy::Both(_)).then(|| {
        let mut micro = MicroConfig::with_tail_budget(config.thresholds.tail_budget_tokens);
        micro.every_n_turns = setup.micro.every_n_turns;
        if let Some(p) = spec.profile {
            p.tune_micro(&mut micro, setup.shape.context_length);
        }
        if let Some(plan) = spec.plan.as_deref() {
            plan.micro.apply(&mut micro);
        }
        micro
    })
}

/// The micro configuration of the micro passes (strategy `both`) of `spec`'s drawn
/// case (`setup` and its `agent` setup), as a case run uses it.
pub(crate) fn micro_config(
    spec: &CaseSpec,
    setup: &CaseSetup,
    agent: &AgentSetup,
) -> Option<MicroConfig> {
    let options = spec.strategy.loop_options()?;
    let config = AgentConfig::new(
        options,
        &spec.bugs,
        setup.shape.context_length,
        agent.params.clone(),
    );
    both_micro(spec, &config, setup)
}

/// What a recording needs from an agent-loop run beyond its [`CaseResult`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct AgentLog {
    /// The outcome every provider call injected, in call order.
    pub provider_calls: Vec<ProviderOutcome>,
    /// Turns of the conversation a resumed session loaded by its fill (after a script's
    /// history), before the first turn ran.
    pub resumed_turns: u32,
    /// Strategy `gateway`: what its recording needs beyond the agent loop's.
    pub gateway: Option<GatewayLog>,
}

/// What a recording of a gateway case needs: the fault schedule it ran and how many
/// turns of the conversation it took (a redelivery is a turn of the case's loop that
/// takes none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct GatewayLog {
    pub schedule: super::plan::GatewaySchedule,
    /// Turns of the conversation (after a script's history) the case took, resumed ones
    /// included.
    pub conversation_turns: u32,
}

/// How a session opened: the turns loaded before the first one ran.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Opened {
    /// A script's history turns.
    pub history_turns: u32,
    /// Turns of the conversation a resumed session loaded by its fill.
    pub resumed_turns: u32,
}

/// Runs one agent-loop case; also returns what a recording needs (see [`AgentLog`]).
pub(crate) fn run_logged(
    spec: &CaseSpec,
    record: Record,
    make: MakeCompactor<'_>,
    labels: Labels,
) -> (CaseResult, AgentLog) {
    let mut case = CaseLoop::open(spec, record, make, labels);
    while case.next_turn().is_some() {
        case.step();
    }
    case.finish()
}

/// An agent-loop case between two turns: all the state its loop carries on.
pub(crate) struct CaseLoop<'s> {
    spec: &'s CaseSpec,
    agent: AgentLoop,
    observer: Observer,
    source: Source,
    restarts: LoopRestarts,
    opened: Opened,
    /// The turn the next step runs.
    turn: u32,
    /// One past the last turn the case may run.
    end: u32,
    done: bool,
}

impl<'s> CaseLoop<'s> {
    /// The case built and its session opened, before its first turn.
    pub(crate) fn open(
        spec: &'s CaseSpec,
        record: Record,
        make: MakeCompactor<'_>,
        labels: Labels,
    ) -> Self {
        let mut case = draw::draw(spec);
        let mut agent = agent_of(spec, &mut case, make);
        let Case {
            setup,
            marker_restart,
            streams,
            ..
        } = case;
        let turns_max = spec.turns_max();
        let oracle = Oracle::with_only(
            declared(oracle_config(&agent.config), spec),
            &CasePlan::narrow(spec.plan.as_deref(), all_ids()),
        )
        .expect("catalogue ids");
        let step_budget = budget_turns(spec)
            .saturating_add(1)
            .saturating_mul(STEPS_PER_TURN_BUDGET);
        let mut observer = Observer::new(
            oracle,
            step_budget,
            record,
            empty_result(spec, setup.family()),
        )
        .with_labels(labels);
        let mut source = Source::new(spec, &setup.shape);
        let opened = open_session(&mut agent, &mut source, &mut observer, turns_max);
        let restarts = LoopRestarts::of(
            spec,
            setup.restart_per_mille,
            marker_restart,
            streams
                .loop_restarts
                .expect("a batch or both case draws its loop-restart stream"),
        );
        let first = opened.history_turns + opened.resumed_turns;
        CaseLoop {
            spec,
            agent,
            observer,
            source,
            restarts,
            opened,
            turn: first,
            end: first + turns_max,
            done: turns_max == 0,
        }
    }

    /// The case's spec.
    pub(crate) fn spec(&self) -> &'s CaseSpec {
        self.spec
    }

    /// The turn the next [`CaseLoop::step`] runs; `None` when the case has ended.
    pub(crate) fn next_turn(&self) -> Option<u32> {
        (!self.done).then_some(self.turn)
    }

    /// Runs the next turn (the case must not have ended).
    pub(crate) fn step(&mut self) {
        let (spec, turn) = (self.spec, self.turn);
        spec.bugs.at_turn(turn);
        self.done = true;
        let (agent, observer) = (&mut self.agent, &mut self.observer);
        if observer.halted() {
            return;
        }
        let script = self
            .source
            .next_turn(turn - self.opened.history_turns, &mut agent.ids);
        if script.is_empty() {
            // A plan's script ran out.
            return;
        }
        observer.result.turns = turn + 1;
        let first = self.opened.history_turns + self.opened.resumed_turns;
        if self.restarts.due(spec, turn, turn > first, &agent.msgs)
            && agent.restart_between_turns(observer, turn).is_err()
        {
            return;
        }
        let stopped = agent.run_turn(observer, turn, script).is_err();
        observer.result.passes = agent.passes;
        let tokens = observer.tokens;
        observer.result.tokens_per_turn.push(tokens);
        self.turn += 1;
        self.done = stopped || agent.passes >= spec.passes || self.turn >= self.end;
    }

    /// A copy of this case to run on independently (`None` if its compactor cannot be
    /// copied).
    pub(crate) fn fork(&self) -> Option<Self> {
        Some(CaseLoop {
            agent: self.agent.fork()?,
            observer: self.observer.fork(),
            source: self.source.clone(),
            restarts: self.restarts.clone(),
            ..*self
        })
    }

    /// The case's result, once it has ended.
    pub(crate) fn finish(self) -> (CaseResult, AgentLog) {
        let (mut agent, observer) = (self.agent, self.observer);
        let mut result = observer.result;
        if let Some(failure) = agent.failure.take() {
            result.outcome = super::internal_unless_failed(result.outcome, failure.to_string());
        }
        result.checked = observer.oracle.checked();
        result.summary_calls = agent.summarizer.log().to_vec();
        super::coverage::add_caps(&mut result.coverage, agent.summarizer.cap_counts());
        let log = AgentLog {
            provider_calls: agent.provider.log().to_vec(),
            resumed_turns: self.opened.resumed_turns,
            gateway: None,
        };
        (result, log)
    }
}

/// The session before the first turn: the system row; a script's history, loaded as a
/// resumed session (one append at its last turn; the script's turns are numbered after
/// it); then the turns a resumed session's fill loads.
pub(crate) fn open_session(
    agent: &mut AgentLoop,
    source: &mut Source,
    observer: &mut Observer,
    turns_max: u32,
) -> Opened {
    if let Some(system) = source.system_prompt(&mut agent.ids) {
        agent.msgs.push(system);
    }
    observer.tokens = tokens_rough_total(&agent.msgs);
    let mut opened = Opened::default();
    let history = source.history(&mut agent.ids);
    let history_turns = source.history_turns();
    if history_turns > 0 {
        opened.history_turns = history_turns;
        if load(agent, observer, history_turns, history).is_err() {
            return opened;
        }
    }
    let fill = agent.config.params.resume_fill_per_mille;
    opened.resumed_turns = resume(agent, source, observer, fill, turns_max, history_turns);
    opened
}

/// Loads turns `..loaded` of a resumed session as one append at turn `loaded - 1`.
fn load(
    agent: &mut AgentLoop,
    observer: &mut Observer,
    loaded: u32,
    rows: Vec<Message>,
) -> compactsim_hermes::agent::Flow<()> {
    observer.bump("session.resumed");
    observer.result.turns = loaded;
    agent.resume(observer, loaded - 1, rows)
}

/// A resumed session: whole turns of the conversation are loaded (one append) until the
/// rough request estimate reaches `fill_per_mille` of the trigger. `before` turns are
/// loaded already. Returns the number of turns loaded.
fn resume(
    agent: &mut AgentLoop,
    source: &mut Source,
    observer: &mut Observer,
    fill_per_mille: u32,
    turns_max: u32,
    before: u32,
) -> u32 {
    if fill_per_mille == 0 || observer.halted() {
        return 0;
    }
    let target = agent.config.trigger_tokens() as u64 * fill_per_mille as u64 / 1000;
    let overhead = agent.config.overhead_rough_tokens as u64;
    let mut rows = Vec::new();
    let mut rough = tokens_rough_total(&agent.msgs) + overhead;
    let mut turn = 0;
    while rough < target && turn < turns_max {
        let script = source.next_turn(turn, &mut agent.ids);
        if script.is_empty() {
            break;
        }
        rough += tokens_rough_total(&script);
        rows.extend(script);
        turn += 1;
    }
    if turn > 0 {
        let _ = load(agent, observer, before + turn, rows);
    }
    turn
}
