//! The words a static fallback summary may use (issue 31): a summary written with no
//! answered summarizer call is built locally, from what the compactor was given, so
//! every word of it comes from a row the harness sent, a summary or failure message it
//! served, or the compactor's declared fallback (its `text`, and the `words` its
//! builder writes around what it copies: labels such as `USER:` or `Called tool(s)`).
//! A word from nowhere is prose the fallback was not entitled to.
//!
//! A *word* is a maximal run of alphanumeric characters holding at least one letter,
//! compared lowercased: numbers (counts, sizes) and punctuation are not judged, and a
//! fact name (`FACT-000123`) is judged by its facts rule, not here. A fallback cuts long
//! rows and marks the cut with an ellipsis (Hermes: `text[:420] + " ... " +
//! text[-160:]`, `+ " ...[truncated]"`), so a word whose nearest non-whitespace neighbour is
//! an ellipsis (`...` or `…`) may be a piece of a word: it is not judged.

use super::text_hash::{TextHasher, TextMap};
use compactsim_model::ToolCall;
use std::collections::{BTreeSet, HashSet, VecDeque};
use std::hash::BuildHasherDefault;
use std::sync::Arc;

/// A set of words (lowercased), read for membership (and by [`piece_of_one`], whose
/// answer does not depend on the order it walks them).
pub type WordSet = HashSet<Box<str>, BuildHasherDefault<TextHasher>>;

/// The words of `text`, lowercased, in order, repeats included.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    spans(text).map(|(_, w)| w.to_lowercase())
}

/// The words of `text` with their byte offsets.
fn spans(text: &str) -> impl Iterator<Item = (usize, &str)> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().any(char::is_alphabetic))
        .map(move |w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
}

/// Whether the word at `at..at + len` of `text` touches an ellipsis (whitespace between
/// allowed: Hermes 0.19.0 cuts its whole fallback with `summary[:N].rstrip() +
/// "\n...[fallback summary truncated]"`, agent/context_compressor.py line 2114): a cut
/// may have made it a piece of a word.
fn beside_ellipsis(text: &str, at: usize, len: usize) -> bool {
    let before = text[..at].trim_end();
    let after = text[at + len..].trim_start();
    before.ends_with("...")
        || before.ends_with('…')
        || after.starts_with("...")
        || after.starts_with('…')
}

/// Adds the words of `text` to `set`.
pub fn add_words(set: &mut WordSet, text: &str) {
    for w in words(text) {
        if !set.contains(w.as_str()) {
            set.insert(w.into_boxed_str());
        }
    }
}

/// The words a case's harness saw: every text it sent to the adapter in a row (each
/// distinct text read once), every tool call's name and arguments it sent, every
/// summary and failure message it served. A fallback also cuts words without marking
/// the cut (Hermes' `_summarize_tool_result` keeps the head of a call's argument), so a
/// piece at the start or the end of a seen word counts as seen.
#[derive(Default)]
pub struct SeenWords {
    /// The words, sorted (a prefix is looked up by range).
    words: BTreeSet<Box<str>>,
    /// The same words, hashed: a word read again (most words of a case are) is known
    /// after one hash, not a walk down `words` comparing strings.
    known: WordSet,
    /// The words spelled backwards, sorted (a suffix is a prefix of these).
    backwards: BTreeSet<Box<str>>,
    /// The texts already read (by content: a text sent again adds nothing).
    read: HashSet<Arc<str>, BuildHasherDefault<TextHasher>>,
    /// The shared texts already read, by address (each held here, so an address is
    /// never reused while listed): a text sent again in every request is skipped in
    /// O(1), without hashing or comparing its bytes.
    read_shared: TextMap<usize, Arc<str>>,
    /// The rows' tool-call lists already read, by address (held likewise).
    calls_read: TextMap<usize, Arc<[ToolCall]>>,
    /// Texts seen but not yet split into words, oldest first: the split is paid only by
    /// a case whose rule runs ([`SeenWords::settle_for`]), not by every request of every
    /// case, and only as far as the rule's words need.
    pending: VecDeque<Unsplit>,
    /// Known words by a slot of their length and end letters ([`hot_slot`]): a word of
    /// the few a case's texts repeat is known after one short compare, not a hash.
    hot: Vec<Option<Box<str>>>,
}

/// A source of words not split yet.
enum Unsplit {
    Text(Arc<str>),
    /// A row's tool calls: each one's name and arguments (written out when split).
    Calls(Arc<[ToolCall]>),
}

/// Slots of [`SeenWords::hot`].
const HOT_SLOTS: usize = 256;

