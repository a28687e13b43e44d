//! One inbound message through the gateway: drop a redelivery, run commands and
//! session hygiene, load the session, run the agent turn, persist it (§2.8, §2.9),
//! acknowledge it — with the fault plan's crash at its chosen point.
//!
//! Durable writes of a handled turn, each one step (a crash point between each):
//! 1. the user row, flushed before the provider call (§2.9; `after-user-flush` follows);
//! 2. after a compaction, the turn's rows the old session lacks, flushed to it before it
//!    is rotated or compacted in place (flush before rotate, #48584;
//!    `after-rotate-flush` follows);
//! 3. the turn's rows, in one transaction with its idempotency record: the rest of a
//!    finished turn appended; or, after a compaction, the rotated child with the route
//!    saved in the same block (H-29335's fix) or the in-place `archive_and_compact`; a
//!    failed turn keeps its user row only after a transient failure (#7100) and
//!    otherwise supersedes it (§2.8); an exhausted one writes the reset session with its
//!    route;
//! 4. the topic binding re-synced (`after-write` falls before it);
//!
//! Then the ack (`after-mapping` and `before-ack` fall before it). A redelivered message
//! whose first delivery crashed before its record supersedes what that delivery flushed.

use super::faults::{Crash, CrashPoint, InboundFaults};
use super::sink::CrashSink;
use super::world::{Gateway, Inbound};
use super::{HYGIENE_HISTORY_MIN, HYGIENE_WINDOW_PER_MILLE};
use crate::external::store::ops::Reason;
use compactsim_hermes::agent::{Flow, Sink, StopRequest, TurnEnd};
use compactsim_hermes::bugs::Bug;
use compactsim_model::{
    tokens_rough_total, CallErrorClass, GatewayEvent, Message, MsgId, SessionNo, TurnOutcome,
};

/// What the gateway's persistence knows of a finished agent turn.
struct TurnFacts {
    outcome: TurnOutcome,
    /// A compaction (or repair) rewrote the live list during the turn.
    compacted: bool,
    /// The agent rotated to a new session id during the turn.
    rotated: bool,
    /// The turn's failure is one the gateway treats as transient.
    transient: bool,
    /// The rows the live list held before the turn's compactions.
    pre_compaction: Vec<Message>,
    /// The turn's compactions were written at their passes (an adapter's store).
    written_at_passes: bool,
}

impl Gateway {
    /// Handles one turn's inbound message (and its duplicate), with `faults`.
    pub(super) fn turn(&mut self, turn: u32, inbound: Inbound, faults: InboundFaults) -> Flow<()> {
        if faults.restart {
            self.observer.bump("gateway.restarts");
            self.store.crash();
            self.kill_remote();
            self.agent.restart_process();
        }
        self.supersede_unrecorded(&inbound)?;
        self.ensure_loaded(turn)?;
        if faults.reset {
            self.observer.bump("gateway.commands.reset");
            self.command_reset(turn)?;
        }
        if faults.compress {
            self.observer.bump("gateway.commands.compress");
            self.compress(turn, Reason::Command)?;
        }
        let acked = self.handle(turn, &inbound, faults.crash, faults.stop)?;
        if !acked {
            self.pending = Some(Inbound {
                delivery: inbound.delivery + 1,
                ..inbound
            });
        } else if faults.duplicate {
            self.observer.bump("gateway.duplicates");
            let again = Inbound {
                delivery: inbound.delivery + 1,
                ..inbound
            };
            self.handle(turn, &again, None, false)?;
        }
        Ok(())
    }

