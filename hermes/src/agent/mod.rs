//! The Hermes agent turn loop around batch compaction (hermes-domain §2.2, §2.5, §2.7,
//! §2.8): turn-start preflight, provider calls that produce the turn's rows, the
//! post-response check, overflow recovery with `max_attempts` ending in
//! `failed + compression_exhausted` and a session reset, the generic-400 and disconnect
//! heuristics, the anti-thrash policies and the failure-cooldown gate.
//!
//! CONTRACT:
//! - [`AgentLoop::run_turn`] consumes one turn script from the shape generator
//!   (`[user, (assistant with calls, tool rows)*, final reply]`): the user row is
//!   appended first; each successful provider call appends the next assistant row and,
//!   if it called tools, their results (tool execution); the final reply ends the turn.
//! - Every change of the live list and every decision is reported to the [`Sink`] as
//!   one transition before anything else happens; a `false` from the sink stops the
//!   case at once ([`Stop`]).
//! - Every loop is bounded by a named constant; virtual time (`now_ms`) advances by the
//!   user's think time, provider latency, summarizer latency and retry sleeps, never by
//!   the wall clock.
//! - Modelling choices where the notes are silent: the pre-send repair runs before the
//!   preflight and before every call, and is reported only when it changed something
//!   (a response append never needs one); a failed turn is rolled back (its rows
//!   removed) unless a compaction committed during it (the compaction persisted them);
//!   the post-response check also runs after a dropped connection, judging the rough
//!   estimate when usage is 0 (PR #4750).

mod antithrash;
mod config;
mod era;
mod fork;
pub mod micro_step;
mod preflight;
mod session_mode;
mod turn;
mod usage;

pub use antithrash::{AntiThrash, Gate, PassSeen, RECOVERY_WINDOW_MS};
pub use config::{AgentConfig, AgentParams, MAX_ATTEMPTS_DEFAULT};
pub use era::{AntiThrashPolicy, Era, LoopOptions};
pub use preflight::PREFLIGHT_PASSES_MAX;
pub use session_mode::SessionMode;
pub use turn::{TurnEnd, CALLS_PER_TURN_MAX, RETRIES_PER_CALL_MAX, ROUNDS_PER_TURN_MAX};
pub use usage::UsageState;

use crate::bugs::Bug;
use crate::compactor::repair;
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::provider::Provider;
use compactsim_fakes::seam::{BatchReport, BatchRequest, Compactor, CompactorFailure, Harness};
use compactsim_fakes::summarizer::served::{self, Serving};
use compactsim_fakes::summarizer::Summarizer;
use compactsim_model::{
    tokens_real_total, tokens_rough_total, BatchPassOutcome, BatchTrigger, Delta, Event, Message,
    Role, ServedCall,
};

/// Where the agent loop reports.
pub trait Sink {
    /// One transition: `event` took the live list from `before` to `after` (the same
    /// slice when it changed nothing). False stops the case.
    fn observe(&mut self, event: Event, before: &[Message], after: &[Message]) -> bool;
    /// [`Sink::observe`] with the changed window already computed by the caller:
    /// `delta` is `Delta::between(before, after)`, so a sink need not compare the lists
    /// again.
    fn observe_by(
        &mut self,
        event: Event,
        (before, after): (&[Message], &[Message]),
        _delta: Delta,
    ) -> bool {
        self.observe(event, before, after)
    }
    /// A coverage counter was reached.
    fn bump(&mut self, counter: &'static str);
    /// A coverage counter grew by `n`.
    fn add(&mut self, counter: &'static str, n: u64);
    /// The summarizer calls the harness served for the transition reported next (the
    /// pass that made them); they are shown to the oracle with it.
    fn served(&mut self, calls: Vec<ServedCall>);
    /// A copy of `live`, to be a transition's `before`. A sink that keeps a spare copy
    /// (one given back earlier) brings it in step with `live` in the rows that differ
    /// instead of cloning the whole list.
    fn copy_of(&mut self, live: &[Message]) -> Vec<Message> {
        live.to_vec()
    }
    /// Takes back a copy made by [`Sink::copy_of`] once its transition was observed.
    fn give_back(&mut self, _copy: Vec<Message>) {}
    /// [`Sink::give_back`] for a copy the caller knows equals `live` (it compared or
    /// synced them): a sink may then lend it again without comparing, for as long as
    /// the transitions it observes provably only append to `live` or leave it alone.
    fn give_back_in_step(&mut self, copy: Vec<Message>, live: &[Message]) {
        debug_assert!(copy.as_slice() == live, "a copy given back in step differs");
        self.give_back(copy);
    }
}

/// The sink stopped the case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop;

pub type Flow<T> = Result<T, Stop>;

/// A user's `/stop` during a turn (hermes-domain §2.9, #25747/#29140): armed by the
/// gateway for one turn, it interrupts the turn between two provider calls once a
/// compaction committed in it and a call was answered since (the slow "Compacting
/// context…" turn a user stops; the interrupt is checked at the top of each iteration of
/// the loop); the turn then ends as failed, keeping the committed compaction. A stop
/// before any answered call would leave the compaction without a real usage reading,
/// which no turn of the model does otherwise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StopRequest {
    pub armed: bool,
    /// The stop interrupted the turn.
    pub fired: bool,
}

/// State of one session; a reset after compression exhaustion starts a fresh one.
#[derive(Clone, Debug)]
struct Session {
    guard: AntiThrash,
    usage: UsageState,
}

/// Per-turn bookkeeping.
#[derive(Clone, Copy, Debug, Default)]
struct TurnState {
    /// A compaction committed during this turn.
    compacted: bool,
    /// Overflow recovery rounds spent.
    attempts: u32,
    /// Provider calls made.
    calls: u32,
    /// A provider call answered after the last compaction of this turn.
    answered_since_compaction: bool,
}

/// What changed in the live list since the last pre-send repair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dirty {
    Clean,
    /// Only rows from this index on were appended (a user row: only a merge with the row
    /// before it can be needed).
    Appended(usize),
    /// Anything else (a compaction, a rollback, a reset).
    Any,
}

