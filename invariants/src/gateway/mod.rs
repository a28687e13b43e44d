//! The gateway oracle (issue 10): invariants of a gateway's session store, judged from
//! what the harness observes — snapshots of the durable store ([`StoreSnapshot`]) and
//! the steps the harness took ([`GatewayEvent`]) — never from a gateway's or a
//! compactor's labels. It runs beside the transition oracle of the agent loop.

mod continuity;
#[cfg(test)]
mod continuity_tests;
mod delivery;
mod exhausted;
mod failed_turn;
mod ids;
mod lineage;
mod loaded;
mod persisted;
#[cfg(test)]
mod persisted_tests;
mod recall;
#[cfg(test)]
mod tests;

use crate::InvariantInfo;
use compactsim_model::{GatewayEvent, StoreSnapshot, Violation, Witness};

pub use delivery::{IdempotentDelivery, PersistBeforeAck};
pub use exhausted::ExhaustedResetsClean;
pub use failed_turn::FailedTurnNotPersisted;
pub use lineage::SessionIdPersisted;
pub use loaded::LoadedIsCompacted;
pub use persisted::PersistedEqualsLive;
pub use recall::RecallOnce;

/// Sessions a parent walk visits at most before it counts as a cycle.
pub const LINEAGE_DEPTH_MAX: usize = 4_096;

/// What a gateway invariant sees: one step and the durable store right after it.
#[derive(Clone, Copy, Debug)]
pub struct GatewayStep<'a> {
    /// 0-based index of the step in the case's gateway log.
    pub step: u32,
    pub event: &'a GatewayEvent,
    pub store: &'a StoreSnapshot,
}

/// One gateway checker; one instance serves one case.
pub trait GatewayInvariant: Send {
    fn info(&self) -> InvariantInfo;
    fn observe(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)>;
}

/// Builds a violation of `info` at step `s`.
fn violation(info: InvariantInfo, s: &GatewayStep<'_>, message: String, w: Witness) -> Violation {
    Violation {
        invariant: info.id.to_string(),
        turn: s.event.turn(),
        step: s.step,
        message,
        witness: w.fact(s.event.describe()),
    }
}

type Build = fn() -> Box<dyn GatewayInvariant>;

/// The gateway catalogue in its fixed order (the specific before the general).
const REGISTRY: &[(InvariantInfo, Build)] = &[
    (lineage::INFO, || Box::<SessionIdPersisted>::default()),
    (exhausted::INFO, || Box::<ExhaustedResetsClean>::default()),
    (failed_turn::INFO, || {
        Box::<FailedTurnNotPersisted>::default()
    }),
    (loaded::INFO, || Box::<LoadedIsCompacted>::default()),
    (persisted::INFO, || Box::<PersistedEqualsLive>::default()),
    (recall::INFO, || Box::<RecallOnce>::default()),
    (delivery::IDEMPOTENT, || {
        Box::<IdempotentDelivery>::default()
    }),
    (delivery::PERSIST_ACK, || Box::<PersistBeforeAck>::default()),
];

/// Every gateway invariant, in catalogue order.
pub fn gateway_catalogue() -> Vec<InvariantInfo> {
    REGISTRY.iter().map(|(info, _)| *info).collect()
}

/// The gateway invariants of one case.
pub struct GatewayOracle {
    entries: Vec<(Box<dyn GatewayInvariant>, u64)>,
}

impl GatewayOracle {
    /// Every gateway invariant.
    pub fn new() -> Self {
        Self::with_only(&gateway_catalogue().iter().map(|i| i.id).collect::<Vec<_>>())
    }

    /// Only the gateway invariants named in `ids` (unknown ids are ignored: they may
    /// name transition invariants).
    pub fn with_only(ids: &[&str]) -> Self {
        GatewayOracle {
            entries: REGISTRY
                .iter()
                .filter(|(info, _)| ids.contains(&info.id))
                .map(|(_, build)| (build(), 0))
                .collect(),
        }
    }

    /// Checks one step; every invariant it breaks.
    pub fn observe(&mut self, s: &GatewayStep<'_>) -> Vec<Violation> {
        let mut out = Vec::new();
        for (inv, checked) in &mut self.entries {
            *checked += 1;
            if let Some((message, w)) = inv.observe(s) {
                out.push(violation(inv.info(), s, message, w));
            }
        }
        out
    }

    /// Steps each invariant judged, in catalogue order.
    pub fn checked(&self) -> Vec<(&'static str, u64)> {
        self.entries
            .iter()
            .map(|(inv, n)| (inv.info().id, *n))
            .collect()
    }
}

impl Default for GatewayOracle {
    fn default() -> Self {
        Self::new()
    }
}

/// `id`'s parent chain: its parent, the parent's parent, …, at most
/// [`LINEAGE_DEPTH_MAX`] sessions (a cycle repeats until that bound).
pub(crate) fn ancestors(store: &StoreSnapshot, id: u32) -> impl Iterator<Item = u32> + '_ {
    std::iter::successors(store.session(id).and_then(|s| s.parent), move |&at| {
        store.session(at).and_then(|s| s.parent)
    })
    .take(LINEAGE_DEPTH_MAX)
}

/// The session `id` resolves to by walking children to the newest (the compression
/// tip); `None` when the walk meets a cycle.
pub fn compression_tip(store: &StoreSnapshot, id: u32) -> Option<u32> {
    let mut at = id;
    for _ in 0..LINEAGE_DEPTH_MAX {
        match store.children(at).map(|c| c.id).max() {
            Some(child) => at = child,
            None => return Some(at),
        }
    }
    None
}
