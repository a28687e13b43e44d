//! The messages of the stdio protocol (adapters/PROTOCOL.md), one JSON object per line.
//! `HarnessMsg` is what the harness writes to the adapter's stdin, `AdapterMsg` what it
//! reads from its stdout. Unknown keys in adapter messages are a protocol violation,
//! except inside chat messages (an adapter may carry its own row keys).

use super::delta::Edit;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The protocol version of the harness's `hello` (every adapter speaks it).
pub const PROTOCOL_VERSION: u32 = 1;
/// Protocol 2: pass requests and results carry transcript deltas (see `delta`).
pub const PROTOCOL_DELTAS: u32 = 2;
/// The highest protocol version this harness speaks.
pub const PROTOCOL_VERSION_MAX: u32 = PROTOCOL_DELTAS;
/// The `code` of an adapter `error` that refuses a delta against a transcript it does
/// not hold (protocol 2).
pub const ERROR_CODE_DESYNC: &str = "desync";

/// Hook names of the protocol (adapters/PROTOCOL.md, "Hooks").
pub const HOOK_COOLING_DOWN: &str = "cooling_down";
pub const HOOK_FALLBACK_STREAK: &str = "fallback_streak";
pub const HOOK_USAGE: &str = "usage";
/// Every hook the harness sends: a hello listing another name is refused.
pub const KNOWN_HOOKS: [&str; 3] = [HOOK_COOLING_DOWN, HOOK_FALLBACK_STREAK, HOOK_USAGE];

/// One row of a transcript in OpenAI chat format, with the Hermes metadata keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    /// Text content. `null` is read as empty.
    #[serde(default, deserialize_with = "shared_text")]
    pub content: Option<Arc<str>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ChatToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The four Hermes metadata flags: `None` when absent. The harness sends a flag
    /// that is true, and a false one when the adapter itself returned it false for that
    /// row (flags round-trip as the adapter wrote them, false included).
    #[serde(
        rename = "_compressed_summary",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub compressed_summary: Option<bool>,
    #[serde(
        rename = "_micro_compact_marker",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub micro_compact_marker: Option<bool>,
    #[serde(
        rename = "_compressed_summary_has_user_turn",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub has_user_turn: Option<bool>,
    #[serde(
        rename = "_db_persisted",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub db_persisted: Option<bool>,
    /// The harness's row id. Kept on rows the adapter carries over; absent on new rows.
    #[serde(
        rename = "_compactsim_id",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub compactsim_id: Option<u32>,
}

/// An optional string read straight into an `Arc<str>`: serde's own reader of
/// `Arc<str>` makes a `String` first and copies it again into the `Arc`.
fn shared_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Arc<str>>, D::Error> {
    struct Text;
    impl<'de> serde::de::Visitor<'de> for Text {
        type Value = Option<Arc<str>>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a string")
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: serde::Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_str(self)
        }
        fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
            Ok(Some(Arc::from(s)))
        }
    }
    d.deserialize_option(Text)
}

impl ChatMessage {
    /// A row of `role` holding `content` only: no tool calls, no flags set.
    pub fn plain(role: &str, content: &str, compactsim_id: Option<u32>) -> Self {
        ChatMessage {
            role: role.into(),
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
            compressed_summary: None,
            micro_compact_marker: None,
            has_user_turn: None,
            db_persisted: None,
            compactsim_id,
        }
    }

    /// The flags as the model reads them (absent and false alike: not set).
    pub fn flags(&self) -> [bool; 4] {
        [
            self.compressed_summary,
            self.micro_compact_marker,
            self.has_user_turn,
            self.db_persisted,
        ]
        .map(|f| f == Some(true))
    }
}

/// One `tool_calls[]` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: ChatFunction,
}

fn function_type() -> String {
    "function".into()
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatFunction {
    pub name: String,
    pub arguments: String,
}

/// What triggered a batch pass (hermes-domain §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    Preflight,
    PostResponse,
    Overflow,
    Manual,
}

