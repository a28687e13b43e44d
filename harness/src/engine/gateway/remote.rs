//! The gateway's durable writes, to compactsim's own store model or — when the case's
//! adapter declares `capabilities.store: "gateway"` (adapters/PROTOCOL.md, "Gateway
//! store") — to the adapter's store: one `store` request per write, then a read-back
//! that replaces the snapshot the oracle judges. A crash kills the adapter's child; the
//! next request starts a new one on the same durable directory.
//!
//! Each write below is one step of the turn (the gateway turn places its crash points
//! between these calls); under the adapter's store the idempotency record of a step is
//! its own `append` without rows, right after the step, with no crash point between.

use super::sink::Rewrite;
use super::world::Gateway;
use crate::external::compactor::External;
use crate::external::store::ops::{Mode, Reason, StoreOp};
use crate::external::store::readback::{self, Names};
use compactsim_fakes::seam::CompactorFailure;
use compactsim_hermes::agent::{Flow, Sink, Stop};
use compactsim_model::{Message, MsgId, SessionNo};
use serde_json::Value;

/// Coverage counters of a case whose adapter keeps the store (listed when bumped).
pub const STORE_COUNTERS: &[&str] = &[
    "gateway.store.child_restarts",
    "gateway.store.foreign_rows",
    "gateway.store.reads",
    "gateway.store.requests",
    "gateway.store.unresolved_keys",
];

/// The engine's side of the adapter's store: the adapter's session ids by number.
#[derive(Debug, Default)]
pub(super) struct Remote {
    names: Names,
    /// The most rows without a `_compactsim_id` one read-back held.
    foreign_rows_max: u64,
}

impl Gateway {
    /// Under `--compactor external` with an adapter that declares the store: the case's
    /// store is the adapter's from here on (its durable directory is made now).
    pub(super) fn begin_remote(&mut self) -> Flow<()> {
        let (key, topic) = (self.key(), self.plan.topic);
        let Some(ext) = external(&mut self.agent) else {
            return Ok(());
        };
        if !ext.declares_store() {
            return Ok(());
        }
        let begun = ext.store_begin(&key, topic);
        self.remote = Some(Remote::default());
        begun.map_err(|f| self.fail(f))
    }

    fn fail(&mut self, f: CompactorFailure) -> Stop {
        self.agent.failure = Some(f);
        Stop
    }

    /// Sends `op` to the adapter's store; its `value`.
    fn call(&mut self, op: StoreOp<'_>) -> Flow<Value> {
        let now_ms = self.agent.now_ms;
        let ext = external(&mut self.agent).expect("a remote store is an external compactor's");
        let value = ext.store_request(&op, now_ms);
        self.observer.bump("gateway.store.requests");
        value.map_err(|f| self.fail(f))
    }

    /// A reply the harness cannot read: the case's adapter failure.
    fn bad_reply(&mut self, request: &str, what: String) -> Stop {
        let ext = external(&mut self.agent).expect("a remote store is an external compactor's");
        let f = ext.store_bad_reply(request, what);
        self.fail(f)
    }

    /// Reads the adapter's store back: the snapshot the oracle judges from now on.
    fn refresh(&mut self) -> Flow<()> {
        let value = self.call(StoreOp::Read)?;
        self.observer.bump("gateway.store.reads");
        let mut names = std::mem::take(&mut self.remote.as_mut().expect("remote").names);
        let durable = &self.store.durable;
        let read = readback::parse(&value, &mut names, &|id| durable.body(id).is_some());
        self.remote.as_mut().expect("remote").names = names;
        match read {
            Ok(r) => {
                let remote = self.remote.as_mut().expect("remote");
                let more = r.foreign_rows.saturating_sub(remote.foreign_rows_max);
                if more > 0 {
                    remote.foreign_rows_max = r.foreign_rows;
                    self.observer.add("gateway.store.foreign_rows", more);
                }
                let mut snapshot = r.snapshot;
                snapshot.carry_edits_from(&self.store.durable.snapshot);
                self.store.durable.snapshot = snapshot;
                Ok(())
            }
            Err(e) => Err(self.bad_reply("read", e)),
        }
    }

    /// The adapter's id of session `no` (a number the harness read back).
    fn name(&self, no: SessionNo) -> String {
        let names = &self.remote.as_ref().expect("remote").names;
        names.name(no).unwrap_or_default().to_string()
    }

    /// The number of the session a reply names (`{"session": S}`), once read back.
    fn session_of(&mut self, request: &str, value: &Value) -> Flow<SessionNo> {
        let found = value.get("session").and_then(Value::as_str).map(|s| {
            (
                s.to_string(),
                self.remote.as_ref().expect("remote").names.get(s),
            )
        });
        match found {
            Some((_, Some(no))) => Ok(no),
            Some((s, None)) => Err(self.bad_reply(
                request,
                format!("the reply names session `{s}`, which the store read back does not list"),
            )),
            None => Err(self.bad_reply(
                request,
                format!("expected a value {{\"session\": id}}, got {value}"),
            )),
        }
    }

