//! Fact membership over several sorted lists, asked one fact at a time, without merging
//! the lists into one. A rolling summary lists every fact the case has summarized, so a
//! transition that asks about the few facts of the rows that left should not collect,
//! sort and deduplicate that whole list first: each list is searched where it lies
//! (borrowed when already ascending, sorted once otherwise).
//!
//! Membership equals that of the merged, deduplicated list (`text::text_facts` over the
//! same contents, or the lists concatenated), proven by the proptest below.

use crate::text::{has_room_to_spell, spelled_facts};
use compactsim_model::{Content, FactId};
use std::borrow::Cow;

/// Facts of several lists and texts (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct FactLists<'a> {
    lists: Vec<Cow<'a, [FactId]>>,
}

impl<'a> FactLists<'a> {
    /// Adds every fact of `facts` (any order, duplicates allowed).
    pub(crate) fn add_list(&mut self, facts: &'a [FactId]) {
        if facts.is_empty() {
            return;
        }
        if facts.is_sorted() {
            self.lists.push(Cow::Borrowed(facts));
        } else {
            let mut sorted = facts.to_vec();
            sorted.sort_unstable();
            self.lists.push(Cow::Owned(sorted));
        }
    }

    /// Adds the facts `content`'s text spells, as [`crate::text::text_facts`] reads them:
    /// a segment's listed facts when it has room to spell them, else the names read
    /// from its bytes.
    pub(crate) fn add_text(&mut self, content: &'a Content) {
        for s in content.segments.iter() {
            if has_room_to_spell(s) {
                self.add_list(&s.facts);
            } else {
                let read = spelled_facts(&s.materialize());
                if !read.is_empty() {
                    self.lists.push(Cow::Owned(read));
                }
            }
        }
    }

    /// Whether any list holds `fact`.
    pub(crate) fn contains(&self, fact: FactId) -> bool {
        self.lists.iter().any(|l| l.binary_search(&fact).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::text_facts;
    use compactsim_model::{ContentKind, MsgId, Segment};
    use proptest::prelude::*;

    /// Facts asked about: every one a generated list may hold, and a few more.
    const FACT_IDS_MAX: u32 = 40;

    fn segment((k, chars, seed, facts): (u8, u32, u64, Vec<u32>)) -> Segment {
        Segment {
            kind: [
                ContentKind::Prose,
                ContentKind::Code,
                ContentKind::Json,
                ContentKind::Summary,
                ContentKind::Scaffold,
            ][k as usize % 5],
            chars,
            seed,
            origin: MsgId(1),
            facts: facts.into_iter().map(FactId).collect(),
        }
    }

    /// Segments with any (unsorted, repeated) facts, some too short to spell them.
    fn segments() -> impl Strategy<Value = Vec<Segment>> {
        let facts = proptest::collection::vec(0u32..FACT_IDS_MAX - 5, 0..8);
        proptest::collection::vec(
            (0u8..5, 0u32..200, any::<u64>(), facts).prop_map(segment),
            0..4,
        )
    }

    proptest! {
        /// Texts: membership equals that of the contents' merged `text_facts`.
        #[test]
        fn text_membership_equals_the_merged_text_facts(
            rows in proptest::collection::vec(segments(), 0..4)
        ) {
            let contents: Vec<Content> = rows.into_iter().map(Content::from_segments).collect();
            let mut merged: Vec<FactId> = contents.iter().flat_map(text_facts).collect();
            merged.sort_unstable();
            let mut lists = FactLists::default();
            contents.iter().for_each(|c| lists.add_text(c));
            for f in (0..FACT_IDS_MAX).map(FactId) {
                prop_assert_eq!(lists.contains(f), merged.binary_search(&f).is_ok(), "{}", f);
            }
        }

        /// Lists: membership equals that of the concatenation, in any order.
        #[test]
        fn list_membership_equals_the_concatenation(
            raw in proptest::collection::vec(proptest::collection::vec(0u32..FACT_IDS_MAX, 0..12), 0..4)
        ) {
            let lists_of: Vec<Vec<FactId>> =
                raw.iter().map(|l| l.iter().copied().map(FactId).collect()).collect();
            let mut lists = FactLists::default();
            lists_of.iter().for_each(|l| lists.add_list(l));
            for f in (0..FACT_IDS_MAX + 2).map(FactId) {
                prop_assert_eq!(lists.contains(f), lists_of.iter().any(|l| l.contains(&f)));
            }
        }
    }
}
