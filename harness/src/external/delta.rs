//! Protocol 2's transcript deltas (adapters/PROTOCOL.md, "Protocol 2"): both sides keep
//! the transcript the adapter holds; a pass request and its reply carry only `edits`
//! against it, and a `digest` of the whole transcript the edits make, so a side that
//! holds another transcript is detected, never trusted.
//!
//! `edits` is a list whose items are either `[start, count]` (rows `start..start+count`
//! of the base, in order) or a chat message (a row sent whole); the transcript is their
//! concatenation. The digest is FNV-1a 64 folded over one 64-bit word per row, written as
//! 16 lowercase hex digits; a row's word is `len << 32 | crc`, `len` the UTF-8 bytes of
//! its content and `crc` the CRC-32 of its header (below) continued over those bytes.
//! The header is the compact JSON array (non-ASCII unescaped, as Python's
//! `json.dumps(h, separators=(",", ":"), ensure_ascii=False)` writes it) `[role,
//! content is null, tool_calls ([] when none), tool_call_id, the four flags,
//! _compactsim_id]` (absent values `null`). The content is hashed as bytes, never
//! serialized: a side pays a CRC of the rows it receives.

use super::crc32::{crc32, crc32_update};
use super::error::FailureKind;
use super::json_line;
use super::wire::{ChatMessage, HarnessMsg, Trigger};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One item of `edits` as read from an adapter. Read by [`EditVisitor`]: what serde's
/// untagged derive ([`EditAny`]) reads, without its copy of every row into a tree of its
/// own before the row is read.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Edit {
    /// `[start, count]`: rows of the base.
    Copy(usize, usize),
    /// A row sent whole.
    Row(ChatMessage),
}

/// [`Edit`] as serde's untagged derive reads it: the reader of an array item (an array
/// is a copy, or a row given as the list of its fields).
#[derive(Deserialize)]
#[serde(untagged)]
enum EditAny {
    Copy(usize, usize),
    Row(ChatMessage),
}

impl From<EditAny> for Edit {
    fn from(e: EditAny) -> Edit {
        match e {
            EditAny::Copy(start, count) => Edit::Copy(start, count),
            EditAny::Row(row) => Edit::Row(row),
        }
    }
}

/// What serde's untagged enum says of an item that is no variant.
const EDIT_MISMATCH: &str = "data did not match any variant of untagged enum Edit";

impl<'de> Deserialize<'de> for Edit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Edit, D::Error> {
        d.deserialize_any(EditVisitor)
    }
}

/// Reads an object straight into a row (an object is never a copy), and an array (two
/// numbers, small) through [`EditAny`]; anything else, or an item neither reads, is
/// refused with serde's untagged message.
struct EditVisitor;

