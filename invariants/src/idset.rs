//! Sets and maps keyed by message id. Ids are dense integers assigned in creation order
//! within one case, so a vector indexed by id gives O(1) membership; an id past
//! [`DENSE_ID_LIMIT`] (a foreign or corrupted id) falls back to a `BTreeMap` so a single
//! huge id cannot allocate gigabytes.

use compactsim_model::MsgId;
use std::collections::BTreeMap;

/// Ids below this are stored in vectors; larger ones in ordered maps.
pub(crate) const DENSE_ID_LIMIT: u32 = 1 << 22;

/// A map from message id to `V` that lives for a whole case.
#[derive(Clone, Debug)]
pub(crate) struct IdMap<V> {
    dense: Vec<Option<V>>,
    sparse: BTreeMap<MsgId, V>,
}

impl<V> Default for IdMap<V> {
    fn default() -> Self {
        IdMap {
            dense: Vec::new(),
            sparse: BTreeMap::new(),
        }
    }
}

impl<V> IdMap<V> {
    pub(crate) fn get(&self, id: MsgId) -> Option<&V> {
        if id.0 < DENSE_ID_LIMIT {
            self.dense.get(id.0 as usize).and_then(Option::as_ref)
        } else {
            self.sparse.get(&id)
        }
    }

    pub(crate) fn contains(&self, id: MsgId) -> bool {
        self.get(id).is_some()
    }

    /// The value of `id`, made the default first if it has none.
    #[inline]
    pub(crate) fn get_or_default(&mut self, id: MsgId) -> &mut V
    where
        V: Default,
    {
        if id.0 < DENSE_ID_LIMIT {
            let index = id.0 as usize;
            if index >= self.dense.len() {
                self.dense.resize_with(index + 1, || None);
            }
            self.dense[index].get_or_insert_with(V::default)
        } else {
            self.sparse.entry(id).or_default()
        }
    }

    /// Slots the dense part holds (for tests: a large id must not grow it).
    #[cfg(test)]
    pub(crate) fn dense_len(&self) -> usize {
        self.dense.len()
    }

    pub(crate) fn insert(&mut self, id: MsgId, value: V) {
        if id.0 < DENSE_ID_LIMIT {
            let index = id.0 as usize;
            if index >= self.dense.len() {
                self.dense.resize_with(index + 1, || None);
            }
            self.dense[index] = Some(value);
        } else {
            self.sparse.insert(id, value);
        }
    }
}

/// A set of message ids that lives for a whole case.
pub(crate) type IdSet = IdMap<()>;

impl IdSet {
    /// Adds `id`; returns whether it was new.
    pub(crate) fn add(&mut self, id: MsgId) -> bool {
        let new = !self.contains(id);
        self.insert(id, ());
        new
    }
}

/// A set of message ids rebuilt on every transition: [`IdMarks::reset`] is O(1), so
/// filling it costs only the rows marked, not the largest id of the case.
#[derive(Clone, Debug)]
pub(crate) struct IdMarks {
    stamps: Vec<u32>,
    sparse: BTreeMap<MsgId, u32>,
    generation: u32,
}

impl Default for IdMarks {
    fn default() -> Self {
        IdMarks {
            stamps: Vec::new(),
            sparse: BTreeMap::new(),
            generation: 1,
        }
    }
}

impl IdMarks {
    /// Empties the set.
    pub(crate) fn reset(&mut self) {
        self.sparse.clear();
        if self.generation == u32::MAX {
            self.stamps.iter_mut().for_each(|s| *s = 0);
            self.generation = 1;
        } else {
            self.generation += 1;
        }
    }

    /// Empties the set and marks every id in `ids`.
    pub(crate) fn fill(&mut self, ids: impl IntoIterator<Item = MsgId>) {
        self.reset();
        let generation = self.generation;
        for id in ids {
            // The dense case inline, without growing when the slot exists.
            match self.stamps.get_mut(id.0 as usize) {
                Some(stamp) if id.0 < DENSE_ID_LIMIT => *stamp = generation,
                _ => self.mark(id),
            }
        }
    }

    pub(crate) fn mark(&mut self, id: MsgId) {
        if id.0 < DENSE_ID_LIMIT {
            let index = id.0 as usize;
            if index >= self.stamps.len() {
                self.stamps.resize(index + 1, 0);
            }
            self.stamps[index] = self.generation;
        } else {
            self.sparse.insert(id, self.generation);
        }
    }

    pub(crate) fn contains(&self, id: MsgId) -> bool {
        if id.0 < DENSE_ID_LIMIT {
            self.stamps.get(id.0 as usize) == Some(&self.generation)
        } else {
            self.sparse.contains_key(&id)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_forget_everything_on_reset_dense_and_sparse() {
        let mut marks = IdMarks::default();
        let far = MsgId(DENSE_ID_LIMIT + 5);
        marks.fill([MsgId(3), far]);
        assert!(marks.contains(MsgId(3)) && marks.contains(far));
        assert!(!marks.contains(MsgId(2)) && !marks.contains(MsgId(4000)));
        marks.fill([MsgId(2)]);
        assert!(marks.contains(MsgId(2)));
        assert!(!marks.contains(MsgId(3)) && !marks.contains(far));
    }

    #[test]
    fn marks_survive_generation_wrap() {
        let mut marks = IdMarks::default();
        marks.fill([MsgId(1)]);
        marks.generation = u32::MAX;
        marks.mark(MsgId(1));
        marks.reset();
        assert!(!marks.contains(MsgId(1)));
        marks.mark(MsgId(0));
        assert!(marks.contains(MsgId(0)) && !marks.contains(MsgId(1)));
    }

    #[test]
    fn set_reports_new_ids_once() {
        let mut set = IdSet::default();
        assert!(set.add(MsgId(7)));
        assert!(!set.add(MsgId(7)));
        assert!(set.add(MsgId(DENSE_ID_LIMIT)));
        assert!(set.contains(MsgId(DENSE_ID_LIMIT)) && !set.contains(MsgId(6)));
    }
}