/// The part of a request every pass and hook carries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PassInput {
    /// The agent turn this request belongs to (0-based, as in the event log).
    pub turn: u32,
    pub transcript: Vec<ChatMessage>,
    pub context_window_tokens: u64,
    /// Virtual time of the case in milliseconds (use it instead of a wall clock, e.g.
    /// for cooldowns, so a run stays deterministic).
    #[serde(default)]
    pub now_ms: u64,
    /// The case's declared compactor configuration (names with units last).
    pub config: BTreeMap<String, serde_json::Value>,
}

/// Harness -> adapter. (No `deny_unknown_fields`: serde does not support it with
/// `flatten`; the schema test checks the harness's own lines instead.)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HarnessMsg {
    Hello {
        id: u64,
        protocol: u32,
        /// The versions the harness offers (absent: 1 only); the adapter's hello
        /// answers the one it speaks.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        protocols: Vec<u32>,
    },
    MicroPass {
        id: u64,
        #[serde(flatten)]
        input: PassInput,
    },
    BatchPass {
        id: u64,
        trigger: Trigger,
        force: bool,
        #[serde(flatten)]
        input: PassInput,
    },
    Hook {
        id: u64,
        hook: String,
        #[serde(default)]
        args: BTreeMap<String, serde_json::Value>,
        #[serde(flatten)]
        input: PassInput,
    },
    Restart {
        id: u64,
    },
    /// A gateway store request (PROTOCOL.md, "Gateway store"): `op`, `now_ms` and the
    /// op's fields (see `store::ops`).
    Store {
        id: u64,
        #[serde(flatten)]
        body: serde_json::Map<String, serde_json::Value>,
    },
    /// The answer to a `summarize` the adapter sent during request `id`.
    Summary {
        id: u64,
        call: u32,
        #[serde(flatten)]
        answer: SummaryAnswer,
    },
}

/// What a `summarize` call asks the summarizer for (PROTOCOL.md, "Summarizer calls").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// The new cumulative summary: the previous summary the prompt carries updated with
    /// the input it quotes (the default).
    Summarize,
    /// The previous summary the prompt carries, re-summarized alone: same facts,
    /// shorter (the fake summarizer's `condense`, as the Rust reference's defrag asks).
    Condense,
}

/// The harness's answer to one `summarize`: text, or an error the adapter must treat as
/// a failed LLM call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SummaryAnswer {
    Ok {
        text: String,
        /// `stop`, or `length` when the output was cut at `max_tokens`.
        finish_reason: String,
    },
    Err {
        error: String,
        message: String,
    },
}

/// Adapter -> harness.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum AdapterMsg {
    Hello {
        id: u64,
        protocol: u32,
        name: String,
        version: String,
        capabilities: Capabilities,
    },
    /// A summarizer call made while handling request `id`; `call` counts from 0 per request.
    Summarize {
        id: u64,
        call: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        messages: Option<Vec<ChatMessage>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_tokens: Option<u32>,
        /// What the call asks for (absent: `summarize`); `condense` re-summarizes the
        /// previous summary the prompt carries alone (a micro defrag).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        purpose: Option<Purpose>,
    },
    /// The reply to request `id`: a new transcript (passes), a value (hooks), or neither
    /// (restart). Labels are printed, never trusted.
    Result {
        id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        transcript: Option<Vec<ChatMessage>>,
        /// Protocol 2: the new transcript as edits of the request's (see `delta`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        edits: Option<Vec<Edit>>,
        /// Protocol 2: the digest of the transcript `edits` make.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        digest: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<serde_json::Value>,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        labels: BTreeMap<String, serde_json::Value>,
    },
    /// The adapter could not handle request `id` (an adapter failure, exit 4);
    /// `code` `desync` (protocol 2): a delta against a transcript it does not hold.
    Error {
        id: u64,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
}

