//! One inbound message through the gateway: drop a redelivery, run commands and
//! session hygiene, load the session, run the agent turn, persist it (§2.8, §2.9),
//! acknowledge it — with the fault plan's crash at its chosen point.
//!
//! Durable writes of a handled turn, each one step (a crash point between each):
//! 1. the turn's rows, in one transaction with its idempotency record: appended rows;
//!    or, after a compaction, the rotated child with the route saved in the same block
//!    (H-29335's fix) or the in-place `archive_and_compact`; a failed turn writes only
//!    the record (§2.8); an exhausted one writes the reset session with its route;
//! 2. the topic binding re-synced (`after-write` falls before it);
//!
//! Then the ack (`after-mapping` and `before-ack` fall before it).

use super::faults::{Crash, InboundFaults};
use super::sink::CrashSink;
use super::world::{Gateway, Inbound};
use super::HYGIENE_WINDOW_PER_MILLE;
use crate::agent::{Flow, Sink, StopRequest, TurnEnd};
use crate::bugs::Bug;
use compactsim_model::{tokens_rough_total, GatewayEvent, MsgId, SessionNo, TurnOutcome};

impl Gateway {
    /// Handles one turn's inbound message (and its duplicate), with `faults`.
    pub(super) fn turn(&mut self, turn: u32, inbound: Inbound, faults: InboundFaults) -> Flow<()> {
        if faults.restart {
            self.observer.bump("gateway.restarts");
            self.store.crash();
            self.agent.restart_process();
        }
        self.ensure_loaded(turn)?;
        if faults.reset {
            self.observer.bump("gateway.commands.reset");
            self.command_reset(turn)?;
        }
        if faults.compress {
            self.observer.bump("gateway.commands.compress");
            self.compress(turn)?;
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
        if crash == Some(Crash::At("before-turn")) {
            self.crash(turn, Crash::At("before-turn"))?;
            return Ok(false);
        }
        let user = inbound.script[0].id;
        let turn_rows: Vec<MsgId> = inbound.script.iter().map(|m| m.id).collect();
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
        self.agent.stop = StopRequest {
            armed: stop,
            fired: false,
        };
        let mut sink = CrashSink {
            inner: &mut self.observer,
            crash_at: match crash {
                Some(Crash::MidTurn(n)) => Some(n),
                _ => None,
            },
            seen: 0,
            crashed: false,
        };
        let end = self.agent.run_turn(&mut sink, turn, inbound.script.clone());
        if std::mem::take(&mut self.agent.stop).fired {
            sink.bump("gateway.stops");
        }
        if sink.crashed {
            self.crash(turn, crash.expect("a mid-turn crash"))?;
            return Ok(false);
        }
        let outcome = match end? {
            TurnEnd::Finished => TurnOutcome::Finished,
            TurnEnd::Failed { exhausted: false } => TurnOutcome::Failed,
            TurnEnd::Failed { exhausted: true } => TurnOutcome::Exhausted,
        };
        if self.bugs.has(Bug::GAckEarly) {
            self.ack(turn, inbound.id)?;
        }
        let compacted = outcome != TurnOutcome::Exhausted
            && (self.agent.compacted_this_turn() || !self.live_extends(&before));
        let rotated = self.agent.session_id != rotation_before;
        self.persist(inbound, outcome, compacted, rotated, crash)?;
        if self.store.volatile.cached.is_empty() {
            return Ok(false); // crashed between the writes
        }
        self.step(GatewayEvent::TurnDone {
            turn,
            key,
            inbound: inbound.id,
            user,
            turn_rows,
            outcome,
            compacted,
            live: self.agent.msgs.iter().map(|m| m.id).collect(),
        })?;
        if crash == Some(Crash::At("before-ack")) {
            self.crash(turn, Crash::At("before-ack"))?;
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

    /// The session the cached agent holds.
    fn cached(&self) -> SessionNo {
        self.store.volatile.cached[&self.key()]
    }

    /// Persists a handled turn (see the module doc); a crash point may end it early
    /// (the volatile store is then empty).
    fn persist(
        &mut self,
        inbound: &Inbound,
        outcome: TurnOutcome,
        compacted: bool,
        rotated: bool,
        crash: Option<Crash>,
    ) -> Flow<()> {
        let turn = self.observer.result.turns.saturating_sub(1);
        let key = self.key();
        let sid = self.cached();
        let failed = outcome != TurnOutcome::Finished;
        // H-85145: the flag is forwarded only on the empty-response path, and an
        // exhausted turn always has a response: the gateway sees a plain failed turn.
        let exhausted_flag = outcome == TurnOutcome::Exhausted && !self.bugs.has(Bug::H85145);
        let exhausted_seen = exhausted_flag && !self.bugs.has(Bug::H9893);
        if exhausted_flag && !exhausted_seen {
            // H-9893: the guard also required an empty final response, which is always
            // filled: the failed turn is persisted as if it succeeded, and no reset runs.
            let user = inbound.script[..1].to_vec();
            self.store.durable.append(sid, &user);
            self.store.durable.record_delivered(inbound.id);
        } else if exhausted_seen {
            self.observer.bump("gateway.resets");
            let new = self.store.durable.create(None, &self.agent.msgs);
            self.store.durable.end(sid);
            self.store.durable.save_route(&key, new);
            if self.plan.topic && !self.bugs.has(Bug::H35809) {
                // The same transaction: no crash may leave the binding on the old one.
                self.store.durable.sync_binding(&key, new);
            }
            self.store.durable.record_delivered(inbound.id);
            self.remember(new);
            if self.crash_at(turn, crash, "after-write")? {
                return Ok(());
            }
        } else if compacted {
            // H-25747: the id sync runs only on the success path.
            let sync_id = !(failed && self.bugs.has(Bug::H25747));
            self.persist_compaction(sid, rotated, sync_id);
            self.store.durable.record_delivered(inbound.id);
            if self.crash_at(turn, crash, "after-write")? {
                return Ok(());
            }
            let now = self.cached();
            if rotated && self.plan.topic && sync_id && !self.bugs.has(Bug::H20470) {
                self.store.durable.sync_binding(&key, now);
            }
        } else {
            if !failed {
                let from = self.store.volatile.flushed[&key].min(self.agent.msgs.len());
                let rows = self.agent.msgs[from..].to_vec();
                self.store.durable.append(sid, &rows);
            } else if outcome == TurnOutcome::Failed && self.bugs.has(Bug::H1630) {
                // H-1630: the gateway persists the failed turn.
                self.store.durable.append(sid, &inbound.script[..1]);
            }
            self.store.durable.record_delivered(inbound.id);
            self.store
                .volatile
                .flushed
                .insert(key, self.agent.msgs.len());
            if self.crash_at(turn, crash, "after-write")? {
                return Ok(());
            }
        }
        if self.crash_at(turn, crash, "after-mapping")? {
            return Ok(());
        }
        Ok(())
    }

    /// Crashes if `crash` falls at `point`; true when it did.
    fn crash_at(&mut self, turn: u32, crash: Option<Crash>, point: &'static str) -> Flow<bool> {
        if crash == Some(Crash::At(point)) {
            self.crash(turn, Crash::At(point))?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Persists a compaction of the cached session: a rotation creates the child and
    /// saves the route in the same step (`sync_id`: the id sync runs; not under
    /// H-29335), also when the turn failed; in place, `archive_and_compact`.
    fn persist_compaction(&mut self, sid: SessionNo, rotated: bool, sync_id: bool) {
        let key = self.key();
        if self.bugs.has(Bug::H50037) {
            // H-50037: nothing of the compaction is written; the agent carries on.
            self.remember(sid);
            return;
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
            let child = self.store.durable.create(Some(sid), &rows);
            if sync_id && !self.bugs.has(Bug::H29335) {
                self.store.durable.save_route(&key, child);
            }
            self.remember(child);
            if !sync_id {
                // H-25747: the entry keeps the old id; the child is orphaned.
                self.store.volatile.entries.insert(key, sid);
            }
        } else {
            self.observer.bump("gateway.in_place_compactions");
            let carried_compacted = self.bugs.has(Bug::H86366);
            self.store
                .durable
                .archive_and_compact(sid, &rows, carried_compacted);
            self.remember(sid);
            if self.bugs.has(Bug::H98450) {
                // H-98450: the new active set is never re-stamped `_db_persisted`: the
                // next flush starts at its first row again.
                self.store.volatile.flushed.insert(key, 0);
            }
        }
    }

    /// Session hygiene: compress before the turn when the transcript is at 85 % of the
    /// window. (The hard message limit is not modelled: a forced pass on a long list of
    /// small rows moved the newest user text out of the tail in 1 of 480 clean cases —
    /// see the report.)
    fn hygiene(&mut self, turn: u32) -> Flow<()> {
        let window = self.agent.config.thresholds.context_length as u64;
        let tokens = tokens_rough_total(&self.agent.msgs);
        let over = tokens * 1000 >= window * HYGIENE_WINDOW_PER_MILLE;
        if over {
            self.observer.bump("gateway.hygiene");
            self.compress(turn)?;
        }
        Ok(())
    }

    /// `/compress`: a forced pass; the transcript is rewritten only when the pass
    /// really changed the list (a rotation, or an in-place rewrite).
    fn compress(&mut self, turn: u32) -> Flow<()> {
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
            self.persist_compaction(sid, rotated, true);
            if !rotated && self.bugs.has(Bug::H48584) {
                // H-48584: `rewrite_transcript` runs without a rotation: the rows the
                // in-place commit archived are deleted.
                self.store.durable.rewrite(sid, &self.agent.msgs);
            }
            if rotated && self.plan.topic && !self.bugs.has(Bug::H20470) {
                let now = self.cached();
                self.store.durable.sync_binding(&self.key(), now);
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
        let new = self.store.durable.create(None, &system);
        self.store.durable.end(sid);
        self.store.durable.save_route(&key, new);
        if self.plan.topic {
            self.store.durable.sync_binding(&key, new);
        }
        self.store.volatile.entries.insert(key, new);
        self.load(turn, new)
    }
}
