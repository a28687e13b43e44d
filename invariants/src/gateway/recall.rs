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

/// Row ids below this are checked with a bit per id; a session holding a larger id is
/// checked with a set (ids are allocated from 0 per case, so it does not happen in the
/// simulator's cases).
pub const RECALL_BITSET_IDS_MAX: u32 = 1 << 20;

/// Scans the key's session after every turn: the one gateway check whose cost grows with
/// the whole stored history, so it keeps a bitset between turns (cleared after each scan).
#[derive(Default)]
pub struct RecallOnce {
    /// One bit per row id; all zero between scans.
    seen: Vec<u64>,
}

impl RecallOnce {
    /// Whether some id of `ids` comes twice (leaves the bitset all zero).
    fn any_twice(&mut self, ids: impl Iterator<Item = u32> + Clone) -> bool {
        if ids.clone().any(|id| id >= RECALL_BITSET_IDS_MAX) {
            let mut seen = BTreeSet::new();
            return ids.into_iter().any(|id| !seen.insert(id));
        }
        let mut twice = false;
        for id in ids.clone() {
            let (word, bit) = ((id / 64) as usize, 1u64 << (id % 64));
            if word >= self.seen.len() {
                self.seen.resize(word + 1, 0);
            }
            if self.seen[word] & bit != 0 {
                twice = true;
                break;
            }
            self.seen[word] |= bit;
        }
        for id in ids {
            if let Some(w) = self.seen.get_mut((id / 64) as usize) {
                *w = 0;
            }
        }
        twice
    }
}

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
        let searchable = session.rows.iter().filter(|r| r.active || r.compacted);
        if !self.any_twice(searchable.clone().map(|r| r.id.0)) {
            return None;
        }
        let mut seen = BTreeSet::new();
        let twice: Vec<u32> = searchable
            .filter(|r| !seen.insert(r.id))
            .map(|r| r.id.0)
            .collect();
        Some((
            format!(
                "session {tip} holds {} rows searchable more than once",
                twice.len()
            ),
            Witness::default().fact(format!("rows {:?}", &twice[..twice.len().min(8)])),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_twice_is_found_by_bits_or_by_the_set_and_the_bits_are_left_clear() {
        let mut r = RecallOnce::default();
        assert!(!r.any_twice([3u32, 70, 5, 200].into_iter()));
        assert!(r.any_twice([3u32, 70, 5, 70].into_iter()));
        assert!(r.seen.iter().all(|w| *w == 0), "{:?}", r.seen);
        assert!(
            !r.any_twice([70u32, 3].into_iter()),
            "nothing left from before"
        );
        let big = RECALL_BITSET_IDS_MAX;
        assert!(r.any_twice([big, 1, big].into_iter()));
        assert!(!r.any_twice([big, 1, big + 1].into_iter()));
        assert!(r.seen.len() <= 4, "a large id never sizes the bitset");
    }
}