impl<'de> serde::de::Visitor<'de> for EditVisitor {
    type Value = Edit;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a [start, count] copy or a chat message")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Edit, A::Error> {
        ChatMessage::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            .map(Edit::Row)
            .map_err(|_| serde::de::Error::custom(EDIT_MISMATCH))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Edit, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        EditAny::deserialize(Value::Array(items))
            .map(Edit::from)
            .map_err(|_| serde::de::Error::custom(EDIT_MISMATCH))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Edit, E> {
        Err(E::custom(EDIT_MISMATCH))
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Edit, E> {
        Err(E::custom(EDIT_MISMATCH))
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Edit, E> {
        Err(E::custom(EDIT_MISMATCH))
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Edit, E> {
        Err(E::custom(EDIT_MISMATCH))
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Edit, E> {
        Err(E::custom(EDIT_MISMATCH))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Edit, E> {
        Err(E::custom(EDIT_MISMATCH))
    }
}

/// One item of `edits` as the harness writes it (rows borrowed, not cloned).
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(untagged)]
pub enum EditRef<'a> {
    Copy(usize, usize),
    Row(&'a ChatMessage),
}

/// A transcript one side believes the adapter holds, with each row's digest word. The
/// rows are shared with the reply that carried them (a result's transcript is not
/// copied to be kept).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Held {
    pub rows: Arc<Vec<ChatMessage>>,
    words: Vec<u64>,
}

impl Held {
    /// `rows` with their words computed.
    pub fn new(rows: impl Into<Arc<Vec<ChatMessage>>>) -> Held {
        let rows = rows.into();
        let words = rows.iter().map(row_word).collect();
        Held { rows, words }
    }

    /// The digest of the whole transcript.
    pub fn digest(&self) -> String {
        digest_of(&self.words)
    }

    /// The edits that make `next` from this transcript, and `next` as the new held
    /// transcript. A row of `next` equal to a row of the base with the same
    /// `_compactsim_id` (or, without an id, the row after the last one copied) is
    /// copied; consecutive copies form one `[start, count]`.
    pub fn encode(&self, next: Vec<ChatMessage>) -> (Vec<Source>, Held) {
        let by_id = self.index_by_id();
        let mut sources: Vec<Source> = Vec::with_capacity(next.len());
        let mut words = Vec::with_capacity(next.len());
        let mut after_last: Option<usize> = None;
        for row in &next {
            let at = row
                .compactsim_id
                .and_then(|id| by_id.get(&id).copied())
                .or(after_last)
                .filter(|&j| self.rows.get(j) == Some(row));
            match at {
                Some(j) => {
                    words.push(self.words[j]);
                    after_last = Some(j + 1);
                    match sources.last_mut() {
                        Some(Source::Base(start, count)) if *start + *count == j => *count += 1,
                        _ => sources.push(Source::Base(j, 1)),
                    }
                }
                None => {
                    words.push(row_word(row));
                    after_last = None;
                    sources.push(Source::New(words.len() - 1));
                }
            }
        }
        (
            sources,
            Held {
                rows: Arc::new(next),
                words,
            },
        )
    }

    /// The edits of [`Held::encode`] over the rows of `next` (the held transcript it
    /// returned), for the wire.
    pub fn edit_refs<'a>(sources: &[Source], next: &'a Held) -> Vec<EditRef<'a>> {
        sources
            .iter()
            .map(|s| match *s {
                Source::Base(start, count) => EditRef::Copy(start, count),
                Source::New(i) => EditRef::Row(&next.rows[i]),
            })
            .collect()
    }

    /// The words of the rows [`Held::encode`] sends whole, in their order in the edits
    /// (the request's `words`: the adapter need not compute them).
    pub fn sent_words(sources: &[Source], next: &Held) -> Vec<u64> {
        sources
            .iter()
            .filter_map(|s| match *s {
                Source::New(i) => Some(next.words[i]),
                Source::Base(..) => None,
            })
            .collect()
    }

    /// The transcript `edits` make from this one, checked against `digest`; the error
    /// says what does not match. The base is used up: a row it holds alone is moved,
    /// not copied (a row copied twice is cloned the second time).
    pub fn decode(self, edits: Vec<Edit>, digest: &str) -> Result<Held, String> {
        let base_len = self.rows.len();
        let mut base: Vec<Option<ChatMessage>> = match Arc::try_unwrap(self.rows) {
            Ok(rows) => rows.into_iter().map(Some).collect(),
            Err(shared) => shared.iter().cloned().map(Some).collect(),
        };
        // Where each moved base row went in `rows` (for a second copy of it).
        let mut moved_to: Vec<usize> = vec![usize::MAX; base_len];
        let mut rows: Vec<ChatMessage> = Vec::new();
        let mut words = Vec::new();
        for (k, edit) in edits.into_iter().enumerate() {
            match edit {
                Edit::Copy(start, count) => {
                    let end = start.checked_add(count).filter(|&e| e <= base_len);
                    let Some(end) = end else {
                        return Err(format!(
                            "edit {k} copies rows {start}..{start}+{count} of a base of \
                             {base_len} rows"
                        ));
                    };
                    for j in start..end {
                        let row = match base[j].take() {
                            Some(row) => row,
                            None => rows[moved_to[j]].clone(),
                        };
                        if moved_to[j] == usize::MAX {
                            moved_to[j] = rows.len();
                        }
                        rows.push(row);
                    }
                    words.extend_from_slice(&self.words[start..end]);
                }
                Edit::Row(row) => {
                    words.push(row_word(&row));
                    rows.push(row);
                }
            }
        }
        let held = Held {
            rows: Arc::new(rows),
            words,
        };
        let got = held.digest();
        if got != digest {
            return Err(format!(
                "digest {digest:?} does not match the transcript its edits make \
                 ({} rows, digest {got:?})",
                held.rows.len()
            ));
        }
        Ok(held)
    }

    fn index_by_id(&self) -> BTreeMap<u32, usize> {
        let mut by_id = BTreeMap::new();
        for (j, row) in self.rows.iter().enumerate() {
            if let Some(id) = row.compactsim_id {
                by_id.entry(id).or_insert(j);
            }
        }
        by_id
    }
}

/// The wire line of a pass request under protocol 2: its transcript taken out of `msg`
/// and sent as edits of `held` with the digest; returns the line and the transcript the
/// adapter holds once it reads it. Rows are written in the order of [`ChatMessage`]'s
/// fields, as in protocol 1.
pub fn pass_line(msg: &mut HarnessMsg, held: &Held) -> Result<(String, Held), String> {
    let (kind, id, trigger, force, input) = match msg {
        HarnessMsg::MicroPass { id, input } => ("micro_pass", *id, None, None, input),
        HarnessMsg::BatchPass {
            id,
            trigger,
            force,
            input,
        } => ("batch_pass", *id, Some(*trigger), Some(*force), input),
        other => return Err(format!("{} is not a pass", other.describe())),
    };
    let (sources, next) = held.encode(std::mem::take(&mut input.transcript));
    let wire = PassDelta {
        kind,
        id,
        trigger,
        force,
        turn: input.turn,
        edits: Held::edit_refs(&sources, &next),
        digest: next.digest(),
        words: Held::sent_words(&sources, &next),
        context_window_tokens: input.context_window_tokens,
        now_ms: input.now_ms,
        config: &input.config,
    };
    Ok((wire.line()?, next))
}

impl PassDelta<'_> {
    /// The line `serde_json::to_string(self)` writes, the rows written by
    /// [`json_line::push_row`] (tested equal: `a_pass_line_is_the_one_serde_json_writes`).
    fn line(&self) -> Result<String, String> {
        let texts: usize = self
            .edits
            .iter()
            .map(|e| match e {
                EditRef::Row(r) => r.content.as_deref().map_or(0, str::len),
                EditRef::Copy(..) => 0,
            })
            .sum();
        let mut out = Vec::with_capacity(texts + texts / 8 + 256);
        out.extend_from_slice(b"{\"type\":");
        json_line::push_str(&mut out, self.kind);
        out.extend_from_slice(b",\"id\":");
        json_line::push_serde(&mut out, &self.id)?;
        if let Some(t) = self.trigger {
            out.extend_from_slice(b",\"trigger\":");
            json_line::push_serde(&mut out, &t)?;
        }
        if let Some(f) = self.force {
            out.extend_from_slice(b",\"force\":");
            json_line::push_serde(&mut out, &f)?;
        }
        out.extend_from_slice(b",\"turn\":");
        json_line::push_serde(&mut out, &self.turn)?;
        out.extend_from_slice(b",\"edits\":[");
        for (k, edit) in self.edits.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            match edit {
                EditRef::Copy(start, count) => json_line::push_serde(&mut out, &(start, count))?,
                EditRef::Row(row) => json_line::push_row(&mut out, row)?,
            }
        }
        out.extend_from_slice(b"],\"digest\":");
        json_line::push_str(&mut out, &self.digest);
        out.extend_from_slice(b",\"words\":");
        json_line::push_serde(&mut out, &self.words)?;
        out.extend_from_slice(b",\"context_window_tokens\":");
        json_line::push_serde(&mut out, &self.context_window_tokens)?;
        out.extend_from_slice(b",\"now_ms\":");
        json_line::push_serde(&mut out, &self.now_ms)?;
        out.extend_from_slice(b",\"config\":");
        json_line::push_serde(&mut out, self.config)?;
        out.push(b'}');
        debug_assert!(std::str::from_utf8(&out).is_ok());
        // SAFETY: every byte written is a `&str`'s, cut only before or after an ASCII byte
        // (an escaped one), serde_json's own output (UTF-8), or ASCII written here: the
        // line is UTF-8 (checked in debug builds), not checked again in release ones.
        Ok(unsafe { String::from_utf8_unchecked(out) })
    }
}

