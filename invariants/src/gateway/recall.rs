//! recall-once (H-86366): each row of a stored transcript is searchable — active, or
//! archived by a compaction (`compacted`) — at most once. A row carried into a
//! compaction's new active set is superseded, not archived; archiving it too puts it in
//! recall twice, once more per compaction that carries it.

use super::ids::IdCounts;
use super::{compression_tip, GatewayInvariant, GatewayStep};
use crate::InvariantInfo;
use compactsim_model::{GatewayEvent, StoredRow, StoredSession, Witness};
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
    /// Its edit count when judged.
    edits: usize,
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
    /// Whether the tip `session` holds a row searchable twice (reads only the rows
    /// changed since the last turn when the tip is the same session).
    fn any_twice(&mut self, session: &StoredSession) -> bool {
        let (tip, rows) = (session.id, session.rows());
        let same = if self.tip == Some(tip) {
            session.changed_from(self.edits, self.rows.len())
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
        self.edits = session.edit_count();
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
        if !self.any_twice(session) {
            return None;
        }
        let twice = twice(session.rows());
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
        let mut sessions = [0, 1].map(|id| StoredSession::new(id, None, Vec::new()));
        let (mut flagged, mut clean) = (0, 0);
        for _ in 0..HISTORY_STEPS {
            let tip = g.below(8).min(1) as usize; // mostly session 1
            let s = &mut sessions[tip];
            match g.below(6) {
                0 | 1 => {
                    let id = g.below(40) as u32;
                    s.append([row(id, true, false)]);
                }
                2 => {
                    let carried = g.below(2) == 0;
                    s.restate_from(0, |x| {
                        x.active.then(|| (false, !carried || g.below(2) == 0))
                    });
                }
                3 => {
                    if let Some(at) = s.rows().iter().rposition(|x| x.active) {
                        s.restate_from(at, |_| Some((false, false)));
                    }
                }
                4 if g.below(8) == 0 => s.replace(Vec::new()),
                _ => {
                    if !s.rows().is_empty() {
                        let at = g.below(s.rows().len() as u64) as usize;
                        let mut first = true;
                        s.restate_from(at, |x| {
                            std::mem::take(&mut first).then_some((x.active, !x.compacted))
                        });
                    }
                }
            }
            let plain = !twice(s.rows()).is_empty();
            assert_eq!(r.any_twice(s), plain, "{:?}", s.rows());
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
        let rows = vec![row(big, true, false), row(1, false, true)];
        let mut s = StoredSession::new(0, None, rows.clone());
        assert!(!r.any_twice(&s));
        s.append([row(big, false, true)]);
        assert!(r.any_twice(&s));
        assert_eq!(twice(s.rows()), [big]);
        s.replace(rows);
        assert!(!r.any_twice(&s), "the row taken away is uncounted");
    }

    #[test]
    fn a_session_judged_afresh_is_read_whole() {
        let mut r = RecallOnce::default();
        let mut s = StoredSession::new(0, None, vec![row(1, true, false)]);
        s.replace(vec![row(1, true, false)]);
        s.replace(vec![row(1, true, false)]);
        assert!(!r.any_twice(&s));
        // The same id with fewer edits (another store): read from row 0, not trusted.
        let other = StoredSession::new(0, None, vec![row(1, false, true), row(1, true, false)]);
        assert!(r.any_twice(&other));
    }
}
