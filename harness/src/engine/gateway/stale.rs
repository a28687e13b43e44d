//! Two historical bug paths of the gateway's persistence that need more than a flag:
//! H-57491's rotation flush that skips rows still marked persisted, and H-29926's next
//! turn that is handed the uncompacted post-turn list.

use super::world::Gateway;
use compactsim_hermes::agent::Flow;
use compactsim_model::{Message, SessionNo};

impl Gateway {
    /// H-57491: the head and tail copies `compress()` returned kept `_db_persisted`, so
    /// the rotation flush skips every row the parent session already stores; only the
    /// new rows (the summary) reach the child.
    pub(super) fn skip_marked_persisted(&self, parent: SessionNo, rows: &mut Vec<Message>) {
        let Some(stored) = self.store.durable.snapshot.session(parent) else {
            return;
        };
        rows.retain(|m| !stored.stores(m.id));
    }

    /// H-29926: after a turn whose compaction rotated the session, the next turn's
    /// history is the inflated post-turn list — the list the turn started from plus
    /// the turn's own rows — instead of the compacted list: the gateway hands it to the
    /// agent as the session's history (a load the harness observes).
    pub(super) fn hand_uncompacted(
        &mut self,
        turn: u32,
        mut pre_turn: Vec<Message>,
        script: &[Message],
    ) -> Flow<()> {
        let fresh: Vec<Message> = script
            .iter()
            .filter(|m| !pre_turn.iter().any(|r| r.id == m.id))
            .cloned()
            .collect();
        pre_turn.extend(fresh);
        let id = self.store.volatile.cached[&self.key()];
        self.load_rows(turn, id, pre_turn)
    }
}
