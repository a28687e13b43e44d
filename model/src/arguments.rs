//! Tool-call arguments: the JSON object *string* a provider validates strictly. Generated
//! arguments are kept as their recipe (key, length, seed) and their bytes are written only
//! when something reads them, as message content is (see `content`); the length is known
//! without writing them. Every reader sees the same bytes the eager generator wrote.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

/// SplitMix64 finalizer: a bijective mix of 64 bits (the simulator's seed mixer).
pub const fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Characters a generated value may use: no quote, backslash or control character, so
/// the result is always valid JSON.
const VALUE_ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789_-./ ";

/// Characters of `{"` `":"` and `"}` around the key and the value.
const WRAPPER_CHARS: usize = 7;

/// How generated arguments are written: `{"<key>":"<value>"}` of `chars` characters (at
/// least the empty value's length), the value drawn from `seed`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Recipe {
    key: &'static str,
    chars: u32,
    seed: u64,
}

impl Recipe {
    fn len(&self) -> usize {
        (self.chars as usize).max(self.key.len() + WRAPPER_CHARS)
    }

    fn write(&self) -> String {
        let mut out: Vec<u8> = Vec::with_capacity(self.len());
        out.extend_from_slice(b"{\"");
        out.extend_from_slice(self.key.as_bytes());
        out.extend_from_slice(b"\":\"");
        let value_chars = self.len() - WRAPPER_CHARS - self.key.len();
        let mut state = self.seed;
        out.extend((0..value_chars).map(|_| {
            state = mix64(state);
            VALUE_ALPHABET[(state % VALUE_ALPHABET.len() as u64) as usize]
        }));
        out.extend_from_slice(b"\"}");
        debug_assert_eq!(out.len(), self.len());
        String::from_utf8(out).expect("the alphabet is ASCII")
    }
}

/// A call's arguments string: plain text, or a recipe written on first read.
#[derive(Clone, Default)]
pub struct Arguments {
    recipe: Option<Recipe>,
    text: OnceLock<String>,
}

impl Arguments {
    /// Generated arguments `{"<key>":"<value>"}` of exactly `chars` characters when
    /// `chars` is at least the empty value's length (else that length), the value drawn
    /// from `seed`. The key must be a plain name (ASCII letters, digits, `_`).
    pub fn generated(key: &'static str, chars: u32, seed: u64) -> Self {
        assert!(
            key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
            "an argument key must be a plain name: {key:?}"
        );
        Arguments {
            recipe: Some(Recipe { key, chars, seed }),
            text: OnceLock::new(),
        }
    }

    /// The text, written now if it was not yet.
    pub fn as_str(&self) -> &str {
        match self.recipe {
            Some(r) => self.text.get_or_init(|| r.write()),
            None => self.text.get().map_or("", String::as_str),
        }
    }

