//! failed-turn-not-persisted (H-9893, H-1630): a failed turn during which no compaction
//! committed leaves no row of its own in any stored transcript.

use super::{GatewayInvariant, GatewayStep};
use crate::InvariantInfo;
use compactsim_model::{GatewayEvent, TurnOutcome, Witness};

pub const INFO: InvariantInfo = InvariantInfo {
    id: "failed-turn-not-persisted",
    statement: "a failed turn without a committed compaction leaves none of its rows among the active rows of any stored transcript",
    catches: &["H-9893", "H-1630"],
};

#[derive(Default)]
pub struct FailedTurnNotPersisted;

impl GatewayInvariant for FailedTurnNotPersisted {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn observe(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        let GatewayEvent::TurnDone {
            outcome,
            compacted: false,
            user,
            turn_rows,
            ..
        } = s.event
        else {
            return None;
        };
        if *outcome == TurnOutcome::Finished {
            return None;
        }
        let holder = s.store.sessions.iter().find(|sess| {
            sess.rows
                .iter()
                .any(|r| r.active && turn_rows.contains(&r.id))
        })?;
        Some((
            format!(
                "the failed turn's rows were persisted to session {}",
                holder.id
            ),
            Witness::default().fact(format!("user row {}", user.0)),
        ))
    }
}
