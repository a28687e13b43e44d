//! Reading an adapter's line as an [`AdapterMsg`] without serde's buffering of a tagged
//! enum: serde reads an internally tagged enum (`"type"`) by first copying the whole
//! message, every row's text included, into a tree of its own, then reading the variant
//! from that tree. A `result` or `summarize` line whose first key is its `"type"` is
//! read straight into the variant's fields instead (the same fields, defaults and
//! refusal of unknown keys as [`AdapterMsg`]'s). Any line this does not read (another
//! type, `"type"` not first, a bad message) is read by serde's enum as before, so what
//! a bad line is told is unchanged.

use super::delta::Edit;
use super::wire::{AdapterMsg, ChatMessage, Purpose};
use serde::de::IgnoredAny;
use serde::Deserialize;
use std::collections::BTreeMap;

/// [`AdapterMsg::Result`]'s fields, and its `"type"` key.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultLine {
    #[serde(rename = "type")]
    _kind: IgnoredAny,
    id: u64,
    #[serde(default)]
    transcript: Option<Vec<ChatMessage>>,
    #[serde(default)]
    edits: Option<Vec<Edit>>,
    #[serde(default)]
    digest: Option<String>,
    #[serde(default)]
    value: Option<serde_json::Value>,
    #[serde(default)]
    labels: BTreeMap<String, serde_json::Value>,
}

/// [`AdapterMsg::Summarize`]'s fields, and its `"type"` key.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SummarizeLine {
    #[serde(rename = "type")]
    _kind: IgnoredAny,
    id: u64,
    call: u32,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    messages: Option<Vec<ChatMessage>>,
    #[serde(default)]
    max_tokens: Option<u32>,
    #[serde(default)]
    purpose: Option<Purpose>,
}

/// `line` as an adapter message: what `serde_json::from_str::<AdapterMsg>` reads, the
/// common messages without the enum's copy.
pub fn adapter_msg(line: &str) -> serde_json::Result<AdapterMsg> {
    match leading_type(line) {
        Some("result") => {
            if let Ok(r) = serde_json::from_str::<ResultLine>(line) {
                return Ok(AdapterMsg::Result {
                    id: r.id,
                    transcript: r.transcript,
                    edits: r.edits,
                    digest: r.digest,
                    value: r.value,
                    labels: r.labels,
                });
            }
        }
        Some("summarize") => {
            if let Ok(s) = serde_json::from_str::<SummarizeLine>(line) {
                return Ok(AdapterMsg::Summarize {
                    id: s.id,
                    call: s.call,
                    prompt: s.prompt,
                    messages: s.messages,
                    max_tokens: s.max_tokens,
                    purpose: s.purpose,
                });
            }
        }
        _ => {}
    }
    serde_json::from_str::<AdapterMsg>(line)
}

/// The value of the line's first key when that key is `"type"` and its value a string
/// without escapes (`None` otherwise: the enum reads the line).
fn leading_type(line: &str) -> Option<&str> {
    const JSON_SPACE: &[char] = &[' ', '\t', '\n', '\r'];
    let rest = line.trim_start_matches(JSON_SPACE).strip_prefix('{')?;
    let rest = rest
        .trim_start_matches(JSON_SPACE)
        .strip_prefix("\"type\"")?;
    let rest = rest.trim_start_matches(JSON_SPACE).strip_prefix(':')?;
    let rest = rest.trim_start_matches(JSON_SPACE).strip_prefix('"')?;
    let end = rest.find(['"', '\\'])?;
    (rest.as_bytes()[end] == b'"').then(|| &rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line reads as the enum reads it: the same message, or an error where the
    /// enum errs (the fast path never accepts a line the enum refuses).
    #[test]
    fn a_line_reads_as_the_tagged_enum_reads_it() {
        let lines = [
            r#"{"type": "result", "id": 3, "transcript": [{"role": "user", "content": "a\n\"b\"", "_compactsim_id": 1}], "labels": {"x": 1}}"#,
            r#"{"type":"result","id":4,"edits":[[0,2],{"role":"tool","content":"t","tool_call_id":"call_1"}],"digest":"00ff"}"#,
            r#"{"type": "result", "id": 5, "value": {"n": 1.5}}"#,
            r#"{"type": "result", "id": 5}"#,
            r#"{"type": "summarize", "id": 6, "call": 0, "prompt": "p", "max_tokens": 300}"#,
            r#"{"type": "summarize", "id": 6, "call": 1, "messages": [{"role": "user", "content": "m"}]}"#,
            r#"{"type": "summarize", "id": 6, "call": 2, "prompt": "p", "purpose": "condense"}"#,
            r#"{"type": "summarize", "id": 6, "call": 3, "prompt": "p", "purpose": "shrink"}"#,
            r#" { "type" : "error", "id": 7, "message": "boom", "code": "desync"}"#,
            r#"{"id": 8, "type": "result"}"#,
            // Refused alike: unknown key, duplicate type, wrong field type, missing id.
            r#"{"type": "result", "id": 9, "extra": 1}"#,
            r#"{"type": "result", "id": 9, "type": "result"}"#,
            r#"{"type": "result", "id": "9"}"#,
            r#"{"type": "summarize", "call": 0}"#,
            r#"{"type": "res\u0075lt", "id": 10}"#,
            r#"{"type": "result", "id": 11"#,
            r#"{"type": "nonsense", "id": 12}"#,
        ];
        for line in lines {
            let want = serde_json::from_str::<AdapterMsg>(line);
            let got = adapter_msg(line);
            match (&want, &got) {
                (Ok(w), Ok(g)) => assert_eq!(w, g, "{line}"),
                (Err(w), Err(g)) => assert_eq!(w.to_string(), g.to_string(), "{line}"),
                _ => panic!("{line}: enum {want:?}, fast {got:?}"),
            }
        }
        assert_eq!(leading_type(r#"{"type": "result"}"#), Some("result"));
        assert_eq!(leading_type(r#"{"type": "re\"s"}"#), None);
        assert_eq!(leading_type(r#"{"id": 1, "type": "result"}"#), None);
    }
}
