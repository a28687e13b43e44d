//! What the harness observes of a gateway's session store (hermes-domain §1.4, §1.5):
//! the durable part only — the route index, topic bindings, sessions with their parent
//! links and their rows (`active` / `compacted`), and the inbound message ids whose
//! turns were recorded. The gateway invariants judge snapshots of this, together with
//! the steps the harness took ([`GatewayEvent`]); nothing here is a gateway's label.

use crate::ids::MsgId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A session id of the store (the harness mints them in order; Hermes prints them as
/// `YYYYMMDD_HHMMSS_<6 hex>`).
pub type SessionNo = u32;

/// One row of a stored transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRow {
    pub id: MsgId,
    /// Part of the session's current transcript (what a load returns).
    pub active: bool,
    /// Archived by an in-place compaction (still searchable).
    pub compacted: bool,
}

/// One session row with its transcript. The rows are private: they change only by
/// [`StoredSession::append`] and by the edits below, and every edit that is not an
/// append is recorded with the first row index it may have changed, so an observer can
/// re-read only what changed since it last looked ([`StoredSession::changed_from`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(from = "SessionFields")]
pub struct StoredSession {
    pub id: SessionNo,
    /// `parent_session_id`: the session this one was rotated from.
    pub parent: Option<SessionNo>,
    /// `end_reason` is set (rotated away or reset).
    pub ended: bool,
    rows: Vec<StoredRow>,
    /// Per edit that was not an append, in order: the first row index it may have
    /// changed (ids or flags). Rows below it kept their id and flags.
    #[serde(skip)]
    edits: Vec<usize>,
    /// No row below this index is active.
    #[serde(skip)]
    active_from: usize,
    /// Every id the rows hold (in any state).
    #[serde(skip)]
    ids: BTreeSet<MsgId>,
}

/// A stored session as written: its kept indexes are rebuilt on reading.
#[derive(Deserialize)]
struct SessionFields {
    id: SessionNo,
    parent: Option<SessionNo>,
    ended: bool,
    rows: Vec<StoredRow>,
}

impl From<SessionFields> for StoredSession {
    fn from(f: SessionFields) -> Self {
        let mut s = StoredSession::new(f.id, f.parent, f.rows);
        s.ended = f.ended;
        s
    }
}

impl StoredSession {
    pub fn new(id: SessionNo, parent: Option<SessionNo>, rows: Vec<StoredRow>) -> Self {
        let mut s = StoredSession {
            id,
            parent,
            ended: false,
            rows: Vec::new(),
            edits: Vec::new(),
            active_from: 0,
            ids: BTreeSet::new(),
        };
        s.append(rows);
        s
    }

    /// The stored rows, in order.
    pub fn rows(&self) -> &[StoredRow] {
        &self.rows
    }

    /// No row below this index is active.
    pub fn active_from(&self) -> usize {
        self.active_from
    }

    /// Whether some row (in any state) has id `id`.
    pub fn stores(&self, id: MsgId) -> bool {
        self.ids.contains(&id)
    }

    /// Ids of the active rows, in order (what `load_transcript` returns).
    pub fn active_ids(&self) -> Vec<MsgId> {
        self.rows[self.active_from..]
            .iter()
            .filter(|r| r.active)
            .map(|r| r.id)
            .collect()
    }

    /// Appends `rows` (no edit recorded: the rows before them are untouched).
    pub fn append(&mut self, rows: impl IntoIterator<Item = StoredRow>) {
        let start = self.rows.len();
        self.rows.extend(rows);
        self.ids.extend(self.rows[start..].iter().map(|r| r.id));
    }

    /// Replaces every row (a rewrite, or a deletion): an edit from row 0.
    pub fn replace(&mut self, rows: Vec<StoredRow>) {
        self.rows.clear();
        self.ids.clear();
        self.active_from = 0;
        self.append(rows);
        self.edits.push(0);
    }

    /// Sets the flags of rows from `from` on: `state` gives a row's new `(active,
    /// compacted)`, or `None` to leave it. One edit, from the first row it changed
    /// (none if it changed nothing). Ids never change here. Returns the rows given a
    /// state.
    pub fn restate_from(
        &mut self,
        from: usize,
        state: impl FnMut(&StoredRow) -> Option<(bool, bool)>,
    ) -> usize {
        self.restate(from, false, state)
    }

