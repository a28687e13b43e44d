//! The world of a gateway case (`--strategy gateway`): the conversation arrives as
//! inbound messages for one chat; the gateway loads its session, runs the agent turn
//! of the batch loop and persists it; the fault plan crashes and restarts the process.
//! Each process lifetime shows the transition oracle a fresh agent that loaded its
//! transcript (like a resumed session); what spans lifetimes is judged by the gateway
//! oracle from the store.

use super::faults::{Crash, FaultPlan};
use super::store::Store;
use crate::engine::agent_world::{
    agent_of, all_ids, budget_turns, declared, open_session, oracle_config, AgentLog, GatewayLog,
};
use crate::engine::draw::{self, Case};
use crate::engine::observer::Observer;
use crate::engine::plan::{CasePlan, Source};
use crate::engine::scramble::Labels;
use crate::engine::STEPS_PER_TURN_BUDGET;
use crate::engine::{empty_result, CaseResult, CaseSpec, MakeCompactor, Record};
use compactsim_hermes::agent::{AgentLoop, Flow, Sink, Stop};
use compactsim_hermes::bug_set::BugSet;
use compactsim_invariants::gateway::{GatewayOracle, GatewayStep};
use compactsim_invariants::{Oracle, OracleConfig};
use compactsim_model::{GatewayEvent, Message, Role, SessionNo};

/// An inbound message: its id, its turn script, and how often it was delivered.
#[derive(Clone, Debug)]
pub(super) struct Inbound {
    pub id: u64,
    pub script: Vec<Message>,
    pub delivery: u32,
}

/// One gateway case in progress.
pub(super) struct Gateway {
    pub agent: AgentLoop,
    pub observer: Observer,
    pub store: Store,
    pub plan: FaultPlan,
    pub bugs: BugSet,
    oracle: GatewayOracle,
    narrow: Vec<String>,
    /// The transition oracle's parameters (each process lifetime gets a fresh oracle).
    oracle_config: OracleConfig,
    /// Checked counts of the transition oracles of ended process lifetimes.
    checked: Vec<(&'static str, u64)>,
    /// An inbound message that was not acknowledged: the platform redelivers it.
    pub pending: Option<Inbound>,
    /// The adapter's store, when the adapter keeps it (see `remote`).
    pub(super) remote: Option<super::remote::Remote>,
}

/// Runs one gateway case.
pub fn run(spec: &CaseSpec, record: Record, make: MakeCompactor<'_>, labels: Labels) -> CaseResult {
    run_logged(spec, record, make, labels).0
}

/// Runs one gateway case; also returns what a recording needs.
pub(crate) fn run_logged(
    spec: &CaseSpec,
    record: Record,
    make: MakeCompactor<'_>,
    labels: Labels,
) -> (CaseResult, AgentLog) {
    let mut case = draw::draw(spec);
    let agent = agent_of(spec, &mut case, make);
    let Case {
        setup,
        gateway,
        streams,
        ..
    } = case;
    let narrow: Vec<String> = CasePlan::narrow(spec.plan.as_deref(), all_ids())
        .into_iter()
        .map(String::from)
        .collect();
    let oracle_config = declared(oracle_config(&agent.config), spec);
    let oracle = Oracle::with_only(oracle_config, &strs(&narrow)).expect("catalogue ids");
    let step_budget = budget_turns(spec)
        .saturating_add(1)
        .saturating_mul(STEPS_PER_TURN_BUDGET);
    let observer = Observer::new(
        oracle,
        step_budget,
        record,
        empty_result(spec, setup.family()),
    )
    .with_labels(labels);
    let mut gw = Gateway {
        agent,
        observer,
        store: Store::default(),
        plan: FaultPlan::new(
            gateway.expect("a gateway case draws its gateway knobs"),
            streams.gateway.expect("and its gateway streams"),
            spec.plan.as_deref().map(|p| &p.gateway),
        ),
        bugs: spec.bugs.clone(),
        oracle: GatewayOracle::with_only(&CasePlan::narrow(spec.plan.as_deref(), gateway_ids())),
        narrow,
        oracle_config,
        checked: Vec::new(),
        pending: None,
        remote: None,
    };
    let mut source = Source::new(spec, &setup.shape);
    let turns_max = spec.turns_max();
    let begun = gw.begin_remote();
    let opened = open_session(&mut gw.agent, &mut source, &mut gw.observer, turns_max);
    let ready = begun.and_then(|()| gw.open()).is_ok();
    let history = opened.history_turns;
    let first = history + opened.resumed_turns;
    let mut next_inbound = 0u64;
    // The next turn of the conversation (a redelivery takes none).
    let mut conversation_turn = opened.resumed_turns;
    // The loop's budget is not cut to a script's length: a redelivery is a turn of the
    // loop that takes no turn of the script (the script running out ends the case).
    for turn in first..first + budget_turns(spec) {
        if gw.observer.halted() || !ready {
            break;
        }
        let faults = gw.plan.next_inbound(turn);
        let inbound = match gw.pending.take() {
            Some(retry) => {
                gw.observer.bump("gateway.retries");
                retry
            }
            None => {
                let script = source.next_turn(conversation_turn, &mut gw.agent.ids);
                if script.is_empty() {
                    break;
                }
                conversation_turn += 1;
                next_inbound += 1;
                Inbound {
                    id: next_inbound,
                    script,
                    delivery: 0,
                }
            }
        };
        gw.observer.result.turns = turn + 1;
        if gw.turn(turn, inbound, faults).is_err() {
            break;
        }
        gw.observer.result.passes = gw.agent.passes;
        let tokens = gw.observer.tokens;
        gw.observer.result.tokens_per_turn.push(tokens);
        if gw.agent.passes >= spec.passes {
            break;
        }
    }
    let log = AgentLog {
        provider_calls: gw.agent.provider.log().to_vec(),
        resumed_turns: opened.resumed_turns,
        gateway: Some(GatewayLog {
            schedule: std::mem::take(&mut gw.plan.log),
            conversation_turns: conversation_turn,
        }),
    };
    (gw.finish(), log)
}

/// Gateway invariant ids (a plan's subset narrows them like the transition ones).
fn gateway_ids() -> Vec<&'static str> {
    compactsim_invariants::gateway::gateway_catalogue()
        .iter()
        .map(|i| i.id)
        .collect()
}