    /// One delivery. True when it was acknowledged (false: the process crashed first).
    /// `stop`: the user sends `/stop` while its turn runs.
    fn handle(
        &mut self,
        turn: u32,
        inbound: &Inbound,
        crash: Option<Crash>,
        stop: bool,
    ) -> Flow<bool> {
        let key = self.key();
        self.w_deliver(inbound.id, inbound.delivery)?;
        self.step(GatewayEvent::Inbound {
            turn,
            key: key.clone(),
            inbound: inbound.id,
            delivery: inbound.delivery,
        })?;
        if self.store.durable.delivered(inbound.id) && !self.bugs.has(Bug::GNoDedupe) {
            return self.ack(turn, inbound.id).map(|_| true);
        }
        self.ensure_loaded(turn)?;
        self.hygiene(turn)?;
        if crash == Some(Crash::At(CrashPoint::BeforeTurn)) {
            self.crash(turn, Crash::At(CrashPoint::BeforeTurn))?;
            return Ok(false);
        }
        let user = inbound.script[0].id;
        self.step(GatewayEvent::TurnStarted {
            turn,
            key: key.clone(),
            inbound: inbound.id,
            user,
        })?;
        let before: Vec<MsgId> = self.agent.msgs.iter().map(|m| m.id).collect();
        let rotation_before = self.agent.session_id;
        // H-29926: the post-turn list of the CLI's result, kept to hand back next turn
        // (the switch is asked where the list is used).
        let pre_turn = self
            .bugs
            .has_unnoted(Bug::H29926)
            .then(|| self.agent.msgs.clone());
        self.flush_user(&inbound.script[0])?;
        if self.crash_at(turn, crash, CrashPoint::AfterUserFlush)? {
            return Ok(false);
        }
        self.agent.stop = StopRequest {
            armed: stop,
            fired: false,
        };
        let crash_at = match crash {
            Some(Crash::MidTurn(n)) => Some(n),
            Some(Crash::At(_)) | None => None,
        };
        let remote = self.is_remote();
        let mut sink = CrashSink::new(&mut self.observer, crash_at);
        sink.keep_rewrites = remote;
        let end = self.agent.run_turn(&mut sink, turn, inbound.script.clone());
        let stopped = std::mem::take(&mut self.agent.stop).fired;
        if stopped {
            sink.bump("gateway.stops");
        }
        let rewrites = std::mem::take(&mut sink.rewrites);
        if sink.crashed {
            // The compactions before the crash reached the store (written at their pass).
            self.write_rewrites(rewrites)?;
            self.crash(turn, crash.expect("a mid-turn crash"))?;
            return Ok(false);
        }
        let (pre_compaction, fed, last_error) = (sink.pre_compaction, sink.fed, sink.last_error);
        if stopped {
            self.w_stop(inbound.id)?;
        }
        let written_at_passes = !rewrites.is_empty();
        self.write_rewrites(rewrites)?;
        let outcome = match end? {
            TurnEnd::Finished => TurnOutcome::Finished,
            TurnEnd::Failed { exhausted: false } => TurnOutcome::Failed,
            TurnEnd::Failed { exhausted: true } => TurnOutcome::Exhausted,
        };
        if self.bugs.has(Bug::GAckEarly) {
            self.ack(turn, inbound.id)?;
        }
        let facts = TurnFacts {
            outcome,
            compacted: outcome != TurnOutcome::Exhausted
                && (self.agent.compacted_this_turn()
                    || !self.live_extends(&before)
                    || (outcome == TurnOutcome::Finished && !self.holds_at(before.len(), user))),
            rotated: self.agent.session_id != rotation_before,
            transient: last_error.is_some_and(|(class, _)| self.kept_as_transient(class)),
            pre_compaction,
            written_at_passes,
        };
        let compacted = facts.compacted;
        let rotated = facts.rotated;
        self.persist(turn, inbound, facts, crash)?;
        if self.store.volatile.cached.is_empty() {
            return Ok(false); // crashed between the writes
        }
        let overflow = match outcome {
            TurnOutcome::Finished => false,
            TurnOutcome::Exhausted => true,
            TurnOutcome::Failed => last_error.is_some_and(|(_, over_window)| over_window),
        };
        self.step(GatewayEvent::TurnDone {
            turn,
            key,
            inbound: inbound.id,
            user,
            turn_rows: fed,
            outcome,
            compacted,
            overflow,
            live: self.agent.msgs.iter().map(|m| m.id).collect(),
        })?;
        if crash == Some(Crash::At(CrashPoint::BeforeAck)) {
            self.crash(turn, Crash::At(CrashPoint::BeforeAck))?;
            return Ok(false);
        }
        self.ack(turn, inbound.id)?;
        // Asked whether or not the list was kept: a clean run notes it here.
        let hands_back = rotated && outcome == TurnOutcome::Finished && self.bugs.has(Bug::H29926);
        if let Some(pre) = pre_turn.filter(|_| hands_back) {
            self.hand_uncompacted(turn, pre, &inbound.script)?;
        }
        Ok(true)
    }