    /// [`Self::restate_from`] over the active rows only (reads no row below the first
    /// active one).
    pub fn restate_active_from(
        &mut self,
        from: usize,
        mut state: impl FnMut(&StoredRow) -> Option<(bool, bool)>,
    ) -> usize {
        self.restate(from, true, |r| if r.active { state(r) } else { None })
    }

    fn restate(
        &mut self,
        from: usize,
        active_only: bool,
        mut state: impl FnMut(&StoredRow) -> Option<(bool, bool)>,
    ) -> usize {
        let start = if active_only {
            from.max(self.active_from)
        } else {
            from
        };
        let (mut first, mut first_active) = (None, None);
        let mut changed = 0;
        for (at, r) in self.rows.iter_mut().enumerate().skip(start) {
            if let Some((active, compacted)) = state(r) {
                if (r.active, r.compacted) != (active, compacted) {
                    first.get_or_insert(at);
                }
                (r.active, r.compacted) = (active, compacted);
                changed += 1;
            }
            if r.active {
                first_active.get_or_insert(at);
            }
        }
        if start <= self.active_from {
            self.active_from = first_active.unwrap_or(self.rows.len());
        }
        if let Some(at) = first {
            self.edits.push(at);
        }
        changed
    }

    /// Sets the rows to `rows`, as a store was read back: an append when the rows held
    /// are a prefix of `rows`, else one edit from the first row that differs. So an
    /// observer re-reads what the store changed, whatever the store claims it did.
    pub fn observe(&mut self, rows: &[StoredRow]) {
        let same = self
            .rows
            .iter()
            .zip(rows)
            .take_while(|(a, b)| a == b)
            .count();
        if same < self.rows.len() {
            self.rows.truncate(same);
            self.ids = self.rows.iter().map(|r| r.id).collect();
            self.active_from = self.active_from.min(same);
            self.edits.push(same);
        }
        self.append(rows[same..].iter().copied());
        debug_assert!(self.rows == rows);
    }

    /// How many edits (other than appends) the session has had.
    pub fn edit_count(&self) -> usize {
        self.edits.len()
    }

    /// After `edits_seen` edits and `rows_seen` rows were seen: the first row index that
    /// may differ now (rows below it are as they were; rows from `rows_seen` on were
    /// appended unless an edit reached below).
    pub fn changed_from(&self, edits_seen: usize, rows_seen: usize) -> usize {
        let edited = self.edits.get(edits_seen..).unwrap_or(&[]);
        let floor = if edits_seen > self.edits.len() {
            0
        } else {
            edited.iter().copied().min().unwrap_or(rows_seen)
        };
        floor.min(rows_seen).min(self.rows.len())
    }
}

/// Equal sessions hold the same rows, whatever edits led there.
impl PartialEq for StoredSession {
    fn eq(&self, other: &Self) -> bool {
        (self.id, self.parent, self.ended, &self.rows)
            == (other.id, other.parent, other.ended, &other.rows)
    }
}

impl Eq for StoredSession {}

/// The durable part of a gateway's session store at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreSnapshot {
    /// The route index as saved: session key -> session id, sorted by key.
    pub routes: Vec<(String, SessionNo)>,
    /// Topic bindings: session key of the topic -> session id, sorted by key.
    pub bindings: Vec<(String, SessionNo)>,
    /// Every session ever created, in creation order.
    pub sessions: Vec<StoredSession>,
    /// Inbound message ids whose turns were recorded (the idempotency table), sorted.
    pub delivered: BTreeSet<u64>,
}

impl StoreSnapshot {
    /// Carries the edit history of `before`'s sessions into this snapshot, a store read
    /// back afresh: each session that `before` holds is `before`'s [`StoredSession::observe`]d
    /// with the rows read, so the rows a store rewrote count as edited.
    pub fn carry_edits_from(&mut self, before: &StoreSnapshot) {
        for session in &mut self.sessions {
            if let Some(old) = before.session(session.id) {
                let mut kept = old.clone();
                (kept.parent, kept.ended) = (session.parent, session.ended);
                kept.observe(session.rows());
                *session = kept;
            }
        }
    }

    /// Session `id` (the harness mints ids in creation order: first looked up at its
    /// place, then searched).
    pub fn session(&self, id: SessionNo) -> Option<&StoredSession> {
        let at = usize::try_from(id).ok();
        at.and_then(|at| self.sessions.get(at))
            .filter(|s| s.id == id)
            .or_else(|| self.sessions.iter().find(|s| s.id == id))
    }

