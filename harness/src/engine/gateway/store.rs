//! The gateway's session store (hermes-domain §1.4, §1.5): a durable part — what
//! state.db and the route index hold, the shape the oracle observes
//! ([`StoreSnapshot`]) plus each stored row's content — and a volatile part (the
//! in-memory route entries, the cached agent's session and its flush cursor) that a
//! crash drops.
//!
//! CONTRACT: every durable change is one method call here, one ordered step (one SQLite
//! transaction); the gateway turn places its crash points between these calls.

use compactsim_model::{Message, MsgId, SessionNo, StoreSnapshot, StoredRow, StoredSession};
use std::collections::BTreeMap;

/// Hermes session-id form of session `no` (`YYYYMMDD_HHMMSS_<6 hex>`), for traces.
pub fn session_id_text(no: SessionNo) -> String {
    format!("20260101_{:06}_{:06x}", no / 60 % 1_000_000, no)
}

/// The durable part: survives a crash.
#[derive(Clone, Debug, Default)]
pub struct Durable {
    pub snapshot: StoreSnapshot,
    /// Content of every stored row (the latest write of its id).
    bodies: Bodies,
}

/// Row ids below this keep their content in a slot each (ids are allocated from 0 per
/// case); larger ones in a map.
pub const BODIES_DENSE_MAX: u32 = 1 << 20;

/// Stored rows' content by id: a write is a slot store, not a tree insert.
#[derive(Clone, Debug, Default)]
struct Bodies {
    dense: Vec<Option<Message>>,
    sparse: BTreeMap<MsgId, Message>,
}

impl Bodies {
    fn insert(&mut self, m: &Message) {
        if m.id.0 >= BODIES_DENSE_MAX {
            self.sparse.insert(m.id, m.clone());
            return;
        }
        let at = m.id.0 as usize;
        if at >= self.dense.len() {
            self.dense.resize(at + 1, None);
        }
        self.dense[at] = Some(m.clone());
    }

    fn get(&self, id: MsgId) -> Option<&Message> {
        if id.0 >= BODIES_DENSE_MAX {
            return self.sparse.get(&id);
        }
        self.dense.get(id.0 as usize)?.as_ref()
    }
}

/// The volatile part: gone after a crash.
#[derive(Clone, Debug, Default)]
pub struct Volatile {
    /// In-memory route entries: session key -> session id.
    pub entries: BTreeMap<String, SessionNo>,
    /// The session the cached agent holds, per key (none after a restart).
    pub cached: BTreeMap<String, SessionNo>,
    /// Rows of the live list already flushed (`_last_flushed_db_idx`), per key.
    pub flushed: BTreeMap<String, usize>,
}

/// The store: both parts.
#[derive(Clone, Debug, Default)]
pub struct Store {
    pub durable: Durable,
    pub volatile: Volatile,
}

impl Durable {
    /// Session `id` (ids are minted in creation order: its index).
    fn session_mut(&mut self, id: SessionNo) -> &mut StoredSession {
        let sessions = &mut self.snapshot.sessions;
        let at = usize::try_from(id)
            .ok()
            .filter(|&at| sessions.get(at).is_some_and(|s| s.id == id))
            .or_else(|| sessions.iter().position(|s| s.id == id))
            .expect("a stored session");
        &mut sessions[at]
    }

    /// Keeps the content of `rows` (the latest write of each id).
    pub fn keep(&mut self, rows: &[Message]) {
        for m in rows {
            self.bodies.insert(m);
        }
    }

    /// The content the harness last wrote for row `id`.
    pub fn body(&self, id: MsgId) -> Option<&Message> {
        self.bodies.get(id)
    }

    fn next_id(&self) -> SessionNo {
        self.snapshot.sessions.len() as SessionNo
    }

    /// Creates a session holding `rows` (a fresh or reset one has no parent; a rotated
    /// child names its parent, which is ended).
    pub fn create(&mut self, parent: Option<SessionNo>, rows: &[Message]) -> SessionNo {
        let id = self.next_id();
        if let Some(p) = parent {
            self.session_mut(p).ended = true;
        }
        self.keep(rows);
        let stored = rows.iter().map(|m| active(m.id)).collect();
        self.snapshot
            .sessions
            .push(StoredSession::new(id, parent, stored));
        id
    }

