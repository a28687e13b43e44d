//! session-id-persisted (H-29335, H-25747, H-20470): after every handled turn, the
//! saved route and the topic binding of its key resolve to the newest session of their
//! lineage (no child session exists), and no parent chain is a cycle; every load reads
//! the tip of its lineage. And across every step (restarts included) a mapping moves
//! only along its lineage ([`super::continuity`]): the newest session of a *fresh*
//! lineage is a tip too, so the tip rule alone cannot see a route that lost its
//! conversation (FINDINGS G1).

use super::continuity::Continuity;
use super::{ancestors, GatewayInvariant, GatewayStep, LINEAGE_DEPTH_MAX};
use crate::InvariantInfo;
use compactsim_model::{GatewayEvent, StoreSnapshot, Witness};

pub const INFO: InvariantInfo = InvariantInfo {
    id: "session-id-persisted",
    statement: "after every gateway turn the saved route and topic binding of its key name the newest session of their lineage (no child, no parent cycle); every load reads a lineage tip; a route or binding moves only to a descendant of the session it named, or into the lineage of a reset the harness made",
    catches: &["H-29335", "H-25747", "H-20470"],
    class: crate::InvariantClass::Universal,
};

#[derive(Default)]
pub struct SessionIdPersisted {
    continuity: Continuity,
}

fn not_tip(store: &StoreSnapshot, what: &str, id: u32) -> Option<(String, Witness)> {
    let child = store.children(id).map(|c| c.id).max()?;
    Some((
        format!("{what} names session {id}, which was rotated to session {child}"),
        Witness::default().fact(format!("{what} -> {id}; child {child}")),
    ))
}

fn cycle(store: &StoreSnapshot, id: u32) -> Option<(String, Witness)> {
    let mut walked = 0;
    for p in ancestors(store, id) {
        if p == id {
            return Some((
                format!("session {id} is its own ancestor"),
                Witness::default(),
            ));
        }
        walked += 1;
    }
    (walked == LINEAGE_DEPTH_MAX).then(|| {
        (
            format!("session {id}: parent chain too deep"),
            Witness::default(),
        )
    })
}

impl GatewayInvariant for SessionIdPersisted {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn observe(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        // Every step updates what the mappings named, whichever rule speaks.
        let moved = self.continuity.observe(s);
        Self::tips(s).or(moved)
    }
}

impl SessionIdPersisted {
    /// The tip rule: after a turn the mappings, and every load, name a lineage tip.
    fn tips(s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        match s.event {
            GatewayEvent::TurnDone { key, .. } => {
                let route = s.store.route(key);
                let binding = s.store.binding(key);
                route
                    .and_then(|r| cycle(s.store, r).or_else(|| not_tip(s.store, "route", r)))
                    .or_else(|| binding.and_then(|b| not_tip(s.store, "topic binding", b)))
            }
            GatewayEvent::Loaded { session, .. } => not_tip(s.store, "the load", *session),
            _ => None,
        }
    }
}
