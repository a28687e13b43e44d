//! recall-once (H-86366): each row of a stored transcript is searchable — active, or
//! archived by a compaction (`compacted`) — at most once. A row carried into a
//! compaction's new active set is superseded, not archived; archiving it too puts it in
//! recall twice, once more per compaction that carries it.

use super::{compression_tip, GatewayInvariant, GatewayStep};
use crate::InvariantInfo;
use compactsim_model::{GatewayEvent, Witness};
use std::collections::BTreeSet;

pub const INFO: InvariantInfo = InvariantInfo {
    id: "recall-once",
    statement: "after every gateway turn each row of the key's session is searchable (active or archived) at most once",
    catches: &["H-86366"],
};

#[derive(Default)]
pub struct RecallOnce;

impl GatewayInvariant for RecallOnce {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn observe(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        let GatewayEvent::TurnDone { key, .. } = s.event else {
            return None;
        };
        let mapped = s.store.binding(key).or(s.store.route(key))?;
        let tip = compression_tip(s.store, mapped)?;
        let session = s.store.session(tip)?;
        let mut seen = BTreeSet::new();
        let twice: Vec<u32> = session
            .rows
            .iter()
            .filter(|r| r.active || r.compacted)
            .filter(|r| !seen.insert(r.id))
            .map(|r| r.id.0)
            .collect();
        (!twice.is_empty()).then(|| {
            (
                format!(
                    "session {tip} holds {} rows searchable more than once",
                    twice.len()
                ),
                Witness::default().fact(format!("rows {:?}", &twice[..twice.len().min(8)])),
            )
        })
    }
}
