//! Lazy message content. A message carries segments of (kind, length, seed, facts) and
//! materializes bytes only when something needs them (an external adapter, a report).
//! A row made by merging rows keeps every segment, so the oracle can still find each
//! original text byte for byte inside the merged row.

use crate::ids::{FactId, MsgId};
use crate::tokens::{real_tokens, rough_tokens, ContentKind};
use serde::{Deserialize, Serialize};
#[cfg(test)]
use std::fmt::Write as _;
use std::sync::Arc;

/// Separator the repair pass and supersede use when merging two rows (a blank line).
pub const MERGE_SEPARATOR: &str = "\n\n";
const MERGE_SEPARATOR_CHARS: u32 = MERGE_SEPARATOR.len() as u32;

/// One run of generated text.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Segment {
    pub kind: ContentKind,
    /// Length in characters (the text is ASCII, so also in bytes).
    pub chars: u32,
    /// Seed of the text generator for this segment.
    pub seed: u64,
    /// The message this text was first written in.
    pub origin: MsgId,
    /// Facts mentioned in the text, in ascending order.
    pub facts: Vec<FactId>,
}

impl Segment {
    /// Materializes the text: `chars` ASCII characters, deterministic in (kind, seed,
    /// facts), every fact spelled out once while room allows.
    pub fn materialize(&self) -> String {
        let limit = self.chars as usize;
        let mut out: Vec<u8> = Vec::with_capacity(limit);
        let mut state = self.seed ^ 0x9E37_79B9_7F4A_7C15;
        let mut facts = self.facts.iter();
        let (open, close) = match self.kind {
            ContentKind::Json => ("{\"k\": \"", "\"}"),
            ContentKind::Code => ("fn f() { ", " }"),
            _ => ("", ""),
        };
        if limit >= open.len() + close.len() {
            out.extend_from_slice(open.as_bytes());
        }
        let body_limit = limit.saturating_sub(close.len()).max(out.len());
        // A fact's spelled name, written here (a word is borrowed, never copied).
        let mut name = [0u8; FACT_NAME_BYTES_MAX];
        let mut facts_done = false;
        while out.len() < body_limit {
            // Past the facts, while a whole padded word fits: the space and the word are
            // one fixed-size copy (the same bytes the general step below writes).
            // The buffer is sized once for the run, so a word is one store and a step of
            // the write position (no length or capacity bookkeeping per word).
            if facts_done && !out.is_empty() && out.len() + WORD_PADDED_BYTES <= body_limit {
                push_words(&mut out, body_limit, &mut state);
                continue;
            }
            let word: &[u8] = match facts.next() {
                Some(&f) => fact_name(f, &mut name),
                None => {
                    facts_done = true;
                    WORDS[(splitmix(&mut state) % WORDS.len() as u64) as usize].as_bytes()
                }
            };
            if !out.is_empty() && out.len() < body_limit {
                out.push(b' ');
            }
            let room = body_limit - out.len();
            out.extend_from_slice(&word[..word.len().min(room)]);
        }
        if out.len() + close.len() == limit {
            out.extend_from_slice(close.as_bytes());
        }
        out.resize(out.len().max(limit), b'.');
        out.truncate(limit);
        debug_assert_eq!(out.len(), limit);
        // Every byte written is ASCII (the words, fact names, wrappers and dots).
        String::from_utf8(out).unwrap_or_default()
    }

