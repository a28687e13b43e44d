//! The gateway store an adapter keeps (adapters/PROTOCOL.md, "Gateway store"): the
//! requests for the gateway's durable steps ([`ops`]), the per-case durable directory
//! that outlives the adapter's children ([`dir`]), the link the gateway engine drives
//! through the case's external compactor ([`link`]) and the read-back the oracle judges
//! ([`readback`]).

pub mod dir;
pub mod link;
pub mod ops;
pub mod readback;

use super::wire::Capabilities;

/// The `capabilities.store` value of an adapter that keeps the gateway's store.
pub const STORE_GATEWAY: &str = "gateway";

/// Refuses a hello whose `capabilities.store` is not [`STORE_GATEWAY`].
pub fn check_capability(caps: &Capabilities) -> Result<(), String> {
    match caps.store.as_deref() {
        None | Some(STORE_GATEWAY) => Ok(()),
        Some(other) => Err(format!(
            "capabilities.store is `{other}`; the only store is `{STORE_GATEWAY}`"
        )),
    }
}

/// Whether the hello declares the gateway store.
pub fn declares_store(caps: &Capabilities) -> bool {
    caps.store.as_deref() == Some(STORE_GATEWAY)
}
