//! persisted-equals-live (H-98450, H-4095, H-57491, H-48584, H-50037): after
//! every handled turn the active rows of the key's session equal the live list, once
//! each; a stored row is never deleted (compaction archives).

use super::{compression_tip, GatewayInvariant, GatewayStep};
use crate::InvariantInfo;
use compactsim_model::{GatewayEvent, MsgId, Witness};
use std::collections::{BTreeMap, BTreeSet};

pub const INFO: InvariantInfo = InvariantInfo {
    id: "persisted-equals-live",
    statement: "after every gateway turn the active rows of the key's session equal the live list with no duplicates, and no stored row is ever deleted",
    catches: &["H-4095", "H-50037", "H-57491", "H-98450", "H-48584"],
};

#[derive(Default)]
pub struct PersistedEqualsLive {
    /// Per session: its stored row ids, in order, when last judged.
    stored: BTreeMap<u32, Vec<MsgId>>,
}

impl PersistedEqualsLive {
    /// A stored row that is gone since the last judged step (rows are only appended).
    fn deleted(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        for session in &s.store.sessions {
            let seen = self.stored.entry(session.id).or_default();
            let lost = seen
                .iter()
                .enumerate()
                .find(|(i, id)| session.rows.get(*i).map(|r| r.id) != Some(**id));
            if let Some((_, id)) = lost {
                return Some((
                    format!("row {} was deleted from session {}", id.0, session.id),
                    Witness::default(),
                ));
            }
            seen.extend(session.rows[seen.len()..].iter().map(|r| r.id));
        }
        None
    }
}

impl GatewayInvariant for PersistedEqualsLive {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn observe(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        let GatewayEvent::TurnDone { key, live, .. } = s.event else {
            return None;
        };
        if let Some(v) = self.deleted(s) {
            return Some(v);
        }
        let mapped = s.store.binding(key).or(s.store.route(key))?;
        let tip = compression_tip(s.store, mapped)?;
        let active = s.store.session(tip)?.active_ids();
        let unique: BTreeSet<&MsgId> = active.iter().collect();
        if unique.len() != active.len() {
            return Some((
                format!(
                    "session {tip} holds {} duplicate active rows",
                    active.len() - unique.len()
                ),
                Witness::default(),
            ));
        }
        (active != *live).then(|| {
            let missing = live.iter().filter(|r| !unique.contains(r)).count();
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