/// What one batch pass did, as the loop needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PassEffect {
    pub committed: bool,
    /// Fewer rows or fewer rough tokens than before.
    pub shrank: bool,
}

/// One simulated agent process with its environment: the live list, the summarizer,
/// the provider, and the compactor under test behind its seam.
pub struct AgentLoop {
    pub config: AgentConfig,
    pub msgs: Vec<Message>,
    pub ids: IdAlloc,
    pub summarizer: Summarizer,
    pub provider: Provider,
    compactor: Box<dyn Compactor>,
    /// Strategy `both`: a micro pass after every finished turn.
    micro: bool,
    /// The compactor failed as a component; the case stopped.
    pub failure: Option<CompactorFailure>,
    /// Virtual time, milliseconds since the case began.
    pub now_ms: u64,
    /// Batch passes (any outcome) plus micro passes that found work.
    pub passes: u32,
    /// Session id generation: bumped by every rotation and reset.
    pub session_id: u32,
    /// The gateway's `/stop`: the turn is interrupted at its first provider call after a
    /// compaction committed in it (see [`StopRequest`]).
    pub stop: StopRequest,
    session: Session,
    turn: TurnState,
    /// The list changed since the last repair by something other than a response.
    dirty: Dirty,
    /// Rough and real token totals of `msgs`, when known.
    totals: Option<(u64, u64)>,
}

impl AgentLoop {
    pub fn new(
        config: AgentConfig,
        summarizer: Summarizer,
        provider: Provider,
        compactor: Box<dyn Compactor>,
        micro: bool,
    ) -> Self {
        let session = Session::fresh(&config);
        AgentLoop {
            config,
            msgs: Vec::new(),
            ids: IdAlloc::default(),
            summarizer,
            provider,
            compactor,
            micro,
            failure: None,
            now_ms: 0,
            passes: 0,
            session_id: 0,
            stop: StopRequest::default(),
            session,
            turn: TurnState::default(),
            dirty: Dirty::Any,
            totals: None,
        }
    }

    /// The compactor under test.
    pub fn compactor(&self) -> &dyn Compactor {
        self.compactor.as_ref()
    }

    /// The compactor under test, to drive beyond the seam (the gateway's external store).
    pub fn compactor_mut(&mut self) -> &mut dyn Compactor {
        self.compactor.as_mut()
    }

    pub fn usage(&self) -> &UsageState {
        &self.session.usage
    }

    /// A compaction committed during the current (or last) turn: observed by the
    /// harness, which runs the loop (a prefix check of the live list misses a pass that
    /// kept the rows before the turn).
    pub fn compacted_this_turn(&self) -> bool {
        self.turn.compacted
    }

    /// Rough and real token totals of the live list (cached until it changes).
    fn totals(&mut self) -> (u64, u64) {
        *self.totals.get_or_insert_with(|| {
            (
                tokens_rough_total(&self.msgs),
                tokens_real_total(&self.msgs),
            )
        })
    }

