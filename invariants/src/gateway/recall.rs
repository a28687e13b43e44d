//! recall-once (H-86366): each row of a stored transcript is searchable — active, or
//! archived by a compaction (`compacted`) — at most once. A row carried into a
//! compaction's new active set is superseded, not archived; archiving it too puts it in
//! recall twice, once more per compaction that carries it.

use super::ids::IdCounts;
use super::{compression_tip, GatewayInvariant, GatewayStep};
use crate::InvariantInfo;
use compactsim_model::{GatewayEvent, StoredRow, Witness};
use std::collections::BTreeSet;

pub const INFO: InvariantInfo = InvariantInfo {
    id: "recall-once",
    statement: "after every gateway turn each row of the key's session is searchable (active or archived) at most once",
    catches: &["H-86366"],
    class: crate::InvariantClass::Universal,
};

/// Judges the key's session after every turn: the one gateway check whose subject grows
/// with the whole stored history, so it keeps the rows it judged last with a count of
/// each id's searchable rows, and recounts only the rows from the first one that
/// changed (a store appends rows and flips the flags of its newest active ones; a
/// rewrite or another session recounts everything).
#[derive(Default)]
pub struct RecallOnce {
    /// The session judged last.
    tip: Option<u32>,
    /// Its rows when judged.
    rows: Vec<StoredRow>,
    /// Searchable rows of `rows` per id.
    counts: IdCounts,
    /// Ids of `counts` counted more than once.
    twice_ids: usize,
}

fn searchable(r: &StoredRow) -> bool {
    r.active || r.compacted
}

impl RecallOnce {
    /// Brings the kept rows of `tip` up to `rows`; whether some id is searchable twice.
    fn any_twice(&mut self, tip: u32, rows: &[StoredRow]) -> bool {
        let same = if self.tip == Some(tip) {
            self.rows
                .iter()
                .zip(rows)
                .take_while(|(a, b)| a == b)
                .count()
        } else {
            0
        };
        for r in self.rows[same..].iter().filter(|r| searchable(r)) {
            if self.counts.sub(r.id.0) == 1 {
                self.twice_ids -= 1;
            }
        }
        for r in rows[same..].iter().filter(|r| searchable(r)) {
            if self.counts.add(r.id.0) == 2 {
                self.twice_ids += 1;
            }
        }
        self.rows.truncate(same);
        self.rows.extend_from_slice(&rows[same..]);
        self.tip = Some(tip);
        self.twice_ids > 0
    }
}

/// The ids of `rows` searchable more than once, each once per extra row (the plain scan).
fn twice(rows: &[StoredRow]) -> Vec<u32> {
    let mut seen = BTreeSet::new();
    rows.iter()
        .filter(|r| searchable(r) && !seen.insert(r.id))
        .map(|r| r.id.0)
        .collect()
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
        if !self.any_twice(tip, &session.rows) {
            return None;
        }
        let twice = twice(&session.rows);
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
    use super::super::ids::Lcg;
    use super::*;
    use compactsim_model::MsgId;

    fn row(id: u32, active: bool, compacted: bool) -> StoredRow {
        StoredRow {
            id: MsgId(id),
            active,
            compacted,
        }
    }

    const HISTORY_STEPS: u32 = 2_000;

    /// Random stores as the gateway mutates them (appends, archives, retractions,
    /// rewrites, another tip): the kept counts say "twice" exactly when the plain scan
    /// of the whole session finds an id searchable twice, violating or clean.
    #[test]
    fn the_kept_counts_flag_exactly_what_the_plain_scan_flags() {
        let mut r = RecallOnce::default();
        let mut g = Lcg(7);
        let mut sessions: [Vec<StoredRow>; 2] = [Vec::new(), Vec::new()];
        let (mut flagged, mut clean) = (0, 0);
        for _ in 0..HISTORY_STEPS {
            let tip = g.below(8).min(1) as usize; // mostly session 1
            let rows = &mut sessions[tip];
            match g.below(6) {
                0 | 1 => {
                    let id = g.below(40) as u32;
                    rows.push(row(id, true, false));
                }
                2 => {
                    let carried = g.below(2) == 0;
                    for x in rows.iter_mut().filter(|x| x.active) {
                        x.active = false;
                        x.compacted = !carried || g.below(2) == 0;
                    }
                }
                3 => {
                    if let Some(x) = rows.iter_mut().rev().find(|x| x.active) {
                        (x.active, x.compacted) = (false, false);
                    }
                }
                4 if g.below(8) == 0 => rows.clear(),
                _ => {
                    if !rows.is_empty() {
                        let at = g.below(rows.len() as u64) as usize;
                        rows[at].compacted = !rows[at].compacted;
                    }
                }
            }
            let plain = !twice(rows).is_empty();
            assert_eq!(r.any_twice(tip as u32, rows), plain, "{rows:?}");
            if plain {
                flagged += 1;
            } else {
                clean += 1;
            }
        }
        assert!(flagged > 100 && clean > 100, "{flagged} / {clean}");
    }

    #[test]
    fn a_large_id_is_counted_too_and_sizes_no_slot() {
        let mut r = RecallOnce::default();
        let big = crate::idset::DENSE_ID_LIMIT;
        let rows = [row(big, true, false), row(1, false, true)];
        assert!(!r.any_twice(0, &rows));
        let rows = [rows[0], rows[1], row(big, false, true)];
        assert!(r.any_twice(0, &rows));
        assert_eq!(twice(&rows), [big]);
        assert!(
            !r.any_twice(0, &rows[..2]),
            "the row taken away is uncounted"
        );
    }
}
