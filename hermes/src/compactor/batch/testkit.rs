//! Builders for the batch compressor's tests: hand-built transcripts and a scripted
//! summary backend.
#![cfg(test)]

use super::SummaryBackend;
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::summarizer::{cut_at, RollingSummary, SummaryCall, SummaryFailure};
use compactsim_model::{
    Content, ContentKind, FactId, Flags, Message, MsgId, Role, Segment, ToolCall,
};
use std::collections::VecDeque;

/// Builds a transcript row by row; every row gets a fresh id and one planted fact.
#[derive(Default)]
pub struct Builder {
    pub ids: IdAlloc,
    pub rows: Vec<Message>,
}

impl Builder {
    pub fn new() -> Self {
        Builder::default()
    }

    fn content(&mut self, id: MsgId, kind: ContentKind, chars: u32) -> Content {
        Content::single(Segment {
            kind,
            chars,
            seed: 1_000 + id.0 as u64,
            origin: id,
            facts: vec![self.ids.fact()],
        })
    }

    pub fn push(&mut self, role: Role, chars: u32) -> MsgId {
        let id = self.ids.msg();
        let content = self.content(id, ContentKind::Prose, chars);
        self.rows.push(Message::new(id, role, content));
        id
    }

    pub fn system(&mut self) -> MsgId {
        self.push(Role::System, 400)
    }

    pub fn user(&mut self, chars: u32) -> MsgId {
        self.push(Role::User, chars)
    }

    pub fn reply(&mut self, chars: u32) -> MsgId {
        self.push(Role::Assistant, chars)
    }

    /// An assistant row with one call and its tool result; returns (assistant, tool).
    pub fn round(&mut self, result_chars: u32) -> (MsgId, MsgId) {
        self.round_with_args(result_chars, "{\"cmd\":\"ls\"}".into())
    }

    pub fn round_with_args(&mut self, result_chars: u32, arguments: String) -> (MsgId, MsgId) {
        let call = self.ids.call();
        let asst = self.ids.msg();
        let calls = vec![ToolCall {
            id: call,
            name: "terminal".into(),
            arguments: arguments.into(),
        }];
        self.rows
            .push(Message::new(asst, Role::Assistant, Content::empty()).with_tool_calls(calls));
        let tool = self.ids.msg();
        let content = self.content(tool, ContentKind::Code, result_chars);
        self.rows
            .push(Message::new(tool, Role::Tool, content).with_tool_call_id(call));
        (asst, tool)
    }

    /// A tool round whose assistant row also says something (a visible reply).
    pub fn talking_round(&mut self, result_chars: u32) -> (MsgId, MsgId) {
        let (asst, tool) = self.round(result_chars);
        let i = self.rows.len() - 2;
        let text = self.content(asst, ContentKind::Prose, 200);
        self.rows[i].set_content(text);
        (asst, tool)
    }

    /// One agent turn: user, `rounds` tool rounds, final reply. Returns the user row id.
    pub fn turn(&mut self, user_chars: u32, rounds: u32, result_chars: u32) -> MsgId {
        let u = self.user(user_chars);
        for _ in 0..rounds {
            self.round(result_chars);
        }
        self.reply(user_chars);
        u
    }

    /// A standalone batch summary row holding `facts`.
    pub fn summary(&mut self, role: Role, facts: &[u32]) -> MsgId {
        let id = self.ids.msg();
        let body = Segment {
            kind: ContentKind::Summary,
            chars: 800,
            seed: 7,
            origin: id,
            facts: facts.iter().map(|&f| FactId(f)).collect(),
        };
        let flags = Flags {
            summary_marker: true,
            ..Flags::default()
        };
        self.rows
            .push(Message::new(id, role, Content::single(body)).with_flags(flags));
        id
    }

    /// Mark every row persisted, as the session DB flush would.
    pub fn persisted(mut self) -> Self {
        for m in &mut self.rows {
            m.flags.persisted = true;
        }
        self
    }
}

/// Index of the row with id `id`.
pub fn index_of(messages: &[Message], id: MsgId) -> Option<usize> {
    messages.iter().position(|m| m.id == id)
}

/// A row carries call `id` with arguments that are not valid JSON.
pub fn invalid_json_calls(messages: &[Message]) -> usize {
    messages
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .filter(|c| serde_json::from_str::<serde_json::Value>(&c.arguments).is_err())
        .count()
}

/// One summarizer call as the backend saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeenCall {
    pub previous: RollingSummary,
    pub input_facts: Vec<FactId>,
    pub input_tokens: u32,
}

/// A backend that answers from a script (then succeeds): a success keeps every fact
/// and grows by a fifth of the input, clamped to 500..=4,000 tokens.
#[derive(Default)]
pub struct Scripted {
    pub failures: VecDeque<SummaryFailure>,
    pub seen: Vec<SeenCall>,
}

impl Scripted {
    pub fn failing(failures: &[SummaryFailure]) -> Self {
        Scripted {
            failures: failures.iter().copied().collect(),
            seen: vec![],
        }
    }
}

impl SummaryBackend for Scripted {
    fn summarize_within(
        &mut self,
        previous: &RollingSummary,
        input_facts: &[FactId],
        input_tokens: u32,
        max_tokens: Option<u32>,
    ) -> SummaryCall {
        self.seen.push(SeenCall {
            previous: previous.clone(),
            input_facts: input_facts.to_vec(),
            input_tokens,
        });
        let result = match self.failures.pop_front() {
            Some(f) => Err(f),
            None => {
                let mut facts: Vec<FactId> = previous.facts.clone();
                facts.extend_from_slice(input_facts);
                facts.sort_unstable();
                facts.dedup();
                let tokens = (previous.tokens + input_tokens / 5).clamp(500, 4_000);
                Ok(RollingSummary { facts, tokens })
            }
        };
        let call = SummaryCall {
            result,
            expanded: false,
            latency_ms: 1_000,
        };
        cut_at(self, call, max_tokens)
    }

    /// The batch compressor never condenses.
    fn condense_within(&mut self, summary: &RollingSummary, _: Option<u32>) -> SummaryCall {
        unreachable!("batch compressor condensed {summary:?}")
    }
}
