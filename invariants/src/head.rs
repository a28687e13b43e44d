//! The protected head of a case, shared by `head-protected` and `exchange-absorbed-once`.
//!
//! Definition (hermes-domain §2.3 phase 2, §3.3): after an optional leading system row,
//! the first `protect_first_n` non-system rows, extended forward over following tool rows
//! so a tool group is never split (Hermes pushes compress_start past tool rows). The head
//! is fixed — ids and the content each row had then — the first time a transcript holds
//! at least one row past that boundary, and never re-fixed afterwards.
//!
//! Decay hook: Hermes drops the non-system head once a batch compaction has committed
//! (#11996). [`releases_head`] says which events do that: every committed compaction
//! that is not a micro pass. After a release only the system row stays protected.
//!
//! Micro compaction's own head never decays: it is the first rows of the *current* list.
//! [`ProtectedHead::refixing`] builds the micro view, which a committed batch
//! compaction re-fixes from the list it leaves instead of releasing.
//!
//! A session reset starts a new transcript: the head is learned again from it. A failed
//! turn that rolled back rows of a head not yet outgrown by later turns (a young
//! session) forgets the head too, which is then learned again.

use crate::class::{classify, EventClass};
use compactsim_model::{Content, Message, MsgId, Role, Transition};

/// One protected row as it was when the head was fixed.
#[derive(Clone, Debug)]
pub(crate) struct HeadRow {
    pub id: MsgId,
    pub content: Content,
}

/// Per-case state of the protected head.
#[derive(Clone, Debug)]
pub(crate) struct ProtectedHead {
    protect_first_n: u32,
    /// `None` until the first non-empty transcript was seen; then its leading system row.
    system: Option<Option<Message>>,
    /// `None` until fixed. Empty after a release.
    rows: Option<Vec<HeadRow>>,
    /// Head ids, ascending, for membership tests.
    ids_sorted: Vec<MsgId>,
    /// A batch compaction re-fixes the head instead of releasing it (micro's view).
    refix_on_batch: bool,
}

/// Whether `t` ends head protection for the non-system head (the batch decay hook): a
/// batch compaction that removed rows (observed, see `class::committed_batch`).
pub(crate) fn releases_head(t: &Transition<'_>) -> bool {
    crate::class::committed_batch(t)
}

/// Index range `[start, end)` of the protected head of `rows`, or `None` while the
/// transcript has no row past it.
pub(crate) fn head_range(rows: &[Message], protect_first_n: u32) -> Option<(usize, usize)> {
    let start = usize::from(rows.first().is_some_and(|m| m.role == Role::System));
    let mut end = start;
    let mut taken = 0u32;
    while taken < protect_first_n {
        let row = rows.get(end)?;
        if row.role != Role::System {
            taken += 1;
        }
        end += 1;
    }
    while rows.get(end).is_some_and(|m| m.role == Role::Tool) {
        end += 1;
    }
    (end < rows.len()).then_some((start, end))
}

impl ProtectedHead {
    pub(crate) fn new(protect_first_n: u32) -> Self {
        ProtectedHead {
            protect_first_n,
            system: None,
            rows: None,
            ids_sorted: Vec::new(),
            refix_on_batch: false,
        }
    }

    /// The micro compactor's head: re-fixed from the list a batch compaction leaves.
    pub(crate) fn refixing(protect_first_n: u32) -> Self {
        ProtectedHead {
            refix_on_batch: true,
            ..ProtectedHead::new(protect_first_n)
        }
    }

    /// Call first on every transition: learns from `before` (only matters on the first).
    pub(crate) fn begin(&mut self, t: &Transition<'_>) {
        self.learn(t.before);
    }

    /// Call last on every transition: applies the decay hook, then learns from `after`.
    pub(crate) fn end(&mut self, t: &Transition<'_>) {
        let class = classify(t.event);
        if releases_head(t) {
            self.rows = (!self.refix_on_batch).then(Vec::new);
            self.ids_sorted.clear();
        }
        let rolled_back = matches!(class, EventClass::TurnFailed)
            && self
                .rows()
                .iter()
                .any(|h| !t.after.iter().any(|m| m.id == h.id));
        if matches!(class, EventClass::SessionReset) || rolled_back {
            self.rows = None;
            self.ids_sorted.clear();
        }
        self.learn(t.after);
    }

    fn learn(&mut self, rows: &[Message]) {
        if self.system.is_none() && !rows.is_empty() {
            self.system = Some(rows.first().filter(|m| m.role == Role::System).cloned());
        }
        if self.rows.is_some() {
            return;
        }
        if let Some((start, end)) = head_range(rows, self.protect_first_n) {
            let head: Vec<HeadRow> = rows[start..end]
                .iter()
                .map(|m| HeadRow {
                    id: m.id,
                    content: m.content.clone(),
                })
                .collect();
            self.ids_sorted = head.iter().map(|r| r.id).collect();
            self.ids_sorted.sort_unstable();
            self.rows = Some(head);
        }
    }

    /// The leading system row of the case's first transcript, if it had one.
    pub(crate) fn system(&self) -> Option<&Message> {
        self.system.as_ref().and_then(Option::as_ref)
    }

    /// The fixed head rows in order (empty before fixing and after a release).
    pub(crate) fn rows(&self) -> &[HeadRow] {
        self.rows.as_deref().unwrap_or(&[])
    }

    pub(crate) fn contains(&self, id: MsgId) -> bool {
        self.ids_sorted.binary_search(&id).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;

    #[test]
    fn head_extends_over_the_tool_run_and_waits_for_a_row_past_it() {
        let rows = vec![
            system(0),
            user(1),
            calling(2, &[1, 2]),
            tool(3, 1),
            tool(4, 2),
        ];
        assert_eq!(head_range(&rows, 2), None, "tool run reaches the end");
        let mut longer = rows.clone();
        longer.push(reply(5));
        assert_eq!(head_range(&longer, 2), Some((1, 5)));
        assert_eq!(head_range(&longer, 3), Some((1, 5)));
        assert_eq!(head_range(&longer[1..], 1), Some((0, 1)));
    }

    #[test]
    fn head_is_fixed_once_and_released_by_the_hook_only() {
        let mut head = ProtectedHead::new(1);
        let short = vec![user(0)];
        let long = vec![user(0), reply(1)];
        let ev = append_event(1);
        head.begin(&transition(&ev, &[], &short));
        head.end(&transition(&ev, &[], &short));
        assert!(head.rows().is_empty() && head.system().is_none());
        head.end(&transition(&ev, &short, &long));
        assert_eq!(head.rows().len(), 1);
        assert!(head.contains(MsgId(0)) && !head.contains(MsgId(1)));
        let moved = vec![reply(1), user(0), reply(2)];
        head.end(&transition(&micro_pass_event(1), &long, &moved));
        assert!(
            head.contains(MsgId(0)),
            "a micro pass never re-fixes the head"
        );
    }
}
