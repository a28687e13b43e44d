//! The event kinds an invariant distinguishes. Every invariant classifies events through
//! [`classify`], so a new event kind added to the model lands in one of two explicit
//! buckets — [`EventClass::OtherCompaction`] when `Event::is_compaction()` says so (the
//! batch-compaction events of a later issue), else [`EventClass::Other`] — and each
//! invariant documents what it does with those buckets instead of silently ignoring
//! them.

use compactsim_model::{Event, MicroPass};

#[derive(Clone, Copy, Debug)]
pub(crate) enum EventClass<'a> {
    /// The world appended the rows of one turn.
    Append,
    /// A micro-compaction pass (any outcome).
    Micro(&'a MicroPass),
    /// A compaction pass that is not a micro pass (batch compaction, later).
    OtherCompaction { committed: bool },
    /// The pre-send repair pass.
    Repair,
    /// The agent process restarted and reloaded the persisted transcript.
    Restart,
    /// An event kind this crate does not know yet.
    Other,
}

pub(crate) fn classify(event: &Event) -> EventClass<'_> {
    #[allow(unreachable_patterns)]
    match event {
        Event::TurnAppended { .. } => EventClass::Append,
        Event::MicroPass(pass) => EventClass::Micro(pass),
        Event::Repair { .. } => EventClass::Repair,
        Event::Restart { .. } => EventClass::Restart,
        _ if event.is_compaction() => EventClass::OtherCompaction {
            committed: event.is_committed_compaction(),
        },
        _ => EventClass::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;

    #[test]
    fn known_events_land_in_their_own_class() {
        assert!(matches!(classify(&append_event(1)), EventClass::Append));
        assert!(matches!(
            classify(&micro_pass_event(1)),
            EventClass::Micro(_)
        ));
        assert!(matches!(classify(&repair_event(1)), EventClass::Repair));
        assert!(matches!(classify(&restart_event(1)), EventClass::Restart));
    }
}
