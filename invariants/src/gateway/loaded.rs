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
    class: crate::InvariantClass::Universal,
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
                    let mut live_sorted = live.clone();
                    live_sorted.sort();
                    gone.extend(
                        before
                            .unwrap_or_default()
                            .into_iter()
                            .filter(|r| live_sorted.binary_search(r).is_err()),
                    );
                    // The rows live again leave `gone` (one removal per live row, not a
                    // scan of every row ever compacted away).
                    for r in live {
                        gone.remove(r);
                    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_model::{StoreSnapshot, TurnOutcome};

    fn turn_done(live: &[u32], compacted: bool) -> GatewayEvent {
        GatewayEvent::TurnDone {
            turn: 1,
            key: "k".into(),
            inbound: 1,
            user: MsgId(0),
            turn_rows: vec![],
            outcome: TurnOutcome::Finished,
            compacted,
            overflow: false,
            live: live.iter().map(|&i| MsgId(i)).collect(),
        }
    }

    /// The rows removed by compactions, by the plain rule: after each compacted turn,
    /// add the rows of the previous live list missing from the new one, then drop every
    /// row of the new live list.
    fn gone_plainly(turns: &[(Vec<u32>, bool)]) -> BTreeSet<MsgId> {
        let (mut last, mut gone) = (Vec::<u32>::new(), BTreeSet::new());
        for (live, compacted) in turns {
            if *compacted {
                gone.extend(last.iter().filter(|r| !live.contains(r)).map(|&r| MsgId(r)));
                gone.retain(|r| !live.contains(&r.0));
            }
            last = live.clone();
        }
        gone
    }

    /// Live lists that shrink, grow, reorder, repeat ids and bring removed rows back.
    #[test]
    fn the_rows_gone_are_those_of_the_plain_rule() {
        let mut x = 7u64;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        for _ in 0..200 {
            let turns: Vec<(Vec<u32>, bool)> = (0..12)
                .map(|_| {
                    let len = next(12);
                    let live = (0..len).map(|_| next(30) as u32).collect();
                    (live, next(2) == 0)
                })
                .collect();
            let mut inv = LoadedIsCompacted::default();
            let store = StoreSnapshot::default();
            for (live, compacted) in &turns {
                let event = turn_done(live, *compacted);
                let s = GatewayStep {
                    step: 0,
                    event: &event,
                    store: &store,
                };
                assert_eq!(inv.observe(&s), None);
            }
            let gone = inv.gone.get("k").cloned().unwrap_or_default();
            assert_eq!(gone, gone_plainly(&turns), "{turns:?}");
        }
    }
}
