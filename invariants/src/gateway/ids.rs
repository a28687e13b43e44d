//! Counts of row ids for the gateway checks that keep state between steps, on the
//! crate's [`IdMap`] (a slot per id below [`crate::idset::DENSE_ID_LIMIT`], a map above
//! it: a large id never sizes the slots).

use crate::idset::IdMap;
use compactsim_model::MsgId;

/// How often each row id was counted (0 for an id never counted).
#[derive(Clone, Debug, Default)]
pub struct IdCounts(IdMap<u32>);

impl IdCounts {
    /// Counts `id` once more; its count now.
    #[inline]
    pub fn add(&mut self, id: u32) -> u32 {
        let c = self.0.get_or_default(MsgId(id));
        *c += 1;
        *c
    }

    /// Counts `id` once less (it must have been counted); its count now.
    #[inline]
    pub fn sub(&mut self, id: u32) -> u32 {
        let c = self.0.get_or_default(MsgId(id));
        *c = c.checked_sub(1).expect("an id counted before");
        *c
    }

    /// How often `id` is counted.
    #[inline]
    pub fn get(&self, id: u32) -> u32 {
        self.0.get(MsgId(id)).copied().unwrap_or(0)
    }

    /// Slots the counts hold (the dense part's length; for tests).
    #[cfg(test)]
    pub fn slots(&self) -> usize {
        self.0.dense_len()
    }
}

/// A small deterministic generator for the gateway checks' fuzz tests (no RNG crate in a
/// unit test).
#[cfg(test)]
pub struct Lcg(pub u64);

#[cfg(test)]
impl Lcg {
    /// The next draw, below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (self.0 >> 33) % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_go_up_and_down_by_slot_or_by_map_and_a_large_id_sizes_no_slot() {
        let mut c = IdCounts::default();
        assert_eq!((c.add(3), c.add(3), c.add(70)), (1, 2, 1));
        assert_eq!((c.sub(3), c.get(3), c.get(70), c.get(5)), (1, 1, 1, 0));
        let big = crate::idset::DENSE_ID_LIMIT;
        assert_eq!((c.add(big), c.add(big), c.sub(big)), (1, 2, 1));
        assert_eq!((c.get(big), c.get(big + 1)), (1, 0));
        assert!(c.slots() <= 71, "{}", c.slots());
    }

    #[test]
    #[should_panic(expected = "an id counted before")]
    fn an_id_never_counted_cannot_be_taken_away() {
        IdCounts::default().sub(4);
    }
}
