//! failed-turn-not-persisted (H-9893, H-1630): a failed turn during which no compaction
//! committed leaves none of its rows among the active rows of the session its key
//! resolves to — but its user row after a failure that was not an overflow (a transient
//! failure keeps the user message, #7100). An overflow failure is judged from what the
//! harness observed: the turn ended in exhaustion, or its failing provider call was over
//! the window by the fake provider's ground truth.

use super::{compression_tip, GatewayInvariant, GatewayStep};
use crate::InvariantInfo;
use compactsim_model::{GatewayEvent, TurnOutcome, Witness};

pub const INFO: InvariantInfo = InvariantInfo {
    id: "failed-turn-not-persisted",
    statement: "a failed turn without a committed compaction leaves none of its rows among the active rows of its key's session, but its user row after a failure that was not an overflow",
    catches: &["H-9893", "H-1630"],
    class: crate::InvariantClass::Universal,
};

#[derive(Default)]
pub struct FailedTurnNotPersisted;

impl GatewayInvariant for FailedTurnNotPersisted {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn observe(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        let GatewayEvent::TurnDone {
            key,
            outcome,
            compacted: false,
            overflow,
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
        let mapped = s.store.binding(key).or(s.store.route(key))?;
        let tip = compression_tip(s.store, mapped)?;
        let session = s.store.session(tip)?;
        let kept: Vec<u32> = session
            .rows()
            .iter()
            .filter(|r| r.active && turn_rows.contains(&r.id))
            .filter(|r| *overflow || r.id != *user)
            .map(|r| r.id.0)
            .collect();
        (!kept.is_empty()).then(|| {
            let what = if *overflow {
                "the overflow-failed turn's rows"
            } else {
                "the failed turn's rows past its user row"
            };
            (
                format!("{what} were persisted to session {tip}"),
                Witness::default().fact(format!("user row {}, stored rows {kept:?}", user.0)),
            )
        })
    }
}
