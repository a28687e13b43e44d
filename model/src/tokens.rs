//! Token accounting. Two counts per message, computed once at creation:
//! - `rough`: the Hermes estimate, `ceil(chars / 4)` (hermes-domain §1.2, era B);
//! - `real`: what a BPE tokenizer would report. chars/4 undercounts real tokens by about
//!   15 % on prose, 30 % on code and 35 % on JSON (STACK.md), and the fake provider
//!   reports this count, so rough and real disagree the way they do in production.

use serde::{Deserialize, Serialize};

/// Per-message overhead the compressor's tail walk adds to the rough count (§1.2).
pub const TAIL_WALK_OVERHEAD_TOKENS: u32 = 10;
/// Per-message chat-format overhead a real tokenizer charges (role, separators).
pub const REAL_OVERHEAD_TOKENS: u32 = 4;

/// What a run of text is, for the purpose of tokenizing it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContentKind {
    Prose,
    Code,
    Json,
    /// Summary text written by a summarizer (prose-like).
    Summary,
    /// Fixed wrapper text around a summary (prefix, headings, end marker).
    Scaffold,
}

impl ContentKind {
    /// Real tokens per 1,000 characters.
    pub const fn real_tokens_per_kilochar(self) -> u64 {
        match self {
            ContentKind::Prose | ContentKind::Summary | ContentKind::Scaffold => 288, // 1.15 / 4
            ContentKind::Code => 325,                                                 // 1.30 / 4
            ContentKind::Json => 338,                                                 // 1.35 / 4
        }
    }
}

/// The Hermes rough estimate for `chars` characters: `ceil(chars / 4)`.
pub const fn rough_tokens(chars: u32) -> u32 {
    chars.div_ceil(4)
}

/// The "real" token count of `chars` characters of `kind`.
pub const fn real_tokens(kind: ContentKind, chars: u32) -> u32 {
    ((chars as u64 * kind.real_tokens_per_kilochar()).div_ceil(1000)) as u32
}

/// Characters that make `tokens` rough tokens (the inverse of [`rough_tokens`]).
pub const fn chars_for_rough_tokens(tokens: u32) -> u32 {
    tokens.saturating_mul(4)
}

/// Cached token counts of one message.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct Tokens {
    pub rough: u32,
    pub real: u32,
}

impl Tokens {
    /// Tokens as the compressor's tail walk counts them.
    pub const fn tail_walk(self) -> u32 {
        self.rough + TAIL_WALK_OVERHEAD_TOKENS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rough_is_chars_over_four_rounded_up() {
        assert_eq!(rough_tokens(0), 0);
        assert_eq!(rough_tokens(1), 1);
        assert_eq!(rough_tokens(4), 1);
        assert_eq!(rough_tokens(5), 2);
        assert_eq!(rough_tokens(4000), 1000);
    }

    #[test]
    fn real_undercount_is_larger_for_json_and_code_than_prose() {
        let prose = real_tokens(ContentKind::Prose, 4000);
        let code = real_tokens(ContentKind::Code, 4000);
        let json = real_tokens(ContentKind::Json, 4000);
        assert_eq!(prose, 1152);
        assert!(prose < code && code < json, "{prose} {code} {json}");
        assert!(json > rough_tokens(4000) * 13 / 10);
    }
}
