//! The generated text of segments, written once per case and reused while a segment is
//! unchanged. A segment's generated text is a function of its kind, length, seed and
//! facts ([`Segment::materialize`]), so the cache changes what is computed, never what
//! is sent: every request of a case writes each row's segments anew otherwise.

use super::text_hash::TextMap;
use compactsim_model::{ContentKind, FactId, Segment};
use std::cell::RefCell;
use std::sync::Arc;

/// Segments whose text one case keeps; past it (or [`GENERATED_BYTES_MAX`]) the cache
/// starts over.
pub const GENERATED_TEXTS_MAX: usize = 16_384;
/// Bytes of generated text one case keeps.
pub const GENERATED_BYTES_MAX: usize = 64 << 20;

/// One generated text and the parts of its segment the key does not hold.
struct Generated {
    kind: ContentKind,
    facts: Vec<FactId>,
    text: Arc<str>,
}

/// Generated texts by (seed, length), then kind and facts.
#[derive(Default)]
pub struct GeneratedTexts {
    inner: RefCell<Cache>,
}

#[derive(Default)]
struct Cache {
    by_seed: TextMap<(u64, u32), Vec<Generated>>,
    texts: usize,
    bytes: usize,
}

impl GeneratedTexts {
    /// `s.materialize()`, written on the first call for a segment of this kind, length,
    /// seed and facts.
    pub fn text(&self, s: &Segment) -> Arc<str> {
        let mut cache = self.inner.borrow_mut();
        let key = (s.seed, s.chars);
        let known = cache
            .by_seed
            .get(&key)
            .and_then(|all| all.iter().find(|g| g.kind == s.kind && g.facts == s.facts));
        if let Some(g) = known {
            return g.text.clone();
        }
        let text: Arc<str> = Arc::from(s.materialize());
        if cache.texts >= GENERATED_TEXTS_MAX || cache.bytes + text.len() > GENERATED_BYTES_MAX {
            *cache = Cache::default();
        }
        cache.texts += 1;
        cache.bytes += text.len();
        cache.by_seed.entry(key).or_default().push(Generated {
            kind: s.kind,
            facts: s.facts.clone(),
            text: text.clone(),
        });
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_model::MsgId;

    fn seg(kind: ContentKind, chars: u32, seed: u64, facts: &[u32]) -> Segment {
        Segment {
            kind,
            chars,
            seed,
            origin: MsgId(1),
            facts: facts.iter().map(|&f| FactId(f)).collect(),
        }
    }

    #[test]
    fn every_part_of_the_segment_that_makes_the_text_is_in_the_key() {
        let cache = GeneratedTexts::default();
        let base = seg(ContentKind::Prose, 120, 7, &[3]);
        let variants = [
            base.clone(),
            seg(ContentKind::Code, 120, 7, &[3]),
            seg(ContentKind::Prose, 121, 7, &[3]),
            seg(ContentKind::Prose, 120, 8, &[3]),
            seg(ContentKind::Prose, 120, 7, &[4]),
            seg(ContentKind::Prose, 120, 7, &[]),
            Segment {
                origin: MsgId(9),
                ..base.clone()
            },
        ];
        for _ in 0..2 {
            for s in &variants {
                assert_eq!(*cache.text(s), s.materialize());
            }
        }
    }

    #[test]
    fn the_cache_starts_over_at_its_limit_and_keeps_answering() {
        let cache = GeneratedTexts::default();
        for seed in 0..GENERATED_TEXTS_MAX as u64 + 10 {
            let s = seg(ContentKind::Prose, 30, seed, &[]);
            assert_eq!(*cache.text(&s), s.materialize());
        }
        assert!(cache.inner.borrow().texts <= GENERATED_TEXTS_MAX);
        let s = seg(ContentKind::Prose, 30, 1, &[]);
        assert_eq!(*cache.text(&s), s.materialize());
    }
}