/// The transcript of a pass result: sent whole, or (`deltas`: protocol 2, a pass) as
/// edits of the request's checked against the digest (a mismatch is a desync); under
/// protocol 2 it becomes `held`, what the adapter holds. Edits anywhere else, or edits
/// beside a transcript, are a protocol violation.
pub fn result_rows(
    held: &mut Held,
    deltas: bool,
    transcript: Option<Vec<ChatMessage>>,
    edits: Option<Vec<Edit>>,
    digest: Option<String>,
) -> Result<Option<Arc<Vec<ChatMessage>>>, FailureKind> {
    match (transcript, edits, digest) {
        (t, None, None) => {
            let t = t.map(Arc::new);
            if let (true, Some(rows)) = (deltas, &t) {
                *held = Held::new(rows.clone());
            }
            Ok(t)
        }
        (None, Some(edits), Some(digest)) if deltas => {
            let next = std::mem::take(held).decode(edits, &digest).map_err(|e| {
                FailureKind::Desync(format!("the result's edits of the request: {e}"))
            })?;
            let rows = next.rows.clone();
            *held = next;
            Ok(Some(rows))
        }
        _ if !deltas => Err(FailureKind::Protocol(
            "edits or digest in a result that is not a protocol 2 pass result".into(),
        )),
        _ => Err(FailureKind::Protocol(
            "a result carries either a transcript, or edits with a digest".into(),
        )),
    }
}

