//! loaded-is-compacted (H-29926, H-50037, H-29335): a transcript loaded into a fresh agent never
//! holds a row that an observed compaction removed from the live list.

use super::{GatewayInvariant, GatewayStep};
use crate::InvariantInfo;
use compactsim_model::{GatewayEvent, MsgId, Witness};
use std::collections::{BTreeMap, BTreeSet};

pub const INFO: InvariantInfo = InvariantInfo {
    id: "loaded-is-compacted",
    statement:
        "a loaded transcript holds no row that a committed compaction removed from the live list",
    catches: &["G-load-archived", "H-29926"],
};

#[derive(Default)]
pub struct LoadedIsCompacted {
    /// Per key: the live list after its last handled turn.
    last_live: BTreeMap<String, Vec<MsgId>>,
    /// Per key: rows compactions removed.
    gone: BTreeMap<String, BTreeSet<MsgId>>,
}

impl GatewayInvariant for LoadedIsCompacted {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn observe(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        match s.event {
            GatewayEvent::TurnDone {
                key,
                compacted,
                live,
                ..
            } => {
                let before = self.last_live.insert(key.clone(), live.clone());
                if *compacted {
                    let gone = self.gone.entry(key.clone()).or_default();
                    gone.extend(
                        before
                            .unwrap_or_default()
                            .into_iter()
                            .filter(|r| !live.contains(r)),
                    );
                    gone.retain(|r| !live.contains(r));
                }
                None
            }
            GatewayEvent::Loaded {
                key, rows, session, ..
            } => {
                let gone = self.gone.get(key)?;
                let stale: Vec<u32> = rows
                    .iter()
                    .filter(|r| gone.contains(r))
                    .map(|r| r.0)
                    .collect();
                (!stale.is_empty()).then(|| {
                    (
                        format!(
                            "session {session} loaded {} rows a compaction had removed",
                            stale.len()
                        ),
                        Witness::default().fact(format!("rows {stale:?}")),
                    )
                })
            }
            _ => None,
        }
    }
}
