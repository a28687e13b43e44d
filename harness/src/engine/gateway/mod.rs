//! The faulty gateway (issue 10; hermes-domain §1.4, §1.5, §2.8, §2.9): harness code
//! around the agent loop and the compactor under test, like the agent loop itself. It
//! keeps a session store with a durable and a volatile part, handles inbound messages
//! with ids (duplicates and retries), runs the agent turn, persists it in the order of
//! §2.9, resets the session after `compression_exhausted`, runs `/compress` and
//! `/reset`, and crashes between its durable writes and inside agent turns. The
//! gateway invariants (`compactsim_invariants::gateway`) judge the store it observes.

pub mod faults;
mod remote;
mod sink;
mod stale;
pub mod store;
mod turn;
mod world;

pub use remote::STORE_COUNTERS;
pub use world::run;
pub(crate) use world::run_logged;

/// Coverage counters of a gateway case (beside the agent loop's).
pub const GATEWAY_COUNTERS: &[&str] = &[
    "gateway.commands.compress",
    "gateway.commands.reset",
    "gateway.crash.after_mapping",
    "gateway.crash.after_rotate_flush",
    "gateway.crash.after_user_flush",
    "gateway.crash.after_write",
    "gateway.crash.before_ack",
    "gateway.crash.before_turn",
    "gateway.crash.mid_turn",
    "gateway.duplicates",
    "gateway.failed_user_kept",
    "gateway.hygiene",
    "gateway.hygiene_forced",
    "gateway.in_place_compactions",
    "gateway.loads",
    "gateway.resets",
    "gateway.restarts",
    "gateway.retries",
    "gateway.rotate_flushes",
    "gateway.rotations",
    "gateway.stops",
    "gateway.superseded",
];

/// The counter of a crash at `point`.
pub(crate) fn crash_counter(point: faults::Crash) -> &'static str {
    use faults::{Crash, CrashPoint};
    match point {
        Crash::MidTurn(_) => "gateway.crash.mid_turn",
        Crash::At(CrashPoint::BeforeTurn) => "gateway.crash.before_turn",
        Crash::At(CrashPoint::AfterUserFlush) => "gateway.crash.after_user_flush",
        Crash::At(CrashPoint::AfterRotateFlush) => "gateway.crash.after_rotate_flush",
        Crash::At(CrashPoint::AfterWrite) => "gateway.crash.after_write",
        Crash::At(CrashPoint::AfterMapping) => "gateway.crash.after_mapping",
        Crash::At(CrashPoint::BeforeAck) => "gateway.crash.before_ack",
    }
}

/// Session hygiene compresses before the turn at this share of the window, per mille.
pub const HYGIENE_WINDOW_PER_MILLE: u64 = 850;
/// Session hygiene looks only at a history of at least this many messages.
pub const HYGIENE_HISTORY_MIN: usize = 4;
