//! The bug switches turned on for a case, and (for the self-test) a record of which
//! switches the case consulted: a switch a run never asks about cannot have changed it.

use crate::bugs::{Bug, BugInfo, CATALOGUE};
use serde::{Serialize, Serializer};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
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

/// The turn marker of a question asked before the case's first turn ran.
const BEFORE_TURNS: u32 = 0;

/// The first turn of a case's loop in which each switch was asked about (see
/// [`BugSet::first_asked`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstAsked {
    /// Per switch bit: [`BEFORE_TURNS`], or the turn plus one.
    marks: [u32; 64],
    asked: BugMask,
}

impl FirstAsked {
    /// The turn at whose start a run with `switches` on first differs from this run:
    /// the first turn in which one of them was asked about. `None` when one was asked
    /// before the first turn (the runs differ from the start) or none ever was (they
    /// never differ).
    pub fn fork_turn(&self, switches: BugMask) -> Option<u32> {
        let mask = self.asked.0 & switches.0;
        let first = (0..64)
            .filter(|b| mask & (1 << b) != 0)
            .map(|b| self.marks[b])
            .min()?;
        first.checked_sub(1)
    }
}

/// What a recording set shares with its clones.
#[derive(Debug)]
struct Record {
    asked: AtomicU64,
    /// [`BEFORE_TURNS`], or the running turn plus one (see [`BugSet::at_turn`]).
    turn: AtomicU32,
    first_asked: [AtomicU32; 64],
    /// Switches on besides the set's own (see [`BugSet::force`]).
    forced: AtomicU64,
}

/// The bug switches turned on for a case.
///
/// Every behaviour a switch changes is decided through [`BugSet::has`] (nothing else in
/// a run reads the set but its printed ids), so a run that never asks about a switch runs
/// the same with it on. A set made [`BugSet::recording`] notes each switch asked about
/// and the first turn it was asked in; its clones (the case's configs and compactors)
/// share that record, which belongs to the one case whose spec holds the set. Equality,
/// order of ids and serialization see the switches only, never the record.
#[derive(Clone, Default)]
pub struct BugSet {
    on: BTreeSet<Bug>,
    consulted: Option<Arc<Record>>,
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

    /// Whether `bug` is on; a recording set notes that `bug` was asked about (and, the
    /// first time, in which turn).
    pub fn has(&self, bug: Bug) -> bool {
        if let Some(record) = &self.consulted {
            let before = record.asked.fetch_or(bit(bug), Ordering::Relaxed);
            if before & bit(bug) == 0 {
                let turn = record.turn.load(Ordering::Relaxed);
                record.first_asked[bug as usize].store(turn, Ordering::Relaxed);
            }
        }
        self.has_unnoted(bug)
    }

    /// Whether `bug` is on, without noting the question: only to prepare work that a
    /// later [`BugSet::has`] of the same switch decides to use (that later question is
    /// where the switch can change the run, and it is noted).
    pub fn has_unnoted(&self, bug: Bug) -> bool {
        self.on.contains(&bug) || self.forced().meets(BugMask::of([bug]))
    }

    /// This set, noting from now on every switch asked about in a fresh record.
    pub fn recording(mut self) -> Self {
        self.consulted = Some(Arc::new(Record {
            asked: AtomicU64::new(0),
            turn: AtomicU32::new(BEFORE_TURNS),
            first_asked: std::array::from_fn(|_| AtomicU32::new(BEFORE_TURNS)),
            forced: AtomicU64::new(0),
        }));
        self
    }

    /// The switches asked about since [`BugSet::recording`] (all of them if the set
    /// does not record: nothing can be ruled out).
    pub fn consulted(&self) -> BugMask {
        match &self.consulted {
            Some(record) => BugMask(record.asked.load(Ordering::Relaxed)),
            None => BugMask(u64::MAX),
        }
    }