    /// [`Segment::materialize`] as first written, a word at a time (the oracle of the
    /// fast one in tests).
    #[cfg(test)]
    fn materialize_plain(&self) -> String {
        let mut out = String::with_capacity(self.chars as usize);
        let mut state = self.seed ^ 0x9E37_79B9_7F4A_7C15;
        let mut facts = self.facts.iter();
        let limit = self.chars as usize;
        let (open, close) = match self.kind {
            ContentKind::Json => ("{\"k\": \"", "\"}"),
            ContentKind::Code => ("fn f() { ", " }"),
            _ => ("", ""),
        };
        if limit >= open.len() + close.len() {
            out.push_str(open);
        }
        let body_limit = limit.saturating_sub(close.len()).max(out.len());
        let mut name = String::new();
        while out.len() < body_limit {
            let word: &str = match facts.next() {
                Some(f) => {
                    name.clear();
                    let _ = write!(name, "{f}");
                    &name
                }
                None => WORDS[(splitmix(&mut state) % WORDS.len() as u64) as usize],
            };
            if !out.is_empty() && out.len() < body_limit {
                out.push(' ');
            }
            let room = body_limit - out.len();
            out.push_str(&word[..word.len().min(room)]);
        }
        if out.len() + close.len() == limit {
            out.push_str(close);
        }
        while out.len() < limit {
            out.push('.');
        }
        out.truncate(limit);
        out
    }
}

/// Characters a segment of `kind` needs so that [`Segment::materialize`] spells every one
/// of `facts`: the code or JSON wrapper, and each fact's name with a space before it.
/// With fewer, the text spells only the facts that fit.
pub fn chars_to_spell(kind: ContentKind, facts: &[FactId]) -> u32 {
    let wrapper = match kind {
        ContentKind::Json => 9,
        ContentKind::Code => 11,
        _ => 0,
    };
    // Every name takes the short form's characters; only the rare id past the short
    // form's digits adds its extra ones (equal to summing `spelled_len(f) + 1`, proven by
    // `chars_to_spell_equals_the_sum_of_spelled_names`, at a compare per fact).
    let long_extra: u32 = facts
        .iter()
        .filter(|f| f.0 >= SHORT_FORM_ID_LIMIT)
        .map(|&f| spelled_len(f) - SHORT_FORM_CHARS)
        .sum();
    wrapper + facts.len() as u32 * (SHORT_FORM_CHARS + 1) + long_extra
}

/// The spelled form of a fact: this prefix and at least this many digits.
const FACT_PREFIX: &str = "FACT-";
const FACT_DIGITS_MIN: usize = 6;

