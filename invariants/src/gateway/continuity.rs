//! The route-continuity part of session-id-persisted: a key's saved route and its topic
//! binding move only (a) to a descendant of the session they named (a rotation, or a
//! heal to the compression tip), or (b) into the lineage of a session the harness reset
//! the key to ([`GatewayEvent::Reset`]: `/reset` or the `compression_exhausted`
//! auto-reset). Anything else — after a restart the key names a session outside the
//! old one's lineage, with no reset — is the chat losing its conversation: the newest
//! session of a fresh lineage is a tip, so the tip rule alone cannot see it (FINDINGS
//! G1: 0.19.0's start-up prune, then `get_or_create_session`). A mapping that
//! disappears is not judged by itself; where it reappears is judged against what it
//! named last. Judged from the store read back at every step: O(keys) a step, a
//! parent walk only when a mapping changed.

use super::{ancestors, compression_tip, GatewayStep};
use compactsim_model::{GatewayEvent, SessionNo, StoreSnapshot, Witness};
use std::collections::BTreeMap;

/// The two mappings of a key (the index of each in [`Continuity::named`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mapping {
    Route = 0,
    Binding = 1,
}

impl Mapping {
    fn name(self) -> &'static str {
        match self {
            Mapping::Route => "route",
            Mapping::Binding => "topic binding",
        }
    }
}

#[derive(Default)]
pub struct Continuity {
    /// Per key: the session each mapping (route, binding) named when last seen.
    named: BTreeMap<String, [Option<SessionNo>; 2]>,
    /// Per key: the session of the harness's latest reset of it.
    reset_to: BTreeMap<String, SessionNo>,
}

/// `id` is `root` or a descendant of it (its parent chain reaches `root`).
fn in_lineage_of(store: &StoreSnapshot, id: SessionNo, root: SessionNo) -> bool {
    id == root || ancestors(store, id).any(|a| a == root)
}

impl Continuity {
    /// Updates what each mapping names; the first move out of lineage, if any.
    pub fn observe(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        if let GatewayEvent::Reset { key, session, .. } = s.event {
            self.reset_to.insert(key.clone(), *session);
        }
        let mut found = None;
        let mappings = [
            (Mapping::Route, &s.store.routes),
            (Mapping::Binding, &s.store.bindings),
        ];
        for (mapping, entries) in mappings {
            for (key, now) in entries {
                let moved = self.moved(s, mapping, key, *now);
                found = found.or(moved);
            }
        }
        found
    }

    /// Records that `mapping` of `key` names `now`; a violation when it moved out of
    /// the lineage of what it named.
    fn moved(
        &mut self,
        s: &GatewayStep<'_>,
        mapping: Mapping,
        key: &str,
        now: SessionNo,
    ) -> Option<(String, Witness)> {
        let slot = match self.named.get_mut(key) {
            Some(named) => &mut named[mapping as usize],
            None => &mut self.named.entry(key.to_string()).or_default()[mapping as usize],
        };
        let was = match slot.replace(now) {
            Some(was) if was != now => was,
            _ => return None, // unchanged, or the key's first mapping
        };
        let store = s.store;
        let reset = self.reset_to.get(key).copied();
        if in_lineage_of(store, now, was) || reset.is_some_and(|r| in_lineage_of(store, now, r)) {
            return None;
        }
        let tip = compression_tip(store, was).unwrap_or(was);
        let rows = store.session(tip).map_or(0, |t| t.active_ids().len());
        let what = mapping.name();
        Some((
            format!(
                "the chat's {what} moved from session {was} (lineage tip {tip}, {rows} active rows) to session {now}, which is not in its lineage, with no reset"
            ),
            Witness::default().fact(format!(
                "{what} of {key}: {was} -> {now}; tip of {was}: {tip}; last reset: {}",
                reset.map_or("none".to_string(), |r| format!("to session {r}"))
            )),
        ))
    }
}
