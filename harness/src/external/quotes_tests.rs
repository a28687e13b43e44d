//! [`quoted_chars`] against the substring search it replaces, and the sampled pass of
//! [`longest_quoted_ends`] against the pass over every window it replaces (both oracles
//! below, kept as they were written), on texts and prompts built to quote each other in
//! pieces.

use super::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

/// The substring search: every candidate prefix and suffix searched in the prompt.
fn oracle_quoted_chars(prompt: &str, text: &str) -> usize {
    if text.is_empty() || prompt.contains(text) {
        return text.len();
    }
    // Most rows of a transcript are not in a given prompt: two searches reject them.
    let min = QUOTED_PIECE_CHARS_MIN.min(text.len());
    let head_quoted = text.is_char_boundary(min) && prompt.contains(&text[..min]);
    let tail_quoted =
        text.is_char_boundary(text.len() - min) && prompt.contains(&text[text.len() - min..]);
    let piece = |k: usize| if k >= QUOTED_PIECE_CHARS_MIN { k } else { 0 };
    let prefix = if head_quoted {
        piece(oracle_longest_quoted(prompt, text, |k| &text[..k]))
    } else {
        0
    };
    let suffix = if tail_quoted {
        piece(oracle_longest_quoted(prompt, text, |k| {
            &text[text.len() - k..]
        }))
    } else {
        0
    };
    (prefix + suffix).min(text.len())
}