/// The facts whose names are spelled in `text`, ascending, without duplicates.
pub fn spelled_facts(text: &str) -> Vec<FactId> {
    let mut facts = Vec::new();
    let mut from = 0;
    // A name starts at an `F`, found a byte search at a time (generated words are
    // lowercase, so most `F`s start a name), then checked: no substring searcher is
    // built for every name.
    while let Some(i) = text[from..].find('F') {
        let at = from + i;
        if !text.as_bytes()[at..].starts_with(FACT_PREFIX.as_bytes()) {
            from = at + 1;
            continue;
        }
        let rest = &text[at + FACT_PREFIX.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits >= FACT_DIGITS_MIN {
            if let Ok(n) = rest[..digits].parse::<u32>() {
                facts.push(FactId(n));
            }
        }
        from = at + FACT_PREFIX.len();
    }
    facts.sort_unstable();
    facts.dedup();
    facts
}

/// Bytes of the longest fact name (`FACT-` and the ten digits of a `u32`).
const FACT_NAME_BYTES_MAX: usize = 15;

/// A fact's name as [`FactId`]'s `Display` writes it (`FACT-` and at least six digits),
/// written into `buf` without the formatter.
fn fact_name(f: FactId, buf: &mut [u8; FACT_NAME_BYTES_MAX]) -> &[u8] {
    let prefix = FACT_PREFIX.len();
    buf[..prefix].copy_from_slice(FACT_PREFIX.as_bytes());
    let digits = spelled_len(f) as usize - prefix;
    let mut n = f.0;
    for at in (prefix..prefix + digits).rev() {
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    &buf[..prefix + digits]
}

/// Ids below this are spelled with the minimum digits (`FACT-` and six digits).
const SHORT_FORM_ID_LIMIT: u32 = 1_000_000;
/// Characters of a short-form name (`FACT-000042`).
const SHORT_FORM_CHARS: u32 = 11;

/// Characters of a fact's spelled name (`FACT-` and at least six digits, see
/// [`FactId`]'s `Display`), counted without formatting it.
fn spelled_len(f: FactId) -> u32 {
    const PREFIX_CHARS: u32 = "FACT-".len() as u32;
    const DIGITS_MIN: u32 = 6;
    let digits = f.0.checked_ilog10().map_or(1, |d| d + 1);
    PREFIX_CHARS + digits.max(DIGITS_MIN)
}

const WORDS: [&str; 20] = [
    "the", "agent", "reads", "file", "config", "test", "passes", "build", "error", "fixed", "user",
    "asks", "for", "a", "review", "of", "module", "parser", "output", "line",
];

/// Bytes of a padded word: a space, the word, zeros to this length.
const WORD_PADDED_BYTES: usize = 8;

/// Each of [`WORDS`] as a space and the word, zero-padded to [`WORD_PADDED_BYTES`], with
/// the word's length.
const WORDS_PADDED: [([u8; WORD_PADDED_BYTES], usize); WORDS.len()] = {
    let mut t = [([0u8; WORD_PADDED_BYTES], 0usize); WORDS.len()];
    let mut i = 0;
    while i < WORDS.len() {
        let w = WORDS[i].as_bytes();
        assert!(w.len() < WORD_PADDED_BYTES);
        t[i].0[0] = b' ';
        let mut k = 0;
        while k < w.len() {
            t[i].0[1 + k] = w[k];
            k += 1;
        }
        t[i].1 = w.len();
        i += 1;
    }
    t
};

/// Appends generated words (each a space and the word) while a whole padded one fits
/// below `body_limit`, the same bytes [`Segment::materialize`]'s general step writes. A
/// word is one 8-byte store of the space, the word and padding, the next word starting
/// where the padding does; the padding past the last word is not kept.
fn push_words(out: &mut Vec<u8>, body_limit: usize, state: &mut u64) {
    out.reserve(body_limit.saturating_sub(out.len()));
    let mut at = out.len();
    let base = out.as_mut_ptr();
    while at + WORD_PADDED_BYTES <= body_limit {
        let (bytes, len) = WORDS_PADDED[(splitmix(state) % WORDS.len() as u64) as usize];
        // SAFETY: `at + WORD_PADDED_BYTES <= body_limit <= capacity` (reserved above), and
        // the table a word is copied from is not the buffer.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(at), WORD_PADDED_BYTES) };
        at += 1 + len;
    }
    // SAFETY: every byte below `at` is initialized: the old length, then each word's store
    // covers its own `1 + len` bytes (len < WORD_PADDED_BYTES), end to end.
    unsafe { out.set_len(at) };
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The content of one message: one or more segments joined by [`MERGE_SEPARATOR`], or
/// by one newline where [`Content::newline_joins`] says so.
/// Segments are shared, so cloning a message (a transcript snapshot) is cheap.
#[derive(Clone, Eq, Debug, Default, Serialize, Deserialize)]
pub struct Content {
    pub segments: Arc<[Segment]>,
    /// The segments (by index, ascending, never 0) joined to the one before them by one
    /// newline instead of the blank line: a row as a real compactor wrote it (0.19.0's
    /// `SUMMARY_PREFIX` before its task snapshot, iot's marker heading before its
    /// summary), read back by the harness. Every row the model builds has none.
    #[serde(default, skip_serializing_if = "no_joins")]
    newline_joins: Arc<[u32]>,
}

fn no_joins(joins: &Arc<[u32]>) -> bool {
    joins.is_empty()
}

/// Equal segments and joins; shared segments are equal without comparing them (the
/// standard library's pointer shortcut does not apply to slices).
impl PartialEq for Content {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        let Content {
            segments,
            newline_joins,
        } = self;
        (Arc::ptr_eq(segments, &other.segments) || **segments == *other.segments)
            && **newline_joins == *other.newline_joins
    }
}

impl Content {
    pub fn empty() -> Self {
        Content::from_segments(Vec::new())
    }

    pub fn single(segment: Segment) -> Self {
        Content::from_segments(vec![segment])
    }

    pub fn is_empty(&self) -> bool {
        self.chars() == 0
    }

    /// Length in characters, separators included.
    pub fn chars(&self) -> u32 {
        let text: u32 = self.segments.iter().map(|s| s.chars).sum();
        let seps = self.segments.len().saturating_sub(1) as u32 * MERGE_SEPARATOR_CHARS;
        // A one-newline join is one character shorter than the blank line.
        text + seps - self.newline_joins.len() as u32
    }

    pub fn rough_tokens(&self) -> u32 {
        rough_tokens(self.chars())
    }

    pub fn real_tokens(&self) -> u32 {
        let seps = self.segments.len().saturating_sub(1) as u32;
        self.segments
            .iter()
            .map(|s| real_tokens(s.kind, s.chars))
            .sum::<u32>()
            + seps
    }

    /// Every fact mentioned anywhere in this content, ascending, without duplicates.
    pub fn facts(&self) -> Vec<FactId> {
        let mut all: Vec<FactId> = self
            .segments
            .iter()
            .flat_map(|s| s.facts.iter().copied())
            .collect();
        // Stable sort: the segments' lists are ascending runs, which it merges.
        all.sort();
        all.dedup();
        all
    }

    /// Appends `other` after a blank line (the Hermes merge of two plain-text rows).
    pub fn merge(&mut self, other: &Content) {
        let merged: Vec<Segment> = self
            .segments
            .iter()
            .chain(other.segments.iter())
            .cloned()
            .collect();
        if !other.newline_joins.is_empty() {
            let shift = self.segments.len() as u32;
            let joins: Vec<u32> = self
                .newline_joins
                .iter()
                .copied()
                .chain(other.newline_joins.iter().map(|i| i + shift))
                .collect();
            self.newline_joins = Arc::from(joins);
        }
        self.segments = Arc::from(merged);
    }

    /// Content made of the given segments, in order, joined by blank lines.
    pub fn from_segments(segments: Vec<Segment>) -> Self {
        Content {
            segments: Arc::from(segments),
            newline_joins: Arc::from(Vec::new()),
        }
    }

    /// Content made of the given segments, where the segments at `newline_joins`
    /// (indices past 0, each once) follow the one before them after one newline.
    pub fn from_segments_joined(segments: Vec<Segment>, mut newline_joins: Vec<u32>) -> Self {
        newline_joins.sort_unstable();
        newline_joins.dedup();
        newline_joins.retain(|&i| i > 0 && (i as usize) < segments.len());
        Content {
            segments: Arc::from(segments),
            newline_joins: Arc::from(newline_joins),
        }
    }

    /// The segments joined to the one before them by one newline (indices, ascending).
    pub fn newline_joins(&self) -> &[u32] {
        &self.newline_joins
    }

    /// What goes before segment `i` (past 0): one newline or the blank line.
    pub fn separator_before(&self, i: usize) -> &'static str {
        if self.newline_joins.binary_search(&(i as u32)).is_ok() {
            "\n"
        } else {
            MERGE_SEPARATOR
        }
    }

    /// The parts (one per segment) joined as this content joins its segments.
    pub fn join<S: AsRef<str>>(&self, parts: &[S]) -> String {
        // Sized once: the parts and a blank line between each (an upper bound), so a
        // long row is not copied again at every growth.
        let seps = parts.len().saturating_sub(1) * MERGE_SEPARATOR.len();
        let bytes: usize = parts.iter().map(|p| p.as_ref().len()).sum();
        let mut out = String::with_capacity(bytes + seps);
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                out.push_str(self.separator_before(i));
            }
            out.push_str(part.as_ref());
        }
        out
    }

    pub fn materialize(&self) -> String {
        let parts: Vec<String> = self.segments.iter().map(Segment::materialize).collect();
        self.join(&parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn materialize_has_exact_length_and_is_deterministic() {
        for kind in [
            ContentKind::Prose,
            ContentKind::Code,
            ContentKind::Json,
            ContentKind::Summary,
        ] {
            for chars in [0, 1, 3, 7, 11, 12, 100, 1001] {
                let s = seg(kind, chars, 42, &[7, 9]);
                let a = s.materialize();
                assert_eq!(a.len(), chars as usize, "{kind:?} {chars}");
                assert_eq!(a, s.materialize());
            }
        }
        let with_room = seg(ContentKind::Prose, 200, 1, &[7, 9]).materialize();
        assert!(with_room.contains("FACT-000007") && with_room.contains("FACT-000009"));
        assert_ne!(
            with_room,
            seg(ContentKind::Prose, 200, 2, &[7, 9]).materialize()
        );
    }

    /// The fast writer writes what the word-at-a-time one does, for every kind, lengths
    /// around the wrappers and the padded word, and facts that fit or do not.
    #[test]
    fn materialize_writes_what_the_plain_writer_writes() {
        let fact_sets: [&[u32]; 4] = [&[], &[7], &[3, 99_999, 1_234_567], &[1, 2, 3, 4, 5, 6]];
        for kind in [
            ContentKind::Prose,
            ContentKind::Code,
            ContentKind::Json,
            ContentKind::Summary,
        ] {
            for facts in fact_sets {
                for chars in (0..80).chain([255, 256, 1000, 4097]) {
                    for seed in 0..6 {
                        let s = seg(kind, chars, seed * 0x1234_5678_9abc + 5, facts);
                        assert_eq!(
                            s.materialize(),
                            s.materialize_plain(),
                            "{kind:?} {chars} {seed} {facts:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn spelled_len_counts_the_formatted_name() {
        for n in [0, 7, 99_999, 999_999, 1_000_000, 12_345_678, u32::MAX] {
            assert_eq!(
                spelled_len(FactId(n)) as usize,
                FactId(n).to_string().len(),
                "{n}"
            );
        }
    }

    #[test]
    fn chars_to_spell_equals_the_sum_of_spelled_names() {
        let ids = [
            0,
            7,
            999_999,
            1_000_000,
            9_999_999,
            10_000_000,
            123_456_789,
            u32::MAX,
        ];
        for kind in [ContentKind::Prose, ContentKind::Code, ContentKind::Json] {
            for n in 0..ids.len() {
                let facts: Vec<FactId> = ids[n..].iter().map(|&i| FactId(i)).collect();
                let plain = chars_to_spell(kind, &[])
                    + facts.iter().map(|&f| spelled_len(f) + 1).sum::<u32>();
                assert_eq!(chars_to_spell(kind, &facts), plain, "{kind:?} {facts:?}");
                let text = facts.iter().map(|f| format!(" {f}")).collect::<String>();
                assert_eq!(plain - chars_to_spell(kind, &[]), text.len() as u32);
            }
        }
    }

    #[test]
    fn a_segment_with_chars_to_spell_spells_every_fact_and_two_less_does_not() {
        for kind in [
            ContentKind::Prose,
            ContentKind::Code,
            ContentKind::Json,
            ContentKind::Summary,
        ] {
            let facts = [7, 1_234_567];
            let need = chars_to_spell(kind, &seg(kind, 0, 1, &facts).facts);
            let full = seg(kind, need, 3, &facts).materialize();
            assert!(
                full.contains("FACT-000007") && full.contains("FACT-1234567"),
                "{kind:?}"
            );
            // Prose has no wrapper, so its first name needs no space: one char of slack.
            let short = seg(kind, need - 2, 3, &facts).materialize();
            assert!(!short.contains("FACT-1234567"), "{kind:?}: {short}");
        }
    }

    #[test]
    fn merged_content_counts_the_separator_and_keeps_segments() {
        let mut c = Content::single(seg(ContentKind::Prose, 10, 1, &[3]));
        c.merge(&Content::single(seg(ContentKind::Prose, 6, 2, &[1, 3])));
        assert_eq!(c.chars(), 18);
        assert_eq!(c.materialize().len(), 18);
        assert!(c.materialize().contains(MERGE_SEPARATOR));
        assert_eq!(c.facts(), vec![FactId(1), FactId(3)]);
        assert_eq!(c.segments.len(), 2);
    }

    /// The names found are the ones a search for every `FACT-` finds: names back to
    /// back, inside words, cut short, after other capitals and non-ASCII text.
    #[test]
    fn spelled_facts_finds_what_a_substring_search_finds() {
        fn by_search(text: &str) -> Vec<FactId> {
            let mut facts = Vec::new();
            let mut rest = text;
            while let Some(at) = rest.find(FACT_PREFIX) {
                rest = &rest[at + FACT_PREFIX.len()..];
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                if digits >= FACT_DIGITS_MIN {
                    if let Ok(n) = rest[..digits].parse::<u32>() {
                        facts.push(FactId(n));
                    }
                }
            }
            facts.sort_unstable();
            facts.dedup();
            facts
        }
        let texts = [
            "",
            "F",
            "FACT-",
            "FACT-00001 FACT-000002",
            "FFACT-000003FACT-FACT-000004x",
            "é FACT-0000050 Fixed FAC FACT FACT-12345678901 FACT-000006é",
            "FACT-999999 FACT-4294967295 FACT-4294967296 FACT-000001",
            "the agent reads FACT-000007, FACT-000007. and F FA FACT-000008",
        ];
        for text in texts {
            assert_eq!(spelled_facts(text), by_search(text), "{text}");
        }
    }

    #[test]
    fn a_fact_name_is_written_as_display_writes_it() {
        let mut buf = [0u8; FACT_NAME_BYTES_MAX];
        for n in [
            0,
            5,
            42,
            999_999,
            1_000_000,
            1_234_567,
            999_999_999,
            u32::MAX,
        ] {
            let name = fact_name(FactId(n), &mut buf).to_vec();
            assert_eq!(String::from_utf8(name).unwrap(), FactId(n).to_string());
        }
    }

    /// `join` writes each part in order with the content's separator before it (a blank
    /// line, or one newline at a newline join), whatever the parts' lengths.
    #[test]
    fn join_writes_the_parts_with_their_separators() {
        let segs = vec![
            seg(ContentKind::Prose, 1, 1, &[]),
            seg(ContentKind::Prose, 1, 2, &[]),
            seg(ContentKind::Prose, 1, 3, &[]),
            seg(ContentKind::Prose, 1, 4, &[]),
        ];
        let c = Content::from_segments_joined(segs, vec![2]);
        let long = "x".repeat(100_000);
        assert_eq!(
            c.join(&["a", "", &long, "é"]),
            format!("a\n\n\n{long}\n\né")
        );
        assert_eq!(c.join::<&str>(&[]), "");
        assert_eq!(c.join(&["only"]), "only");
    }

    /// A content read from real code keeps its one-newline joins: it counts and writes
    /// one character less per join, and a merge moves them with their segments.
    #[test]
    fn newline_joins_count_one_character_and_follow_a_merge() {
        let parts = || {
            vec![
                seg(ContentKind::Scaffold, 5, 1, &[]),
                seg(ContentKind::Prose, 7, 2, &[]),
                seg(ContentKind::Prose, 3, 3, &[]),
            ]
        };
        let joined = Content::from_segments_joined(parts(), vec![2, 0, 9, 2]);
        assert_eq!(
            joined.newline_joins(),
            [2],
            "index 0, out of range and repeats dropped"
        );
        assert_eq!(joined.chars(), 5 + 2 + 7 + 1 + 3);
        assert_eq!(joined.materialize().len(), joined.chars() as usize);
        assert_eq!(joined.separator_before(1), MERGE_SEPARATOR);
        assert_eq!(joined.separator_before(2), "\n");
        assert_ne!(
            joined,
            Content::from_segments(parts()),
            "joins are compared"
        );
        let mut c = Content::from_segments(parts());
        c.merge(&joined);
        assert_eq!(c.newline_joins(), [5]);
        assert_eq!(c.chars(), 19 + 2 + 18);
        assert_eq!(c.materialize().len(), c.chars() as usize);
        let mut d = joined.clone();
        d.merge(&joined);
        assert_eq!(d.newline_joins(), [2, 5]);
        assert_eq!(d.materialize().len(), d.chars() as usize);
    }
}
