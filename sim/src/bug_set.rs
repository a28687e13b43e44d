//! The bug switches turned on for a case, and (for the self-test) a record of which
//! switches the case consulted: a switch a run never asks about cannot have changed it.

use crate::bugs::{Bug, CATALOGUE};
use serde::{Serialize, Serializer};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// One bit per switch: the record holds every switch in one word.
const _: () = assert!(CATALOGUE.len() <= 64, "a BugMask bit per switch");

/// A set of switches as bits (`1 << bug as u32`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BugMask(pub u64);

impl BugMask {
    pub fn of(bugs: impl IntoIterator<Item = Bug>) -> BugMask {
        BugMask(bugs.into_iter().fold(0, |m, b| m | bit(b)))
    }

    /// Some switch of `other` is in this mask.
    pub fn meets(self, other: BugMask) -> bool {
        self.0 & other.0 != 0
    }
}

fn bit(bug: Bug) -> u64 {
    1 << bug as u32
}

/// The bug switches turned on for a case.
///
/// Every behaviour a switch changes is decided through [`BugSet::has`] (nothing else in
/// a run reads the set but its printed ids), so a run that never asks about a switch runs
/// the same with it on. A set made [`BugSet::recording`] notes each switch asked about;
/// its clones (the case's configs and compactors) share that record, which belongs to
/// the one case whose spec holds the set. Equality, order of ids and serialization see
/// the switches only, never the record.
#[derive(Clone, Default)]
pub struct BugSet {
    on: BTreeSet<Bug>,
    consulted: Option<Arc<AtomicU64>>,
}

impl BugSet {
    pub fn none() -> Self {
        BugSet::default()
    }

    pub fn of(bugs: &[Bug]) -> Self {
        BugSet {
            on: bugs.iter().copied().collect(),
            consulted: None,
        }
    }

    /// Whether `bug` is on; a recording set notes that `bug` was asked about.
    pub fn has(&self, bug: Bug) -> bool {
        if let Some(record) = &self.consulted {
            record.fetch_or(bit(bug), Ordering::Relaxed);
        }
        self.on.contains(&bug)
    }

    /// Whether `bug` is on, without noting the question: only to prepare work that a
    /// later [`BugSet::has`] of the same switch decides to use (that later question is
    /// where the switch can change the run, and it is noted).
    pub fn has_unnoted(&self, bug: Bug) -> bool {
        self.on.contains(&bug)
    }

    /// This set, noting from now on every switch asked about in a fresh record.
    pub fn recording(mut self) -> Self {
        self.consulted = Some(Arc::new(AtomicU64::new(0)));
        self
    }

    /// The switches asked about since [`BugSet::recording`] (all of them if the set
    /// does not record: nothing can be ruled out).
    pub fn consulted(&self) -> BugMask {
        match &self.consulted {
            Some(record) => BugMask(record.load(Ordering::Relaxed)),
            None => BugMask(u64::MAX),
        }
    }

    /// This set with `more` switched on too, sharing this set's record.
    pub fn with_also(&self, more: &[Bug]) -> Self {
        let mut out = self.clone();
        out.on.extend(more.iter().copied());
        out
    }

    pub fn mask(&self) -> BugMask {
        BugMask::of(self.iter())
    }

    pub fn is_empty(&self) -> bool {
        self.on.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = Bug> + '_ {
        self.on.iter().copied()
    }

    pub fn ids(&self) -> Vec<String> {
        self.iter().map(|b| b.id().to_string()).collect()
    }
}

impl PartialEq for BugSet {
    fn eq(&self, other: &Self) -> bool {
        self.on == other.on
    }
}

impl Eq for BugSet {}

impl fmt::Debug for BugSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BugSet").field(&self.on).finish()
    }
}

impl Serialize for BugSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_newtype_struct("BugSet", &self.on)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_set_notes_the_switches_asked_about_in_every_clone_and_nothing_else() {
        let set = BugSet::of(&[Bug::H2153]).recording();
        let config = set.with_also(&[Bug::H27404]);
        assert_eq!(set.consulted(), BugMask(0));
        assert!(!set.has(Bug::H40803) && config.has(Bug::H27404) && config.has(Bug::H2153));
        assert_eq!(
            set.consulted(),
            BugMask::of([Bug::H40803, Bug::H27404, Bug::H2153])
        );
        assert!(
            !set.has(Bug::H27404),
            "with_also leaves the original set alone"
        );
        let fresh = BugSet::of(&[Bug::H2153]).recording();
        assert_eq!(fresh.consulted(), BugMask(0), "each recording is its own");
        assert_eq!(fresh, set, "equality ignores the record");
        assert_eq!(BugSet::none().consulted(), BugMask(u64::MAX));
        assert!(set.consulted().meets(BugMask::of([Bug::H40803])));
        assert!(!set.consulted().meets(BugMask::of([Bug::H14694])));
    }
}