/// The slot of [`SeenWords::hot`] a word may sit in.
fn hot_slot(w: &[u8]) -> usize {
    let (first, last) = (w.first().copied(), w.last().copied());
    let (first, last) = (first.unwrap_or(0) as usize, last.unwrap_or(0) as usize);
    // The generator's words, `fact` and its wrappers' words each have a slot of their own.
    (w.len().wrapping_mul(17) ^ first.wrapping_mul(29) ^ last.wrapping_mul(131)) % HOT_SLOTS
}

/// Byte classes of [`SeenWords::see_ascii`]: 0 for a byte that ends a word.
const ASCII_DIGIT: u8 = 1;
const ASCII_LOWER: u8 = 2;
const ASCII_UPPER: u8 = 4;
const ASCII_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_digit() {
            ASCII_DIGIT
        } else if c.is_ascii_lowercase() {
            ASCII_LOWER
        } else if c.is_ascii_uppercase() {
            ASCII_UPPER
        } else {
            0
        };
        b += 1;
    }
    t
};

impl SeenWords {
    /// Reads `text` once per distinct text.
    pub fn see_text(&mut self, text: &Arc<str>) {
        let address = Arc::as_ptr(text).cast::<u8>() as usize;
        if self.read_shared.contains_key(&address) {
            return;
        }
        self.read_shared.insert(address, text.clone());
        self.pending.push_back(Unsplit::Text(text.clone()));
    }

    /// Splits every text seen since the last call into words (each distinct text once).
    pub fn settle(&mut self) {
        while let Some(source) = self.pending.pop_front() {
            self.split(source);
        }
    }

    /// Splits the texts seen, oldest first, until every one of `wanted` is seen (or a
    /// piece of a seen word), or every text is split: [`SeenWords::contains`] then
    /// answers for each of `wanted` what it answers once every text is split (a word
    /// seen stays seen, and one still unseen was looked for in every text).
    pub fn settle_for(&mut self, wanted: impl IntoIterator<Item = String>) {
        let mut left: Vec<String> = wanted.into_iter().collect();
        left.sort_unstable();
        left.dedup();
        left.retain(|w| !self.contains(w));
        while !left.is_empty() {
            let Some(source) = self.pending.pop_front() else {
                break;
            };
            let known = self.known.len();
            self.split(source);
            // Only a new word can make one of `left` seen.
            if self.known.len() > known {
                left.retain(|w| !self.contains(w));
            }
        }
    }

    /// Reads the words of one source (a text unless a text with its content was read).
    fn split(&mut self, source: Unsplit) {
        match source {
            Unsplit::Text(text) => {
                if self.read.contains(&text) {
                    return;
                }
                self.see_str(&text);
                self.read.insert(text);
            }
            Unsplit::Calls(calls) => {
                for c in calls.iter() {
                    self.see_str(&c.name);
                    self.see_str(&c.arguments.to_string());
                }
            }
        }
    }

    /// Reads the names and arguments of a row's tool calls once per shared list.
    pub fn see_calls(&mut self, calls: &Arc<[ToolCall]>) {
        if calls.is_empty() {
            return;
        }
        let address = Arc::as_ptr(calls).cast::<ToolCall>() as usize;
        if self.calls_read.contains_key(&address) {
            return;
        }
        self.calls_read.insert(address, calls.clone());
        self.pending.push_back(Unsplit::Calls(calls.clone()));
    }

    /// Reads a short text (a tool call's name or arguments, a failure message) each time.
    pub fn see_str(&mut self, text: &str) {
        if text.is_ascii() {
            return self.see_ascii(text);
        }
        for w in words(text) {
            self.see_word(&w);
        }
    }

    /// [`SeenWords::see_str`] of an ASCII text: the same words (a letter or digit is an
    /// ASCII one, lowercase is ASCII lowercase), each lowercased into one buffer instead
    /// of a string of its own.
    /// A word already lowercase is read in place.
    fn see_ascii(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let mut lower = String::new();
        let mut at = 0;
        while at < bytes.len() {
            if ASCII_CLASS[bytes[at] as usize] == 0 {
                at += 1;
                continue;
            }
            let start = at;
            let mut classes = 0;
            while let Some(&b) = bytes.get(at) {
                let class = ASCII_CLASS[b as usize];
                if class == 0 {
                    break;
                }
                classes |= class;
                at += 1;
            }
            if classes & ASCII_UPPER != 0 {
                lower.clear();
                lower.push_str(&text[start..at]);
                lower.make_ascii_lowercase();
                self.see_word(&lower);
            } else if classes & ASCII_LOWER != 0 {
                self.see_word(&text[start..at]);
            }
        }
    }