/// What an adapter implements.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    #[serde(default)]
    pub micro_pass: bool,
    #[serde(default)]
    pub batch_pass: bool,
    /// Names of the optional hooks the adapter answers.
    #[serde(default)]
    pub hooks: Vec<String>,
    /// The policies the adapter follows, name -> parameters (PROTOCOL.md, "Policies"):
    /// they choose the policy invariants and rules that judge it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub policies: BTreeMap<String, serde_json::Value>,
    /// When the adapter means to compact (`compaction-effective` holds it to it);
    /// absent: the case's context window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<TriggerDecl>,
    /// Which passes keep the trigger's promise: `micro_pass`, `batch_pass`; absent: every
    /// pass the adapter serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_passes: Option<Vec<String>>,
    /// `"gateway"`: the adapter keeps the gateway's session store (PROTOCOL.md,
    /// "Gateway store"); any other value is refused at the hello.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
}

impl Capabilities {
    /// The passes held to the trigger: (micro, batch), or what is wrong with the list.
    pub fn trigger_passes(&self) -> Result<(bool, bool), String> {
        let Some(names) = &self.trigger_passes else {
            return Ok((true, true));
        };
        let mut kinds = (false, false);
        for name in names {
            match name.as_str() {
                "micro_pass" => kinds.0 = true,
                "batch_pass" => kinds.1 = true,
                other => {
                    return Err(format!(
                        "capabilities.trigger_passes names `{other}`, not micro_pass or batch_pass"
                    ))
                }
            }
        }
        Ok(kinds)
    }
}

/// `capabilities.trigger`: `{"tokens": N}` or `{"window_percent": P}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TriggerDecl {
    Tokens(u64),
    WindowPercent(u32),
}

impl TriggerDecl {
    /// A declaration the harness can hold an adapter to, or what is wrong with it.
    pub fn check(self) -> Result<TriggerDecl, String> {
        match self {
            TriggerDecl::Tokens(0) => Err("capabilities.trigger tokens must be at least 1".into()),
            TriggerDecl::WindowPercent(p) if !(1..=100).contains(&p) => Err(format!(
                "capabilities.trigger window_percent must be 1..=100, not {p}"
            )),
            ok => Ok(ok),
        }
    }
}

impl HarnessMsg {
    pub fn id(&self) -> u64 {
        match self {
            HarnessMsg::Hello { id, .. }
            | HarnessMsg::MicroPass { id, .. }
            | HarnessMsg::BatchPass { id, .. }
            | HarnessMsg::Hook { id, .. }
            | HarnessMsg::Restart { id }
            | HarnessMsg::Store { id, .. }
            | HarnessMsg::Summary { id, .. } => *id,
        }
    }

    /// The request's name for messages: `micro_pass #3`.
    pub fn describe(&self) -> String {
        let kind = match self {
            HarnessMsg::Hello { .. } => "hello".to_string(),
            HarnessMsg::MicroPass { input, .. } => format!("micro_pass turn {}", input.turn),
            HarnessMsg::BatchPass { trigger, input, .. } => {
                format!("batch_pass {trigger:?} turn {}", input.turn)
            }
            HarnessMsg::Hook { hook, .. } => format!("hook {hook}"),
            HarnessMsg::Restart { .. } => "restart".to_string(),
            HarnessMsg::Store { body, .. } => format!(
                "store {}",
                body.get("op").and_then(|v| v.as_str()).unwrap_or("?")
            ),
            HarnessMsg::Summary { call, .. } => format!("summary {call}"),
        };
        format!("request {} ({kind})", self.id())
    }
}

impl AdapterMsg {
    pub fn id(&self) -> u64 {
        match self {
            AdapterMsg::Hello { id, .. }
            | AdapterMsg::Summarize { id, .. }
            | AdapterMsg::Result { id, .. }
            | AdapterMsg::Error { id, .. } => *id,
        }
    }
}
