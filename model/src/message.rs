//! Messages in the OpenAI chat shape Hermes uses (hermes-domain §1.1), with the in-process
//! metadata flags as typed fields and token counts cached at construction.

use crate::arguments::Arguments;
use crate::content::Content;
use crate::ids::{CallId, MsgId};
use crate::tokens::{real_tokens, rough_tokens, ContentKind, Tokens, REAL_OVERHEAD_TOKENS};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One `tool_calls[]` entry. `arguments` is the JSON *string* providers validate strictly.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: CallId,
    pub name: String,
    pub arguments: Arguments,
}

/// Wrapper characters of a call's string form (`{"id": …, "type": "function", …}`) that
/// the tail walk counts on top of name and arguments (#28053).
pub const TOOL_CALL_ENVELOPE_CHARS: u32 = 64;

impl ToolCall {
    /// Characters of the call's string form.
    pub fn envelope_chars(&self) -> u32 {
        TOOL_CALL_ENVELOPE_CHARS + self.name.len() as u32 + self.arguments.len() as u32
    }
}

/// The underscore-prefixed metadata keys Hermes keeps on live rows (§1.1).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct Flags {
    /// `_compressed_summary`: the row is (or contains) a compaction summary.
    pub summary_marker: bool,
    /// `_micro_compact_marker`: the summary belongs to the micro-compaction lineage.
    pub micro_marker: bool,
    /// `_compressed_summary_has_user_turn`: user text was folded into this summary row.
    pub has_user_turn: bool,
    /// `_db_persisted`: the row was already written to state.db.
    pub persisted: bool,
}

impl Flags {
    /// The four flags as one number (equal exactly when the flags are equal), so a row
    /// compare tests them at once.
    #[inline(always)]
    fn packed(self) -> u32 {
        u32::from_le_bytes([
            self.summary_marker as u8,
            self.micro_marker as u8,
            self.has_user_turn as u8,
            self.persisted as u8,
        ])
    }
}

/// One message. Construct with [`Message::new`] and change content only through the
/// methods here, so the cached token counts stay equal to a recount.
#[derive(Clone, Eq, Debug, Serialize, Deserialize)]
pub struct Message {
    pub id: MsgId,
    pub role: Role,
    pub content: Content,
    pub tool_calls: Arc<[ToolCall]>,
    pub tool_call_id: Option<CallId>,
    pub flags: Flags,
    tokens: Tokens,
}

/// Field-by-field equality, as derived, with shared text and calls equal without
/// comparing them (the standard library's pointer shortcut does not apply to slices).
impl PartialEq for Message {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        let Message {
            id,
            role,
            content,
            tool_calls,
            tool_call_id,
            flags,
            tokens,
        } = self;
        *id == other.id
            && *tokens == other.tokens
            && *role == other.role
            && *tool_call_id == other.tool_call_id
            && *flags == other.flags
            && *content == other.content
            && (Arc::ptr_eq(tool_calls, &other.tool_calls) || **tool_calls == *other.tool_calls)
    }
}

impl Message {
    /// Equal to `self == other`, faster on the common case of a row compared with its
    /// own copy: the scalar fields and the two shared pointers are compared inline, and
    /// only rows whose text or calls are not shared fall back to the full comparison
    /// (`equals_matches_eq` proves the two agree).
    #[inline(always)]
    pub fn equals(&self, other: &Self) -> bool {
        let shared = self.id == other.id
            && self.tokens == other.tokens
            && self.role == other.role
            && self.tool_call_id == other.tool_call_id
            && self.flags.packed() == other.flags.packed()
            && Arc::ptr_eq(&self.content.segments, &other.content.segments)
            && Arc::ptr_eq(&self.tool_calls, &other.tool_calls);
        shared || self.equals_slow(other)
    }

    #[inline(never)]
    fn equals_slow(&self, other: &Self) -> bool {
        self == other
    }

    pub fn new(id: MsgId, role: Role, content: Content) -> Self {
        let mut m = Message {
            id,
            role,
            content,
            tool_calls: Arc::from(Vec::new()),
            tool_call_id: None,
            flags: Flags::default(),
            tokens: Tokens::default(),
        };
        m.recount();
        m
    }

    pub fn with_tool_calls(self, calls: Vec<ToolCall>) -> Self {
        self.with_shared_tool_calls(Arc::from(calls))
    }

    /// [`Message::with_tool_calls`] with a list another message holds (shared, not
    /// copied).
    pub fn with_shared_tool_calls(mut self, calls: Arc<[ToolCall]>) -> Self {
        self.tool_calls = calls;
        self.recount();
        self
    }

    pub fn with_tool_call_id(mut self, id: CallId) -> Self {
        self.tool_call_id = Some(id);
        self
    }

    pub fn with_flags(mut self, flags: Flags) -> Self {
        self.flags = flags;
        self
    }

    /// Cached token counts (equal to a fresh count of the current content).
    pub fn tokens(&self) -> Tokens {
        debug_assert_eq!(
            self.tokens,
            self.count(),
            "stale token cache on {}",
            self.id
        );
        self.tokens
    }

    /// Replaces the content and recounts.
    pub fn set_content(&mut self, content: Content) {
        self.content = content;
        self.recount();
    }

    /// Appends another row's content after a blank line and recounts.
    pub fn merge_content(&mut self, other: &Content) {
        self.content.merge(other);
        self.recount();
    }

    /// Replaces the tool calls and recounts.
    pub fn set_tool_calls(&mut self, calls: Vec<ToolCall>) {
        self.tool_calls = Arc::from(calls);
        self.recount();
    }

    fn recount(&mut self) {
        self.tokens = self.count();
    }