    /// Adds one word (lowercased) unless it is known.
    fn see_word(&mut self, w: &str) {
        if self.hot.is_empty() {
            self.hot = vec![None; HOT_SLOTS];
        }
        let slot = hot_slot(w.as_bytes());
        if self.hot[slot].as_deref() == Some(w) {
            return;
        }
        self.hot[slot] = Some(w.into());
        if self.known.contains(w) {
            return;
        }
        self.known.insert(w.into());
        self.backwards
            .insert(w.chars().rev().collect::<String>().into_boxed_str());
        self.words.insert(w.into());
    }

    /// Whether `word` is a word of the texts split so far, or a piece at the start or
    /// the end of one (after [`SeenWords::settle`], or [`SeenWords::settle_for`] a list
    /// holding `word`: of every text seen).
    pub fn contains(&self, word: &str) -> bool {
        let backwards: String = word.chars().rev().collect();
        starts_one(&self.words, word) || starts_one(&self.backwards, &backwards)
    }
}

/// Whether some word of `set` starts with `piece`.
fn starts_one(set: &BTreeSet<Box<str>>, piece: &str) -> bool {
    set.range::<str, _>((std::ops::Bound::Included(piece), std::ops::Bound::Unbounded))
        .next()
        .is_some_and(|w| w.starts_with(piece))
}

/// Whether `word` is the start or the end of a declared word: a fallback cut to its
/// length may cut its own declared text (iot 0.22.2.post1 cuts the whole fallback with
/// `elide`, agent/context_compressor.py:3671, marking the cut with a
/// `⟪HERMES-CONTEXT-COMPRESSION: … omitted …⟫` note, not an ellipsis), as a piece of a
/// seen word is seen. Asked only of a word no source holds whole.
fn piece_of_one(declared: &WordSet, word: &str) -> bool {
    declared
        .iter()
        .any(|d| d.starts_with(word) || d.ends_with(word))
}

/// The words of `text` that only the seen words can excuse (lowercased, in order,
/// repeats included): not in `declared`, not a piece of a declared word, not beside an
/// ellipsis. [`foreign`] looks each up in the seen words; the same list given to
/// [`SeenWords::settle_for`] splits as many texts as those lookups need.
pub fn judged<'a>(text: &'a str, declared: &'a WordSet) -> impl Iterator<Item = String> + 'a {
    spans(text).filter_map(move |(at, word)| {
        let w = word.to_lowercase();
        let excused = declared.contains(w.as_str())
            || piece_of_one(declared, &w)
            || beside_ellipsis(text, at, word.len());
        (!excused).then_some(w)
    })
}

/// Words of a foreign-prose witness at most.
pub const FOREIGN_WORDS_LISTED: usize = 8;

/// The distinct words of `text` that neither `seen` nor `declared` holds (a word beside
/// an ellipsis aside), in order of
/// first appearance, and how many there are in all (only the first
/// [`FOREIGN_WORDS_LISTED`] are listed).
pub fn foreign(text: &str, seen: &SeenWords, declared: &WordSet) -> (usize, Vec<String>) {
    foreign_among(judged(text, declared), seen)
}