    /// Ends a session (`end_reason` set) without a child (a reset).
    pub fn end(&mut self, id: SessionNo) {
        self.session_mut(id).ended = true;
    }

    /// `append_to_transcript`: appends `rows` as active rows.
    pub fn append(&mut self, id: SessionNo, rows: &[Message]) {
        self.keep(rows);
        let s = self.session_mut(id);
        s.append(rows.iter().map(|m| active(m.id)));
    }

    /// `archive_and_compact`: the active rows leave the active set — archived
    /// (`active = 0, compacted = 1`, still searchable), except the rows carried into
    /// the new set, which are only superseded (`compacted = 0`; H-86366 marks them
    /// compacted too) — and `rows` are inserted as the new active set.
    pub fn archive_and_compact(
        &mut self,
        id: SessionNo,
        rows: &[Message],
        carried_compacted: bool,
    ) {
        self.keep(rows);
        let carried: Vec<MsgId> = rows.iter().map(|m| m.id).collect();
        let mut carried_sorted = carried.clone();
        carried_sorted.sort();
        let s = self.session_mut(id);
        s.restate_active_from(0, |r| {
            let archived = carried_compacted || carried_sorted.binary_search(&r.id).is_err();
            Some((false, archived))
        });
        s.append(carried.into_iter().map(active));
    }

    /// `rewrite_transcript`: every row of session `id` is deleted and `rows` are
    /// inserted as its active rows (only after a rotation, on the child; H-48584 runs it
    /// in place).
    pub fn rewrite(&mut self, id: SessionNo, rows: &[Message]) {
        self.keep(rows);
        self.session_mut(id)
            .replace(rows.iter().map(|m| active(m.id)).collect());
    }

    /// Supersedes an unrecorded turn of session `id`: its row `first` (the last active
    /// occurrence) and every active row after it leave the active set (`active = 0,
    /// compacted = 0`: still stored, not searchable). Returns how many rows it took.
    pub fn retract_from(&mut self, id: SessionNo, first: MsgId) -> usize {
        let s = self.session_mut(id);
        let active = &s.rows()[s.active_from()..];
        let Some(at) = active.iter().rposition(|r| r.active && r.id == first) else {
            return 0;
        };
        let at = s.active_from() + at;
        s.restate_active_from(at, |_| Some((false, false)))
    }

    /// The rows of `rows` that session `id` does not store in any state, in order.
    pub fn unstored(&self, id: SessionNo, rows: &[Message]) -> Vec<Message> {
        let session = self.snapshot.session(id);
        let is_stored = |m: &Message| session.is_some_and(|s| s.stores(m.id));
        rows.iter().filter(|m| !is_stored(m)).cloned().collect()
    }

    /// Saves the route of `key`.
    pub fn save_route(&mut self, key: &str, id: SessionNo) {
        put(&mut self.snapshot.routes, key, id);
    }

    /// Re-syncs the topic binding of `key` (only a key in topic mode has one).
    pub fn sync_binding(&mut self, key: &str, id: SessionNo) {
        put(&mut self.snapshot.bindings, key, id);
    }

    /// Records that `inbound` was handled (the idempotency table).
    pub fn record_delivered(&mut self, inbound: u64) {
        self.snapshot.delivered.insert(inbound);
    }

    pub fn delivered(&self, inbound: u64) -> bool {
        self.snapshot.delivered.contains(&inbound)
    }

