//! A fast hasher for the text book's maps keyed by whole texts: a map keyed by a text
//! hashes every byte of it on each lookup and again on each growth, which the default
//! (SipHash) does several times slower (the maps keyed by row ids, seeds and addresses
//! use it too: they are looked up for every segment of every request). The maps are never iterated, so the hash
//! changes speed only, never what the harness sends or reports; no key comes from an
//! adversary that could flood a bucket (the adapter under test is not one: it is run,
//! and its texts are at most a transcript's).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map with [`TextHasher`].
pub type TextMap<K, V> = HashMap<K, V, BuildHasherDefault<TextHasher>>;

/// Word-at-a-time multiply-rotate hashing (the FxHash scheme) with a final mix, so the
/// low bits that pick a bucket depend on every word.
#[derive(Default, Clone, Copy)]
pub struct TextHasher {
    state: u64,
}

const MUL: u64 = 0x51_7C_C1_B7_27_22_0A_95;

impl TextHasher {
    fn add(&mut self, word: u64) {
        self.state = (self.state.rotate_left(5) ^ word).wrapping_mul(MUL);
    }
}

impl Hasher for TextHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.add(u64::from_le_bytes(w.try_into().unwrap_or_default()));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(n as u64);
    }

    fn write_u32(&mut self, n: u32) {
        self.add(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        let h = self.state;
        (h ^ (h >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ (h >> 32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn texts_that_differ_anywhere_are_told_apart() {
        let mut map: TextMap<Arc<str>, usize> = TextMap::default();
        let texts: Vec<String> = (0..2000)
            .map(|i| format!("{}{i}", "x".repeat(i % 37)))
            .collect();
        for (i, t) in texts.iter().enumerate() {
            map.insert(Arc::from(t.as_str()), i);
        }
        for (i, t) in texts.iter().enumerate() {
            assert_eq!(map.get(t.as_str()), Some(&i));
        }
        assert_eq!(map.get("not a key"), None);
    }
}