/// [`foreign`] of a text whose [`judged`] words are `judged`.
pub fn foreign_among(
    judged: impl IntoIterator<Item = String>,
    seen: &SeenWords,
) -> (usize, Vec<String>) {
    let mut found = WordSet::default();
    let mut listed = Vec::new();
    for w in judged {
        if seen.contains(&w) || found.contains(w.as_str()) {
            continue;
        }
        if listed.len() < FOREIGN_WORDS_LISTED {
            listed.push(w.clone());
        }
        found.insert(w.into_boxed_str());
    }
    (found.len(), listed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_is_an_alphanumeric_run_with_a_letter_lowercased() {
        let got: Vec<String> =
            words("USER: tool(s) 3,400 chars; FACT-000123 — x86_64 Ünïcode").collect();
        assert_eq!(
            got,
            ["user", "tool", "s", "chars", "fact", "x86", "ünïcode"]
        );
    }

    /// The ASCII path reads the words [`words`] reads (every ASCII byte around letters
    /// and digits, mixed case).
    #[test]
    fn an_ascii_text_is_read_as_words_reads_it() {
        let ascii: String = (0u8..0x80).map(char::from).collect();
        for text in [
            ascii.as_str(),
            "USER: tool(s) 3,400 chars; FACT-000123 x86_64 MiXeD_case a1 42 z",
            "agent Agent AGENT agent build Build built a A bui agent fact FACT-000001 fact",
            "",
            "  ...  ",
        ] {
            let mut seen = SeenWords::default();
            seen.see_str(text);
            let want: BTreeSet<Box<str>> = words(text).map(String::into_boxed_str).collect();
            assert_eq!(seen.words, want, "{text:?}");
            assert_eq!(seen.known.len(), want.len());
        }
    }

    /// The words a case's generated texts repeat do not share a slot of the hot cache
    /// (two that did would push each other out on every word).
    #[test]
    fn the_generated_words_each_have_a_hot_slot_of_their_own() {
        let words = [
            "the", "agent", "reads", "file", "config", "test", "passes", "build", "error", "fixed",
            "user", "asks", "for", "a", "review", "of", "module", "parser", "output", "line",
            "fact", "k", "fn", "f",
        ];
        let slots: BTreeSet<usize> = words.iter().map(|w| hot_slot(w.as_bytes())).collect();
        assert_eq!(slots.len(), words.len());
    }

    #[test]
    fn foreign_words_are_those_no_source_holds_listed_once() {
        let mut seen = SeenWords::default();
        seen.see_text(&Arc::from("The user asked for the build log."));
        seen.see_str("read_file");
        seen.settle();
        let mut declared = WordSet::default();
        add_words(&mut declared, "Summary unavailable; Called tool(s)");
        let (n, listed) = foreign(
            "Summary unavailable. USER asked: read the log. Approved: deleting the database, deleting it.",
            &seen,
            &declared,
        );
        assert_eq!(n, 4);
        assert_eq!(listed, ["approved", "deleting", "database", "it"]);
        let (n, _) = foreign("Called read_file: the build log", &seen, &declared);
        assert_eq!(n, 0);
        // A piece at the start or the end of a seen word is seen (an unmarked cut).
        let (n, listed) = foreign("bui uild ui", &seen, &declared);
        assert_eq!((n, listed), (1, vec!["ui".to_string()]));
        // A word an ellipsis cut (either side, spaces between) is not judged; the next is.
        let (n, listed) = foreign("the bui... ild ... uild… the zq", &seen, &declared);
        assert_eq!((n, listed), (1, vec!["zq".to_string()]));
        // A line break between the cut word and the ellipsis (a fallback cut whole).
        let (n, listed) = foreign("the Dropp\n...\n\nCalled zq", &seen, &declared);
        assert_eq!((n, listed), (1, vec!["zq".to_string()]));
    }

    /// `settle_for` splits the texts only as far as the judged words need, and
    /// [`foreign`] then answers what it answers with every text split.
    #[test]
    fn settling_for_the_judged_words_splits_only_what_they_need() {
        let texts = [
            "The user asked for the build log.",
            "zq here",
            "more words after",
        ];
        let fresh = || {
            let mut seen = SeenWords::default();
            for t in texts {
                seen.see_text(&Arc::from(t));
            }
            seen
        };
        let mut declared = WordSet::default();
        add_words(&mut declared, "Summary unavailable; Called tool(s)");
        for fallback in [
            "Summary unavailable. USER asked: the build log.",
            "Called the build: zq",
            "Summary: a word from nowhere, and here",
            "the bui... ild",
            "",
        ] {
            let mut all = fresh();
            all.settle();
            let mut some = fresh();
            some.settle_for(judged(fallback, &declared));
            assert_eq!(
                foreign(fallback, &some, &declared),
                foreign(fallback, &all, &declared),
                "{fallback:?}"
            );
        }
        let mut some = fresh();
        some.settle_for(judged("USER asked: the build log", &declared));
        assert_eq!(some.pending.len(), 2, "one text holds every judged word");
        some.settle_for(judged("here", &declared));
        assert_eq!(some.pending.len(), 1, "the second text holds the next");
        some.settle_for(judged("nowhere", &declared));
        assert!(
            some.pending.is_empty(),
            "a word no text holds is looked for in every one"
        );
    }

    /// iot 0.22.2.post1 cuts its whole fallback at 8,000 characters and marks the cut
    /// with a note of its own (gateway case 364: "Summary generation was una⟪HERMES-…
    /// omitted …⟫"): a piece at the start or the end of a declared word is declared; a
    /// word of no source stays foreign.
    #[test]
    fn a_piece_of_a_declared_word_is_declared() {
        let seen = SeenWords::default();
        let mut declared = WordSet::default();
        add_words(&mut declared, "Summary generation was unavailable");
        let cut =
            "Summary generation was una⟪HERMES-CONTEXT-COMPRESSION: 163 of 8,068 chars omitted⟫";
        let (_, listed) = foreign(cut, &seen, &declared);
        assert!(!listed.contains(&"una".to_string()), "{listed:?}");
        assert!(listed.contains(&"omitted".to_string()), "{listed:?}");
        let (n, listed) = foreign("Summary was unavail zq lable", &seen, &declared);
        assert_eq!((n, listed), (1, vec!["zq".to_string()]));
    }
}