impl Gateway {
    /// The first session: the opened transcript, stored and routed.
    fn open(&mut self) -> Flow<()> {
        let id = self.w_open()?;
        self.remember(id);
        Ok(())
    }

    /// The volatile entry, the cached agent and its flush cursor name `id`.
    pub fn remember(&mut self, id: SessionNo) {
        let key = self.plan.key.clone();
        self.store.volatile.entries.insert(key.clone(), id);
        self.store.volatile.cached.insert(key.clone(), id);
        self.store
            .volatile
            .flushed
            .insert(key, self.agent.msgs.len());
    }

    pub fn key(&self) -> String {
        self.plan.key.clone()
    }

    /// Shows one gateway step and the durable store to the gateway oracle.
    pub fn step(&mut self, event: GatewayEvent) -> Flow<()> {
        let s = GatewayStep {
            step: self.observer.step,
            event: &event,
            store: &self.store.durable.snapshot,
        };
        let violations = self.oracle.observe(&s);
        if self.observer.record.trace {
            let line = format!("gateway: {}", event.describe());
            let step = self.observer.step;
            self.observer.result.gateway_trace.push((step, line));
        }
        if self.observer.judge(violations) {
            Ok(())
        } else {
            Err(Stop)
        }
    }

    /// The binding read path's self-heal (PR #34409): a binding left on a rotated
    /// session is re-synced to its compression tip.
    fn heal_binding(&mut self) {
        if self.is_remote() {
            return; // the adapter's store resolves the binding when it loads
        }
        let key = self.key();
        let snapshot = &self.store.durable.snapshot;
        let Some(bound) = snapshot.binding(&key) else {
            return;
        };
        let tip = compactsim_invariants::gateway::compression_tip(snapshot, bound);
        if let Some(tip) = tip.filter(|t| *t != bound) {
            if self.bugs.has(compactsim_hermes::bugs::Bug::H20470) {
                return; // H-20470: no read-path tip walk
            }
            self.store.durable.sync_binding(&key, tip);
        }
    }

    /// The session the gateway resolves the key to: the topic binding (walking to the
    /// compression tip, PR #34409), else the in-memory entry, else the saved route.
    pub fn resolve(&self) -> Option<SessionNo> {
        let key = self.plan.key.as_str();
        let snapshot = &self.store.durable.snapshot;
        if self.plan.topic {
            if let Some(b) = snapshot.binding(key) {
                let tip = compactsim_invariants::gateway::compression_tip(snapshot, b);
                if tip != Some(b) && self.bugs.has(compactsim_hermes::bugs::Bug::H20470) {
                    return Some(b); // H-20470: the binding is read as it is
                }
                return tip;
            }
        }
        self.store
            .volatile
            .entries
            .get(key)
            .copied()
            .or_else(|| snapshot.route(key))
    }

