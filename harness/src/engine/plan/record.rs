//! Recording: writes a case down as a fully explicit plan — its script, summarizer
//! configuration and per-call outcome schedule, restart turns and micro configuration;
//! for an agent-loop case also the agent parameters, the provider configuration and its
//! per-call outcome schedule — that replays to the same outcome, turn for turn.

use super::script::{RowPlan, Script, TurnPlan};
use super::{AgentOverrides, CasePlan, MicroOverrides, ProviderOverrides, SummarizerOverrides};
use crate::engine::agent_world;
use crate::engine::draw::{self, Case};
use crate::engine::{run_case, AgentSetup, CaseResult, CaseSetup, CaseSpec, Record};
use crate::shapes::Conversation;
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::provider::ProviderOutcome;
use compactsim_fakes::rng::{self, Stream};
use compactsim_hermes::strategy::Strategy;
use compactsim_model::Event;

/// A case written down, and the run it was written from (with its trace).
#[derive(Clone, Debug)]
pub struct Recording {
    pub plan: CasePlan,
    pub result: CaseResult,
}

/// A run with what a recording needs beyond its [`CaseResult`].
#[derive(Clone, Debug)]
pub struct Logged {
    pub result: CaseResult,
    /// The outcome every provider call injected, in call order (agent-loop cases; empty
    /// for micro).
    pub provider_calls: Vec<ProviderOutcome>,
    /// Turns a resumed agent session loaded by its fill before the first turn ran.
    pub resumed_turns: u32,
    /// Strategy `gateway`: the fault schedule it ran and the conversation turns it took.
    pub(crate) gateway: Option<agent_world::GatewayLog>,
}

/// [`run_case`] with the provider's call log. Never panics: a panicking case is run
/// through `run_case`, which reports it as a harness failure.
pub fn run_logged(spec: &CaseSpec, record: Record) -> Logged {
    let plain = |spec: &CaseSpec| Logged {
        result: run_case(spec, record),
        provider_calls: Vec::new(),
        resumed_turns: 0,
        gateway: None,
    };
    if spec.strategy.loop_options().is_none() {
        return plain(spec);
    }
    let gateway = matches!(
        spec.strategy,
        compactsim_hermes::strategy::Strategy::Gateway(_)
    );
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let make = &|r| spec.compactor.make(r);
        if gateway {
            crate::engine::gateway::run_logged(spec, record, make, Default::default())
        } else {
            agent_world::run_logged(spec, record, make, Default::default())
        }
    })) {
        Ok((result, log)) => Logged {
            result,
            provider_calls: log.provider_calls,
            resumed_turns: log.resumed_turns,
            gateway: log.gateway,
        },
        Err(_) => plain(spec),
    }
}

/// `outcomes` without its trailing successes (a schedule is `ok` past its end).
fn trimmed<T: Copy>(outcomes: &[T], ok: impl Fn(T) -> bool) -> Vec<T> {
    let keep = outcomes.iter().rposition(|&o| !ok(o)).map_or(0, |i| i + 1);
    outcomes[..keep].to_vec()
}

