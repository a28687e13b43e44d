//! 64-bit seeds in JSON as decimal strings: a JSON number above 2^53 is rounded by the
//! readers that hold numbers as doubles (JavaScript, jq 1.6), so `"case_seed":
//! "13759018741930689842"` survives every reader and `13759018741930689842` does not.
//! Reading accepts a string or a number (a hand-written file may hold either).

use serde::de::{self, Visitor};
use serde::{Deserializer, Serializer};
use std::fmt;

/// `#[serde(with = "crate::seed_text")]` on a `u64` seed.
pub fn serialize<S: Serializer>(seed: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(seed)
}

/// A seed from a decimal string or a non-negative integer.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    d.deserialize_any(SeedVisitor)
}

struct SeedVisitor;

impl Visitor<'_> for SeedVisitor {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a 64-bit seed as a decimal string (or a non-negative integer)")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        Ok(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        u64::try_from(v).map_err(|_| E::custom(format!("a seed is not negative, got {v}")))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
        v.parse()
            .map_err(|_| E::custom(format!("a seed is a decimal u64, got {v:?}")))
    }
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct S {
        #[serde(with = "super")]
        seed: u64,
    }

    #[test]
    fn a_seed_above_2_pow_53_is_a_string_and_reads_back_from_either_form() {
        let s = S { seed: u64::MAX };
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(text, "{\"seed\":\"18446744073709551615\"}");
        assert_eq!(serde_json::from_str::<S>(&text).unwrap(), s);
        let number: S = serde_json::from_str("{\"seed\":42}").unwrap();
        assert_eq!(number.seed, 42);
        assert!(serde_json::from_str::<S>("{\"seed\":\"-1\"}").is_err());
        assert!(serde_json::from_str::<S>("{\"seed\":-1}").is_err());
    }
}