    /// The case's first session holding the opened transcript, routed (and bound).
    pub(super) fn w_open(&mut self) -> Flow<SessionNo> {
        let key = self.key();
        let rows = self.agent.msgs.clone();
        if self.remote.is_none() {
            let id = self.store.durable.create(None, &rows);
            self.store.durable.save_route(&key, id);
            if self.plan.topic {
                self.store.durable.sync_binding(&key, id);
            }
            return Ok(id);
        }
        self.store.durable.keep(&rows);
        let v = self.call(StoreOp::Create {
            key: &key,
            rows: &rows,
            route: true,
        })?;
        self.refresh()?;
        self.session_of("create", &v)
    }

    /// An inbound message arrives (the adapter's store hears of it; nothing to write in
    /// the model).
    pub(super) fn w_deliver(&mut self, inbound: u64, delivery: u32) -> Flow<()> {
        if self.remote.is_none() {
            return Ok(());
        }
        let key = self.key();
        self.call(StoreOp::Deliver {
            key: &key,
            inbound,
            delivery,
        })
        .map(|_| ())
    }

    /// `append_to_transcript` of `rows` to session `sid`.
    pub(super) fn w_append(&mut self, sid: SessionNo, rows: &[Message]) -> Flow<()> {
        if self.remote.is_none() {
            self.store.durable.append(sid, rows);
            return Ok(());
        }
        self.store.durable.keep(rows);
        let session = self.name(sid);
        self.call(StoreOp::Append {
            session: &session,
            rows,
            inbound: None,
        })?;
        self.refresh()
    }

    /// The idempotency record of `inbound` (its turn was handled), on session `sid`.
    pub(super) fn w_record(&mut self, sid: SessionNo, inbound: u64) -> Flow<()> {
        if self.remote.is_none() {
            self.store.durable.record_delivered(inbound);
            return Ok(());
        }
        let session = self.name(sid);
        self.call(StoreOp::Append {
            session: &session,
            rows: &[],
            inbound: Some(inbound),
        })?;
        self.refresh()
    }

    /// Supersedes session `sid`'s rows from the last active `first` on; how many rows
    /// left the active set.
    pub(super) fn w_retract(&mut self, sid: SessionNo, first: MsgId) -> Flow<usize> {
        if self.remote.is_none() {
            return Ok(self.store.durable.retract_from(sid, first));
        }
        let active = |g: &Gateway| {
            g.store
                .durable
                .snapshot
                .session(sid)
                .map_or(0, |s| s.active_ids().len())
        };
        let before = active(self);
        let session = self.name(sid);
        self.call(StoreOp::Retract {
            session: &session,
            from: first,
            inbound: None,
        })?;
        self.refresh()?;
        Ok(before.saturating_sub(active(self)))
    }

    /// A rotation: session `sid` ends and its child holds `rows`; the child's number.
    pub(super) fn w_rotate(
        &mut self,
        sid: SessionNo,
        rows: &[Message],
        reason: Reason,
    ) -> Flow<SessionNo> {
        if self.remote.is_none() {
            return Ok(self.store.durable.create(Some(sid), rows));
        }
        self.compact_remote(sid, Mode::Rotate, rows, reason)
    }

    /// `archive_and_compact` of session `sid` to `rows` (`carried_compacted`: the model's
    /// H-86366; the adapter's store archives as it does).
    pub(super) fn w_in_place(
        &mut self,
        sid: SessionNo,
        rows: &[Message],
        carried_compacted: bool,
        reason: Reason,
    ) -> Flow<()> {
        if self.remote.is_none() {
            self.store
                .durable
                .archive_and_compact(sid, rows, carried_compacted);
            return Ok(());
        }
        self.compact_remote(sid, Mode::InPlace, rows, reason)
            .map(|_| ())
    }

    fn compact_remote(
        &mut self,
        sid: SessionNo,
        mode: Mode,
        rows: &[Message],
        reason: Reason,
    ) -> Flow<SessionNo> {
        self.store.durable.keep(rows);
        let session = self.name(sid);
        let v = self.call(StoreOp::Compact {
            session: &session,
            mode,
            rows,
            reason,
            inbound: None,
        })?;
        self.refresh()?;
        self.session_of("compact", &v)
    }

    /// The route index saves `key` → `sid`.
    pub(super) fn w_route(&mut self, sid: SessionNo) -> Flow<()> {
        let key = self.key();
        if self.remote.is_none() {
            self.store.durable.save_route(&key, sid);
            return Ok(());
        }
        let session = self.name(sid);
        self.call(StoreOp::Route {
            key: &key,
            session: &session,
        })?;
        self.refresh()
    }

    /// The topic binding re-synced to `sid`.
    pub(super) fn w_bind(&mut self, sid: SessionNo) -> Flow<()> {
        let key = self.key();
        if self.remote.is_none() {
            self.store.durable.sync_binding(&key, sid);
            return Ok(());
        }
        let session = self.name(sid);
        self.call(StoreOp::Bind {
            key: &key,
            session: &session,
        })?;
        self.refresh()
    }