    /// The live list changed in some way other than an append.
    fn changed(&mut self) {
        self.totals = None;
        self.dirty = Dirty::Any;
    }

    /// Appends rows, keeping the cached totals.
    fn extend(&mut self, rows: Vec<Message>) {
        if let Some((rough, real)) = &mut self.totals {
            *rough += tokens_rough_total(&rows);
            *real += tokens_real_total(&rows);
        }
        self.msgs.extend(rows);
    }

    /// Rough estimate of the messages alone.
    fn messages_rough(&mut self) -> u64 {
        self.totals().0
    }

    /// Rough request estimate: messages + system prompt + tool schemas.
    fn request_rough(&mut self) -> u64 {
        self.messages_rough() + self.config.overhead_rough_tokens as u64
    }

    /// Reports a transition that changed nothing.
    fn see(&self, sink: &mut dyn Sink, event: Event) -> Flow<()> {
        if self.failure.is_some() {
            return Err(Stop);
        }
        if sink.observe(event, &self.msgs, &self.msgs) {
            Ok(())
        } else {
            Err(Stop)
        }
    }

    /// Reports a transition from `before` to the current list.
    fn see_change(&self, sink: &mut dyn Sink, event: Event, before: &[Message]) -> Flow<()> {
        if self.failure.is_some() {
            return Err(Stop);
        }
        if sink.observe(event, before, &self.msgs) {
            Ok(())
        } else {
            Err(Stop)
        }
    }

    /// Appends rows (the world's input) and reports them as one transition.
    fn append(&mut self, sink: &mut dyn Sink, turn: u32, rows: Vec<Message>) -> Flow<()> {
        let n = self.msgs.len();
        let appended = rows.len() as u32;
        self.extend(rows);
        self.dirty = match self.dirty {
            Dirty::Clean => Dirty::Appended(n),
            other => other,
        };
        if sink.observe(
            Event::TurnAppended { turn, appended },
            &self.msgs[..n],
            &self.msgs,
        ) {
            Ok(())
        } else {
            Err(Stop)
        }
    }

    /// Loads a resumed session's history (whole turns) as one append.
    pub fn resume(&mut self, sink: &mut dyn Sink, turn: u32, rows: Vec<Message>) -> Flow<()> {
        self.append(sink, turn, rows)
    }

    /// The pre-send repair, if the list changed since the last one; reported only when
    /// it changed something.
    fn repair_if_dirty(&mut self, sink: &mut dyn Sink, turn: u32) -> Flow<()> {
        let needed = match std::mem::replace(&mut self.dirty, Dirty::Clean) {
            Dirty::Clean => false,
            Dirty::Appended(n) => n > 0 && self.msgs[n - 1].role == Role::User,
            Dirty::Any => true,
        };
        // A list the repair would leave as it is needs no copy to compare with: the
        // repair is not run (it would change nothing and report nothing).
        if !needed || !repair::needed(&self.msgs) {
            return Ok(());
        }
        let before = sink.copy_of(&self.msgs);
        let stats = repair::repair(&mut self.msgs);
        if stats == repair::RepairStats::default() {
            sink.give_back_in_step(before, &self.msgs);
            return Ok(());
        }
        self.totals = None;
        sink.bump("agent.repairs");
        let event = Event::Repair {
            turn,
            merged_rows: stats.merged_rows,
            dropped_rows: stats.dropped_rows,
            pruned_calls: stats.pruned_calls,
        };
        let seen = self.see_change(sink, event, &before);
        sink.give_back(before);
        seen
    }

