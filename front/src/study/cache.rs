//! The provider's prompt cache: a request reads from the cache the longest prefix of
//! rows it shares with the previous request; everything from the first rewritten or
//! removed row on is billed as a cache write. Rows are compared by id and size, which
//! every rewrite in the simulator changes (a splice gives new ids, a merge or an
//! in-place marker rewrite changes the size). No expiry: the study's turns are minutes
//! apart, inside a typical cache lifetime.

use compactsim_model::{Message, MsgId};
use std::collections::BTreeSet;

/// What the provider keeps of one row.
type Fingerprint = (MsgId, u32);

fn fingerprint(m: &Message) -> Fingerprint {
    (m.id, m.content.chars())
}

/// The billing of one request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Billing {
    pub cached_tokens: u64,
    pub uncached_tokens: u64,
    /// Part of the previous prompt was rewritten or removed.
    pub broke: bool,
    /// Uncached tokens of rows that were in the previous prompt: paid again because of
    /// the break.
    pub recached_tokens: u64,
}

/// The cache of one session.
#[derive(Clone, Debug, Default)]
pub struct PromptCache {
    previous: Vec<Fingerprint>,
}

impl PromptCache {
    /// Bills a request whose prompt is `prompt`, and caches it.
    pub fn request(&mut self, prompt: &[Message]) -> Billing {
        let now: Vec<Fingerprint> = prompt.iter().map(fingerprint).collect();
        let shared = self
            .previous
            .iter()
            .zip(&now)
            .take_while(|(a, b)| a == b)
            .count();
        let mut bill = Billing {
            broke: shared < self.previous.len(),
            ..Billing::default()
        };
        let seen: BTreeSet<Fingerprint> = self.previous[shared..].iter().copied().collect();
        for (i, m) in prompt.iter().enumerate() {
            let tokens = m.tokens().rough as u64;
            if i < shared {
                bill.cached_tokens += tokens;
            } else {
                bill.uncached_tokens += tokens;
                if seen.contains(&now[i]) {
                    bill.recached_tokens += tokens;
                }
            }
        }
        self.previous = now;
        bill
    }

    /// A fresh session: nothing is cached.
    pub fn clear(&mut self) {
        self.previous.clear();
    }
}