    /// Length in bytes, without writing generated text.
    pub fn len(&self) -> usize {
        match self.recipe {
            Some(r) => r.len(),
            None => self.as_str().len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of the text's first `chars` characters (all of it when shorter), without
    /// writing generated text: it is ASCII, one byte a character.
    pub fn prefix_len(&self, chars: usize) -> usize {
        match self.recipe {
            Some(r) => r.len().min(chars),
            None => {
                let text = self.as_str();
                text.char_indices()
                    .nth(chars)
                    .map_or(text.len(), |(at, _)| at)
            }
        }
    }

    /// Valid JSON by construction: generated arguments are a one-member object whose
    /// key and value hold no quote, backslash or control character (proven against the
    /// text by the invariants' `generated_arguments_are_json`). Plain text: unknown.
    pub fn json_by_construction(&self) -> bool {
        self.recipe.is_some()
    }
}

impl From<String> for Arguments {
    fn from(text: String) -> Self {
        Arguments {
            recipe: None,
            text: OnceLock::from(text),
        }
    }
}

impl From<&str> for Arguments {
    fn from(text: &str) -> Self {
        Arguments::from(text.to_string())
    }
}

impl Deref for Arguments {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

/// Equal text. Equal recipes write equal text, so they compare without writing it.
impl PartialEq for Arguments {
    fn eq(&self, other: &Self) -> bool {
        if let (Some(a), Some(b)) = (self.recipe, other.recipe) {
            if a == b {
                return true;
            }
        }
        self.len() == other.len() && self.as_str() == other.as_str()
    }
}

impl Eq for Arguments {}

impl PartialEq<str> for Arguments {
    fn eq(&self, other: &str) -> bool {
        self.len() == other.len() && self.as_str() == other
    }
}

impl PartialEq<&str> for Arguments {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl PartialEq<String> for Arguments {
    fn eq(&self, other: &String) -> bool {
        *self == *other.as_str()
    }
}

impl PartialEq<Arguments> for String {
    fn eq(&self, other: &Arguments) -> bool {
        *other == *self.as_str()
    }
}

/// Shown as the text (as the plain string it replaces was).
impl fmt::Debug for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Serialized as the JSON string of its text.
impl Serialize for Arguments {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Arguments {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Arguments::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_text_has_the_recipe_length_and_shape() {
        for key in ["command", "path", "q"] {
            for chars in [0, 13, 14, 15, 57, 400, 1_500] {
                for seed in [0, 1, 77, u64::MAX] {
                    let a = Arguments::generated(key, chars, seed);
                    let len = a.len();
                    let text = a.as_str().to_string();
                    assert_eq!(text.len(), len, "{key} {chars}");
                    assert_eq!(len, (chars as usize).max(key.len() + 7));
                    assert!(text.starts_with(&format!("{{\"{key}\":\"")) && text.ends_with("\"}"));
                    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
                    assert!(v.get(key).is_some());
                }
            }
        }
        assert_eq!(Arguments::generated("command", 0, 1), "{\"command\":\"\"}");
    }

    #[test]
    fn generated_and_plain_text_compare_serialize_and_debug_as_text() {
        let g = Arguments::generated("path", 60, 9);
        let plain = Arguments::from(g.as_str());
        let fresh = Arguments::generated("path", 60, 9);
        assert_eq!(g, plain);
        assert_eq!(plain, fresh);
        assert_eq!(fresh, g);
        assert_ne!(g, Arguments::generated("path", 60, 10));
        assert_ne!(g, Arguments::generated("path", 61, 9));
        // Different recipes that write the same text (an empty value) are equal.
        assert_eq!(
            Arguments::generated("path", 0, 1),
            Arguments::generated("path", 3, 2)
        );
        assert_eq!(
            serde_json::to_string(&g).unwrap(),
            serde_json::to_string(g.as_str()).unwrap()
        );
        assert_eq!(format!("{g:?}"), format!("{:?}", g.as_str()));
        let back: Arguments = serde_json::from_str(&serde_json::to_string(&g).unwrap()).unwrap();
        assert_eq!(back, g);
        assert_eq!(Arguments::default().as_str(), "");
        assert!(Arguments::default().is_empty() && !g.is_empty());
    }

    #[test]
    fn prefix_len_counts_what_the_written_text_counts() {
        let plain_prefix = |text: &str, chars: usize| {
            text.char_indices()
                .nth(chars)
                .map_or(text.len(), |(at, _)| at)
        };
        for (key, len) in [("command", 0), ("path", 60), ("q", 81), ("q", 1_500)] {
            let a = Arguments::generated(key, len, 5);
            for chars in [0, 1, 14, 80, 81, 2_000] {
                let written = Arguments::from(a.as_str());
                assert_eq!(a.prefix_len(chars), plain_prefix(a.as_str(), chars));
                assert_eq!(written.prefix_len(chars), plain_prefix(a.as_str(), chars));
            }
        }
        let fresh = Arguments::generated("path", 300, 9);
        assert_eq!(fresh.prefix_len(80), 80);
        assert!(fresh.text.get().is_none(), "measured without writing");
        let wide = Arguments::from("é€x");
        assert_eq!(wide.prefix_len(2), "é€".len());
        assert_eq!(wide.prefix_len(9), wide.len());
    }

    #[test]
    #[should_panic(expected = "plain name")]
    fn a_key_that_would_break_the_json_is_refused() {
        let _ = Arguments::generated("a\"b", 20, 1);
    }
}