    /// One batch pass with `trigger`; feeds the anti-thrash guard and the usage state,
    /// rotates the session id in rotation mode.
    fn pass(&mut self, sink: &mut dyn Sink, turn: u32, trigger: BatchTrigger) -> Flow<PassEffect> {
        let before = sink.copy_of(&self.msgs);
        let at = self.now_ms;
        let request = BatchRequest {
            turn,
            trigger,
            force: trigger == BatchTrigger::Manual,
        };
        let (report, calls) = self.with_harness(|compactor, msgs, harness| {
            compactor.batch_pass(msgs, request, harness)
        })?;
        self.now_ms += served::latency_ms(&calls);
        self.passes += 1;
        let committed = report.outcome.committed();
        if committed {
            self.changed();
        }
        let (tokens_before, tokens_after) = (tokens_rough_total(&before), self.messages_rough());
        count_pass(sink, &report, trigger);
        sink.served(calls);
        let event = Event::BatchPass(compactsim_model::BatchPass {
            turn,
            trigger,
            outcome: report.outcome,
            messages_before: before.len() as u32,
            messages_after: self.msgs.len() as u32,
            tokens_before,
            tokens_after,
            head_end: report.head_end,
            summary_tokens: report.summary_tokens,
            fallback: report.fallback,
            summary_failed: report.summary_failed,
            summary_call_failed: report.summary_call_failed,
            fallback_mismatch: report.fallback_mismatch.clone(),
            now_ms: at,
        });
        self.see_change(sink, event, &before)?;
        let seen = PassSeen {
            outcome: report.outcome,
            tokens_before,
            tokens_after,
        };
        let streak = self.hook(|c| c.fallback_streak());
        if self.session.guard.on_pass(seen, streak, self.now_ms) {
            sink.bump("antithrash.blocked");
        }
        let effect = PassEffect {
            committed,
            shrank: committed && (self.msgs.len() < before.len() || tokens_after < tokens_before),
        };
        sink.give_back(before);
        if effect.committed {
            let rough = self.request_rough();
            self.session.usage.on_compaction(rough);
            self.turn.compacted = true;
            self.turn.answered_since_compaction = false;
        }
        // H-57771 is asked only where it decides: a rotation-mode pass that did not shrink.
        let rotates = !self.config.in_place && (effect.shrank || self.config.has(Bug::H57771));
        if rotates {
            let old = self.session_id;
            self.session_id += 1;
            sink.bump("session.rotations");
            let new = self.session_id;
            self.see(sink, Event::Rotation { turn, old, new })?;
        }
        Ok(effect)
    }

    /// Runs `f` with the compactor, the live list and a harness serving the summarizer;
    /// returns what it returned and the summarizer calls served. A compactor failure
    /// stops the case.
    pub(crate) fn with_harness<T>(
        &mut self,
        f: impl FnOnce(
            &mut dyn Compactor,
            &mut Vec<Message>,
            &mut Harness<'_>,
        ) -> Result<T, CompactorFailure>,
    ) -> Flow<(T, Vec<compactsim_model::ServedCall>)> {
        let mut serving = Serving::new(&mut self.summarizer);
        let mut harness = Harness {
            summarizer: &mut serving,
            ids: &mut self.ids,
            now_ms: self.now_ms,
        };
        let result = f(self.compactor.as_mut(), &mut self.msgs, &mut harness);
        let calls = serving.into_calls();
        match result {
            Ok(value) => Ok((value, calls)),
            Err(failure) => {
                self.failure = Some(failure);
                Err(Stop)
            }
        }
    }

    /// A hook's answer. A failing hook is the case's compactor failure (the first one
    /// is kept): the hook answers its default and the loop stops at its next
    /// observation.
    pub(crate) fn hook<T: Default>(
        &mut self,
        ask: impl FnOnce(&mut dyn Compactor) -> Result<T, CompactorFailure>,
    ) -> T {
        match ask(self.compactor.as_mut()) {
            Ok(value) => value,
            Err(failure) => {
                self.failure.get_or_insert(failure);
                T::default()
            }
        }
    }

    /// The compactor's summary-failure cooldown is in force now.
    pub(crate) fn cooling_down(&mut self) -> bool {
        let now_ms = self.now_ms;
        self.hook(|c| c.cooling_down(now_ms))
    }

    /// The summary-failure cooldown holds automatic compaction back (never under
    /// H-11529, which skips the check). H-11529 is noted only when the cooldown is on,
    /// the one case it decides; skipping the hook under the switch changes nothing else
    /// (the reference's cooldown hook only reads).
    pub(crate) fn cooldown_holds(&mut self) -> bool {
        !self.config.bugs.has_unnoted(Bug::H11529)
            && self.cooling_down()
            && !self.config.has(Bug::H11529)
    }

    /// `should_compress(tokens)`: at or over the trigger, the guard open (a due V2.2
    /// probe is taken), no summary-failure cooldown (unless H-11529).
    pub(crate) fn should_compress(&mut self, sink: &mut dyn Sink, tokens: u64) -> bool {
        self.should_compress_unless(sink, tokens, |_| false)
    }

    /// [`Self::should_compress`] with the guard bypassed as [`Self::take_gate_unless`].
    pub(crate) fn should_compress_unless(
        &mut self,
        sink: &mut dyn Sink,
        tokens: u64,
        bypass: impl Fn(&Self) -> bool,
    ) -> bool {
        if tokens < self.config.trigger_tokens() as u64 {
            return false;
        }
        if self.cooldown_holds() {
            return false;
        }
        self.take_gate_unless(sink, bypass)
    }

