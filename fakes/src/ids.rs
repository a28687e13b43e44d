//! Id allocation within one case: message, tool-call and fact ids are dense and
//! increase in creation order.
//!
//! CONTRACT: the allocator hands out each id once, in strictly increasing order from 0
//! (asserted in release: one that runs out of ids panics instead of wrapping). A row a
//! compactor writes takes the allocator's newest message id, newer than every row it
//! replaces ([`IdAlloc::assert_new_row`]).

use compactsim_model::{CallId, FactId, Message, MsgId};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdAlloc {
    next_msg: u32,
    next_call: u32,
    next_fact: u32,
}

/// Hands out `*next` and moves it on; never twice.
fn next(next: &mut u32, kind: &str) -> u32 {
    let id = *next;
    *next = id.checked_add(1).unwrap_or_else(|| {
        panic!("CONTRACT: the allocator hands out each {kind} id once (ids exhausted)")
    });
    id
}

impl IdAlloc {
    pub fn msg(&mut self) -> MsgId {
        MsgId(next(&mut self.next_msg, "message"))
    }

    pub fn call(&mut self) -> CallId {
        CallId(next(&mut self.next_call, "tool-call"))
    }

    pub fn fact(&mut self) -> FactId {
        FactId(next(&mut self.next_fact, "fact"))
    }

    /// Number of facts planted so far.
    pub fn facts_planted(&self) -> u32 {
        self.next_fact
    }

    /// The newest message id handed out, if any.
    pub fn last_msg(&self) -> Option<MsgId> {
        self.next_msg.checked_sub(1).map(MsgId)
    }

    /// Asserts the contract of a row a compactor writes: its id `id` is the one this
    /// allocator handed out last, and newer than every row of `replaced` (the rows the
    /// new one takes the place of), so it is no row's id already. O(`replaced`).
    pub fn assert_new_row(&self, id: MsgId, replaced: &[Message]) {
        assert!(
            self.last_msg() == Some(id),
            "CONTRACT: a new row takes its id from the allocator: {id:?} is not its newest ({:?})",
            self.last_msg()
        );
        assert!(
            replaced.iter().all(|m| m.id < id),
            "CONTRACT: a new row's id is handed out once: {id:?} is not newer than the rows it replaces"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rows;
    use compactsim_model::Role;

    #[test]
    fn ids_are_dense_and_increasing_per_kind() {
        let mut ids = IdAlloc::default();
        assert_eq!(ids.last_msg(), None);
        assert_eq!(
            (ids.msg(), ids.msg(), ids.call()),
            (MsgId(0), MsgId(1), CallId(0))
        );
        assert_eq!((ids.fact(), ids.facts_planted()), (FactId(0), 1));
        assert_eq!(ids.last_msg(), Some(MsgId(1)));
    }

    #[test]
    #[should_panic(expected = "CONTRACT: the allocator hands out each message id once")]
    fn an_exhausted_allocator_panics_instead_of_wrapping() {
        let mut ids = IdAlloc {
            next_msg: u32::MAX,
            ..IdAlloc::default()
        };
        ids.msg();
    }

    #[test]
    #[should_panic(expected = "CONTRACT: a new row takes its id from the allocator")]
    fn a_new_row_with_an_id_not_from_the_allocator_fires() {
        let mut ids = IdAlloc::default();
        ids.msg();
        ids.assert_new_row(MsgId(7), &[]);
    }

    #[test]
    #[should_panic(expected = "CONTRACT: a new row's id is handed out once")]
    fn a_new_row_older_than_a_row_it_replaces_fires() {
        let mut ids = IdAlloc::default();
        let id = ids.msg();
        ids.assert_new_row(id, &[test_rows::row(5, Role::User, 10)]);
    }

    #[test]
    fn a_new_row_from_the_allocator_passes() {
        let mut ids = IdAlloc::default();
        let old = test_rows::row(ids.msg().0, Role::User, 10);
        let id = ids.msg();
        ids.assert_new_row(id, &[old]);
    }
}