/// A pass request under protocol 2, as written.
#[derive(Serialize)]
struct PassDelta<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    trigger: Option<Trigger>,
    #[serde(skip_serializing_if = "Option::is_none")]
    force: Option<bool>,
    turn: u32,
    edits: Vec<EditRef<'a>>,
    digest: String,
    /// The word of each row sent whole, in order (PROTOCOL.md, Protocol 2).
    words: Vec<u64>,
    context_window_tokens: u64,
    now_ms: u64,
    config: &'a BTreeMap<String, Value>,
}

/// Where a row of an encoded transcript comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `count` rows of the base from `start`.
    Base(usize, usize),
    /// The row at this index of the new transcript, sent whole.
    New(usize),
}

const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a 64 folded over whole words, as 16 lowercase hex digits.
fn digest_of(words: &[u64]) -> String {
    let h = words
        .iter()
        .fold(FNV_OFFSET_BASIS, |h, &w| (h ^ w).wrapping_mul(FNV_PRIME));
    format!("{h:016x}")
}

/// A row's digest word (see the module doc).
pub fn row_word(row: &ChatMessage) -> u64 {
    // Written by hand as serde_json writes the header tuple (tested equal in
    // `json_line`): most rows' headers are a few dozen bytes, which serde's writer
    // costs several times over.
    let mut header = Vec::with_capacity(64);
    json_line::push_digest_header(&mut header, row);
    let content = row.content.as_deref().unwrap_or("").as_bytes();
    ((content.len() as u64) << 32) | u64::from(crc32_update(crc32(&header), content))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: Option<u32>, text: &str) -> ChatMessage {
        ChatMessage::plain("user", text, id)
    }

    #[test]
    fn the_digest_is_the_one_python_computes() {
        // python3 -c 'import sys; sys.path.insert(0, "adapters/reference"); import protocol as p
        //   rows = [{"role": "user", "content": "a\n\"é\u0001", "_compactsim_id": 0},
        //           {"role": "user", "content": "b"},
        //           {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1",
        //            "function": {"name": "terminal", "arguments": "{\"cmd\":\"ls\"}"}}],
        //            "_compressed_summary": False, "_compactsim_id": 7}]
        //   print(p.digest([p.row_word(p.canonical_row(r)) for r in rows]))'
        let call = ChatMessage {
            role: "assistant".into(),
            content: None,
            tool_calls: vec![super::super::wire::ChatToolCall {
                id: "call_1".into(),
                kind: "function".into(),
                function: super::super::wire::ChatFunction {
                    name: "terminal".into(),
                    arguments: "{\"cmd\":\"ls\"}".into(),
                },
            }],
            compressed_summary: Some(false),
            ..row(Some(7), "")
        };
        let held = Held::new(vec![row(Some(0), "a\n\"é\u{1}"), row(None, "b"), call]);
        assert_eq!(held.digest(), PYTHON_DIGEST);
    }

    /// What adapters/reference/protocol.py computes for the rows of the test above.
    const PYTHON_DIGEST: &str = "281a2d8f9305e431";

    #[test]
    fn encode_copies_equal_rows_and_sends_changed_ones_whole() {
        let base = Held::new(vec![row(Some(0), "s"), row(Some(1), "u"), row(None, "x")]);
        let next = vec![
            row(Some(0), "s"),
            row(Some(1), "u"),
            row(Some(2), "x"),
            row(None, "n"),
        ];
        let (sources, held) = base.encode(next.clone());
        assert_eq!(
            sources,
            vec![Source::Base(0, 2), Source::New(2), Source::New(3)]
        );
        let edits: Vec<Edit> =
            serde_json::from_value(serde_json::to_value(Held::edit_refs(&sources, &held)).unwrap())
                .unwrap();
        let decoded = base.clone().decode(edits, &held.digest()).unwrap();
        assert_eq!(*decoded.rows, next);
        assert_eq!(decoded, held);
    }

    /// A request's `words` are the words of its whole rows, in order: what the adapter
    /// would compute from those rows.
    #[test]
    fn sent_words_are_the_whole_rows_words_in_order() {
        let base = Held::new(vec![row(Some(0), "s"), row(Some(1), "u")]);
        let next = vec![row(Some(9), "a"), row(Some(0), "s"), row(None, "b é")];
        let (sources, held) = base.encode(next.clone());
        let words = Held::sent_words(&sources, &held);
        assert_eq!(words, vec![row_word(&next[0]), row_word(&next[2])]);
        let (sources, held) = base.encode(base.rows.to_vec());
        assert!(Held::sent_words(&sources, &held).is_empty());
    }

    /// The hand-written pass line is serde_json's, byte for byte: rows with escapes,
    /// copies, a trigger and force, and a config.
    #[test]
    fn a_pass_line_is_the_one_serde_json_writes() {
        let base = Held::new(vec![row(Some(0), "s"), row(Some(1), "u\n\"q\"")]);
        let mut call = row(Some(5), "");
        call.content = None;
        call.tool_calls = vec![super::super::wire::ChatToolCall {
            id: "c\"1".into(),
            kind: "function".into(),
            function: super::super::wire::ChatFunction {
                name: "terminal".into(),
                arguments: "{\"cmd\":\"ls\\n\"}".into(),
            },
        }];
        call.micro_compact_marker = Some(false);
        call.compressed_summary = Some(true);
        call.tool_call_id = Some("t\u{1}".into());
        let next = vec![
            row(Some(0), "s"),
            row(Some(1), "u\n\"q\""),
            row(None, "new\ttext é \u{7f} 𝄞 ..............................."),
            call,
        ];
        let config: BTreeMap<String, Value> =
            serde_json::from_str(r#"{"a_tokens": 5, "b": [1, "x\n"], "c": {"d": null}}"#).unwrap();
        let (sources, held) = base.encode(next);
        for (trigger, force) in [(None, None), (Some(Trigger::Overflow), Some(true))] {
            let wire = PassDelta {
                kind: "batch_pass",
                id: 12,
                trigger,
                force,
                turn: 3,
                edits: Held::edit_refs(&sources, &held),
                digest: held.digest(),
                words: Held::sent_words(&sources, &held),
                context_window_tokens: 200_000,
                now_ms: 987_654_321,
                config: &config,
            };
            assert_eq!(wire.line().unwrap(), serde_json::to_string(&wire).unwrap());
        }
    }

    /// Every item reads as serde's untagged derive reads it: the same edit, or an error
    /// with the same message (where in the line it is told may differ).
    #[test]
    fn an_edit_reads_as_the_untagged_derive_reads_it() {
        let items = [
            "[0, 2]",
            "[3,0]",
            r#"{"role": "user", "content": "a\n\"b\"", "_compactsim_id": 1, "extra": [1]}"#,
            r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "function": {"name": "t", "arguments": "{}"}}], "_compressed_summary": false}"#,
            r#"["user", "x"]"#,
            "[1]",
            "[1, 2, 3]",
            "[-1, 2]",
            r#"{"content": "no role"}"#,
            r#"{"role": 1}"#,
            r#"{"role": "user", "role": "tool"}"#,
            "5",
            r#""x""#,
            "null",
            "true",
            "1.5",
        ];
        let message = |e: serde_json::Error| {
            let text = e.to_string();
            text.split(" at line")
                .next()
                .unwrap_or_default()
                .to_string()
        };
        for item in items {
            let line = format!("[{item}]");
            // (The reference type's own name aside.)
            let want = serde_json::from_str::<Vec<EditAny>>(&line)
                .map(|v| v.into_iter().map(Edit::from).collect::<Vec<_>>())
                .map_err(|e| message(e).replace("enum EditAny", "enum Edit"));
            let got = serde_json::from_str::<Vec<Edit>>(&line).map_err(message);
            assert_eq!(got, want, "{item}");
        }
    }

    #[test]
    fn a_copy_past_the_base_or_a_wrong_digest_is_refused() {
        let base = Held::new(vec![row(Some(0), "s")]);
        let err = base
            .clone()
            .decode(vec![Edit::Copy(0, 2)], "0")
            .unwrap_err();
        assert!(
            err.contains("copies rows 0..0+2 of a base of 1 rows"),
            "{err}"
        );
        let err = base
            .clone()
            .decode(vec![Edit::Copy(0, 1)], "0000000000000000")
            .unwrap_err();
        assert!(err.contains("does not match"), "{err}");
        assert!(base
            .clone()
            .decode(vec![Edit::Copy(0, 1)], &base.digest())
            .is_ok());
    }

    /// A base row copied twice is in the result twice (moved once, cloned once), from a
    /// base held alone or shared.
    #[test]
    fn a_row_copied_twice_is_kept_twice() {
        let base = Held::new(vec![row(Some(0), "s"), row(Some(1), "u")]);
        let want = Held::new(vec![
            row(Some(1), "u"),
            row(Some(0), "s"),
            row(Some(1), "u"),
            row(None, "n"),
            row(Some(0), "s"),
        ]);
        let edits = || {
            vec![
                Edit::Copy(1, 1),
                Edit::Copy(0, 2),
                Edit::Row(row(None, "n")),
                Edit::Copy(0, 1),
            ]
        };
        let shared = base.clone();
        assert_eq!(base.clone().decode(edits(), &want.digest()).unwrap(), want);
        assert_eq!(base.decode(edits(), &want.digest()).unwrap(), want);
        assert_eq!(shared.rows.len(), 2);
    }
}