    /// A reset: `sid` ends, a parentless session holding `rows` is created and routed
    /// (and bound, for a topic, unless `bind` is false: the model's H-35809); its number.
    pub(super) fn w_reset(
        &mut self,
        sid: SessionNo,
        rows: &[Message],
        reason: Reason,
        bind: bool,
    ) -> Flow<SessionNo> {
        let key = self.key();
        if self.remote.is_none() {
            let new = self.store.durable.create(None, rows);
            self.store.durable.end(sid);
            self.store.durable.save_route(&key, new);
            if self.plan.topic && bind {
                self.store.durable.sync_binding(&key, new);
            }
            return Ok(new);
        }
        self.store.durable.keep(rows);
        let session = self.name(sid);
        let v = self.call(StoreOp::Reset {
            key: &key,
            session: &session,
            rows,
            reason,
            inbound: None,
        })?;
        self.refresh()?;
        self.session_of("reset", &v)
    }

    /// `/stop` interrupted the turn of `inbound`.
    pub(super) fn w_stop(&mut self, inbound: u64) -> Flow<()> {
        if self.remote.is_none() {
            return Ok(());
        }
        let key = self.key();
        self.call(StoreOp::Stop { key: &key, inbound }).map(|_| ())
    }

    /// The platform is told `inbound` was handled.
    pub(super) fn w_ack(&mut self, inbound: u64) -> Flow<()> {
        if self.remote.is_none() {
            return Ok(());
        }
        let key = self.key();
        self.call(StoreOp::Ack { key: &key, inbound }).map(|_| ())
    }

    /// The transcript of session `id` in the adapter's store (`load_transcript`): the
    /// ids it loads, given the bodies the harness wrote.
    pub(super) fn w_load(&mut self, id: SessionNo) -> Flow<Vec<Message>> {
        let session = self.name(id);
        let key = self.key();
        let v = self.call(StoreOp::Load {
            key: &key,
            session: Some(&session),
        })?;
        self.refresh()?;
        self.loaded_rows(&v).map(|(_, rows)| rows)
    }

    /// After a process start: the adapter's store resolves the key and loads its
    /// session (`None`: no session for the key).
    pub(super) fn w_load_resolved(&mut self) -> Flow<Option<(SessionNo, Vec<Message>)>> {
        let key = self.key();
        let v = self.call(StoreOp::Load {
            key: &key,
            session: None,
        })?;
        self.refresh()?;
        if v.get("session").is_some_and(Value::is_null) {
            return Ok(None);
        }
        let (sid, rows) = self.loaded_rows(&v)?;
        Ok(Some((sid, rows)))
    }

    fn loaded_rows(&mut self, v: &Value) -> Flow<(SessionNo, Vec<Message>)> {
        let sid = self.session_of("load", v)?;
        let Some(ids) = v.get("rows").and_then(Value::as_array) else {
            return Err(self.bad_reply("load", format!("expected rows, got {v}")));
        };
        let mut rows = Vec::with_capacity(ids.len());
        for id in ids {
            if id.is_null() {
                continue; // a row the harness never sent: counted by the read-back
            }
            let body = id
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .and_then(|n| self.store.durable.body(MsgId(n)));
            match body {
                Some(m) => rows.push(m.clone()),
                None => {
                    return Err(self.bad_reply(
                        "load",
                        format!("loaded row {id}, which the harness never wrote"),
                    ))
                }
            }
        }
        Ok((sid, rows))
    }

    /// Writes the turn's committed rewrites where the real code writes them, at their
    /// pass: the rows the session lacks flushed to it (flush before rotate), then the
    /// rotation to a child holding the new list, or the in-place `archive_and_compact`.
    /// The cached agent then holds the child; the route is saved after the turn.
    pub(super) fn write_rewrites(&mut self, rewrites: Vec<Rewrite>) -> Flow<()> {
        for w in rewrites {
            let key = self.key();
            let sid = self.cached();
            let missing = self.store.durable.unstored(sid, &w.before);
            if !missing.is_empty() {
                self.observer.bump("gateway.rotate_flushes");
                self.w_append(sid, &missing)?;
            }
            if w.rotated {
                self.observer.bump("gateway.rotations");
                let child = self.w_rotate(sid, &w.after, Reason::Turn)?;
                self.store.volatile.cached.insert(key.clone(), child);
            } else {
                self.observer.bump("gateway.in_place_compactions");
                self.w_in_place(sid, &w.after, false, Reason::Turn)?;
            }
            self.store.volatile.flushed.insert(key, w.after.len());
        }
        Ok(())
    }

    /// The process dies: under the adapter's store its child is killed.
    pub(super) fn kill_remote(&mut self) {
        if self.remote.is_none() {
            return;
        }
        if let Some(ext) = external(&mut self.agent) {
            ext.store_crash();
            self.observer.bump("gateway.store.child_restarts");
        }
    }

    pub(super) fn is_remote(&self) -> bool {
        self.remote.is_some()
    }
}

/// The case's external compactor, if it is one.
fn external(agent: &mut compactsim_hermes::agent::AgentLoop) -> Option<&mut External> {
    agent
        .compactor_mut()
        .as_any_mut()?
        .downcast_mut::<External>()
}
