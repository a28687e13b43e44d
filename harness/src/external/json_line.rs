//! The bytes of a protocol 2 pass request, written by hand: the rows' texts are most of
//! a request, and serde_json escapes a string a byte at a time. Here a string is scanned
//! sixteen bytes a step for the bytes JSON must escape (`"`, `\`, controls below 0x20),
//! and everything is written exactly as `serde_json::to_string` writes it (same keys,
//! order, skipped fields and escapes: the tests compare the two on every kind of row),
//! so a request's bytes do not depend on which writer made them.

use super::wire::{ChatMessage, ChatToolCall};
use serde::Serialize;

/// Writes `value` as serde_json does (small values: numbers, flags, tool calls, config).
pub fn push_serde<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), String> {
    serde_json::to_writer(&mut *out, value).map_err(|e| e.to_string())
}

/// Writes `s` as a JSON string, quoted and escaped as serde_json escapes it: `\"`, `\\`,
/// `\b \f \n \r \t`, other controls as `\u00XX` (lowercase hex); everything else as is.
pub fn push_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    loop {
        let at = next_escape(bytes, start);
        out.extend_from_slice(&bytes[start..at]);
        let Some(&b) = bytes.get(at) else {
            break;
        };
        push_escape(out, b, ESCAPE[b as usize]);
        start = at + 1;
    }
    out.push(b'"');
}

/// The first byte at or after `from` that needs an escape (`bytes.len()`: none), sixteen
/// bytes a step (SSE2, which every x86-64 CPU has).
#[cfg(target_arch = "x86_64")]
fn next_escape(bytes: &[u8], mut from: usize) -> usize {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    while let Some(chunk) = bytes.get(from..from + 16) {
        // SAFETY: `chunk` is 16 readable bytes (the load is unaligned); SSE2 is part of
        // the x86-64 baseline every build targets.
        let mask = unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast());
            let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            // A byte below 0x20 (unsigned) is its own minimum with 0x1f.
            let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
        };
        if mask != 0 {
            return from + mask.trailing_zeros() as usize;
        }
        from += 16;
    }
    next_escape_bytewise(bytes, from)
}

/// [`next_escape`] eight bytes a step, on other CPUs.
#[cfg(not(target_arch = "x86_64"))]
fn next_escape(bytes: &[u8], mut from: usize) -> usize {
    while let Some(chunk) = bytes.get(from..from + 8) {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        if needs_escape(word) {
            break;
        }
        from += 8;
    }
    next_escape_bytewise(bytes, from)
}

fn next_escape_bytewise(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| ESCAPE[b as usize] != 0)
        .map_or(bytes.len(), |i| from + i)
}

#[cfg(not(target_arch = "x86_64"))]
const LOW_BITS: u64 = 0x0101_0101_0101_0101;
#[cfg(not(target_arch = "x86_64"))]
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// Whether one of the eight bytes of `w` may need an escape: it is below 0x20, or `"`,
/// or `\`. Never false for such a byte (a true for another byte only costs the bytewise
/// look at this chunk).
#[cfg(not(target_arch = "x86_64"))]
fn needs_escape(w: u64) -> bool {
    let has_zero = |v: u64| v.wrapping_sub(LOW_BITS) & !v & HIGH_BITS;
    let below_space = w.wrapping_sub(LOW_BITS * 0x20) & !w & HIGH_BITS;
    (below_space
        | has_zero(w ^ (LOW_BITS * u64::from(b'"')))
        | has_zero(w ^ (LOW_BITS * u64::from(b'\\'))))
        != 0
}

/// serde_json's escape table: 0 for a byte written as is, else the letter of its escape
/// (`u` for `\u00XX`).
const ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = b'u';
        b += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

fn push_escape(out: &mut Vec<u8>, byte: u8, escape: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    if escape == b'u' {
        out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[(byte >> 4) as usize],
            HEX[(byte & 0xf) as usize],
        ]);
    } else {
        out.extend_from_slice(&[b'\\', escape]);
    }
}

/// Writes a row as serde_json writes a [`ChatMessage`] (its fields in order, the absent
/// ones skipped as its serde attributes say).
pub fn push_row(out: &mut Vec<u8>, row: &ChatMessage) -> Result<(), String> {
    out.extend_from_slice(b"{\"role\":");
    push_str(out, &row.role);
    out.extend_from_slice(b",\"content\":");
    match &row.content {
        Some(text) => push_str(out, text),
        None => out.extend_from_slice(b"null"),
    }
    if !row.tool_calls.is_empty() {
        out.extend_from_slice(b",\"tool_calls\":");
        push_tool_calls(out, &row.tool_calls);
    }
    if let Some(id) = &row.tool_call_id {
        out.extend_from_slice(b",\"tool_call_id\":");
        push_str(out, id);
    }
    let flags = [
        ("_compressed_summary", row.compressed_summary),
        ("_micro_compact_marker", row.micro_compact_marker),
        ("_compressed_summary_has_user_turn", row.has_user_turn),
        ("_db_persisted", row.db_persisted),
    ];
    for (key, flag) in flags {
        if let Some(f) = flag {
            out.extend_from_slice(b",\"");
            out.extend_from_slice(key.as_bytes());
            out.extend_from_slice(if f { b"\":true" } else { b"\":false" });
        }
    }
    if let Some(id) = row.compactsim_id {
        out.extend_from_slice(b",\"_compactsim_id\":");
        push_u32(out, id);
    }
    out.push(b'}');
    Ok(())
}