/// The largest `k` (on a char boundary) with `part(k)` in `prompt`, by bisection.
fn oracle_longest_quoted<'t>(
    prompt: &str,
    text: &'t str,
    part: impl Fn(usize) -> &'t str,
) -> usize {
    let boundary = |mut k: usize| {
        while !(text.is_char_boundary(k) && text.is_char_boundary(text.len() - k)) {
            k -= 1;
        }
        k
    };
    let (mut lo, mut hi) = (0usize, text.len());
    while lo < hi {
        let mid = boundary(lo + (hi - lo).div_ceil(2));
        if mid <= lo {
            break;
        }
        if prompt.contains(part(mid)) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// The pass over every window of the prompt that the sampled pass replaces, kept as it
/// was written: each text's 24-byte head and tail windows, sorted by key, looked up at
/// every prompt position.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum DenseEnd {
    Head,
    Tail,
}

/// Bits of the window-key filter that skips most prompt positions without a lookup.
const FILTER_BITS_LOG2: u32 = 16;
const _: () = assert!(WINDOW_BYTES.is_multiple_of(8) && WINDOW_BYTES > 0);

/// The head and tail windows of the texts, sorted by key, and a filter of their keys.
struct DenseIndex {
    /// (key, text index, end), ascending.
    windows: Vec<(u64, usize, DenseEnd)>,
    /// Bit `key >> (64 - FILTER_BITS_LOG2)` is set for every window's key.
    filter: Vec<u64>,
}

impl DenseIndex {
    fn new(texts: &[&[u8]]) -> Self {
        let mut windows = Vec::with_capacity(2 * texts.len());
        for (i, text) in texts.iter().enumerate() {
            if text.len() >= WINDOW_BYTES {
                windows.push((window_key(&text[..WINDOW_BYTES]), i, DenseEnd::Head));
                let tail = &text[text.len() - WINDOW_BYTES..];
                windows.push((window_key(tail), i, DenseEnd::Tail));
            }
        }
        windows.sort_unstable();
        let mut filter = vec![0u64; (1usize << FILTER_BITS_LOG2) / 64];
        for &(key, _, _) in &windows {
            let bit = filter_bit(key);
            filter[bit / 64] |= 1 << (bit % 64);
        }
        DenseIndex { windows, filter }
    }

    /// The windows whose key is `key` (none, mostly: the filter answers first).
    fn with_key(&self, key: u64) -> &[(u64, usize, DenseEnd)] {
        let bit = filter_bit(key);
        if self.filter[bit / 64] & (1 << (bit % 64)) == 0 {
            return &[];
        }
        let from = self.windows.partition_point(|w| w.0 < key);
        let to = from + self.windows[from..].partition_point(|w| w.0 == key);
        &self.windows[from..to]
    }
}

/// For every text, its longest prefix and suffix that `prompt` contains when they are
/// at least [`WINDOW_BYTES`] long (0 otherwise): every prompt position whose window is
/// a text's head (tail) window is extended forward (backward) as far as prompt and
/// text agree.
fn dense_longest_quoted_ends(prompt: &[u8], texts: &[&[u8]]) -> Vec<QuotedEnds> {
    let mut ends = vec![QuotedEnds::default(); texts.len()];
    if prompt.len() < WINDOW_BYTES || texts.iter().all(|t| t.len() < WINDOW_BYTES) {
        return ends;
    }
    let index = DenseIndex::new(texts);
    for at in 0..=prompt.len() - WINDOW_BYTES {
        let window = &prompt[at..at + WINDOW_BYTES];
        for &(_, i, end) in index.with_key(window_key(window)) {
            let text = texts[i];
            let found = &mut ends[i];
            match end {
                DenseEnd::Head if found.head < text.len() && text[..WINDOW_BYTES] == *window => {
                    found.head = found.head.max(common_prefix(text, &prompt[at..]));
                }
                DenseEnd::Tail
                    if found.tail < text.len() && text[text.len() - WINDOW_BYTES..] == *window =>
                {
                    let before = &prompt[..at + WINDOW_BYTES];
                    found.tail = found.tail.max(common_suffix(text, before));
                }
                _ => {}
            }
        }
    }
    ends
}

/// A hash of a window's bytes (equal windows, equal keys; matches are then compared).
fn window_key(window: &[u8]) -> u64 {
    const MUL: u64 = 0x9E37_79B9_7F4A_7C15;
    let word = |i: usize| {
        let bytes: [u8; 8] = window[8 * i..8 * i + 8].try_into().unwrap_or_default();
        u64::from_le_bytes(bytes)
    };
    let mut key = 0u64;
    for i in 0..WINDOW_BYTES / 8 {
        key = (key ^ word(i)).wrapping_mul(MUL).rotate_left(29);
    }
    key
}

fn filter_bit(key: u64) -> usize {
    (key.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> (64 - FILTER_BITS_LOG2)) as usize
}

/// Longest prefix and suffix of `text` in `prompt` by brute force (0 below a window).
fn brute_ends(prompt: &[u8], text: &[u8]) -> QuotedEnds {
    let contains =
        |piece: &[u8]| piece.is_empty() || prompt.windows(piece.len()).any(|w| w == piece);
    let head = (0..=text.len())
        .rev()
        .find(|&k| contains(&text[..k]))
        .unwrap_or(0);
    let tail = (0..=text.len())
        .rev()
        .find(|&k| contains(&text[text.len() - k..]))
        .unwrap_or(0);
    let floor = |k: usize| if k >= WINDOW_BYTES { k } else { 0 };
    QuotedEnds {
        head: floor(head),
        tail: floor(tail),
    }
}

/// Few distinct characters of 1 to 4 bytes: texts repeat themselves and cut pieces
/// land inside multi-byte characters.
fn alphabet() -> impl Strategy<Value = char> {
    prop::sample::select(vec!['a', 'b', ' ', 'é', '€', '😀', 'F'])
}

fn text_chars(max: usize) -> impl Strategy<Value = Vec<char>> {
    prop::collection::vec(alphabet(), 0..max)
}

/// A prompt part: other text, or the piece `[from, to)` (in chars, wrapped) of a text.
#[derive(Clone, Debug)]
enum Part {
    Noise(Vec<char>),
    Piece(usize, usize, usize),
}

fn part() -> impl Strategy<Value = Part> {
    prop_oneof![
        text_chars(12).prop_map(Part::Noise),
        (0..4usize, 0..120usize, 0..120usize).prop_map(|(t, a, b)| Part::Piece(t, a, b)),
    ]
}

fn build_prompt(texts: &[Vec<char>], parts: &[Part]) -> String {
    let mut prompt = String::new();
    for p in parts {
        match p {
            Part::Noise(chars) => prompt.extend(chars),
            Part::Piece(t, a, b) => {
                let text = &texts[t % texts.len()];
                let n = text.len() + 1;
                let (from, to) = ((a % n).min(b % n), (a % n).max(b % n));
                prompt.extend(&text[from..to]);
            }
        }
    }
    prompt
}

fn config() -> Config {
    Config {
        cases: 2000,
        rng_seed: RngSeed::Fixed(0x51EED),
        max_shrink_time: 30_000,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn counts_what_the_substring_search_counts(
        texts in prop::collection::vec(text_chars(90), 1..4),
        parts in prop::collection::vec(part(), 0..8),
    ) {
        let prompt = build_prompt(&texts, &parts);
        let texts: Vec<String> = texts.iter().map(|t| t.iter().collect()).collect();
        let expected: Vec<usize> =
            texts.iter().map(|t| oracle_quoted_chars(&prompt, t)).collect();
        for (t, &e) in texts.iter().zip(&expected) {
            prop_assert_eq!(quoted_chars(&prompt, t), e, "text {:?} in {:?}", t, prompt);
        }
        prop_assert_eq!(quoted_chars_total(&prompt, &texts), expected.iter().sum::<usize>());
    }

    #[test]
    fn finds_the_longest_quoted_ends(
        texts in prop::collection::vec(text_chars(60), 1..4),
        parts in prop::collection::vec(part(), 0..8),
    ) {
        let prompt = build_prompt(&texts, &parts);
        let texts: Vec<String> = texts.iter().map(|t| t.iter().collect()).collect();
        let bytes: Vec<&[u8]> = texts.iter().map(|t| t.as_bytes()).collect();
        let found = longest_quoted_ends(prompt.as_bytes(), &bytes);
        for (t, f) in bytes.iter().zip(found) {
            prop_assert_eq!(f, brute_ends(prompt.as_bytes(), t));
        }
    }

    #[test]
    fn the_sampled_pass_finds_what_the_pass_over_every_window_finds(
        texts in prop::collection::vec(text_chars(200), 1..6),
        parts in prop::collection::vec(part(), 0..16),
    ) {
        let prompt = build_prompt(&texts, &parts);
        let texts: Vec<String> = texts.iter().map(|t| t.iter().collect()).collect();
        let bytes: Vec<&[u8]> = texts.iter().map(|t| t.as_bytes()).collect();
        prop_assert_eq!(
            longest_quoted_ends(prompt.as_bytes(), &bytes),
            dense_longest_quoted_ends(prompt.as_bytes(), &bytes)
        );
    }
}

#[test]
fn whole_short_repeated_and_cut_texts_count_as_the_search_counts() {
    let long = "é€😀 ".repeat(20);
    let texts = [
        "",
        "short",
        "exactly twenty-four byte",
        long.as_str(),
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ];
    let cut = format!("{}…{}", &long[..40], &long[long.len() - 41..]);
    let prompts = [
        String::new(),
        "short".to_string(),
        format!("x {} y", texts[2]),
        long.clone(),
        cut,
        "a".repeat(30),
        "a".repeat(100),
        format!("{long}{long}"),
    ];
    for prompt in &prompts {
        for text in texts {
            assert_eq!(
                quoted_chars(prompt, text),
                oracle_quoted_chars(prompt, text),
                "{text:?} in {prompt:?}"
            );
        }
    }
}