    /// Asks the guard; takes a due probe. True when compaction may run. A guard not
    /// simply open lets compaction run without a probe when `bypass()` (asked only then:
    /// preflight's H-35054, which has no guard, decides only there).
    pub(crate) fn take_gate_unless(
        &mut self,
        sink: &mut dyn Sink,
        bypass: impl Fn(&Self) -> bool,
    ) -> bool {
        let streak = self.hook(|c| c.fallback_streak());
        match self.session.guard.gate(streak, self.now_ms) {
            Gate::Open => true,
            _ if bypass(self) => true,
            Gate::Blocked => false,
            Gate::Probe => {
                self.session.guard.take_probe(self.now_ms);
                sink.bump("antithrash.recovered");
                true
            }
        }
    }

    /// A process restart (the gateway's crash or cold load): every in-memory state of
    /// the agent and its compactor is dropped and the live list is emptied; the caller
    /// loads the persisted transcript next (`push` a system row, then [`Self::resume`]).
    pub fn restart_process(&mut self) {
        self.msgs.clear();
        self.changed();
        self.forget_in_memory();
    }

    /// A process restart between two turns of a world that persisted every finished
    /// turn (the `both` loop, whose reloaded transcript is the live list): the agent's
    /// and its compactor's in-memory state is dropped, the list stays, and so does the
    /// anti-thrash state, which the fixed releases persist (hermes-domain §2.5,
    /// H-14694: "state survives restarts"). Reported as a [`Event::Restart`] (an
    /// injected fault the oracle may believe).
    pub fn restart_between_turns(&mut self, sink: &mut dyn Sink, turn: u32) -> Flow<()> {
        let guard = self.session.guard.clone();
        self.forget_in_memory();
        self.session.guard = guard;
        sink.bump("restart");
        self.see(sink, Event::Restart { turn })
    }

    /// Every in-memory state of the agent and its compactor is forgotten.
    fn forget_in_memory(&mut self) {
        self.session = Session::fresh(&self.config);
        self.turn = TurnState::default();
        self.compactor.restart();
    }

    /// `/compress` (or the gateway's session hygiene): one forced batch pass outside a
    /// turn. Returns whether it committed.
    pub fn manual_compress(&mut self, sink: &mut dyn Sink, turn: u32) -> Flow<bool> {
        self.turn = TurnState::default();
        self.repair_if_dirty(sink, turn)?;
        Ok(self.pass(sink, turn, BatchTrigger::Manual)?.committed)
    }

    /// Session auto-reset after compression exhaustion (#9893/#10063): the transcript
    /// restarts empty (a leading system row is kept) with fresh compactor and agent state.
    fn reset_session(&mut self, sink: &mut dyn Sink, turn: u32) -> Flow<()> {
        let before = sink.copy_of(&self.msgs);
        let keep = usize::from(self.msgs.first().is_some_and(|m| m.role == Role::System));
        self.msgs.truncate(keep);
        self.changed();
        self.session = Session::fresh(&self.config);
        self.compactor.restart();
        self.session_id += 1;
        sink.bump("session.resets");
        let now_ms = self.now_ms;
        let seen = self.see_change(sink, Event::SessionReset { turn, now_ms }, &before);
        sink.give_back(before);
        seen
    }
}

impl Session {
    fn fresh(config: &AgentConfig) -> Self {
        Session {
            guard: AntiThrash::new(config.policy(), &config.bugs),
            usage: UsageState::default(),
        }
    }
}

fn count_pass(sink: &mut dyn Sink, out: &BatchReport, trigger: BatchTrigger) {
    sink.bump(match (out.outcome, out.fallback) {
        (BatchPassOutcome::Compacted, false) => "batch.compacted",
        (BatchPassOutcome::Compacted, true) => "batch.fallback",
        (BatchPassOutcome::Aborted, _) => "batch.aborted",
        (BatchPassOutcome::NoOp, _) => "batch.noop",
    });
    if out.summary_expanded {
        sink.bump("batch.summary_expanded");
    }
    match trigger {
        BatchTrigger::Preflight => sink.bump("preflight.passes"),
        BatchTrigger::PostResponse => sink.bump("postresponse.passes"),
        BatchTrigger::Overflow => sink.bump("overflow.recoveries"),
        // The agent loop never runs `/compress`.
        BatchTrigger::Manual => {}
    }
}