/// Runs `spec` and writes it down as an explicit plan covering the turns it ran. Running
/// `spec` with the returned plan gives the same outcome, trace and tokens per turn.
pub fn record(spec: &CaseSpec) -> Recording {
    let Case {
        setup,
        agent,
        gateway,
        streams,
        ..
    } = draw::draw(spec);
    let logged = run_logged(
        spec,
        Record {
            trace: true,
            ..Record::default()
        },
    );
    let result = logged.result.clone();
    let agent_loop = spec.strategy.loop_options().is_some();
    // A gateway case takes a turn of the conversation per new message, not per turn.
    let taken = |history: usize| match &logged.gateway {
        Some(g) => g.conversation_turns as usize,
        None => result.turns as usize - history,
    };
    let script = match spec.plan.as_ref().and_then(|p| p.script.clone()) {
        Some(mut script) => {
            // The agent world counts a script's history among the case's turns.
            let history = if agent_loop { script.history.len() } else { 0 };
            script.turns.truncate(taken(history));
            script
        }
        None => generated_script(spec, &setup, taken(0) as u32),
    };
    let restarts: Vec<u32> = result
        .trace
        .iter()
        .filter_map(|line| match line.event {
            Event::Restart { turn } => Some(turn),
            Event::TurnAppended { .. }
            | Event::MicroPass(_)
            | Event::BatchPass(_)
            | Event::Repair { .. }
            | Event::Preflight(_)
            | Event::ProviderCall(_)
            | Event::TurnFailed { .. }
            | Event::SessionReset { .. }
            | Event::Rotation { .. } => None,
        })
        .collect();
    let mut plan = CasePlan {
        family: Some(setup.family()),
        context_length: Some(setup.shape.context_length),
        system_prompt: None,
        system_chars: None,
        script: Some(script),
        summarizer: SummarizerOverrides::exactly(&setup.summarizer),
        summary_outcomes: Some(trimmed(&result.summary_calls, |o| o.is_ok())),
        restarts: Some(restarts),
        micro: MicroOverrides::exactly(&setup.micro),
        agent: AgentOverrides::default(),
        provider: ProviderOverrides::default(),
        provider_outcomes: None,
        turns_max: spec.plan.as_ref().and_then(|p| p.turns_max),
        // Kept so the fault stream draws as the original did (the list decides).
        restart_per_mille: spec.plan.as_ref().and_then(|p| p.restart_per_mille),
        invariants: spec.plan.as_ref().and_then(|p| p.invariants.clone()),
        // The compactor the case ran, so the written case replays against it.
        compactor: spec.compactor.adapter().cloned(),
        gateway: Default::default(),
    };
    if let Some(agent) = &agent {
        pin_agent_loop(spec, &mut plan, &logged, &setup, agent);
    }
    if let Some(g) = &logged.gateway {
        let mut schedule = g.schedule.clone();
        schedule.truncate(result.turns);
        let drawn = crate::engine::gateway::faults::FaultPlan::new(
            gateway.expect("a gateway case draws its gateway knobs"),
            streams.gateway.expect("and its gateway streams"),
            spec.plan.as_ref().map(|p| &p.gateway),
        );
        plan.gateway = super::GatewayPlan {
            topic: Some(drawn.topic),
            schedule: Some(schedule),
            hygiene_message_limit: Some(drawn.hygiene_message_limit),
        };
    }
    Recording { plan, result }
}

/// The agent-loop part of a recording: agent parameters, provider configuration and
/// schedule, micro knobs and restarts only where micro passes run (`both`; the batch
/// loop models no restarts). The turns a resumed session loaded become the script's
/// history (loaded the same way, with the same turn numbers), with no fill.
fn pin_agent_loop(
    spec: &CaseSpec,
    plan: &mut CasePlan,
    logged: &Logged,
    setup: &CaseSetup,
    agent: &AgentSetup,
) {
    plan.agent = AgentOverrides::exactly(&agent.params);
    plan.provider = ProviderOverrides::exactly(&agent.provider);
    plan.provider_outcomes = Some(trimmed(&logged.provider_calls, |o| o.is_ok()));
    if !matches!(spec.strategy, Strategy::Both(_)) {
        plan.restarts = None;
        plan.restart_per_mille = None;
    }
    plan.micro = agent_world::micro_config(spec, setup, agent)
        .map_or_else(MicroOverrides::default, |m| MicroOverrides::exactly(&m));
    let script = plan.script.as_mut().expect("a recorded script");
    if script.history.is_empty() {
        let resumed = (logged.resumed_turns as usize).min(script.turns.len());
        script.history = script.turns.drain(..resumed).collect();
        plan.agent.resume_fill_per_mille = Some(0);
    }
}

/// The first `turns` turns the shape generator gives `spec` (ids do not influence what
/// the generator draws, so a fresh id allocator describes the same rows).
fn generated_script(spec: &CaseSpec, setup: &CaseSetup, turns: u32) -> Script {
    let mut conversation = Conversation::new(
        setup.shape.clone(),
        rng::stream(spec.case_seed(), Stream::Shape),
    );
    let mut ids = IdAlloc::default();
    let system = conversation
        .system_prompt(&mut ids)
        .map(|m| RowPlan::of(&m));
    let turns = (0..turns)
        .map(|t| TurnPlan::of(&conversation.next_turn(t, &mut ids)))
        .collect();
    Script {
        system,
        history: Vec::new(),
        turns,
    }
}
