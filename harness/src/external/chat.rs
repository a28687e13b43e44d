//! Conversion between the model's messages and OpenAI chat JSON.
//!
//! To the adapter every row goes as text. Back from the adapter rows come as text, and
//! the oracle judges text, so the text is turned back into segments: a row whose text is
//! unchanged keeps its segments; otherwise the text is split at the merge separator and
//! every part that is, byte for byte, the text of a segment the harness sent or served
//! (a transcript segment, a summary answer) is that segment again (origin and facts
//! kept). Runs of other text become one *literal* segment whose facts are the fact
//! names spelled in it (`FACT-000123`), so a fact counts as kept exactly when its name
//! is in the text; a literal naming no fact is scaffold (prefixes, notes, end markers).
//! New text gets the origin of the new row it is in, or a fresh origin when the row was
//! carried over (the text is not its author's). The book remembers each literal's bytes, so the next request sends
//! the adapter exactly the text it wrote.

use super::wire::{ChatFunction, ChatMessage, ChatToolCall};
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::summarizer::RollingSummary;
use compactsim_model::{
    CallId, Content, ContentKind, Flags, Message, MsgId, Role, Segment, ToolCall, MERGE_SEPARATOR,
};
use std::collections::HashMap;
use std::sync::Arc;

/// Literal segments carry a seed with this bit set (and their bytes in the book).
const LITERAL_SEED_TAG: u64 = 1 << 63;

/// Texts the harness has sent or served in one case, to read replies back.
#[derive(Default)]
pub struct TextBook {
    by_text: HashMap<Arc<str>, Segment>,
    literals: HashMap<u64, Arc<str>>,
    /// Summaries the harness served, in serving order.
    served: Vec<(Arc<str>, RollingSummary)>,
}

impl TextBook {
    /// The text of a segment: its literal bytes, or the generated text.
    pub fn segment_text(&self, s: &Segment) -> Arc<str> {
        if let Some(t) = self.literals.get(&s.seed) {
            if t.len() == s.chars as usize {
                return t.clone();
            }
        }
        Arc::from(s.materialize())
    }

    /// The text of a whole content (segments joined by the merge separator).
    pub fn content_text(&self, c: &Content) -> String {
        let parts: Vec<Arc<str>> = c.segments.iter().map(|s| self.segment_text(s)).collect();
        parts.join(MERGE_SEPARATOR)
    }

    /// Gives segments with this seed the text `text` (when their length is its length)
    /// instead of generated text: the wrapper texts a profile's release writes.
    pub fn know_text(&mut self, seed: u64, text: &str) {
        self.literals.insert(seed, Arc::from(text));
    }

    /// Remembers a segment so a reply containing its text maps back to it.
    pub fn register(&mut self, s: &Segment) -> Arc<str> {
        let text = self.segment_text(s);
        self.by_text
            .entry(text.clone())
            .or_insert_with(|| s.clone());
        text
    }

    /// Remembers a summary the harness served; returns its text.
    pub fn register_served(&mut self, s: &Segment, summary: &RollingSummary) -> Arc<str> {
        let text = self.register(s);
        self.served.push((text.clone(), summary.clone()));
        text
    }

    /// The newest served summary whose text appears whole in `prompt` (leading and
    /// trailing whitespace aside: adapters strip model output).
    pub fn previous_summary(&self, prompt: &str) -> Option<RollingSummary> {
        self.served
            .iter()
            .rev()
            .find(|(text, _)| !text.trim().is_empty() && prompt.contains(text.trim()))
            .map(|(_, s)| s.clone())
    }

    /// The rows as chat messages, every segment registered.
    pub fn to_chat(&mut self, msgs: &[Message]) -> Vec<ChatMessage> {
        msgs.iter().map(|m| self.message_to_chat(m)).collect()
    }

    fn message_to_chat(&mut self, m: &Message) -> ChatMessage {
        let parts: Vec<Arc<str>> = m
            .content
            .segments
            .iter()
            .map(|s| self.register(s))
            .collect();
        ChatMessage {
            role: m.role.as_str().to_string(),
            content: Some(parts.join(MERGE_SEPARATOR)),
            tool_calls: m.tool_calls.iter().map(call_to_chat).collect(),
            tool_call_id: m.tool_call_id.map(|c| c.to_string()),
            compressed_summary: m.flags.summary_marker,
            micro_compact_marker: m.flags.micro_marker,
            has_user_turn: m.flags.has_user_turn,
            db_persisted: m.flags.persisted,
            compactsim_id: Some(m.id.0),
        }
    }

