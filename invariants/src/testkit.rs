//! Builders for the invariant tests: short message lists and events.
#![cfg(test)]

use compactsim_model::*;

pub fn prose(id: u32, chars: u32, facts: &[u32]) -> Content {
    Content::single(Segment {
        kind: ContentKind::Prose,
        chars,
        seed: id as u64,
        origin: MsgId(id),
        facts: facts.iter().map(|&f| FactId(f)).collect(),
    })
}

pub fn user(id: u32) -> Message {
    Message::new(MsgId(id), Role::User, prose(id, 40, &[]))
}

pub fn reply(id: u32) -> Message {
    Message::new(MsgId(id), Role::Assistant, prose(id, 80, &[]))
}

pub fn system(id: u32) -> Message {
    Message::new(MsgId(id), Role::System, prose(id, 400, &[]))
}

pub fn calling(id: u32, calls: &[u32]) -> Message {
    let calls = calls
        .iter()
        .map(|&c| ToolCall {
            id: CallId(c),
            name: "terminal".into(),
            arguments: "{\"cmd\":\"ls\"}".into(),
        })
        .collect();
    Message::new(MsgId(id), Role::Assistant, Content::empty()).with_tool_calls(calls)
}

pub fn tool(id: u32, call: u32) -> Message {
    Message::new(MsgId(id), Role::Tool, prose(id, 200, &[])).with_tool_call_id(CallId(call))
}

pub fn micro_marker(id: u32, facts: &[u32]) -> Message {
    Message::new(
        MsgId(id),
        Role::Assistant,
        prose(id, 1600 + 40 * facts.len() as u32, facts),
    )
    .with_flags(Flags {
        summary_marker: true,
        micro_marker: true,
        ..Flags::default()
    })
}

pub fn batch_summary(id: u32, facts: &[u32]) -> Message {
    Message::new(MsgId(id), Role::User, prose(id, 2000, facts)).with_flags(Flags {
        summary_marker: true,
        ..Flags::default()
    })
}

pub fn micro_pass_event(pass: u32) -> Event {
    Event::MicroPass(MicroPass {
        turn: pass,
        pass,
        outcome: MicroOutcome::Absorbed,
        exchange: vec![],
        skipped: vec![],
        cursor: 0,
        summary_tokens: 0,
        latency_ms: 0,
    })
}

pub fn transition<'a>(
    event: &'a Event,
    before: &'a [Message],
    after: &'a [Message],
) -> Transition<'a> {
    Transition {
        step: 0,
        event,
        before,
        after,
    }
}
