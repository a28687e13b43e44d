//! Test-only row builders shared by the simulator's unit tests.

use compactsim_model::{CallId, Content, ContentKind, Message, MsgId, Role, Segment, ToolCall};

/// A row with id `id` and role `role` holding one prose segment of `chars` characters
/// and no fact.
pub fn row(id: u32, role: Role, chars: u32) -> Message {
    let seg = Segment {
        kind: ContentKind::Prose,
        chars,
        seed: id as u64,
        origin: MsgId(id),
        facts: vec![],
    };
    Message::new(MsgId(id), role, Content::single(seg))
}

/// One agent turn from id `base`: a user row, an assistant row making one call, its tool
/// result and the assistant's reply; every row but the call row holds `chars` characters.
pub fn tool_turn(base: u32, chars: u32) -> Vec<Message> {
    let call = ToolCall {
        id: CallId(base),
        name: "t".into(),
        arguments: "{}".into(),
    };
    vec![
        row(base, Role::User, chars),
        row(base + 1, Role::Assistant, 0).with_tool_calls(vec![call]),
        row(base + 2, Role::Tool, chars).with_tool_call_id(CallId(base)),
        row(base + 3, Role::Assistant, chars),
    ]
}