/// Writes a row's `tool_calls` as serde_json writes the list (every key, in
/// [`ChatToolCall`]'s field order).
pub fn push_tool_calls(out: &mut Vec<u8>, calls: &[ChatToolCall]) {
    out.push(b'[');
    for (k, c) in calls.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"id\":");
        push_str(out, &c.id);
        out.extend_from_slice(b",\"type\":");
        push_str(out, &c.kind);
        out.extend_from_slice(b",\"function\":{\"name\":");
        push_str(out, &c.function.name);
        out.extend_from_slice(b",\"arguments\":");
        push_str(out, &c.function.arguments);
        out.extend_from_slice(b"}}");
    }
    out.push(b']');
}

/// Writes a row's digest header (`delta.rs`): the compact JSON array `[role, content is
/// null, tool_calls, tool_call_id, the four flags, _compactsim_id]` as serde_json writes
/// that tuple (absent values `null`).
pub fn push_digest_header(out: &mut Vec<u8>, row: &ChatMessage) {
    out.push(b'[');
    push_str(out, &row.role);
    out.extend_from_slice(if row.content.is_none() {
        b",true,"
    } else {
        b",false,"
    });
    push_tool_calls(out, &row.tool_calls);
    out.push(b',');
    match &row.tool_call_id {
        Some(id) => push_str(out, id),
        None => out.extend_from_slice(b"null"),
    }
    let flags = [
        row.compressed_summary,
        row.micro_compact_marker,
        row.has_user_turn,
        row.db_persisted,
    ];
    for flag in flags {
        out.extend_from_slice(match flag {
            Some(true) => b",true",
            Some(false) => b",false",
            None => b",null",
        });
    }
    out.push(b',');
    match row.compactsim_id {
        Some(id) => push_u32(out, id),
        None => out.extend_from_slice(b"null"),
    }
    out.push(b']');
}

/// Writes `n` in decimal.
fn push_u32(out: &mut Vec<u8>, n: u32) {
    out.extend_from_slice(compactsim_model::ids::decimal(n, &mut [0; 10]).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::super::wire::ChatFunction;
    use super::*;
    use proptest::prelude::*;

    fn written(s: &str) -> String {
        let mut out = Vec::new();
        push_str(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_byte_that_needs_an_escape_is_escaped_as_serde_json_does() {
        // Each ASCII byte alone, and at every position of a 17-byte run (both sides of
        // the eight-byte steps).
        for b in 0u8..0x80 {
            let c = char::from(b);
            assert_eq!(
                written(&c.to_string()),
                serde_json::to_string(&c.to_string()).unwrap()
            );
            for at in 0..17 {
                let mut s: String = "abcdefghijklmnopq".into();
                s.replace_range(at..at + 1, &c.to_string());
                assert_eq!(
                    written(&s),
                    serde_json::to_string(&s).unwrap(),
                    "{b:#x} at {at}"
                );
            }
        }
        // Each ASCII byte at every position of a 40-byte run (the 16-byte steps and the
        // bytewise tail), beside a non-ASCII character.
        for b in 0u8..0x80 {
            for at in 0..39 {
                let mut s: String = "é0123456789abcdefghijklmnopqrstuvwxyzABC".into();
                s.replace_range(at + 2..at + 3, &char::from(b).to_string());
                assert_eq!(written(&s), serde_json::to_string(&s).unwrap(), "{b:#x}");
            }
        }
        let s = "é\u{7f}\u{1}ü \"x\\\" \u{2028} 𝄞\n\n";
        assert_eq!(written(s), serde_json::to_string(s).unwrap());
    }

    proptest! {
        #[test]
        fn any_string_is_written_as_serde_json_writes_it(s in any::<String>(), t in "[ -~\\n\\t\"\\\\\u{0}-\u{1f}é]{0,64}") {
            prop_assert_eq!(written(&s), serde_json::to_string(&s).unwrap());
            prop_assert_eq!(written(&t), serde_json::to_string(&t).unwrap());
        }

        #[test]
        fn any_row_is_written_as_serde_json_writes_it(
            role in "[a-z]{1,9}",
            content in proptest::option::of("[ -~\\n\"\\\\\u{1}é]{0,40}"),
            calls in 0usize..3,
            call_id in proptest::option::of("[a-z_0-9\"]{1,8}"),
            flags in proptest::array::uniform4(proptest::option::of(any::<bool>())),
            id in proptest::option::of(any::<u32>()),
        ) {
            let row = ChatMessage {
                role,
                content: content.map(std::sync::Arc::from),
                tool_calls: (0..calls)
                    .map(|k| ChatToolCall {
                        id: format!("call_{k}"),
                        kind: "function".into(),
                        function: ChatFunction {
                            name: "term\"inal\u{1}".into(),
                            arguments: format!("{{\"n\":{k},\"s\":\"a\\nb\"}}"),
                        },
                    })
                    .collect(),
                tool_call_id: call_id,
                compressed_summary: flags[0],
                micro_compact_marker: flags[1],
                has_user_turn: flags[2],
                db_persisted: flags[3],
                compactsim_id: id,
            };
            let mut out = Vec::new();
            push_row(&mut out, &row).unwrap();
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&row).unwrap());
            let header = (
                &row.role,
                row.content.is_none(),
                &row.tool_calls,
                &row.tool_call_id,
                row.compressed_summary,
                row.micro_compact_marker,
                row.has_user_turn,
                row.db_persisted,
                row.compactsim_id,
            );
            let mut out = Vec::new();
            push_digest_header(&mut out, &row);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&header).unwrap());
        }
    }
}
