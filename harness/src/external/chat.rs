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

use super::fallback_words::SeenWords;
use super::generated::GeneratedTexts;
use super::text_hash::{TextHasher, TextMap};
use super::wire::{ChatFunction, ChatMessage, ChatToolCall};
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::summarizer::RollingSummary;
use compactsim_model::{
    CallId, Content, ContentKind, Flags, Message, MsgId, Role, Segment, ToolCall, MERGE_SEPARATOR,
};
use std::cell::RefCell;
use std::collections::HashSet;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

/// Whether `prompt` holds `text`, which starts with `head`: the text is compared at each
/// place the head starts (overlapping places included).
fn holds_at_head(prompt: &str, text: &str, head: &str) -> bool {
    let mut from = 0;
    while let Some(i) = prompt[from..].find(head) {
        let at = from + i;
        if prompt[at..].starts_with(text) {
            return true;
        }
        // The next place starts after the first character of this one.
        from = at + prompt[at..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// Bytes of a served summary's head looked for before its whole text (see
/// [`TextBook::previous_summary`]).
const SERVED_HEAD_BYTES: usize = 48;

/// Literal segments carry a seed with this bit set (and their bytes in the book).
const LITERAL_SEED_TAG: u64 = 1 << 63;

/// Texts the harness has sent or served in one case, to read replies back.
#[derive(Default)]
pub struct TextBook {
    /// The addresses of the known texts (kept alive in `by_line_head`, so no other
    /// text has one): a text given again as the same `Arc` is known without hashing it.
    known_addresses: HashSet<usize, BuildHasherDefault<TextHasher>>,
    /// The known texts, each with its segment, by the head of their first line
    /// ([`LineHead`]), longest first: where a row's line starts, the known texts that
    /// can start there. A text is keyed by its first [`LINE_HEAD_BYTES`] bytes at most,
    /// never hashed or scanned whole to be remembered.
    by_line_head: TextMap<LineHead, Vec<(Arc<str>, Segment)>>,
    /// Rows whose text is not their segments joined by the merge separator (the adapter
    /// joined parts with one newline): the exact text, sent back while the row's
    /// segments are these.
    exact: TextMap<MsgId, (Content, Arc<str>)>,
    literals: TextMap<u64, Arc<str>>,
    /// Summaries the harness served, in serving order.
    served: Vec<(Arc<str>, RollingSummary)>,
    /// The metadata flags the adapter wrote on each row it returned, as it wrote them
    /// (`Some(false)` included): sent back as written while the model does not set them.
    written_flags: TextMap<MsgId, [Option<bool>; 4]>,
    /// Generated segment texts, written once per segment.
    generated: GeneratedTexts,
    /// The joined texts of rows of several segments, written once while the row's
    /// content is unchanged (at most [`JOINED_ROWS_MAX`] rows; past it the cache starts
    /// over). A row sent in every request of a case is joined once, and its text is the
    /// same `Arc` each time (compared by address, not byte for byte, when it comes back).
    joined: RefCell<TextMap<MsgId, (Content, Arc<str>)>>,
    /// The words of every text this book sent or served (`fallback_words.rs`).
    pub seen_words: SeenWords,
    /// Rows' tool-call lists as sent, by the address of the list (each held here, so an
    /// address is not reused while listed; at most [`CHAT_CALL_LISTS_MAX`], past it the
    /// cache starts over): a list carried from request to request is written once.
    chat_calls: TextMap<usize, (Arc<[ToolCall]>, Vec<ChatToolCall>)>,
}

impl TextBook {
    /// The text of a segment: its literal bytes, or the generated text.
    pub fn segment_text(&self, s: &Segment) -> Arc<str> {
        if let Some(t) = self.literals.get(&s.seed) {
            if t.len() == s.chars as usize {
                return t.clone();
            }
        }
        self.generated.text(s)
    }

    /// The text of a whole content (segments joined as the content joins them).
    pub fn content_text(&self, c: &Content) -> String {
        let parts: Vec<Arc<str>> = c.segments.iter().map(|s| self.segment_text(s)).collect();
        c.join(&parts)
    }

    /// Gives segments with this seed the text `text` (when their length is its length)
    /// instead of generated text: the wrapper texts a profile's release writes.
    pub fn know_text(&mut self, seed: u64, text: &str) {
        self.literals.insert(seed, Arc::from(text));
    }

    /// Remembers a segment so a reply containing its text maps back to it.
    pub fn register(&mut self, s: &Segment) -> Arc<str> {
        let text = self.segment_text(s);
        self.remember(text.clone(), s);
        text
    }

    /// Makes `text` known as `s` (the first segment of a text keeps it).
    fn remember(&mut self, text: Arc<str>, s: &Segment) {
        if text.is_empty() || self.known_addresses.contains(&address(&text)) {
            return;
        }
        let texts = self.by_line_head.entry(LineHead::of(&text)).or_default();
        // Longest first: the texts of this length sit together.
        let at = texts.partition_point(|(t, _)| t.len() > text.len());
        let same_len = texts[at..]
            .iter()
            .take_while(|(t, _)| t.len() == text.len());
        if same_len.clone().any(|(t, _)| **t == *text) {
            return;
        }
        let at = at + same_len.count();
        self.known_addresses.insert(address(&text));
        texts.insert(at, (text, s.clone()));
    }

    /// The text of a message as the adapter last saw or wrote it.
    pub fn message_text(&self, m: &Message) -> Arc<str> {
        match self.exact.get(&m.id) {
            Some((content, text)) if *content == m.content => text.clone(),
            // One segment: its text is the content's text (shared, not joined).
            _ => match &*m.content.segments {
                [only] => self.segment_text(only),
                _ => self.joined_text(m),
            },
        }
    }

    /// The text of a row of several segments, joined on the first call for its content.
    fn joined_text(&self, m: &Message) -> Arc<str> {
        if let Some((content, text)) = self.joined.borrow().get(&m.id) {
            if *content == m.content {
                return text.clone();
            }
        }
        let text: Arc<str> = Arc::from(self.content_text(&m.content));
        let mut joined = self.joined.borrow_mut();
        if joined.len() >= JOINED_ROWS_MAX {
            joined.clear();
        }
        joined.insert(m.id, (m.content.clone(), text.clone()));
        text
    }

    /// Remembers a summary the harness served; returns its text.
    pub fn register_served(&mut self, s: &Segment, summary: &RollingSummary) -> Arc<str> {
        let text = self.register(s);
        self.seen_words.see_text(&text);
        self.served.push((text.clone(), summary.clone()));
        text
    }

    /// The newest served summary whose text appears whole in `prompt` (leading and
    /// trailing whitespace aside: adapters strip model output).
    pub fn previous_summary(&self, prompt: &str) -> Option<RollingSummary> {
        self.served
            .iter()
            .rev()
            .find(|(text, _)| {
                let text = text.trim();
                // A text the prompt holds starts at a place the prompt holds its head:
                // the whole text is compared only there (no searcher of the whole text is
                // built, for each served summary, on every summarize call).
                let cut = (0..=SERVED_HEAD_BYTES.min(text.len()))
                    .rev()
                    .find(|&i| text.is_char_boundary(i))
                    .unwrap_or(0);
                let head = &text[..cut];
                !text.is_empty() && text.len() <= prompt.len() && holds_at_head(prompt, text, head)
            })
            .map(|(_, s)| s.clone())
    }

    /// The rows as chat messages, every segment registered.
    pub fn to_chat(&mut self, msgs: &[Message]) -> Vec<ChatMessage> {
        msgs.iter().map(|m| self.message_to_chat(m)).collect()
    }

    fn message_to_chat(&mut self, m: &Message) -> ChatMessage {
        for s in m.content.segments.iter() {
            let text = self.register(s);
            self.seen_words.see_text(&text);
        }
        self.seen_words.see_calls(&m.tool_calls);
        let text = self.message_text(m);
        let written = self.written_flags.get(&m.id).copied().unwrap_or_default();
        let f = &m.flags;
        let set = [
            f.summary_marker,
            f.micro_marker,
            f.has_user_turn,
            f.persisted,
        ];
        let [compressed_summary, micro_compact_marker, has_user_turn, db_persisted]: [_; 4] =
            std::array::from_fn(|i| flag_to_chat(set[i], written[i]));
        ChatMessage {
            role: m.role.as_str().to_string(),
            content: Some(text),
            tool_calls: self.chat_calls_of(&m.tool_calls),
            tool_call_id: m.tool_call_id.map(CallId::spelled),
            compressed_summary,
            micro_compact_marker,
            has_user_turn,
            db_persisted,
            compactsim_id: Some(m.id.0),
        }
    }

    /// A row's tool calls as chat tool calls, written once per shared list.
    fn chat_calls_of(&mut self, calls: &Arc<[ToolCall]>) -> Vec<ChatToolCall> {
        if calls.is_empty() {
            return Vec::new();
        }
        let address = Arc::as_ptr(calls).cast::<ToolCall>() as usize;
        if let Some((_, chat)) = self.chat_calls.get(&address) {
            return chat.clone();
        }
        let chat: Vec<ChatToolCall> = calls.iter().map(call_to_chat).collect();
        if self.chat_calls.len() >= CHAT_CALL_LISTS_MAX {
            self.chat_calls.clear();
        }
        self.chat_calls
            .insert(address, (calls.clone(), chat.clone()));
        chat
    }

    /// Reads the adapter's rows back. `before` is the transcript of the request: a row
    /// naming one of its ids keeps that id (first occurrence only); others get new ids.
    pub fn from_chat(
        &mut self,
        rows: &[ChatMessage],
        before: &[Message],
        ids: &mut IdAlloc,
    ) -> Result<Vec<Message>, String> {
        let index: TextMap<MsgId, &Message> = before.iter().map(|m| (m.id, m)).collect();
        let mut used: TextMap<MsgId, ()> = TextMap::default();
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
        let [summary_marker, micro_marker, has_user_turn, persisted] = row.flags();
        let flags = Flags {
            summary_marker,
            micro_marker,
            has_user_turn,
            persisted,
        };
        let written = [
            row.compressed_summary,
            row.micro_compact_marker,
            row.has_user_turn,
            row.db_persisted,
        ];
        if written.iter().any(Option::is_some) {
            self.written_flags.insert(id, written);
        } else {
            self.written_flags.remove(&id);
        }
        let content = match original {
            Some(o) if same_text(&self.message_text(o), text) => o.content.clone(),
            _ => {
                // New text in a row the adapter carried over was not written by that
                // row's author: it gets an origin of its own.
                let origin = if original.is_some() { ids.msg() } else { id };
                let content =
                    self.read_text(text, origin, flags.summary_marker || flags.micro_marker);
                if self.content_text(&content) == text {
                    self.exact.remove(&id);
                } else {
                    // The row's own text (shared, not copied): sent back as the same
                    // `Arc`, a row the adapter keeps is compared by address.
                    let text = row.content.clone().unwrap_or_else(|| Arc::from(""));
                    self.exact.insert(id, (content.clone(), text));
                }
                content
            }
        };
        // Calls the adapter kept as they were stay the row's shared list.
        let m = Message::new(id, role, content);
        let mut m = match original {
            Some(o) if *o.tool_calls == *calls => m.with_shared_tool_calls(o.tool_calls.clone()),
            _ => m.with_tool_calls(calls),
        }
        .with_flags(flags);
        m.tool_call_id = tool_call_id;
        Ok(m)
    }

    /// Text back to segments: known texts are their segments, the runs between them
    /// literals. A known text is recognised where it starts a line (the row's start or
    /// after a `\n`) and ends one (before a `\n` or at the row's end), the longest
    /// first; the line break or blank line that joins it to its neighbours is the join
    /// of the segments ([`Content::newline_joins`]), so the content is as long as the
    /// text.
    fn read_text(&mut self, text: &str, origin: MsgId, summary: bool) -> Content {
        if text.is_empty() {
            return Content::empty();
        }
        let mut read = Read::default();
        let mut run_start = 0;
        let mut at = 0;
        while at < text.len() {
            if let Some((seg, len)) = self.known_at(text, at) {
                let (lead, run, trail) = split_join(&text[run_start..at]);
                if run.is_empty() && lead + trail <= MERGE_SEPARATOR.len() {
                    read.push(adopt(seg, origin), lead + trail);
                } else {
                    // Text between, or line breaks more than one join holds (a text
                    // left empty between its joins): a literal, maybe empty.
                    let literal = self.literal(run, origin, summary);
                    read.push(literal, lead);
                    read.push(adopt(seg, origin), trail);
                }
                at += len;
                run_start = at;
            }
            match text[at..].find('\n') {
                Some(nl) => at += nl + 1,
                None => break,
            }
        }
        let (lead, run, _) = split_join(&text[run_start.min(text.len())..]);
        if !run.is_empty() {
            let literal = self.literal(run, origin, summary);
            read.push(literal, lead);
        }
        Content::from_segments_joined(read.segments, read.newline_joins)
    }

    /// The longest known text that starts at `at` (a line start) and ends a line.
    fn known_at(&self, text: &str, at: usize) -> Option<(Segment, usize)> {
        let rest = &text[at..];
        // A known text that starts `rest` and ends a line there has the first line
        // `rest` has, so the same head: every candidate is in this entry (with others
        // whose line only starts alike, which the check below refuses).
        let candidates = self.by_line_head.get(&LineHead::of(rest))?;
        candidates
            .iter()
            .find(|(t, _)| {
                rest.starts_with(&**t) && matches!(rest.as_bytes().get(t.len()), None | Some(b'\n'))
            })
            .map(|(t, seg)| (seg.clone(), t.len()))
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
        self.remember(text, &seg);
        seg
    }
}

/// Tool-call lists whose chat form [`TextBook`] keeps, at most.
pub const CHAT_CALL_LISTS_MAX: usize = 16_384;

/// Rows whose joined text [`TextBook`] keeps, at most.
pub const JOINED_ROWS_MAX: usize = 16_384;

/// Whether two texts are equal: the same bytes in memory (a text the harness sent, come
/// back), or equal bytes.
fn same_text(a: &str, b: &str) -> bool {
    (a.as_ptr() == b.as_ptr() && a.len() == b.len()) || a == b
}

/// Where a shared text's bytes are.
fn address(text: &Arc<str>) -> usize {
    Arc::as_ptr(text).cast::<u8>() as usize
}

/// Bytes of a first line that key the known texts.
const LINE_HEAD_BYTES: usize = 32;

/// The first [`LINE_HEAD_BYTES`] bytes of a text's first line at most (up to its first
/// `\n`), and how many they are.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct LineHead {
    bytes: [u8; LINE_HEAD_BYTES],
    len: u8,
}

impl LineHead {
    fn of(text: &str) -> LineHead {
        let head = &text.as_bytes()[..text.len().min(LINE_HEAD_BYTES)];
        let len = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
        let mut bytes = [0u8; LINE_HEAD_BYTES];
        bytes[..len].copy_from_slice(&head[..len]);
        LineHead {
            bytes,
            len: len as u8,
        }
    }
}

/// A run between recognised texts split into the line breaks that join it to them (a
/// blank line or one newline on each side, their lengths) and the text between.
fn split_join(run: &str) -> (usize, &str, usize) {
    let body = run
        .strip_prefix(MERGE_SEPARATOR)
        .or_else(|| run.strip_prefix('\n'))
        .unwrap_or(run);
    let lead = run.len() - body.len();
    let trimmed = body
        .strip_suffix(MERGE_SEPARATOR)
        .or_else(|| body.strip_suffix('\n'))
        .unwrap_or(body);
    (lead, trimmed, body.len() - trimmed.len())
}

/// Segments read from a row, with the ones that follow their neighbour after one newline.
#[derive(Default)]
struct Read {
    segments: Vec<Segment>,
    newline_joins: Vec<u32>,
}

impl Read {
    /// Appends `seg`, joined to the segment before it by `join_len` line breaks.
    fn push(&mut self, seg: Segment, join_len: usize) {
        if join_len == 1 && !self.segments.is_empty() {
            self.newline_joins.push(self.segments.len() as u32);
        }
        self.segments.push(seg);
    }
}

/// A flag as sent: set in the model (true), else as the adapter last wrote it on the
/// row (false included), else absent.
fn flag_to_chat(set: bool, written: Option<bool>) -> Option<bool> {
    if set {
        Some(true)
    } else {
        written.map(|_| false)
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
    compactsim_model::verdict::fnv1a64_from(compactsim_model::verdict::FNV1A64_OFFSET_BASIS, bytes)
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
        id: c.id.spelled(),
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
