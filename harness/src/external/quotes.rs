//! What a summarize prompt quotes of the transcript's conversation texts, found in one
//! pass over the prompt.
//!
//! A text counts as quoted whole, or by its longest quoted prefix plus its longest quoted
//! suffix (an adapter that cuts a long tool output keeps its head and tail), each counted
//! from [`QUOTED_PIECE_CHARS_MIN`] bytes. Every text of at least that length is indexed by
//! its first and last [`QUOTED_PIECE_CHARS_MIN`] bytes (its head and tail windows); one
//! pass over the prompt's windows finds where each head or tail occurs, and a match is
//! extended byte by byte to the longest quoted prefix (suffix) of the text. A shorter
//! text can only be quoted whole, and is searched for directly. The cost is the prompt's
//! length plus the quoted bytes, not the prompt's length times the number of texts.
//!
//! [`quoted_chars`] counts exactly what a substring search of every prefix and suffix
//! counts (the property tests below hold it to that search, including its bisection on
//! char boundaries).

/// A cut piece shorter than this is a coincidence (a shared word), not a quote.
pub const QUOTED_PIECE_CHARS_MIN: usize = 24;
/// Bytes of a head or tail window (a multiple of 8: [`window_key`] reads words).
const WINDOW_BYTES: usize = QUOTED_PIECE_CHARS_MIN;
const _: () = assert!(WINDOW_BYTES.is_multiple_of(8) && WINDOW_BYTES > 0);
/// Bits of the window-key filter that skips most prompt positions without a lookup.
const FILTER_BITS_LOG2: u32 = 16;

/// Bytes of `text` that `prompt` quotes: all of them when it quotes the text whole;
/// else its longest quoted prefix plus its longest quoted suffix, each counted from
/// [`QUOTED_PIECE_CHARS_MIN`] bytes and ending on a char boundary, at most the text's
/// length.
pub fn quoted_chars(prompt: &str, text: &str) -> usize {
    quoted_chars_total(prompt, &[text])
}

/// The sum of [`quoted_chars`] over `texts`, with one pass over `prompt`.
pub fn quoted_chars_total<T: AsRef<str>>(prompt: &str, texts: &[T]) -> usize {
    let texts: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
    let bytes: Vec<&[u8]> = texts.iter().map(|t| t.as_bytes()).collect();
    let longest = longest_quoted_ends(prompt.as_bytes(), &bytes);
    texts
        .iter()
        .zip(longest)
        .map(|(text, ends)| {
            if text.len() >= WINDOW_BYTES {
                counted(text, ends)
            } else if prompt.contains(text) {
                // Shorter than a window: quoted whole or not at all.
                text.len()
            } else {
                0
            }
        })
        .sum()
}

/// The longest prefix and the longest suffix of a text that the prompt contains, in
/// bytes; 0 for an end whose window the prompt does not contain (so any length below
/// [`WINDOW_BYTES`] reads as 0).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct QuotedEnds {
    pub head: usize,
    pub tail: usize,
}

/// What a text's quoted ends count: the text whole when its longest quoted prefix is
/// the whole text, else the quoted prefix and suffix as far as a bisection over the
/// lengths that are char boundaries at both ends finds them (see [`longest_quoted`]).
fn counted(text: &str, ends: QuotedEnds) -> usize {
    if ends.head == text.len() {
        return text.len();
    }
    let min = WINDOW_BYTES;
    let head_quoted = text.is_char_boundary(min) && ends.head >= min;
    let tail_quoted = text.is_char_boundary(text.len() - min) && ends.tail >= min;
    let piece = |k: usize| if k >= QUOTED_PIECE_CHARS_MIN { k } else { 0 };
    let prefix = if head_quoted {
        piece(longest_quoted(text, |k| k <= ends.head))
    } else {
        0
    };
    let suffix = if tail_quoted {
        piece(longest_quoted(text, |k| k <= ends.tail))
    } else {
        0
    };
    (prefix + suffix).min(text.len())
}

/// The largest `k` that `quoted` accepts, by bisection over the `k` on a char boundary
/// at both ends of `text` (`quoted` is monotone: a quoted piece's sub-pieces are quoted
/// too). Where those boundaries leave gaps it is the bisection's answer, which can be
/// below the largest such `k`: the count is defined by this search.
fn longest_quoted(text: &str, quoted: impl Fn(usize) -> bool) -> usize {
    // Both ends stay on char boundaries; 0 always is one.
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
        if quoted(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// Which end of a text a window is.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum End {
    Head,
    Tail,
}

/// The head and tail windows of the texts, sorted by key, and a filter of their keys.
struct WindowIndex {
    /// (key, text index, end), ascending.
    windows: Vec<(u64, usize, End)>,
    /// Bit `key >> (64 - FILTER_BITS_LOG2)` is set for every window's key.
    filter: Vec<u64>,
}

impl WindowIndex {
    fn new(texts: &[&[u8]]) -> Self {
        let mut windows = Vec::with_capacity(2 * texts.len());
        for (i, text) in texts.iter().enumerate() {
            if text.len() >= WINDOW_BYTES {
                windows.push((window_key(&text[..WINDOW_BYTES]), i, End::Head));
                let tail = &text[text.len() - WINDOW_BYTES..];
                windows.push((window_key(tail), i, End::Tail));
            }
        }
        windows.sort_unstable();
        let mut filter = vec![0u64; (1usize << FILTER_BITS_LOG2) / 64];
        for &(key, _, _) in &windows {
            let bit = filter_bit(key);
            filter[bit / 64] |= 1 << (bit % 64);
        }
        WindowIndex { windows, filter }
    }

    /// The windows whose key is `key` (none, mostly: the filter answers first).
    fn with_key(&self, key: u64) -> &[(u64, usize, End)] {
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
pub(crate) fn longest_quoted_ends(prompt: &[u8], texts: &[&[u8]]) -> Vec<QuotedEnds> {
    let mut ends = vec![QuotedEnds::default(); texts.len()];
    if prompt.len() < WINDOW_BYTES || texts.iter().all(|t| t.len() < WINDOW_BYTES) {
        return ends;
    }
    let index = WindowIndex::new(texts);
    for at in 0..=prompt.len() - WINDOW_BYTES {
        let window = &prompt[at..at + WINDOW_BYTES];
        for &(_, i, end) in index.with_key(window_key(window)) {
            let text = texts[i];
            let found = &mut ends[i];
            match end {
                End::Head if found.head < text.len() && text[..WINDOW_BYTES] == *window => {
                    found.head = found.head.max(common_prefix(text, &prompt[at..]));
                }
                End::Tail
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

/// Bytes `a` and `b` share at their starts.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Bytes `a` and `b` share at their ends.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
#[path = "quotes_tests.rs"]
mod tests;