    fn ack(&mut self, turn: u32, inbound: u64) -> Flow<()> {
        self.w_ack(inbound)?;
        self.step(GatewayEvent::Acked { turn, inbound })
    }

    /// The live list still starts with `before` (nothing rewrote it).
    fn live_extends(&self, before: &[MsgId]) -> bool {
        self.agent.msgs.len() >= before.len()
            && self
                .agent
                .msgs
                .iter()
                .zip(before)
                .all(|(m, id)| m.id == *id)
    }

    /// The live list holds row `id` at `at` (a finished turn's user row where it was
    /// appended: a repair that merged it away rewrote the list).
    fn holds_at(&self, at: usize, id: MsgId) -> bool {
        self.agent.msgs.get(at).is_some_and(|m| m.id == id)
    }

    /// The session the cached agent holds.
    pub(super) fn cached(&self) -> SessionNo {
        self.store.volatile.cached[&self.key()]
    }

    /// §2.9: the inbound user row is flushed to the cached session before the provider
    /// call (one durable write), after whatever the flush cursor says is not flushed yet
    /// (nothing, unless a bug moved the cursor); the cursor moves past the user row's
    /// slot.
    fn flush_user(&mut self, user: &Message) -> Flow<()> {
        let sid = self.cached();
        let key = self.key();
        let n = self.agent.msgs.len();
        let from = self.store.volatile.flushed[&key].min(n);
        let mut rows = self.agent.msgs[from..].to_vec();
        rows.push(user.clone());
        self.w_append(sid, &rows)?;
        self.store.volatile.flushed.insert(key, n + 1);
        Ok(())
    }

    /// A failed turn's failure the gateway treats as transient (#7100: its user message
    /// is kept). H-1630: the terse 400 the agent classed as a non-retryable client error
    /// is treated so too, and the failed turn is persisted.
    fn kept_as_transient(&self, class: CallErrorClass) -> bool {
        class == CallErrorClass::Transient
            || (class == CallErrorClass::ClientError && self.bugs.has(Bug::H1630))
    }

    /// A redelivered message whose first delivery crashed before its turn was recorded:
    /// what that delivery flushed (its user row and any row after it) is superseded
    /// before the session loads, so the turn runs again on the session as it was.
    pub(super) fn supersede_unrecorded(&mut self, inbound: &Inbound) -> Flow<()> {
        if inbound.delivery == 0 || self.store.durable.delivered(inbound.id) {
            return Ok(());
        }
        let Some(sid) = self.resolve() else {
            return Ok(());
        };
        if self.store.volatile.cached.get(&self.key()) == Some(&sid) {
            return Ok(()); // the cached agent holds it: no crash since
        }
        if self.w_retract(sid, inbound.script[0].id)? > 0 {
            self.observer.bump("gateway.superseded");
        }
        Ok(())
    }

    /// §2.9 flush before rotate (#48584): the rows the live list held before the turn's
    /// compactions that the old session does not store yet go to it before it is rotated
    /// or compacted in place. H-48584: skipped; the rows a compaction summarized are lost.
    /// The switch is asked only where it decides: some row is not stored yet.
    fn flush_before_compact(&mut self, sid: SessionNo, pre_compaction: &[Message]) -> Flow<()> {
        let rows = self.store.durable.unstored(sid, pre_compaction);
        if rows.is_empty() || self.bugs.has(Bug::H48584) {
            return Ok(());
        }
        self.observer.bump("gateway.rotate_flushes");
        self.w_append(sid, &rows)
    }

