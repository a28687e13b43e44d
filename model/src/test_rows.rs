//! Test-only row builders shared by the model crate's unit tests.

use crate::content::{Content, Segment};
use crate::ids::MsgId;
use crate::message::{Message, Role};
use crate::tokens::ContentKind;

/// A user row with id `id` holding one prose segment of `chars` characters and no fact.
pub fn row(id: u32, chars: u32) -> Message {
    let seg = Segment {
        kind: ContentKind::Prose,
        chars,
        seed: id as u64,
        origin: MsgId(id),
        facts: vec![],
    };
    Message::new(MsgId(id), Role::User, Content::single(seg))
}

/// [`row`]s with ids `ids`, each of `chars` characters.
pub fn rows(ids: &[u32], chars: u32) -> Vec<Message> {
    ids.iter().map(|&i| row(i, chars)).collect()
}
