//! exhausted-resets-clean (H-35809, H-9893, H-85145): after a turn ends in
//! `compression_exhausted`, every mapping of its key (route and topic binding) names
//! one new parentless session whose transcript holds nothing but what the reset agent
//! holds; the old transcript is still stored; and the next load for the key (also after
//! a restart) reads that clean transcript.

use super::{GatewayInvariant, GatewayStep};
use crate::InvariantInfo;
use compactsim_model::{GatewayEvent, MsgId, TurnOutcome, Witness};
use std::collections::BTreeMap;

pub const INFO: InvariantInfo = InvariantInfo {
    id: "exhausted-resets-clean",
    statement: "after compression_exhausted every mapping of the key names one new parentless session holding only the reset agent's rows, the old transcript is kept, and the next load reads it",
    catches: &["H-35809", "H-9893", "H-85145"],
    class: crate::InvariantClass::Universal,
};

#[derive(Default)]
pub struct ExhaustedResetsClean {
    /// Per key: the session mapped when the turn started.
    started_on: BTreeMap<String, Option<u32>>,
    /// Per key: the rows a load may return after an exhaustion (until the next turn).
    reset: BTreeMap<String, Vec<MsgId>>,
}

impl GatewayInvariant for ExhaustedResetsClean {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn observe(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        match s.event {
            GatewayEvent::TurnStarted { key, .. } => {
                let mapped = s.store.binding(key).or(s.store.route(key));
                self.started_on.insert(key.clone(), mapped);
                self.reset.remove(key);
                None
            }
            GatewayEvent::Loaded { key, rows, .. } => {
                let clean = self.reset.get(key)?;
                let extra: Vec<u32> = rows
                    .iter()
                    .filter(|r| !clean.contains(r))
                    .map(|r| r.0)
                    .collect();
                (!extra.is_empty()).then(|| {
                    (
                        format!(
                            "the load after the reset returned {} rows of the old transcript",
                            extra.len()
                        ),
                        Witness::default().fact(format!("rows {extra:?}")),
                    )
                })
            }
            GatewayEvent::TurnDone {
                key,
                outcome: TurnOutcome::Exhausted,
                live,
                ..
            } => {
                self.reset.insert(key.clone(), live.clone());
                let old = self.started_on.get(key).copied().flatten();
                self.judge(s, key, old, live)
            }
            _ => None,
        }
    }
}

impl ExhaustedResetsClean {
    fn judge(
        &self,
        s: &GatewayStep<'_>,
        key: &str,
        old: Option<u32>,
        live: &[MsgId],
    ) -> Option<(String, Witness)> {
        let route = s.store.route(key);
        let binding = s.store.binding(key);
        let w = || {
            Witness::default().fact(format!(
                "route {route:?}, binding {binding:?}, before {old:?}"
            ))
        };
        if binding.is_some_and(|b| Some(b) != route) {
            return Some((
                "the topic binding was not re-synced to the reset session".into(),
                w(),
            ));
        }
        let Some(new) = route else {
            return Some(("the key has no route after the reset".into(), w()));
        };
        if old == Some(new) {
            return Some(("the key still names the exhausted session".into(), w()));
        }
        let session = s.store.session(new)?;
        if session.parent.is_some() {
            return Some((format!("the reset session {new} has a parent"), w()));
        }
        let stale = session
            .active_ids()
            .into_iter()
            .filter(|r| !live.contains(r))
            .count();
        if stale > 0 {
            return Some((
                format!("the reset session {new} holds {stale} rows of the old conversation"),
                w(),
            ));
        }
        if old.is_some_and(|o| s.store.session(o).is_none()) {
            return Some(("the old transcript was deleted".into(), w()));
        }
        None
    }
}