    /// Loads session `id` into a fresh agent process lifetime.
    pub fn load(&mut self, turn: u32, id: SessionNo) -> Flow<()> {
        let rows = if self.is_remote() {
            self.w_load(id)?
        } else {
            self.store.durable.load(id, || {
                self.bugs.has(compactsim_hermes::bugs::Bug::GLoadArchived)
            })
        };
        self.load_rows(turn, id, rows)
    }

    /// Hands `rows` to a fresh agent process lifetime as the history of session `id`.
    pub fn load_rows(&mut self, turn: u32, id: SessionNo, rows: Vec<Message>) -> Flow<()> {
        self.step(GatewayEvent::Loaded {
            turn,
            key: self.key(),
            session: id,
            rows: rows.iter().map(|m| m.id).collect(),
        })?;
        self.agent.restart_process();
        self.fresh_oracle();
        let mut rows = rows.into_iter().peekable();
        if let Some(system) = rows.next_if(|m| m.role == Role::System) {
            self.agent.msgs.push(system);
        }
        self.observer.tokens = compactsim_model::tokens_rough_total(&self.agent.msgs);
        let rest: Vec<Message> = rows.collect();
        if !rest.is_empty() {
            self.agent.resume(&mut self.observer, turn, rest)?;
        }
        self.observer.bump("gateway.loads");
        self.remember(id);
        Ok(())
    }

    /// A new process lifetime for the transition oracle (its per-case state starts over
    /// at the loaded transcript).
    fn fresh_oracle(&mut self) {
        let ended = self.observer.oracle.checked();
        add_checked(&mut self.checked, ended);
        self.observer.oracle =
            Oracle::with_only(self.oracle_config, &strs(&self.narrow)).expect("catalogue ids");
    }

    /// The process dies at `point`: the volatile store and every in-memory state of the
    /// agent and its compactor are gone; the next message loads from the durable store.
    pub fn crash(&mut self, turn: u32, point: Crash) -> Flow<()> {
        self.observer.bump(super::crash_counter(point));
        self.observer.bump("gateway.restarts");
        self.store.crash();
        self.kill_remote();
        self.agent.restart_process();
        let point = match point {
            Crash::MidTurn(n) => format!("mid-turn transition {n}"),
            Crash::At(p) => p.name().to_string(),
        };
        self.step(GatewayEvent::Crashed { turn, point })
    }

    /// The gateway loads the key's session unless the cached agent holds it already.
    pub fn ensure_loaded(&mut self, turn: u32) -> Flow<()> {
        let key = self.key();
        if self.is_remote() && !self.store.volatile.entries.contains_key(&key) {
            // A started process: the adapter's store resolves the key.
            // No session for the key (the store's start-up forgot it): the gateway
            // starts the key on a new session (`get_or_create_session`), and
            // session-id-persisted judges what was lost.
            return match self.w_load_resolved()? {
                Some((id, rows)) => self.load_rows(turn, id, rows),
                None => {
                    self.observer.bump("gateway.store.unresolved_keys");
                    self.open()
                }
            };
        }
        self.heal_binding();
        let Some(id) = self.resolve() else {
            return Ok(());
        };
        if self.store.volatile.cached.get(&key) == Some(&id) {
            return Ok(());
        }
        self.load(turn, id)
    }

    fn finish(mut self) -> CaseResult {
        let last = self.observer.oracle.checked();
        add_checked(&mut self.checked, last);
        let gateway = self.oracle.checked();
        add_checked(&mut self.checked, gateway);
        let mut result = self.observer.result;
        if let Some(failure) = self.agent.failure.take() {
            result.outcome =
                crate::engine::internal_unless_failed(result.outcome, failure.to_string());
        }
        result.checked = self.checked;
        result.summary_calls = self.agent.summarizer.log().to_vec();
        crate::engine::coverage::add_caps(&mut result.coverage, self.agent.summarizer.cap_counts());
        result
    }
}

fn strs(ids: &[String]) -> Vec<&str> {
    ids.iter().map(String::as_str).collect()
}

/// Adds `more` checked counts into `into`, keeping first-seen (catalogue) order.
fn add_checked(into: &mut Vec<(&'static str, u64)>, more: Vec<(&'static str, u64)>) {
    for (id, n) in more {
        match into.iter_mut().find(|(i, _)| *i == id) {
            Some(e) => e.1 += n,
            None => into.push((id, n)),
        }
    }
}
