//! persisted-equals-live (H-98450, H-4095, H-57491, H-48584, H-50037): after
//! every handled turn the active rows of the key's session equal the live list, once
//! each; a stored row is never deleted (compaction archives); and every row a finished
//! turn appended is stored somewhere (a compaction during the turn summarizes rows only
//! after they were flushed, §2.9).

use super::ids::IdCounts;
use super::{compression_tip, GatewayInvariant, GatewayStep};
use crate::InvariantInfo;
use compactsim_model::{
    GatewayEvent, MsgId, SessionNo, StoredRow, StoredSession, TurnOutcome, Witness,
};
use std::collections::BTreeMap;

pub const INFO: InvariantInfo = InvariantInfo {
    id: "persisted-equals-live",
    statement: "after every gateway turn the active rows of the key's session equal the live list with no duplicates, every row a finished turn appended is stored, and no stored row is ever deleted",
    catches: &[
        "H-4095",
        "H-50037",
        "H-57491",
        "H-98450",
        "H-48584",
        "G-hygiene-unsaved",
    ],
    class: crate::InvariantClass::Universal,
};

#[derive(Default)]
pub struct PersistedEqualsLive {
    /// Per session: its stored row ids, in order, when last judged.
    stored: BTreeMap<u32, Seen>,
    /// Every row id any session stores (counted once per row).
    ever: IdCounts,
    /// All zero between steps: marks the live list's ids while its duplicates are
    /// counted.
    marks: IdCounts,
    /// The active rows of the session last judged as a tip.
    tip: TipActive,
}

/// A session's row ids and its edit count when last judged: the rows below
/// [`StoredSession::changed_from`] are as they were, so only the rest is compared.
#[derive(Default)]
struct Seen {
    ids: Vec<MsgId>,
    edits: usize,
}

/// The indices of a tip session's active rows when last judged (kept so a turn reads
/// only the rows changed since).
#[derive(Default)]
struct TipActive {
    session: Option<SessionNo>,
    edits: usize,
    rows_seen: usize,
    active_at: Vec<usize>,
}

impl TipActive {
    /// Brings the indices up to `session`'s rows and returns its active ids, in order.
    fn active<'a>(&'a mut self, session: &'a StoredSession) -> impl Iterator<Item = MsgId> + 'a {
        let rows = session.rows();
        let from = if self.session == Some(session.id) {
            session.changed_from(self.edits, self.rows_seen)
        } else {
            0
        };
        let kept = self.active_at.partition_point(|&at| at < from);
        self.active_at.truncate(kept);
        let active = rows.iter().enumerate().skip(from).filter(|(_, r)| r.active);
        self.active_at.extend(active.map(|(at, _)| at));
        (self.session, self.edits, self.rows_seen) =
            (Some(session.id), session.edit_count(), rows.len());
        self.active_at.iter().map(move |&at| rows[at].id)
    }
}

impl PersistedEqualsLive {
    /// A row of a finished turn that no session stores (call after [`Self::deleted`],
    /// which brings `stored` up to date).
    fn lost(&self, turn_rows: &[MsgId]) -> Option<(String, Witness)> {
        let lost: Vec<u32> = turn_rows
            .iter()
            .filter(|r| self.ever.get(r.0) == 0)
            .map(|r| r.0)
            .collect();
        (!lost.is_empty()).then(|| {
            (
                format!("{} rows of the finished turn were never stored", lost.len()),
                Witness::default().fact(format!("rows {:?}", &lost[..lost.len().min(8)])),
            )
        })
    }

    /// A stored row that is gone since the last judged step (rows are only appended).
    /// Reads of each session only the rows an edit or an append may have changed.
    fn deleted(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        for session in &s.store.sessions {
            let seen = self.stored.entry(session.id).or_default();
            let rows = session.rows();
            let from = session.changed_from(seen.edits, seen.ids.len());
            if let Some(id) = first_gone(&seen.ids[from..], &rows[from..]) {
                return Some((
                    format!("row {} was deleted from session {}", id.0, session.id),
                    Witness::default(),
                ));
            }
            let new = &rows[seen.ids.len()..];
            seen.ids.extend(new.iter().map(|r| r.id));
            seen.edits = session.edit_count();
            for r in new {
                self.ever.add(r.id.0);
            }
        }
        None
    }

    /// Whether `live` holds no id twice (leaves `marks` all zero).
    fn once_each(&mut self, live: &[MsgId]) -> bool {
        let twice = live.iter().position(|r| self.marks.add(r.0) > 1);
        let marked = twice.map_or(live.len(), |at| at + 1);
        for r in &live[..marked] {
            self.marks.sub(r.0);
        }
        twice.is_none()
    }
}

/// The first id of `seen` (a session's row ids when last judged) that `rows` no longer
/// holds at its place.
fn first_gone(seen: &[MsgId], rows: &[StoredRow]) -> Option<MsgId> {
    let differs = seen.iter().zip(rows).position(|(id, r)| r.id != *id);
    match differs {
        Some(at) => Some(seen[at]),
        None => seen.get(rows.len()).copied(),
    }
}

impl GatewayInvariant for PersistedEqualsLive {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn observe(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        let GatewayEvent::TurnDone {
            key,
            live,
            outcome,
            turn_rows,
            ..
        } = s.event
        else {
            return None;
        };
        if let Some(v) = self.deleted(s) {
            return Some(v);
        }
        if *outcome == TurnOutcome::Finished {
            if let Some(v) = self.lost(turn_rows) {
                return Some(v);
            }
        }
        let mapped = s.store.binding(key).or(s.store.route(key))?;
        let tip = compression_tip(s.store, mapped)?;
        let session = s.store.session(tip)?;
        // The fast path: the active rows are the live list, which holds each id once.
        let active = self.tip.active(session);
        if active.eq(live.iter().copied()) && self.once_each(live) {
            return None;
        }
        let active = session.active_ids();
        // Sorted, equal ids are neighbours: each equal pair is one duplicate.
        let mut sorted = active.clone();
        sorted.sort();
        let duplicates = sorted.windows(2).filter(|w| w[0] == w[1]).count();
        if duplicates > 0 {
            return Some((
                format!("session {tip} holds {duplicates} duplicate active rows"),
                Witness::default(),
            ));
        }
        (active != *live).then(|| {
            let missing = live
                .iter()
                .filter(|r| sorted.binary_search(r).is_err())
                .count();
            let extra = active.iter().filter(|r| !live.contains(r)).count();
            (
                format!(
                    "session {tip} stores {} active rows, the live list has {} ({missing} missing, {extra} extra)",
                    active.len(),
                    live.len()
                ),
                Witness::default(),
            )
        })
    }
}
