//! An adapter's line read into an [`AdapterMsg`] without a buffered copy of it.
//!
//! `AdapterMsg` is tagged by its `type` field, which may come anywhere in the object,
//! so serde's derived reader first copies the whole message into a tree of its own
//! (every row's text once more) and then reads the variant from that tree; protocol 2's
//! `edits` items (an untagged enum) are copied again the same way. The two messages
//! that carry rows (`result`, `summarize`) are read here straight from the line into
//! their fields; any line this reader does not take whole (another type, or a message
//! it cannot read) is read by the derived reader, whose value or error is the answer.
//! So a message this reader takes is the one the derived reader would give: the same
//! fields, defaults and refusals (unknown fields, duplicates), and a `[start, count]`
//! edit is a copy exactly when it is two integers.

use super::delta::Edit;
use super::wire::{AdapterMsg, ChatMessage};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;

/// The message of one line: `serde_json::from_str::<AdapterMsg>(line)`, with the rows
/// of a `result` or `summarize` read once.
pub fn parse(line: &str) -> serde_json::Result<AdapterMsg> {
    if let Ok(direct) = serde_json::from_str::<Direct>(line) {
        return Ok(direct.into_msg());
    }
    serde_json::from_str::<AdapterMsg>(line)
}

/// The two messages with rows, by their `type` value.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum RowsTag {
    Result,
    Summarize,
}

/// The fields of `result` and `summarize`, each as [`AdapterMsg`] types it, with
/// whether it was present (a `null` included): a type's line may hold only its own.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    #[serde(rename = "type")]
    kind: RowsTag,
    id: u64,
    // result
    #[serde(default)]
    transcript: Seen<Option<Vec<ChatMessage>>>,
    #[serde(default)]
    edits: Seen<Option<Vec<DirectEdit>>>,
    #[serde(default)]
    digest: Seen<Option<String>>,
    #[serde(default)]
    value: Seen<Option<serde_json::Value>>,
    #[serde(default)]
    labels: Seen<BTreeMap<String, serde_json::Value>>,
    // summarize
    #[serde(default)]
    call: Seen<u32>,
    #[serde(default)]
    prompt: Seen<Option<String>>,
    #[serde(default)]
    messages: Seen<Option<Vec<ChatMessage>>>,
    #[serde(default)]
    max_tokens: Seen<Option<u32>>,
}

/// A field's value and whether the line held it.
#[derive(Default)]
struct Seen<T> {
    seen: bool,
    value: T,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Seen<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Seen {
            seen: true,
            value: T::deserialize(d)?,
        })
    }
}

/// A line read by [`Fields`] that is a message of its type.
struct Direct(Fields);

impl<'de> Deserialize<'de> for Direct {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f = Fields::deserialize(d)?;
        if !f.fits() {
            return Err(de::Error::custom("not read directly"));
        }
        Ok(Direct(f))
    }
}

impl Fields {
    /// Only the fields of its type; `summarize` has its required `call`.
    fn fits(&self) -> bool {
        let result = [
            self.transcript.seen,
            self.edits.seen,
            self.digest.seen,
            self.value.seen,
            self.labels.seen,
        ];
        let summarize = [self.prompt.seen, self.messages.seen, self.max_tokens.seen];
        match self.kind {
            RowsTag::Result => !self.call.seen && !summarize.contains(&true),
            RowsTag::Summarize => self.call.seen && !result.contains(&true),
        }
    }
}

impl Direct {
    fn into_msg(self) -> AdapterMsg {
        let f = self.0;
        match f.kind {
            RowsTag::Result => AdapterMsg::Result {
                id: f.id,
                transcript: f.transcript.value,
                edits: f
                    .edits
                    .value
                    .map(|e| e.into_iter().map(|DirectEdit(e)| e).collect()),
                digest: f.digest.value,
                value: f.value.value,
                labels: f.labels.value,
            },
            RowsTag::Summarize => AdapterMsg::Summarize {
                id: f.id,
                call: f.call.value,
                prompt: f.prompt.value,
                messages: f.messages.value,
                max_tokens: f.max_tokens.value,
            },
        }
    }
}

/// An [`Edit`] read from the line: two integers are a copy, an object a row; anything
/// else is refused here (the derived reader decides what it is).
struct DirectEdit(Edit);

impl<'de> Deserialize<'de> for DirectEdit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(EditVisitor)
    }
}

struct EditVisitor;

impl<'de> Visitor<'de> for EditVisitor {
    type Value = DirectEdit;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("[start, count] or a row")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<DirectEdit, A::Error> {
        let start: usize = seq
            .next_element()?
            .ok_or_else(|| de::Error::custom("short copy"))?;
        let count: usize = seq
            .next_element()?
            .ok_or_else(|| de::Error::custom("short copy"))?;
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(de::Error::custom("long copy"));
        }
        Ok(DirectEdit(Edit::Copy(start, count)))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<DirectEdit, A::Error> {
        let row = ChatMessage::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(DirectEdit(Edit::Row(row)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line read here and by the derived reader: the same message, or the same
    /// error.
    fn same_as_derived(line: &str) {
        let derived = serde_json::from_str::<AdapterMsg>(line).map_err(|e| e.to_string());
        let here = parse(line).map_err(|e| e.to_string());
        assert_eq!(here, derived, "{line}");
    }

    #[test]
    fn every_golden_adapter_line_reads_as_the_derived_reader_reads_it() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../adapters/golden");
        let mut lines = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            for line in text.lines() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                if v["from"] == "adapter" {
                    same_as_derived(&v["msg"].to_string());
                    lines += 1;
                }
            }
        }
        assert!(lines > 10, "{lines} adapter lines");
    }

    #[test]
    fn a_line_the_derived_reader_refuses_is_refused_alike() {
        let row = r#"{"role":"user","content":"a","_compactsim_id":3}"#;
        for line in [
            // Taken here.
            &format!(r#"{{"id":4,"edits":[[0,2],{row}],"digest":"00","type":"result"}}"#),
            &format!(r#"{{"type":"result","id":4,"transcript":[{row}],"labels":{{"a":1}}}}"#),
            r#"{"type":"result","id":4,"value":null,"edits":null}"#,
            r#"{"type":"summarize","id":4,"call":0,"prompt":"p","max_tokens":null}"#,
            &format!(r#"{{"type":"summarize","id":4,"call":1,"messages":[{row}]}}"#),
            // Refused, or another type: the derived reader's answer.
            r#"{"type":"result","id":4,"call":null}"#,
            r#"{"type":"result","id":4,"labels":null}"#,
            r#"{"type":"result","id":4,"extra":1}"#,
            r#"{"type":"result","id":4,"id":5}"#,
            r#"{"type":"result","type":"result","id":4}"#,
            r#"{"type":"summarize","id":4}"#,
            r#"{"type":"summarize","id":4,"call":0,"digest":null}"#,
            r#"{"type":"result","id":4,"edits":[[0,2,3]]}"#,
            r#"{"type":"result","id":4,"edits":[[0]]}"#,
            r#"{"type":"result","id":4,"edits":[[-1,2]]}"#,
            r#"{"type":"result","id":4,"edits":[["user",null]]}"#,
            r#"{"type":"result","id":4,"edits":[7]}"#,
            r#"{"type":"error","id":4,"message":"m"}"#,
            r#"{"id":4}"#,
            r#"{"type":"result","id":4"#,
        ] {
            same_as_derived(line);
        }
    }
}
