//! What the harness observes of a gateway's session store (hermes-domain §1.4, §1.5):
//! the durable part only — the route index, topic bindings, sessions with their parent
//! links and their rows (`active` / `compacted`), and the inbound message ids whose
//! turns were recorded. The gateway invariants judge snapshots of this, together with
//! the steps the harness took ([`GatewayEvent`]); nothing here is a gateway's label.

use crate::ids::MsgId;
use serde::{Deserialize, Serialize};

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

/// One session row with its transcript.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredSession {
    pub id: SessionNo,
    /// `parent_session_id`: the session this one was rotated from.
    pub parent: Option<SessionNo>,
    /// `end_reason` is set (rotated away or reset).
    pub ended: bool,
    pub rows: Vec<StoredRow>,
}

impl StoredSession {
    /// Ids of the active rows, in order (what `load_transcript` returns).
    pub fn active_ids(&self) -> Vec<MsgId> {
        self.rows
            .iter()
            .filter(|r| r.active)
            .map(|r| r.id)
            .collect()
    }
}

/// The durable part of a gateway's session store at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreSnapshot {
    /// The route index as saved: session key -> session id, sorted by key.
    pub routes: Vec<(String, SessionNo)>,
    /// Topic bindings: session key of the topic -> session id, sorted by key.
    pub bindings: Vec<(String, SessionNo)>,
    /// Every session ever created, in creation order.
    pub sessions: Vec<StoredSession>,
    /// Inbound message ids whose turns were recorded (the idempotency table), in order.
    pub delivered: Vec<u64>,
}

impl StoreSnapshot {
    pub fn session(&self, id: SessionNo) -> Option<&StoredSession> {
        self.sessions.iter().find(|s| s.id == id)
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
}

impl GatewayEvent {
    pub fn turn(&self) -> u32 {
        match self {
            GatewayEvent::Inbound { turn, .. }
            | GatewayEvent::Loaded { turn, .. }
            | GatewayEvent::TurnStarted { turn, .. }
            | GatewayEvent::TurnDone { turn, .. }
            | GatewayEvent::Acked { turn, .. }
            | GatewayEvent::Crashed { turn, .. } => *turn,
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
        }
    }
}
