//! `_sanitize_tool_pairs` (hermes-domain §1.3), run after every batch compaction:
//! tool results whose call is gone are dropped, calls whose result is gone are
//! stripped, and an assistant row left with neither calls nor text says
//! `(tool call removed)`. No stub results are inserted.

use super::scaffold::Fixed;
use compactsim_model::{CallId, Content, Message, Role};
use serde::Serialize;

/// What the sanitizer changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SanitizeStats {
    pub results_dropped: u32,
    pub calls_stripped: u32,
    pub rows_emptied: u32,
}

/// A set of call ids as a sorted list (cheaper to build than a tree for one lookup pass).
struct IdSet(Vec<CallId>);

impl IdSet {
    fn of(ids: impl Iterator<Item = CallId>) -> Self {
        let mut ids: Vec<CallId> = ids.collect();
        ids.sort_unstable();
        ids.dedup();
        IdSet(ids)
    }

    fn contains(&self, id: &CallId) -> bool {
        self.0.binary_search(id).is_ok()
    }
}

pub fn sanitize_tool_pairs(messages: &mut Vec<Message>) -> SanitizeStats {
    let mut stats = SanitizeStats::default();
    let called = IdSet::of(
        messages
            .iter()
            .flat_map(|m| m.tool_calls.iter().map(|c| c.id)),
    );
    let before = messages.len();
    messages
        .retain(|m| m.role != Role::Tool || m.tool_call_id.is_some_and(|id| called.contains(&id)));
    stats.results_dropped = (before - messages.len()) as u32;
    let answered = IdSet::of(messages.iter().filter_map(|m| m.tool_call_id));
    for m in messages.iter_mut() {
        if m.tool_calls.iter().all(|c| answered.contains(&c.id)) {
            continue;
        }
        let kept: Vec<_> = m
            .tool_calls
            .iter()
            .filter(|c| answered.contains(&c.id))
            .cloned()
            .collect();
        stats.calls_stripped += (m.tool_calls.len() - kept.len()) as u32;
        m.set_tool_calls(kept);
        if m.tool_calls.is_empty() && m.content.is_empty() {
            m.set_content(Content::single(Fixed::ToolCallRemoved.segment(m.id, 0)));
            stats.rows_emptied += 1;
        }
    }
    stats
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compactor::batch::testkit::Builder;

    #[test]
    fn id_set_holds_what_a_tree_set_holds() {
        let ids = [5, 1, 9, 1, 5, 300, 0].map(CallId);
        let tree: std::collections::BTreeSet<CallId> = ids.iter().copied().collect();
        let set = IdSet::of(ids.iter().copied());
        for id in (0..302).map(CallId) {
            assert_eq!(set.contains(&id), tree.contains(&id), "{id:?}");
        }
        assert!(!IdSet::of(std::iter::empty()).contains(&CallId(0)));
    }

    #[test]
    fn drops_orphan_results_and_strips_unanswered_calls() {
        let mut b = Builder::new();
        b.user(40);
        b.round(300);
        b.round(300);
        b.reply(40);
        let mut m = b.rows;
        let orphan_result = m[2].clone(); // result of the first call
        m.remove(1); // the first call is gone
        m.remove(3); // the second call's result is gone
        let calling = m[2].id;
        let stats = sanitize_tool_pairs(&mut m);
        assert_eq!(
            stats,
            SanitizeStats {
                results_dropped: 1,
                calls_stripped: 1,
                rows_emptied: 1
            }
        );
        assert!(m.iter().all(|r| r.id != orphan_result.id));
        let row = m.iter().find(|r| r.id == calling).unwrap();
        assert!(row.tool_calls.is_empty());
        assert!(Fixed::ToolCallRemoved.is(&row.content.segments[0]));
        let mut clean = Builder::new();
        clean.turn(40, 2, 300);
        let mut c = clean.rows;
        let copy = c.clone();
        assert_eq!(sanitize_tool_pairs(&mut c), SanitizeStats::default());
        assert_eq!(c, copy);
    }
}