    /// Persists a handled turn (see the module doc); a crash point may end it early
    /// (the volatile store is then empty).
    fn persist(
        &mut self,
        turn: u32,
        inbound: &Inbound,
        facts: TurnFacts,
        crash: Option<Crash>,
    ) -> Flow<()> {
        let key = self.key();
        let sid = self.cached();
        let outcome = facts.outcome;
        let failed = outcome != TurnOutcome::Finished;
        // H-85145: the flag is forwarded only on the empty-response path, and an
        // exhausted turn always has a response: the gateway sees a plain failed turn.
        let exhausted_flag = outcome == TurnOutcome::Exhausted && !self.bugs.has(Bug::H85145);
        let exhausted_seen = exhausted_flag && !self.bugs.has(Bug::H9893);
        if exhausted_flag && !exhausted_seen {
            // H-9893: the guard also required an empty final response, which is always
            // filled: the failed turn is persisted as if it succeeded (its user row,
            // flushed before the call, stays), and no reset runs.
            self.w_record(sid, inbound.id)?;
        } else if exhausted_seen {
            self.observer.bump("gateway.resets");
            let rows = self.agent.msgs.clone();
            // The same transaction: no crash may leave the binding on the old one.
            let bind = !(self.plan.topic && self.bugs.has(Bug::H35809));
            let new = self.w_reset(sid, &rows, Reason::Exhausted, bind)?;
            self.reset_step(turn, new, true)?;
            self.w_record(new, inbound.id)?;
            self.remember(new);
            if self.crash_at(turn, crash, CrashPoint::AfterWrite)? {
                return Ok(());
            }
        } else if facts.compacted && facts.written_at_passes {
            self.persist_after_passes(turn, inbound, &facts, crash)?;
            if self.store.volatile.cached.is_empty() {
                return Ok(());
            }
        } else if facts.compacted {
            self.flush_before_compact(sid, &facts.pre_compaction)?;
            if self.crash_at(turn, crash, CrashPoint::AfterRotateFlush)? {
                return Ok(());
            }
            // H-25747: the id sync runs only on the success path. Asked only where it
            // decides: the id sync exists only for a rotation.
            let sync_id = !(failed && facts.rotated && self.bugs.has(Bug::H25747));
            self.persist_compaction(sid, facts.rotated, sync_id, Reason::Turn)?;
            let now = self.cached();
            self.w_record(now, inbound.id)?;
            if self.crash_at(turn, crash, CrashPoint::AfterWrite)? {
                return Ok(());
            }
            let now = self.cached();
            if facts.rotated && self.plan.topic && sync_id && !self.bugs.has(Bug::H20470) {
                self.w_bind(now)?;
            }
        } else if !failed {
            let from = self.store.volatile.flushed[&key].min(self.agent.msgs.len());
            let rows = self.agent.msgs[from..].to_vec();
            self.w_append(sid, &rows)?;
            self.w_record(sid, inbound.id)?;
            self.store
                .volatile
                .flushed
                .insert(key, self.agent.msgs.len());
            if self.crash_at(turn, crash, CrashPoint::AfterWrite)? {
                return Ok(());
            }
        } else {
            self.persist_failed(turn, inbound, sid, &facts, crash)?;
            if self.store.volatile.cached.is_empty() {
                return Ok(());
            }
        }
        if self.crash_at(turn, crash, CrashPoint::AfterMapping)? {
            return Ok(());
        }
        Ok(())
    }