    pub fn route(&self, key: &str) -> Option<SessionNo> {
        self.routes.iter().find(|(k, _)| k == key).map(|(_, s)| *s)
    }

    pub fn binding(&self, key: &str) -> Option<SessionNo> {
        self.bindings
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, s)| *s)
    }

    /// The sessions whose parent is `id`.
    pub fn children(&self, id: SessionNo) -> impl Iterator<Item = &StoredSession> {
        self.sessions.iter().filter(move |s| s.parent == Some(id))
    }
}

/// How an agent turn ended, as the harness saw it (the agent loop is harness code).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    Finished,
    Failed,
    /// `failed + compression_exhausted`.
    Exhausted,
}

/// One step of the gateway, observed by the harness.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum GatewayEvent {
    /// An inbound message for `key` was received (`delivery` counts redeliveries).
    Inbound {
        turn: u32,
        key: String,
        inbound: u64,
        delivery: u32,
    },
    /// A transcript was loaded into a fresh agent: the ids of the rows loaded.
    Loaded {
        turn: u32,
        key: String,
        session: SessionNo,
        rows: Vec<MsgId>,
    },
    /// The gateway started the agent turn of `inbound`; `user` is its user row.
    TurnStarted {
        turn: u32,
        key: String,
        inbound: u64,
        user: MsgId,
    },
    /// The gateway finished handling `inbound` (all its durable writes are done); `live`
    /// is the agent's live list now (empty after a reset).
    TurnDone {
        turn: u32,
        key: String,
        inbound: u64,
        user: MsgId,
        /// Ids of the turn's own rows (its user row first), as the harness fed them.
        turn_rows: Vec<MsgId>,
        outcome: TurnOutcome,
        /// A compaction committed during the turn (observed: the live list was rewritten).
        compacted: bool,
        /// The turn ended in an overflow failure: exhaustion, or its failing provider call
        /// was over the window (the fake provider's ground truth, not the agent's guess).
        overflow: bool,
        live: Vec<MsgId>,
    },
    /// The platform was told `inbound` was handled (it will not redeliver it).
    Acked { turn: u32, inbound: u64 },
    /// The process died; everything volatile is gone.
    Crashed { turn: u32, point: String },
    /// The harness reset the key's session: `/reset`, or the auto-reset after
    /// `compression_exhausted` (`exhausted`); `session` is the new session the store
    /// made for it (the key's mappings may move to its lineage).
    Reset {
        turn: u32,
        key: String,
        session: SessionNo,
        exhausted: bool,
    },
}

impl GatewayEvent {
    pub fn turn(&self) -> u32 {
        match self {
            GatewayEvent::Inbound { turn, .. }
            | GatewayEvent::Loaded { turn, .. }
            | GatewayEvent::TurnStarted { turn, .. }
            | GatewayEvent::TurnDone { turn, .. }
            | GatewayEvent::Acked { turn, .. }
            | GatewayEvent::Crashed { turn, .. }
            | GatewayEvent::Reset { turn, .. } => *turn,
        }
    }

