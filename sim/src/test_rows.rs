//! Test-only row builders shared by the simulator's unit tests.

use compactsim_model::{Content, ContentKind, Message, MsgId, Role, Segment};

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
