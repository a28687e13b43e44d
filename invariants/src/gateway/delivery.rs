//! idempotent-delivery and persist-before-ack: an inbound message whose turn is already
//! recorded is never run again (a redelivery is dropped), and the platform is told a
//! message was handled only after its turn is recorded durably.

use super::{GatewayInvariant, GatewayStep};
use crate::InvariantInfo;
use compactsim_model::{GatewayEvent, Witness};

pub const IDEMPOTENT: InvariantInfo = InvariantInfo {
    id: "idempotent-delivery",
    statement: "an inbound message whose turn is durably recorded never starts another agent turn",
    catches: &["G-no-dedupe"],
    class: crate::InvariantClass::Universal,
};

pub const PERSIST_ACK: InvariantInfo = InvariantInfo {
    id: "persist-before-ack",
    statement: "an inbound message is acknowledged only after its turn is durably recorded",
    catches: &["G-ack-early"],
    class: crate::InvariantClass::Universal,
};

#[derive(Default)]
pub struct IdempotentDelivery;

impl GatewayInvariant for IdempotentDelivery {
    fn info(&self) -> InvariantInfo {
        IDEMPOTENT
    }

    fn observe(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        let GatewayEvent::TurnStarted { inbound, .. } = s.event else {
            return None;
        };
        s.store.delivered.contains(inbound).then(|| {
            (
                format!("inbound #{inbound} was already handled and ran again"),
                Witness::default(),
            )
        })
    }
}

#[derive(Default)]
pub struct PersistBeforeAck;

impl GatewayInvariant for PersistBeforeAck {
    fn info(&self) -> InvariantInfo {
        PERSIST_ACK
    }

    fn observe(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        let GatewayEvent::Acked { inbound, .. } = s.event else {
            return None;
        };
        (!s.store.delivered.contains(inbound)).then(|| {
            (
                format!("inbound #{inbound} was acknowledged before its turn was recorded"),
                Witness::default(),
            )
        })
    }
}