    /// One line for a trace.
    pub fn describe(&self) -> String {
        match self {
            GatewayEvent::Inbound {
                turn,
                key,
                inbound,
                delivery,
            } => {
                format!("turn {turn}: gateway inbound #{inbound} for {key} (delivery {delivery})")
            }
            GatewayEvent::Loaded {
                turn,
                key,
                session,
                rows,
            } => format!(
                "turn {turn}: gateway loaded session {session} for {key}: {} rows",
                rows.len()
            ),
            GatewayEvent::TurnStarted {
                turn,
                inbound,
                user,
                ..
            } => {
                format!(
                    "turn {turn}: gateway agent turn for #{inbound} (user row {})",
                    user.0
                )
            }
            GatewayEvent::TurnDone {
                turn,
                inbound,
                outcome,
                compacted,
                live,
                ..
            } => format!(
                "turn {turn}: gateway turn #{inbound} done: {outcome:?}{}, live {} rows",
                if *compacted { ", compacted" } else { "" },
                live.len()
            ),
            GatewayEvent::Acked { turn, inbound } => {
                format!("turn {turn}: gateway acked #{inbound}")
            }
            GatewayEvent::Crashed { turn, point } => {
                format!("turn {turn}: gateway crashed at {point}")
            }
            GatewayEvent::Reset {
                turn,
                key,
                session,
                exhausted,
            } => format!(
                "turn {turn}: gateway reset {key} to new session {session} ({})",
                if *exhausted {
                    "compression exhausted"
                } else {
                    "/reset"
                }
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: u32, active: bool) -> StoredRow {
        StoredRow {
            id: MsgId(id),
            active,
            compacted: !active,
        }
    }

    #[test]
    fn an_edit_records_the_first_row_it_changed_and_an_append_none() {
        let mut s = StoredSession::new(0, None, (0..6).map(|i| row(i, true)).collect());
        s.append([row(6, true)]);
        assert_eq!((s.edit_count(), s.changed_from(0, 7)), (0, 7));
        // Archive the active rows from 4 on: rows 0..4 unchanged.
        s.restate_active_from(4, |_| Some((false, true)));
        assert_eq!((s.edit_count(), s.changed_from(0, 7)), (1, 4));
        assert_eq!(s.changed_from(1, 7), 7, "nothing since the first edit");
        // A restate that changes nothing records nothing.
        s.restate_from(0, |r| Some((r.active, r.compacted)));
        assert_eq!(s.edit_count(), 1);
        // Fewer rows than seen (a replace): from row 0; more edits seen than made: 0.
        s.replace(vec![row(9, true)]);
        assert_eq!((s.changed_from(1, 7), s.changed_from(5, 1)), (0, 0));
        assert!(s.stores(MsgId(9)) && !s.stores(MsgId(0)));
    }

    #[test]
    fn a_store_read_back_with_a_row_rewritten_counts_as_an_edit_from_that_row() {
        let rows: Vec<StoredRow> = (0..5).map(|i| row(i, true)).collect();
        let before = StoreSnapshot {
            sessions: vec![StoredSession::new(0, None, rows.clone())],
            ..StoreSnapshot::default()
        };
        // Read back afresh: an append only (rows 0..5 as they were, one more).
        let mut grown = rows.clone();
        grown.push(row(5, true));
        let mut read = StoreSnapshot {
            sessions: vec![StoredSession::new(0, None, grown.clone())],
            ..StoreSnapshot::default()
        };
        read.carry_edits_from(&before);
        assert_eq!(
            (
                read.sessions[0].edit_count(),
                read.sessions[0].changed_from(0, 5)
            ),
            (0, 5)
        );
        // Read back afresh with row 2 deactivated: an edit from row 2, although the
        // fresh read itself has no edit history.
        grown[2].active = false;
        let mut rewritten = StoreSnapshot {
            sessions: vec![StoredSession::new(0, None, grown.clone())],
            ..StoreSnapshot::default()
        };
        rewritten.carry_edits_from(&read);
        let s = &rewritten.sessions[0];
        assert_eq!((s.edit_count(), s.changed_from(0, 6)), (1, 2));
        assert_eq!(s.rows(), &grown[..]);
    }

    #[test]
    fn active_from_bounds_the_active_rows_whatever_the_edits() {
        let mut s = StoredSession::new(0, None, (0..4).map(|i| row(i, true)).collect());
        s.restate_active_from(0, |_| Some((false, true)));
        assert_eq!(s.active_from(), 4);
        s.append([row(4, true), row(5, true)]);
        assert_eq!(s.active_ids(), [MsgId(4), MsgId(5)]);
        // Re-activating an old row lowers it.
        s.restate_from(1, |r| (r.id == MsgId(1)).then_some((true, false)));
        assert_eq!(s.active_from(), 1);
        assert_eq!(s.active_ids(), [MsgId(1), MsgId(4), MsgId(5)]);
        s.restate_active_from(0, |_| Some((false, false)));
        assert_eq!((s.active_from(), s.active_ids()), (6, vec![]));
    }

    #[test]
    fn a_session_read_back_rebuilds_its_indexes_and_equality_ignores_edits() {
        let mut s = StoredSession::new(3, Some(2), vec![row(0, false), row(7, true)]);
        s.ended = true;
        let json = serde_json::to_string(&s).expect("serializes");
        assert!(
            !json.contains("edits") && !json.contains("active_from"),
            "{json}"
        );
        let back: StoredSession = serde_json::from_str(&json).expect("reads");
        assert_eq!(back, s);
        assert!(back.stores(MsgId(7)) && back.ended);
        assert_eq!(back.active_ids(), [MsgId(7)]);
        s.replace(s.rows().to_vec());
        assert_eq!(back, s, "the same rows after an edit");
    }
}
