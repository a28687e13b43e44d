//! What a summarize prompt quotes of the transcript's conversation texts, found in one
//! sampled pass over the prompt.
//!
//! A text counts as quoted whole, or by its longest quoted prefix plus its longest quoted
//! suffix (an adapter that cuts a long tool output keeps its head and tail), each counted
//! from [`QUOTED_PIECE_CHARS_MIN`] bytes. The prompt is read at every [`PROBE_STEP`]-th
//! byte only, a [`PROBE_BYTES`]-byte window at each, looked up in an index of the
//! windows at the first [`PROBE_STEP`] offsets of every text's head and tail: any quoted
//! piece of [`QUOTED_PIECE_CHARS_MIN`] bytes holds one probe whole, so every place a
//! text's head or tail is quoted is found, then compared and extended byte by byte to
//! the longest quoted prefix (suffix). A shorter text can only be quoted whole, and is
//! searched for directly. The cost is the prompt's length over [`PROBE_STEP`] plus the
//! compared bytes, not the prompt's length times the number of texts.
//!
//! [`quoted_chars`] counts exactly what a substring search of every prefix and suffix
//! counts (the property tests hold it to that search, including its bisection on char
//! boundaries, and the sampled pass to the pass over every window it replaces).

/// A cut piece shorter than this is a coincidence (a shared word), not a quote.
pub const QUOTED_PIECE_CHARS_MIN: usize = 24;
/// Bytes of a head or tail window: the shortest prefix or suffix that counts.
const WINDOW_BYTES: usize = QUOTED_PIECE_CHARS_MIN;

/// Bytes of `text` that `prompt` quotes: all of them when it quotes the text whole;
/// else its longest quoted prefix plus its longest quoted suffix, each counted from
/// [`QUOTED_PIECE_CHARS_MIN`] bytes and ending on a char boundary, at most the text's
/// length.
pub fn quoted_chars(prompt: &str, text: &str) -> usize {
    quoted_chars_total(prompt, &[text])
}

/// The sum of [`quoted_chars`] over `texts`, with one pass over `prompt`.
pub fn quoted_chars_total<T: AsRef<str>>(prompt: &str, texts: &[T]) -> usize {
    quoted_chars_each(prompt, texts).into_iter().sum()
}

/// [`quoted_chars`] of each of `texts`, in their order, with one pass over `prompt`.
pub fn quoted_chars_each<T: AsRef<str>>(prompt: &str, texts: &[T]) -> Vec<usize> {
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
        .collect()
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
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum End {
    Head,
    Tail,
}

/// One indexed window of a text: the [`PROBE_BYTES`] bytes at `offset` from the text's
/// start (head) or before `offset` bytes from its end (tail).
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    /// The next entry of the same slot ([`NO_ENTRY`]: none).
    next: u32,
    text: u32,
    end: End,
    offset: u8,
}

/// The end of a slot's chain.
const NO_ENTRY: u32 = u32::MAX;

/// The probe windows of every text's head and tail, by key: a chained hash table whose
/// slot array is at least [`SLOTS_PER_ENTRY_MIN`] times the entries (short chains).
struct ProbeIndex {
    entries: Vec<Entry>,
    /// The first entry of each slot.
    slots: Vec<u32>,
    /// `64 - log2(slots.len())`: a key's slot is its top bits.
    shift: u32,
}

/// Slots per indexed window, at least: most probes land in an empty slot.
const SLOTS_PER_ENTRY_MIN: usize = 4;

impl ProbeIndex {
    /// `None` when no text holds a window (every text shorter than [`WINDOW_BYTES`]),
    /// or when they are more than a `u32` counts.
    fn new(texts: &[&[u8]]) -> Option<Self> {
        let long = texts.iter().filter(|t| t.len() >= WINDOW_BYTES).count();
        let wanted = long.checked_mul(2 * PROBE_STEP)?;
        if wanted == 0 || texts.len() >= NO_ENTRY as usize || wanted >= NO_ENTRY as usize {
            return None;
        }
        let slots_len = (wanted * SLOTS_PER_ENTRY_MIN).next_power_of_two();
        let mut index = ProbeIndex {
            entries: Vec::with_capacity(wanted),
            slots: vec![NO_ENTRY; slots_len],
            shift: 64 - slots_len.trailing_zeros(),
        };
        for (i, text) in texts.iter().enumerate() {
            if text.len() < WINDOW_BYTES {
                continue;
            }
            for offset in 0..PROBE_STEP {
                let head = &text[offset..offset + PROBE_BYTES];
                index.insert(probe_key(head), i, End::Head, offset);
                let tail = &text[text.len() - PROBE_BYTES - offset..text.len() - offset];
                index.insert(probe_key(tail), i, End::Tail, offset);
            }
        }
        Some(index)
    }

    fn slot(&self, key: u64) -> usize {
        (key >> self.shift) as usize
    }

    fn insert(&mut self, key: u64, text: usize, end: End, offset: usize) {
        let slot = self.slot(key);
        let at = self.entries.len() as u32;
        self.entries.push(Entry {
            key,
            next: self.slots[slot],
            text: text as u32,
            end,
            offset: offset as u8,
        });
        self.slots[slot] = at;
    }