    /// A case's loop starts turn `turn`: a recording set notes the questions from now
    /// on as asked in it. Nothing else changes.
    pub fn at_turn(&self, turn: u32) {
        if let Some(record) = &self.consulted {
            record.turn.store(turn.saturating_add(1), Ordering::Relaxed);
        }
    }

    /// The first turn each switch was asked about in (the set must record: else
    /// every switch counts as asked before the first turn).
    pub fn first_asked(&self) -> FirstAsked {
        match &self.consulted {
            Some(record) => FirstAsked {
                marks: std::array::from_fn(|b| record.first_asked[b].load(Ordering::Relaxed)),
                asked: self.consulted(),
            },
            None => FirstAsked {
                marks: [BEFORE_TURNS; 64],
                asked: BugMask(u64::MAX),
            },
        }
    }

    /// Turns `switches` on (besides the set's own) in this set and every clone sharing
    /// its record, from now on; an empty mask turns them off again. Only for a
    /// recording set (the self-test's forks: a copy of a clean case's state continues
    /// with a row's switches on, one copy running at a time); `false` otherwise.
    pub fn force(&self, switches: BugMask) -> bool {
        match &self.consulted {
            Some(record) => {
                record.forced.store(switches.0, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    fn forced(&self) -> BugMask {
        match &self.consulted {
            Some(record) => BugMask(record.forced.load(Ordering::Relaxed)),
            None => BugMask(0),
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

    /// No switch is on (neither the set's own nor forced).
    pub fn is_empty(&self) -> bool {
        self.on.is_empty() && self.forced() == BugMask(0)
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

impl BugInfo {
    /// The switches a case needs on to show this bug: the bug and its `requires`.
    pub fn switches(&self) -> BugSet {
        let mut all = vec![self.bug];
        all.extend_from_slice(self.requires);
        BugSet::of(&all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bug_needs_its_requirements_on() {
        assert_eq!(
            Bug::H58753.info().switches(),
            BugSet::of(&[Bug::H58753, Bug::H10896])
        );
    }

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

    #[test]
    fn a_recording_set_notes_the_first_turn_each_switch_was_asked_in() {
        let set = BugSet::none().recording();
        let config = set.with_also(&[Bug::H27404]);
        set.has(Bug::H11529);
        set.at_turn(3);
        config.has(Bug::H2153);
        set.at_turn(5);
        set.has(Bug::H2153);
        config.has(Bug::H40803);
        let first = set.first_asked();
        let of = |bugs: &[Bug]| first.fork_turn(BugMask::of(bugs.iter().copied()));
        assert_eq!(of(&[Bug::H2153]), Some(3), "the first ask counts");
        assert_eq!(of(&[Bug::H40803]), Some(5));
        assert_eq!(
            of(&[Bug::H40803, Bug::H2153]),
            Some(3),
            "the earliest switch"
        );
        assert_eq!(
            of(&[Bug::H11529, Bug::H2153]),
            None,
            "asked before the turns"
        );
        assert_eq!(of(&[Bug::H14694]), None, "never asked");
        assert_eq!(
            BugSet::none()
                .first_asked()
                .fork_turn(BugMask::of([Bug::H2153])),
            None
        );
    }

    #[test]
    fn forced_switches_are_on_in_every_clone_of_a_recording_set_until_cleared() {
        let set = BugSet::none().recording();
        let config = set.with_also(&[Bug::H27404]);
        assert!(set.is_empty() && !config.has(Bug::H2153));
        assert!(set.force(BugMask::of([Bug::H2153])));
        assert!(config.has(Bug::H2153) && set.has_unnoted(Bug::H2153) && !set.is_empty());
        assert!(!set.has(Bug::H40803) && config.has(Bug::H27404));
        assert_eq!(set, BugSet::none(), "equality sees the set's own switches");
        assert!(set.force(BugMask(0)));
        assert!(!config.has(Bug::H2153) && set.is_empty());
        let plain = BugSet::none();
        assert!(!plain.force(BugMask::of([Bug::H2153])) && !plain.has(Bug::H2153));
    }
}
