//! The `store` requests of the gateway's durable steps (adapters/PROTOCOL.md, "Gateway
//! store", "Requests"), one variant per `op`, and their wire bodies.

use crate::external::wire::ChatMessage;
use compactsim_model::{Message, MsgId};
use serde_json::{json, Map, Value};

/// A committed compaction: the session rotated to a child, or compacted in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Rotate,
    InPlace,
}

/// Why a compaction or a reset ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// A compaction the agent turn committed.
    Turn,
    /// Session hygiene before the turn.
    Hygiene,
    /// `/compress` or `/reset`.
    Command,
    /// The `compression_exhausted` auto-reset.
    Exhausted,
}

impl Reason {
    fn name(self) -> &'static str {
        match self {
            Reason::Turn => "turn",
            Reason::Hygiene => "hygiene",
            Reason::Command => "command",
            Reason::Exhausted => "exhausted",
        }
    }
}

/// One store request; session ids are the adapter's.
#[derive(Clone, Debug)]
pub enum StoreOp<'a> {
    Create {
        key: &'a str,
        rows: &'a [Message],
        route: bool,
    },
    Deliver {
        key: &'a str,
        inbound: u64,
        delivery: u32,
    },
    Load {
        key: &'a str,
        session: Option<&'a str>,
    },
    Append {
        session: &'a str,
        rows: &'a [Message],
        inbound: Option<u64>,
    },
    Compact {
        session: &'a str,
        mode: Mode,
        rows: &'a [Message],
        reason: Reason,
        inbound: Option<u64>,
    },
    Route {
        key: &'a str,
        session: &'a str,
    },
    Bind {
        key: &'a str,
        session: &'a str,
    },
    Retract {
        session: &'a str,
        from: MsgId,
        inbound: Option<u64>,
    },
    Reset {
        key: &'a str,
        session: &'a str,
        rows: &'a [Message],
        reason: Reason,
        inbound: Option<u64>,
    },
    Stop {
        key: &'a str,
        inbound: u64,
    },
    Ack {
        key: &'a str,
        inbound: u64,
    },
    Read,
}

impl StoreOp<'_> {
    /// The request's fields after `type` and `id`: `op`, `now_ms`, then the op's own;
    /// `chat` encodes rows as the passes do.
    pub fn body(
        &self,
        now_ms: u64,
        chat: &mut dyn FnMut(&[Message]) -> Vec<ChatMessage>,
    ) -> Map<String, Value> {
        let (op, fields) = self.fields(chat);
        let mut m = Map::new();
        m.insert("op".into(), Value::from(op));
        m.insert("now_ms".into(), Value::from(now_ms));
        if let Value::Object(f) = fields {
            for (k, v) in f {
                if !v.is_null() {
                    m.insert(k, v);
                }
            }
        }
        m
    }

    fn fields(
        &self,
        chat: &mut dyn FnMut(&[Message]) -> Vec<ChatMessage>,
    ) -> (&'static str, Value) {
        let mode = |m: Mode| match m {
            Mode::Rotate => "rotate",
            Mode::InPlace => "in_place",
        };
        match *self {
            StoreOp::Create { key, rows, route } => (
                "create",
                json!({"key": key, "rows": chat(rows), "route": route}),
            ),
            StoreOp::Deliver {
                key,
                inbound,
                delivery,
            } => (
                "deliver",
                json!({"key": key, "inbound": inbound, "delivery": delivery}),
            ),
            StoreOp::Load { key, session } => ("load", json!({"key": key, "session": session})),
            StoreOp::Append {
                session,
                rows,
                inbound,
            } => (
                "append",
                json!({"session": session, "rows": chat(rows), "inbound": inbound}),
            ),
            StoreOp::Compact {
                session,
                mode: m,
                rows,
                reason,
                inbound,
            } => (
                "compact",
                json!({"session": session, "mode": mode(m), "rows": chat(rows),
                       "reason": reason.name(), "inbound": inbound}),
            ),
            StoreOp::Route { key, session } => ("route", json!({"key": key, "session": session})),
            StoreOp::Bind { key, session } => ("bind", json!({"key": key, "session": session})),
            StoreOp::Retract {
                session,
                from,
                inbound,
            } => (
                "retract",
                json!({"session": session, "from": from.0, "inbound": inbound}),
            ),
            StoreOp::Reset {
                key,
                session,
                rows,
                reason,
                inbound,
            } => (
                "reset",
                json!({"key": key, "session": session, "rows": chat(rows),
                       "reason": reason.name(), "inbound": inbound}),
            ),
            StoreOp::Stop { key, inbound } => ("stop", json!({"key": key, "inbound": inbound})),
            StoreOp::Ack { key, inbound } => ("ack", json!({"key": key, "inbound": inbound})),
            StoreOp::Read => ("read", json!({})),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_model::{Content, Role};

    #[test]
    fn a_body_names_the_op_and_leaves_out_the_absent_fields() {
        let rows = [Message::new(MsgId(3), Role::User, Content::empty())];
        let mut chat = |m: &[Message]| -> Vec<ChatMessage> {
            m.iter()
                .map(|r| ChatMessage::plain("user", "", Some(r.id.0)))
                .collect()
        };
        let op = StoreOp::Append {
            session: "s1",
            rows: &rows,
            inbound: None,
        };
        let body = Value::Object(op.body(7, &mut chat));
        assert_eq!(
            body,
            json!({"op": "append", "now_ms": 7, "session": "s1",
                   "rows": [{"role": "user", "content": "", "_compactsim_id": 3}]})
        );
        let load = Value::Object(
            StoreOp::Load {
                key: "k",
                session: None,
            }
            .body(0, &mut chat),
        );
        assert_eq!(load, json!({"op": "load", "now_ms": 0, "key": "k"}));
    }
}