    /// The entries whose window has key `key` (and a few others of its slot, skipped
    /// by the caller's key check).
    fn chain(&self, key: u64) -> impl Iterator<Item = &Entry> {
        let mut at = self.slots[self.slot(key)];
        std::iter::from_fn(move || {
            let entry = self.entries.get(at as usize)?;
            at = entry.next;
            Some(entry)
        })
    }
}

/// Bytes of the windows the prompt is probed with.
const PROBE_BYTES: usize = 16;
/// The prompt is probed every this many bytes: a quoted piece of [`WINDOW_BYTES`] holds
/// a probe window whole at one of its first `PROBE_STEP` offsets, which is why each
/// text's head and tail are indexed at that many offsets.
const PROBE_STEP: usize = WINDOW_BYTES - PROBE_BYTES + 1;
const _: () = assert!(PROBE_BYTES == 16 && PROBE_STEP >= 1 && PROBE_STEP <= u8::MAX as usize);

/// For every text, its longest prefix and suffix that `prompt` contains when they are
/// at least [`WINDOW_BYTES`] long (0 otherwise).
///
/// The prompt is probed at every [`PROBE_STEP`]-th position only. Where a text's prefix
/// of at least [`WINDOW_BYTES`] starts at `p`, the one probe `q` in `p..p + PROBE_STEP`
/// reads the text's bytes `q - p..q - p + PROBE_BYTES`, which the index holds as a head
/// window at offset `q - p`; so every occurrence of every head (and, mirrored, of every
/// tail) is a candidate, checked byte for byte and extended as far as prompt and text
/// agree. The cost is the prompt's length over [`PROBE_STEP`] plus the compared bytes.
pub(crate) fn longest_quoted_ends(prompt: &[u8], texts: &[&[u8]]) -> Vec<QuotedEnds> {
    let mut ends = vec![QuotedEnds::default(); texts.len()];
    if prompt.len() < WINDOW_BYTES {
        return ends;
    }
    let Some(index) = ProbeIndex::new(texts) else {
        return ends;
    };
    for probe in (0..=prompt.len() - PROBE_BYTES).step_by(PROBE_STEP) {
        let key = probe_key(&prompt[probe..probe + PROBE_BYTES]);
        for entry in index.chain(key) {
            if entry.key != key {
                continue;
            }
            let i = entry.text as usize;
            let (text, found) = (texts[i], &mut ends[i]);
            if found.head == text.len() {
                continue;
            }
            // Where the text's head would start, or its tail end, in the prompt.
            let offset = entry.offset as usize;
            let longest = match entry.end {
                End::Head => probe
                    .checked_sub(offset)
                    .map_or(0, |start| common_prefix(text, &prompt[start..])),
                End::Tail => prompt
                    .get(..probe + PROBE_BYTES + offset)
                    .map_or(0, |before| common_suffix(text, before)),
            };
            if longest < WINDOW_BYTES {
                continue;
            }
            if longest == text.len() {
                // The whole text: its longest prefix and suffix both.
                *found = QuotedEnds {
                    head: longest,
                    tail: longest,
                };
            } else if entry.end == End::Head {
                found.head = found.head.max(longest);
            } else {
                found.tail = found.tail.max(longest);
            }
        }
    }
    ends
}

/// A hash of a probe window's 16 bytes (equal windows, equal keys; a match is then
/// compared byte for byte). Its top bits pick the slot.
fn probe_key(window: &[u8]) -> u64 {
    let word = |at: usize| {
        let bytes: [u8; 8] = window[at..at + 8].try_into().unwrap_or_default();
        u64::from_le_bytes(bytes)
    };
    let key = word(0).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ word(8);
    let key = (key ^ (key >> 29)).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    key ^ (key >> 32)
}

/// Bytes compared at once before the byte-by-byte end of a common run.
const COMPARE_BLOCK_BYTES: usize = 32;

/// Bytes `a` and `b` share at their starts.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut at = 0;
    while at + COMPARE_BLOCK_BYTES <= n
        && a[at..at + COMPARE_BLOCK_BYTES] == b[at..at + COMPARE_BLOCK_BYTES]
    {
        at += COMPARE_BLOCK_BYTES;
    }
    at + a[at..n]
        .iter()
        .zip(&b[at..n])
        .take_while(|(x, y)| x == y)
        .count()
}

/// Bytes `a` and `b` share at their ends.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut shared = 0;
    while shared + COMPARE_BLOCK_BYTES <= n
        && a[n - shared - COMPARE_BLOCK_BYTES..n - shared]
            == b[n - shared - COMPARE_BLOCK_BYTES..n - shared]
    {
        shared += COMPARE_BLOCK_BYTES;
    }
    shared
        + a[..n - shared]
            .iter()
            .rev()
            .zip(b[..n - shared].iter().rev())
            .take_while(|(x, y)| x == y)
            .count()
}

#[cfg(test)]
#[path = "quotes_tests.rs"]
mod tests;
