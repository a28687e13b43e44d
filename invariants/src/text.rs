//! Rows judged as text (DESIGN "Judged as text"). An external compactor gives back only
//! text; the harness reads it back into segments (`harness/src/external/chat.rs`), so the
//! oracle's questions about text are asked through two contracts of the model:
//!
//! - **Text identity.** A segment's bytes are a function of (kind, seed, chars, facts):
//!   a generated segment materializes from them, and a literal segment read back from an
//!   adapter's text carries a hash of its bytes as its seed. So two segments with equal
//!   [`TextKey`]s hold the same bytes, wherever they sit (the origin is bookkeeping, not
//!   text, and is not part of the key).
//! - **Facts are spelled.** A segment's `facts` are the fact names spelled in its text:
//!   a literal's facts are exactly the names found in its bytes, and a generated segment
//!   spells every fact it lists while it has room (checked by
//!   `facts_of_text_equal_listed_facts_when_there_is_room` below and, over every
//!   segment the default suites write, by `front/tests/integration/judged_as_text.rs`).
//!
//! [`spelled_facts`] is the oracle's own reading of a text (it never imports the
//! harness's reader), used by the tests that prove the two paths agree.

use compactsim_model::{Content, ContentKind, FactId, Message, Segment};
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The identity of a segment's bytes (see the module doc).
pub(crate) type TextKey<'a> = (ContentKind, u64, u32, &'a [FactId]);

pub(crate) fn text_key(s: &Segment) -> TextKey<'_> {
    (s.kind, s.seed, s.chars, &s.facts)
}

/// Every text of `rows`, by identity.
pub(crate) fn texts_of(rows: &[Message]) -> BTreeSet<TextKey<'_>> {
    rows.iter()
        .flat_map(|m| m.content.segments.iter())
        .map(text_key)
        .collect()
}

/// The facts a content's text spells, ascending, without duplicates: a segment with room
/// for its facts spells exactly them (proven by the proptest below), so only a segment
/// without that room (a tiny row that still lists a fact) is materialized and read.
pub fn text_facts(content: &Content) -> Vec<FactId> {
    segments_text_facts(content.segments.iter()).into_owned()
}

/// [`text_facts`] of a content, borrowed from its segment when one segment with room
/// to spell lists its facts strictly ascending (a rolling summary's body, most rows):
/// then the list is already the answer and nothing is copied or sorted.
pub(crate) fn text_facts_of(content: &Content) -> Cow<'_, [FactId]> {
    segments_text_facts(content.segments.iter())
}

/// The facts the text of `segments` spells, ascending, without duplicates (see
/// [`text_facts`]); borrowed when there is one segment whose listed facts are the
/// answer as they lie (equal to the collected path: `borrowed_facts_equal_collected`).
pub(crate) fn segments_text_facts<'a>(
    mut segments: impl Iterator<Item = &'a Segment>,
) -> Cow<'a, [FactId]> {
    let Some(first) = segments.next() else {
        return Cow::Borrowed(&[]);
    };
    let Some(second) = segments.next() else {
        if has_room_to_spell(first) && strictly_ascending(&first.facts) {
            return Cow::Borrowed(&first.facts);
        }
        return Cow::Owned(collected_text_facts([first].into_iter()));
    };
    Cow::Owned(collected_text_facts(
        [first, second].into_iter().chain(segments),
    ))
}

fn strictly_ascending(facts: &[FactId]) -> bool {
    facts.windows(2).all(|w| w[0] < w[1])
}

/// The plain path of [`segments_text_facts`]: every segment's facts collected, sorted
/// and deduplicated.
fn collected_text_facts<'a>(segments: impl Iterator<Item = &'a Segment>) -> Vec<FactId> {
    let mut facts: Vec<FactId> = Vec::new();
    for s in segments {
        extend_with_segment_facts(&mut facts, s);
    }
    // Stable sort: each segment adds an ascending run, which it merges.
    facts.sort();
    facts.dedup();
    facts
}

/// Appends the facts one segment's text spells (unsorted): its listed facts when it has
/// room to spell them (the proven fast path), else the names read from its bytes.
pub fn extend_with_segment_facts(facts: &mut Vec<FactId>, s: &Segment) {
    if has_room_to_spell(s) {
        facts.extend_from_slice(&s.facts);
    } else {
        facts.extend(spelled_facts(&s.materialize()));
    }
}

/// Whether a segment has room to spell every fact it lists (then its text spells
/// exactly them: the proven fast path).
pub(crate) fn has_room_to_spell(s: &Segment) -> bool {
    // Every name takes between the short form's characters and those of the longest
    // `u32` id, plus a space, and a wrapper at most `WRAPPER_CHARS_MAX`: outside those
    // bounds the answer needs no walk over the facts (equal to the plain comparison:
    // `room_bounds_equal_the_plain_count`).
    let n = s.facts.len() as u64;
    let chars = s.chars as u64;
    if chars >= WRAPPER_CHARS_MAX + n * (NAME_CHARS_MAX + 1) {
        return true;
    }
    if chars < n * (NAME_CHARS_MIN + 1) {
        return false;
    }
    s.chars >= chars_to_spell(s.kind, &s.facts)
}