    /// A compacted turn whose compactions the adapter's store got at their passes
    /// (`write_rewrites`): the rotation is on disk, the route not yet saved
    /// (`after-rotate-flush` falls here); then the turn's remaining rows go to the
    /// current session with its idempotency record, and the route is saved (the
    /// session-split sync after the agent returns).
    fn persist_after_passes(
        &mut self,
        turn: u32,
        inbound: &Inbound,
        facts: &TurnFacts,
        crash: Option<Crash>,
    ) -> Flow<()> {
        if self.crash_at(turn, crash, CrashPoint::AfterRotateFlush)? {
            return Ok(());
        }
        let key = self.key();
        let sid = self.cached();
        let from = self.store.volatile.flushed[&key].min(self.agent.msgs.len());
        let rows = self.agent.msgs[from..].to_vec();
        if !rows.is_empty() {
            self.w_append(sid, &rows)?;
        }
        self.w_record(sid, inbound.id)?;
        if facts.rotated {
            self.w_route(sid)?;
        }
        self.remember(sid);
        if self.crash_at(turn, crash, CrashPoint::AfterWrite)? {
            return Ok(());
        }
        if facts.rotated && self.plan.topic {
            self.w_bind(sid)?;
        }
        Ok(())
    }

    /// A failed turn without a committed compaction (§2.8): after a transient failure
    /// its user row stays stored and the next turn's history holds it (#7100; the cached
    /// agent is evicted and the transcript loaded); after any
    /// other failure it is superseded. H-85145: the exhausted turn seen as a plain failed
    /// one leaves the cached agent on the exhausted session, reloaded as stored.
    fn persist_failed(
        &mut self,
        turn: u32,
        inbound: &Inbound,
        sid: SessionNo,
        facts: &TurnFacts,
        crash: Option<Crash>,
    ) -> Flow<()> {
        let user = &inbound.script[0];
        let keep = facts.transient && facts.outcome == TurnOutcome::Failed;
        if !keep {
            self.w_retract(sid, user.id)?;
        }
        self.w_record(sid, inbound.id)?;
        if self.crash_at(turn, crash, CrashPoint::AfterWrite)? {
            return Ok(());
        }
        if facts.outcome == TurnOutcome::Exhausted {
            // H-85145: no reset; the gateway's agent holds the exhausted session again.
            return self.load(turn, sid);
        }
        if keep {
            // The next turn's history is the stored transcript, which holds the user row:
            // the gateway evicts its cached agent and loads it.
            self.observer.bump("gateway.failed_user_kept");
            return self.load(turn, sid);
        }
        let n = self.agent.msgs.len();
        self.store.volatile.flushed.insert(self.key(), n);
        Ok(())
    }

