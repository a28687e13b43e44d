//! Whether a string is one JSON document, decided by the same parser and the same path
//! as `serde_json::from_str::<serde_json::Value>` (`deserialize_any` all the way down,
//! so the same syntax, number-range, string and recursion-depth rules apply) without
//! building the value: no map, no key or string is allocated.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// True when `text` parses as JSON exactly when `serde_json::Value` would accept it.
pub(crate) fn is_json(text: &str) -> bool {
    one_string_member(text.as_bytes()) || serde_json::from_str::<AnyJson>(text).is_ok()
}

/// The common shape of tool-call arguments, `{"<key>":"<value>"}` with no quote,
/// backslash or control character in key or value: valid JSON whatever the characters
/// (the text is UTF-8 already). False says nothing; the parser decides then.
fn one_string_member(bytes: &[u8]) -> bool {
    let Some(inner) = bytes
        .strip_prefix(b"{\"")
        .and_then(|b| b.strip_suffix(b"\"}"))
    else {
        return false;
    };
    let plain = |b: &u8| *b != b'"' && *b != b'\\' && *b >= 0x20;
    let Some(colon) = inner.windows(3).position(|w| w == b"\":\"") else {
        return false;
    };
    let (key, value) = (&inner[..colon], &inner[colon + 3..]);
    key.iter().all(plain) && value.iter().fold(true, |ok, b| ok & plain(b))
}

/// Any JSON value, read through `deserialize_any` and thrown away.
struct AnyJson;

impl<'de> Deserialize<'de> for AnyJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(AnyJsonVisitor)
    }
}

struct AnyJsonVisitor;

impl<'de> Visitor<'de> for AnyJsonVisitor {
    type Value = AnyJson;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<AnyJson, E> {
        Ok(AnyJson)
    }

    fn visit_i64<E>(self, _: i64) -> Result<AnyJson, E> {
        Ok(AnyJson)
    }

    fn visit_u64<E>(self, _: u64) -> Result<AnyJson, E> {
        Ok(AnyJson)
    }

    fn visit_f64<E>(self, _: f64) -> Result<AnyJson, E> {
        Ok(AnyJson)
    }

    fn visit_str<E>(self, _: &str) -> Result<AnyJson, E> {
        Ok(AnyJson)
    }

    fn visit_unit<E>(self) -> Result<AnyJson, E> {
        Ok(AnyJson)
    }

    fn visit_none<E>(self) -> Result<AnyJson, E> {
        Ok(AnyJson)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<AnyJson, D::Error> {
        AnyJson::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AnyJson, A::Error> {
        while seq.next_element::<AnyJson>()?.is_some() {}
        Ok(AnyJson)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AnyJson, A::Error> {
        // Keys are read as strings, as `Value` reads them; values as any JSON.
        while map.next_key::<KeyStr>()?.is_some() {
            map.next_value::<AnyJson>()?;
        }
        Ok(AnyJson)
    }
}

/// A map key, read through `deserialize_str` as `Value`'s key reader does.
struct KeyStr;

impl<'de> Deserialize<'de> for KeyStr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_str(AnyJsonVisitor)
            .map(|AnyJson| KeyStr)
    }
}

// Not `serde::de::IgnoredAny`: it skips numbers without their range check, so `1e999`
// would pass it while `Value` rejects it.

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path of `api_valid` (generated arguments skip the parser) equals the text
    /// path: every generated text parses, whatever the key, length and seed.
    #[test]
    fn generated_arguments_are_json() {
        use compactsim_model::Arguments;
        for key in [
            "command", "path", "query", "url", "text", "channel", "input", "k_9",
        ] {
            for chars in (0..64).chain([100, 401, 1_500]) {
                for seed in 0..8u64 {
                    let a = Arguments::generated(key, chars, seed.wrapping_mul(0x9E37));
                    assert!(a.json_by_construction());
                    assert!(is_json(a.as_str()), "{key} {chars} {seed}: {a}");
                    assert!(serde_json::from_str::<serde_json::Value>(&a).is_ok());
                }
            }
        }
    }

    #[test]
    fn agrees_with_value_on_valid_and_invalid_documents() {
        let deep_ok = format!("{}{}", "[".repeat(100), "]".repeat(100));
        let too_deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let cases = [
            r#"{"path":"a/b.rs"}"#,
            r#"{"k": [1, -2, 3.5e10, true, false, null, {"x": "y\u00e9\n"}]}"#,
            "  {}  ",
            "[]",
            "\"s\"",
            "12",
            "1e999",
            "-1e999",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{1: 2}",
            "{\"path\":\"a",
            "{\"a\":\"\u{1}\"}",
            "{\"a\":\"\\q\"}",
            "{} x",
            "",
            "nul",
            "01",
            "{\"a\":1}{\"b\":2}",
            &deep_ok,
            &too_deep,
        ];
        for text in cases {
            let value = serde_json::from_str::<serde_json::Value>(text).is_ok();
            assert_eq!(is_json(text), value, "{text:?}");
        }
        let shapes = [
            r#"{"path":"a/b.rs"}"#,
            r#"{"":""}"#,
            r#"{"k":"a":"b"}"#,
            r#"{"k":"a","x":"b"}"#,
            r#"{"k":"a\"}"#,
            "{\"k\":\"\u{7}\"}",
            r#"{"k" : "v"}"#,
            r#"{"k":""#,
            r#"{"}"#,
            r#"{"k":"é"}"#,
        ];
        for text in shapes {
            let value = serde_json::from_str::<serde_json::Value>(text).is_ok();
            assert_eq!(is_json(text), value, "{text:?}");
            if one_string_member(text.as_bytes()) {
                assert!(value, "the fast path accepted invalid {text:?}");
            }
        }
        assert!(one_string_member(br#"{"path":"a/b.rs"}"#));
        assert!(is_json(r#"{"path":"a/b.rs"}"#));
        assert!(!is_json("1e999"));
        assert!(!is_json(&too_deep));
    }
}