/// Bounds of [`chars_to_spell`] used by [`has_room_to_spell`]: the largest wrapper (code),
/// the shortest name (`FACT-` and six digits) and the longest (`FACT-` and `u32::MAX`'s
/// ten digits).
const WRAPPER_CHARS_MAX: u64 = 11;
const NAME_CHARS_MIN: u64 = 11;
const NAME_CHARS_MAX: u64 = 15;

/// The facts whose names are spelled in a text: the model's reader of the form its
/// writer ([`chars_to_spell`], `Segment::materialize`) spells.
pub use compactsim_model::content::spelled_facts;

/// Characters a generated segment of `kind` needs to spell every one of `facts` (the
/// model's writer decides the spelled form; the oracle reads it with [`spelled_facts`]).
pub use compactsim_model::content::chars_to_spell;

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_model::MsgId;
    use proptest::prelude::*;

    fn kind_of(k: u8) -> ContentKind {
        [
            ContentKind::Prose,
            ContentKind::Code,
            ContentKind::Json,
            ContentKind::Summary,
            ContentKind::Scaffold,
        ][k as usize % 5]
    }

    proptest! {
        /// The segment path (`Segment::facts`) equals the text path (the names spelled
        /// in the materialized bytes) whenever the segment has room for its facts.
        #[test]
        fn facts_of_text_equal_listed_facts_when_there_is_room(
            k in 0u8..5,
            seed in any::<u64>(),
            raw in proptest::collection::btree_set(0u32..2_000_000, 0..12),
            slack in 0u32..400,
        ) {
            let kind = kind_of(k);
            let facts: Vec<FactId> = raw.into_iter().map(FactId).collect();
            let seg = Segment {
                kind,
                chars: chars_to_spell(kind, &facts) + slack,
                seed,
                origin: MsgId(1),
                facts: facts.clone(),
            };
            prop_assert_eq!(spelled_facts(&seg.materialize()), facts);
        }

        /// Equal text keys materialize to equal bytes.
        #[test]
        fn equal_keys_are_equal_text(k in 0u8..5, seed in any::<u64>(), chars in 0u32..600) {
            let a = Segment { kind: kind_of(k), chars, seed, origin: MsgId(1), facts: vec![FactId(3)] };
            let b = Segment { origin: MsgId(9), ..a.clone() };
            prop_assert_eq!(text_key(&a), text_key(&b));
            prop_assert_eq!(a.materialize(), b.materialize());
        }
    }

    fn any_segment() -> impl Strategy<Value = Segment> {
        // Small and huge ids, sorted or not, repeated or not; chars around the need.
        let ids = prop_oneof![0u32..40, 999_990u32..1_000_010, (u32::MAX - 3)..=u32::MAX];
        (
            0u8..5,
            proptest::collection::vec(ids, 0..10),
            any::<bool>(),
            0u32..200,
        )
            .prop_map(|(k, raw, sorted, chars)| {
                let mut facts: Vec<FactId> = raw.into_iter().map(FactId).collect();
                if sorted {
                    facts.sort_unstable();
                }
                Segment {
                    kind: kind_of(k),
                    chars,
                    seed: 3,
                    origin: MsgId(1),
                    facts,
                }
            })
    }

    proptest! {
        /// The O(1) bounds of `has_room_to_spell` give the plain count's answer.
        #[test]
        fn room_bounds_equal_the_plain_count(mut seg in any_segment(), slack in 0u32..40) {
            let need = chars_to_spell(seg.kind, &seg.facts);
            for chars in [seg.chars, need.saturating_sub(slack), need + slack] {
                seg.chars = chars;
                prop_assert_eq!(has_room_to_spell(&seg), chars >= need, "{:?}", seg);
            }
        }

        /// The borrowed fast path of `segments_text_facts` equals the collected path
        /// (and so `text_facts_of` equals `text_facts`).
        #[test]
        fn borrowed_facts_equal_collected(segs in proptest::collection::vec(any_segment(), 0..3)) {
            let fast = segments_text_facts(segs.iter());
            let collected = collected_text_facts(segs.iter());
            prop_assert_eq!(&*fast, collected.as_slice());
            let content = Content::from_segments(segs.clone());
            let plain = text_facts(&content);
            prop_assert_eq!(&*text_facts_of(&content), plain.as_slice());
            if segs.len() == 1 && has_room_to_spell(&segs[0]) && strictly_ascending(&segs[0].facts) {
                prop_assert!(matches!(fast, Cow::Borrowed(_)));
            }
        }
    }

    #[test]
    fn text_facts_reads_a_crowded_segment_from_its_text() {
        let seg = |chars, facts: &[u32]| Segment {
            kind: ContentKind::Json,
            chars,
            seed: 5,
            origin: MsgId(1),
            facts: facts.iter().map(|&f| FactId(f)).collect(),
        };
        let crowded = Content::from_segments(vec![seg(20, &[9]), seg(200, &[7])]);
        assert_eq!(text_facts(&crowded), vec![FactId(7)]);
        assert_eq!(crowded.facts(), vec![FactId(7), FactId(9)]);
    }

    #[test]
    fn spelled_facts_reads_names_with_six_digits_or_more() {
        let text = "x FACT-000012 y FACT-12 FACT-0000099, FACT-000012 FACT-";
        assert_eq!(spelled_facts(text), vec![FactId(12), FactId(99)]);
        assert!(spelled_facts("").is_empty());
    }
}