    /// Reads the adapter's rows back. `before` is the transcript of the request: a row
    /// naming one of its ids keeps that id (first occurrence only); others get new ids.
    pub fn from_chat(
        &mut self,
        rows: &[ChatMessage],
        before: &[Message],
        ids: &mut IdAlloc,
    ) -> Result<Vec<Message>, String> {
        let index: HashMap<MsgId, &Message> = before.iter().map(|m| (m.id, m)).collect();
        let mut used: HashMap<MsgId, ()> = HashMap::new();
        let mut out = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            let known = row
                .compactsim_id
                .map(MsgId)
                .filter(|id| index.contains_key(id) && used.insert(*id, ()).is_none());
            let id = known.unwrap_or_else(|| ids.msg());
            let original = known.and_then(|k| index.get(&k).copied());
            let msg = self
                .row_to_message(row, id, original, ids)
                .map_err(|e| format!("row {i}: {e}"))?;
            out.push(msg);
        }
        Ok(out)
    }

    fn row_to_message(
        &mut self,
        row: &ChatMessage,
        id: MsgId,
        original: Option<&Message>,
        ids: &mut IdAlloc,
    ) -> Result<Message, String> {
        let role = parse_role(&row.role)?;
        let calls = row
            .tool_calls
            .iter()
            .map(call_from_chat)
            .collect::<Result<Vec<_>, _>>()?;
        let tool_call_id = row.tool_call_id.as_deref().map(parse_call_id).transpose()?;
        let text = row.content.as_deref().unwrap_or("");
        let flags = Flags {
            summary_marker: row.compressed_summary,
            micro_marker: row.micro_compact_marker,
            has_user_turn: row.has_user_turn,
            persisted: row.db_persisted,
        };
        let content = match original {
            Some(o) if self.content_text(&o.content) == text => o.content.clone(),
            _ => {
                // New text in a row the adapter carried over was not written by that
                // row's author: it gets an origin of its own.
                let origin = if original.is_some() { ids.msg() } else { id };
                self.read_text(text, origin, flags.summary_marker || flags.micro_marker)
            }
        };
        let mut m = Message::new(id, role, content)
            .with_tool_calls(calls)
            .with_flags(flags);
        m.tool_call_id = tool_call_id;
        Ok(m)
    }

    /// Text back to segments: known parts are their segments, unknown runs literals.
    fn read_text(&mut self, text: &str, origin: MsgId, summary: bool) -> Content {
        if text.is_empty() {
            return Content::empty();
        }
        let mut segments = Vec::new();
        let mut unknown: Vec<&str> = Vec::new();
        for part in text.split(MERGE_SEPARATOR) {
            match self.by_text.get(part).cloned() {
                Some(seg) if !part.is_empty() => {
                    if !unknown.is_empty() {
                        segments.push(self.literal(
                            &unknown.join(MERGE_SEPARATOR),
                            origin,
                            summary,
                        ));
                        unknown.clear();
                    }
                    segments.push(adopt(seg, origin));
                }
                _ => unknown.push(part),
            }
        }
        if !unknown.is_empty() {
            segments.push(self.literal(&unknown.join(MERGE_SEPARATOR), origin, summary));
        }
        Content::from_segments(segments)
    }

    fn literal(&mut self, text: &str, origin: MsgId, summary: bool) -> Segment {
        let seed = fnv1a(text.as_bytes()) | LITERAL_SEED_TAG;
        let text: Arc<str> = Arc::from(text);
        self.literals.insert(seed, text.clone());
        let facts = spelled_facts(&text);
        // Text that names no fact is wrapper text (prefixes, notes, end markers).
        let kind = if facts.is_empty() {
            ContentKind::Scaffold
        } else if summary {
            ContentKind::Summary
        } else {
            ContentKind::Prose
        };
        let seg = Segment {
            kind,
            chars: text.len() as u32,
            seed,
            origin,
            facts,
        };
        self.by_text.entry(text).or_insert_with(|| seg.clone());
        seg
    }
}

/// A summary the harness served belongs to the row that carries it.
fn adopt(mut seg: Segment, origin: MsgId) -> Segment {
    if seg.origin == super::summaries::SERVED_ORIGIN {
        seg.origin = origin;
    }
    seg
}

/// The facts whose names are spelled in a text: the oracle's own reading, so the harness
/// and the invariants agree on what "a fact is in the text" means.
pub use compactsim_invariants::text::spelled_facts;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

fn parse_role(role: &str) -> Result<Role, String> {
    match role {
        "system" => Ok(Role::System),
        "user" => Ok(Role::User),
        "assistant" => Ok(Role::Assistant),
        "tool" => Ok(Role::Tool),
        other => Err(format!("unknown role {other:?}")),
    }
}

fn parse_call_id(s: &str) -> Result<CallId, String> {
    s.strip_prefix("call_")
        .and_then(|n| n.parse().ok())
        .map(CallId)
        .ok_or_else(|| format!("tool call id {s:?} is not one the harness issued (call_<n>)"))
}

fn call_to_chat(c: &ToolCall) -> ChatToolCall {
    ChatToolCall {
        id: c.id.to_string(),
        kind: "function".into(),
        function: ChatFunction {
            name: c.name.clone(),
            arguments: c.arguments.to_string(),
        },
    }
}

fn call_from_chat(c: &ChatToolCall) -> Result<ToolCall, String> {
    Ok(ToolCall {
        id: parse_call_id(&c.id)?,
        name: c.function.name.clone(),
        arguments: c.function.arguments.clone().into(),
    })
}