    /// `load_transcript`: the active rows of session `id`, in order (`archived`: the
    /// archived rows too, mutant G-load-archived; asked only about a compacted row).
    pub fn load(&self, id: SessionNo, archived: impl Fn() -> bool) -> Vec<Message> {
        self.snapshot
            .session(id)
            .map(|s| {
                s.rows()
                    .iter()
                    .filter(|r| r.active || (r.compacted && archived()))
                    .filter_map(|r| self.bodies.get(r.id).cloned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn active(id: MsgId) -> StoredRow {
    StoredRow {
        id,
        active: true,
        compacted: false,
    }
}

fn put(map: &mut Vec<(String, SessionNo)>, key: &str, id: SessionNo) {
    match map.iter_mut().find(|(k, _)| k == key) {
        Some(e) => e.1 = id,
        None => {
            map.push((key.to_string(), id));
            map.sort();
        }
    }
}

impl Store {
    /// A crash: the volatile part is gone.
    pub fn crash(&mut self) {
        self.volatile = Volatile::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_model::{Content, Role};

    fn row(id: u32) -> Message {
        Message::new(MsgId(id), Role::User, Content::empty())
    }

    #[test]
    fn archive_and_compact_keeps_old_rows_archived_and_a_crash_keeps_only_the_durable_part() {
        let mut s = Store::default();
        let a = s.durable.create(None, &[row(0), row(1), row(2)]);
        s.durable.save_route("k", a);
        s.volatile.entries.insert("k".into(), a);
        s.durable.archive_and_compact(a, &[row(0), row(9)], false);
        let ids: Vec<u32> = s.durable.load(a, || false).iter().map(|m| m.id.0).collect();
        assert_eq!(ids, [0, 9]);
        let stored = s.durable.snapshot.sessions[0].rows();
        assert_eq!(stored.len(), 5);
        assert_eq!(stored.iter().filter(|r| r.compacted).count(), 2);
        s.crash();
        assert!(s.volatile.entries.is_empty());
        assert_eq!(s.durable.snapshot.route("k"), Some(a));
        let child = s.durable.create(Some(a), &[row(9)]);
        assert!(s.durable.snapshot.sessions[0].ended);
        assert_eq!(
            s.durable.snapshot.children(a).next().map(|c| c.id),
            Some(child)
        );
        assert!(session_id_text(7).ends_with("_000007"));
    }

    #[test]
    fn rewrite_deletes_the_rows_that_archive_and_compact_keeps() {
        let mut s = Store::default();
        let a = s.durable.create(None, &[row(0), row(1), row(2)]);
        s.durable.archive_and_compact(a, &[row(0), row(9)], true);
        let stored = s.durable.snapshot.sessions[0].rows();
        // H-86366's flag: the carried row 0 is archived too.
        assert_eq!(stored.iter().filter(|r| r.compacted).count(), 3);
        s.durable.rewrite(a, &[row(0), row(9)]);
        let ids: Vec<u32> = s.durable.snapshot.sessions[0]
            .rows()
            .iter()
            .map(|r| r.id.0)
            .collect();
        assert_eq!(ids, [0, 9]);
        assert_eq!(s.durable.load(a, || true).len(), 2);
    }

    #[test]
    fn a_row_keeps_its_latest_content_by_slot_or_by_map() {
        let mut d = Durable::default();
        let big = BODIES_DENSE_MAX;
        let a = d.create(None, &[row(3), row(big)]);
        let newer = Message::new(MsgId(3), Role::Assistant, Content::empty());
        d.append(a, &[newer.clone(), row(big + 1)]);
        let loaded = d.load(a, || false);
        let ids: Vec<u32> = loaded.iter().map(|m| m.id.0).collect();
        assert_eq!(ids, [3, big, 3, big + 1]);
        assert!(
            loaded[0] == newer && loaded[2] == newer,
            "the latest write of id 3"
        );
        assert!(d.bodies.dense.len() <= 4, "a large id sizes no slot");
    }

    #[test]
    fn retract_from_supersedes_the_unrecorded_turn_and_keeps_its_rows_stored() {
        let mut s = Store::default();
        let a = s.durable.create(None, &[row(0), row(1), row(2), row(3)]);
        assert_eq!(s.durable.retract_from(a, MsgId(2)), 2);
        let ids: Vec<u32> = s.durable.load(a, || true).iter().map(|m| m.id.0).collect();
        assert_eq!(ids, [0, 1]);
        let asked = [row(7), row(3), row(8), row(0), row(7)];
        let ids = |v: Vec<Message>| v.iter().map(|m| m.id.0).collect::<Vec<_>>();
        assert_eq!(
            ids(s.durable.unstored(a, &asked)),
            [7, 8, 7],
            "all 4 still stored"
        );
        assert_eq!(
            ids(s.durable.unstored(9, &asked[..2])),
            [7, 3],
            "no such session"
        );
        assert_eq!(s.durable.retract_from(a, MsgId(7)), 0);
    }
}