    /// Crashes if `crash` falls at `point`; true when it did.
    fn crash_at(&mut self, turn: u32, crash: Option<Crash>, point: CrashPoint) -> Flow<bool> {
        if crash == Some(Crash::At(point)) {
            self.crash(turn, Crash::At(point))?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Persists a compaction of the cached session: a rotation creates the child and
    /// saves the route in the same step (`sync_id`: the id sync runs; not under
    /// H-29335), also when the turn failed; in place, `archive_and_compact`.
    fn persist_compaction(
        &mut self,
        sid: SessionNo,
        rotated: bool,
        sync_id: bool,
        reason: Reason,
    ) -> Flow<()> {
        let key = self.key();
        if self.bugs.has(Bug::H50037) {
            // H-50037: nothing of the compaction is written; the agent carries on.
            self.remember(sid);
            return Ok(());
        }
        // H-4095: flush_from = the pre-compaction length, past the end of the shorter
        // compacted list: nothing of it is written.
        let from = if self.bugs.has(Bug::H4095) {
            self.store.volatile.flushed[&key].min(self.agent.msgs.len())
        } else {
            0
        };
        let mut rows = self.agent.msgs[from..].to_vec();
        if rotated {
            self.observer.bump("gateway.rotations");
            if self.bugs.has(Bug::H57491) {
                self.skip_marked_persisted(sid, &mut rows);
            }
            let child = self.w_rotate(sid, &rows, reason)?;
            if sync_id && !self.bugs.has(Bug::H29335) {
                self.w_route(child)?;
            }
            self.remember(child);
            if !sync_id {
                // H-25747: the entry keeps the old id; the child is orphaned.
                self.store.volatile.entries.insert(key, sid);
            }
        } else {
            self.observer.bump("gateway.in_place_compactions");
            let carried_compacted = self.bugs.has(Bug::H86366);
            self.w_in_place(sid, &rows, carried_compacted, reason)?;
            self.remember(sid);
            if self.bugs.has(Bug::H98450) {
                // H-98450: the new active set is never re-stamped `_db_persisted`: the
                // next flush starts at its first row again.
                self.store.volatile.flushed.insert(key, 0);
            }
        }
        Ok(())
    }

    /// Session hygiene (hermes-domain §2.2, 5): before the turn, a history of at least
    /// [`HYGIENE_HISTORY_MIN`] messages is compressed when it is at 85 % of the window
    /// or holds the case's hard message limit of messages.
    fn hygiene(&mut self, turn: u32) -> Flow<()> {
        let messages = self.agent.msgs.len();
        if messages < HYGIENE_HISTORY_MIN {
            return Ok(());
        }
        let window = self.agent.config.thresholds.context_length as u64;
        let tokens = tokens_rough_total(&self.agent.msgs);
        let over = tokens * 1000 >= window * HYGIENE_WINDOW_PER_MILLE;
        let forced = messages >= self.plan.hygiene_message_limit as usize;
        if over || forced {
            self.observer.bump(if over {
                "gateway.hygiene"
            } else {
                "gateway.hygiene_forced"
            });
            if self.bugs.has(Bug::GHygieneUnsaved) {
                // Mutant: the compaction stays in memory; nothing of it is written.
                self.agent.manual_compress(&mut self.observer, turn)?;
                return Ok(());
            }
            self.compress(turn, Reason::Hygiene)?;
        }
        Ok(())
    }

    /// `/compress`: a forced pass; the transcript is rewritten only when the pass
    /// really changed the list (a rotation, or an in-place rewrite).
    fn compress(&mut self, turn: u32, reason: Reason) -> Flow<()> {
        if !self
            .agent
            .msgs
            .iter()
            .any(|m| m.role == compactsim_model::Role::User)
        {
            return Ok(()); // "nothing to compress"
        }
        let before: Vec<MsgId> = self.agent.msgs.iter().map(|m| m.id).collect();
        let rotation_before = self.agent.session_id;
        self.agent.manual_compress(&mut self.observer, turn)?;
        let rotated = self.agent.session_id != rotation_before;
        if !self.live_extends(&before) || rotated {
            let sid = self.cached();
            self.persist_compaction(sid, rotated, true, reason)?;
            if !rotated && self.bugs.has(Bug::H48584) && !self.is_remote() {
                // H-48584: `rewrite_transcript` runs without a rotation: the rows the
                // in-place commit archived are deleted.
                self.store.durable.rewrite(sid, &self.agent.msgs);
            }
            if rotated && self.plan.topic && !self.bugs.has(Bug::H20470) {
                let now = self.cached();
                self.w_bind(now)?;
            }
        }
        Ok(())
    }

    /// `/reset`: a new parentless session for the key; the old transcript is kept.
    fn command_reset(&mut self, turn: u32) -> Flow<()> {
        let key = self.key();
        let sid = self.cached();
        let system: Vec<_> = self
            .agent
            .msgs
            .iter()
            .take_while(|m| m.role == compactsim_model::Role::System)
            .cloned()
            .collect();
        let new = self.w_reset(sid, &system, Reason::Command, true)?;
        self.reset_step(turn, new, false)?;
        self.store.volatile.entries.insert(key, new);
        self.load(turn, new)
    }

    /// Shows the oracle the reset the harness just made: the key's mappings may move to
    /// session `new`'s lineage.
    fn reset_step(&mut self, turn: u32, new: SessionNo, exhausted: bool) -> Flow<()> {
        self.step(GatewayEvent::Reset {
            turn,
            key: self.key(),
            session: new,
            exhausted,
        })
    }
}