    fn count(&self) -> Tokens {
        let call_chars: u32 = self.tool_calls.iter().map(ToolCall::envelope_chars).sum();
        Tokens {
            rough: self.content.rough_tokens() + rough_tokens(call_chars),
            real: self.content.real_tokens()
                + real_tokens(ContentKind::Json, call_chars)
                + REAL_OVERHEAD_TOKENS,
        }
    }

    /// A compaction summary of either lineage (batch summary or micro marker).
    pub fn is_summary(&self) -> bool {
        self.flags.summary_marker || self.flags.micro_marker
    }

    pub fn is_micro_marker(&self) -> bool {
        self.flags.micro_marker
    }

    /// A batch summary: a summary row that is not in the micro lineage.
    pub fn is_batch_summary(&self) -> bool {
        self.flags.summary_marker && !self.flags.micro_marker
    }

    /// A user row written by a person: role user and not a summary.
    pub fn is_real_user(&self) -> bool {
        self.role == Role::User && !self.is_summary()
    }

    /// An assistant row the user sees: assistant, not a summary, with text.
    pub fn is_visible_reply(&self) -> bool {
        self.role == Role::Assistant && !self.is_summary() && !self.content.is_empty()
    }
}

/// Total rough tokens of a message list (the "transcript tokens" of the invariants).
/// The summary rows of `after` a pass wrote (a new id, or content changed from
/// `before`), with their positions in `after`.
pub fn written_summaries<'a>(
    before: &'a [Message],
    after: &'a [Message],
) -> impl Iterator<Item = (usize, &'a Message)> {
    let old: std::collections::BTreeMap<_, _> = before
        .iter()
        .filter(|m| m.is_summary())
        .map(|m| (m.id, &m.content))
        .collect();
    after
        .iter()
        .enumerate()
        .filter(|(_, m)| m.is_summary())
        .filter(move |(_, m)| old.get(&m.id) != Some(&&m.content))
}

pub fn tokens_rough_total(messages: &[Message]) -> u64 {
    messages.iter().map(|m| m.tokens().rough as u64).sum()
}

/// Total real tokens of a message list.
pub fn tokens_real_total(messages: &[Message]) -> u64 {
    messages.iter().map(|m| m.tokens().real as u64).sum()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::content::Segment;
    use crate::ids::FactId;

    /// One prose segment of `chars` characters (shared with the other model tests).
    pub(crate) fn prose(chars: u32) -> Content {
        Content::single(Segment {
            kind: ContentKind::Prose,
            chars,
            seed: 1,
            origin: MsgId(0),
            facts: vec![FactId(1)],
        })
    }

    #[test]
    fn token_cache_follows_content_and_calls() {
        let mut m = Message::new(MsgId(0), Role::Assistant, prose(400));
        assert_eq!(m.tokens().rough, 100);
        let call = ToolCall {
            id: CallId(1),
            name: "terminal".into(),
            arguments: "{\"cmd\":\"ls\"}".into(),
        };
        let envelope = call.envelope_chars();
        m.set_tool_calls(vec![call]);
        assert_eq!(m.tokens().rough, 100 + envelope.div_ceil(4));
        m.merge_content(&prose(400));
        assert_eq!(
            m.tokens().rough,
            (802u32).div_ceil(4) + envelope.div_ceil(4)
        );
        assert!(m.tokens().real > m.tokens().rough);
    }

    #[test]
    fn equals_matches_eq() {
        let call = |args: &str| ToolCall {
            id: CallId(1),
            name: "terminal".into(),
            arguments: args.into(),
        };
        let base =
            Message::new(MsgId(0), Role::Assistant, prose(40)).with_tool_calls(vec![call("{}")]);
        let mut variants = vec![base.clone()];
        // Equal by value but not sharing text or calls: the slow path.
        variants.push(
            Message::new(MsgId(0), Role::Assistant, prose(40)).with_tool_calls(vec![call("{}")]),
        );
        let mut v = base.clone();
        v.id = MsgId(1);
        variants.push(v);
        variants.push(Message {
            role: Role::User,
            ..base.clone()
        });
        variants.push(base.clone().with_tool_call_id(CallId(7)));
        let mut v = base.clone();
        v.flags.persisted = true;
        variants.push(v);
        let mut v = base.clone();
        v.set_content(prose(41));
        variants.push(v);
        let mut v = base.clone();
        v.set_content(prose(40));
        variants.push(v);
        let mut v = base.clone();
        v.set_tool_calls(vec![call("{\"a\":1}")]);
        variants.push(v);
        let mut v = base.clone();
        v.set_tool_calls(vec![call("{}")]);
        variants.push(v);
        for a in &variants {
            for b in &variants {
                assert_eq!(a.equals(b), a == b, "{a:?} vs {b:?}");
            }
        }
        assert!(variants[0].equals(&variants[1]) && variants[0].equals(&variants[7]));
        assert!(!variants[0].equals(&variants[2]) && !variants[0].equals(&variants[6]));
    }

    #[test]
    fn role_predicates() {
        let user = Message::new(MsgId(0), Role::User, prose(4));
        assert!(user.is_real_user());
        let marker = Message::new(MsgId(1), Role::User, prose(4)).with_flags(Flags {
            summary_marker: true,
            ..Flags::default()
        });
        assert!(!marker.is_real_user() && marker.is_batch_summary());
        let micro = Message::new(MsgId(2), Role::Assistant, prose(4)).with_flags(Flags {
            summary_marker: true,
            micro_marker: true,
            ..Flags::default()
        });
        assert!(micro.is_micro_marker() && !micro.is_batch_summary() && !micro.is_visible_reply());
    }
}
