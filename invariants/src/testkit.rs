//! Builders for the invariant tests: short message lists and events.
#![cfg(test)]

use crate::Invariant;
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
        marker_mismatch: None,
    })
}

pub fn append_event(turn: u32) -> Event {
    Event::TurnAppended { turn, appended: 1 }
}

pub fn repair_event(turn: u32) -> Event {
    Event::Repair {
        turn,
        merged_rows: 0,
        dropped_rows: 0,
        pruned_calls: 0,
    }
}

pub fn restart_event(turn: u32) -> Event {
    Event::Restart { turn }
}

/// A micro pass with the given outcome, exchange and skipped rows.
pub fn micro(pass: u32, outcome: MicroOutcome, exchange: &[u32], skipped: &[u32]) -> Event {
    Event::MicroPass(MicroPass {
        turn: pass,
        pass,
        outcome,
        exchange: exchange.iter().map(|&i| MsgId(i)).collect(),
        skipped: skipped.iter().map(|&i| MsgId(i)).collect(),
        cursor: 0,
        summary_tokens: 0,
        latency_ms: 0,
        marker_mismatch: None,
    })
}

/// An absorbing micro pass over `exchange`.
pub fn absorbed(pass: u32, exchange: &[u32]) -> Event {
    micro(pass, MicroOutcome::Absorbed, exchange, &[])
}

/// A user row whose content is the given rows' content merged in order (the repair
/// merge: the first row's id is kept).
pub fn merged(rows: &[&Message]) -> Message {
    let mut out = rows[0].clone();
    for row in &rows[1..] {
        out.merge_content(&row.content);
    }
    out
}

/// A user row with `chars` characters of its own text.
pub fn user_sized(id: u32, chars: u32) -> Message {
    Message::new(MsgId(id), Role::User, prose(id, chars, &[]))
}

/// Feeds `steps` (event, transcript after it) to `inv`, starting from `initial`, and
/// returns each firing as (step, witness).
pub fn run(
    inv: &mut dyn Invariant,
    initial: &[Message],
    steps: &[(Event, Vec<Message>)],
) -> Vec<(u32, Witness)> {
    let mut fired = Vec::new();
    let mut before: &[Message] = initial;
    for (step, (event, after)) in steps.iter().enumerate() {
        let t = Transition::new(step as u32, event, before, after, &[]);
        if let Some(w) = inv.observe(&t) {
            fired.push((step as u32, readable(w)));
        }
        before = after;
    }
    fired
}

/// Panics unless every line of `w` is in the report's words: no Rust Debug syntax
/// (`Name(`, `{ `, `Some(`, `None`). Every fire-test of [`run`], [`run_same`] and
/// [`run_served`] passes its witnesses through this.
pub fn readable(w: Witness) -> Witness {
    let rows = w.rows.iter().map(|r| r.describe());
    for line in w.facts.iter().cloned().chain(rows) {
        assert!(debug_free(&line), "witness line in Debug syntax: {line}");
    }
    w
}

/// No `{ `, `Some(`, `None` and no capitalized word directly before `(`.
pub fn debug_free(line: &str) -> bool {
    if line.contains("{ ") || line.contains("Some(") || line.contains("None") {
        return false;
    }
    let bytes = line.as_bytes();
    !(0..bytes.len()).any(|i| {
        let start = bytes[..i]
            .iter()
            .rposition(|b| !b.is_ascii_alphanumeric())
            .map_or(0, |p| p + 1);
        bytes[i] == b'(' && start < i && bytes[start].is_ascii_uppercase()
    })
}

/// The ids of a witness's rows, in order.
pub fn witness_ids(w: &Witness) -> Vec<u32> {
    w.rows.iter().map(|r| r.id.0).collect()
}

/// A summarizer call the harness served: answered (with `facts` in the summary) or
/// failed; over `input_tokens` of new input.
pub fn served(ok: bool, input_tokens: u32, facts: &[u32]) -> ServedCall {
    let facts: Vec<FactId> = facts.iter().map(|&f| FactId(f)).collect();
    ServedCall {
        condense: false,
        ok,
        expanded: false,
        latency_ms: 1_000,
        input_tokens,
        facts_in: facts.clone(),
        facts_out: if ok { facts } else { vec![] },
        connection_dropped: false,
        empty_output: false,
        tool_results_named: None,
    }
}

/// A transition during which the harness served `calls`.
pub fn transition_served<'a>(
    event: &'a Event,
    before: &'a [Message],
    after: &'a [Message],
    calls: &'a [ServedCall],
) -> Transition<'a> {
    Transition::new(0, event, before, after, calls)
}

pub fn transition<'a>(
    event: &'a Event,
    before: &'a [Message],
    after: &'a [Message],
) -> Transition<'a> {
    Transition::new(0, event, before, after, &[])
}

/// A batch pass event at virtual time `turn` seconds.
pub fn batch_event(turn: u32, trigger: BatchTrigger, committed: bool) -> Event {
    batch_at(turn, trigger, committed, turn as u64 * 1_000)
}

pub fn batch_at(turn: u32, trigger: BatchTrigger, committed: bool, now_ms: u64) -> Event {
    Event::BatchPass(BatchPass {
        turn,
        trigger,
        outcome: if committed {
            BatchPassOutcome::Compacted
        } else {
            BatchPassOutcome::NoOp
        },
        messages_before: 0,
        messages_after: 0,
        tokens_before: 0,
        tokens_after: 0,
        head_end: 0,
        summary_tokens: 0,
        fallback: false,
        summary_failed: false,
        summary_call_failed: false,
        fallback_mismatch: None,
        now_ms,
    })
}

/// A batch pass whose summary call failed at `now_ms` (committed with the fallback).
pub fn failed_summary_at(turn: u32, trigger: BatchTrigger, now_ms: u64) -> Event {
    let Event::BatchPass(mut p) = batch_at(turn, trigger, true, now_ms) else {
        unreachable!()
    };
    p.fallback = true;
    p.summary_failed = true;
    p.summary_call_failed = true;
    Event::BatchPass(p)
}

pub fn preflight_event(turn: u32, now_ms: u64, decision: PreflightDecision) -> Event {
    Event::Preflight(Preflight {
        turn,
        now_ms,
        messages: 0,
        messages_rough_tokens: 0,
        request_rough_tokens: 0,
        trigger_tokens: 0,
        decision,
    })
}

/// A provider call: a reading of `usage` tokens, or a failure of `error`.
pub fn call_event(turn: u32, usage: Option<u64>, error: Option<CallErrorClass>) -> Event {
    Event::ProviderCall(ProviderCall {
        turn,
        now_ms: turn as u64 * 1_000,
        request_rough_tokens: 0,
        usage_tokens: usage,
        error,
        over_window: false,
        appended: 0,
    })
}

/// A provider call that failed because the request was over the window (ground truth),
/// classified by the agent as `class`.
pub fn overflow_event(turn: u32, class: CallErrorClass) -> Event {
    let Event::ProviderCall(mut c) = call_event(turn, None, Some(class)) else {
        unreachable!()
    };
    c.over_window = true;
    Event::ProviderCall(c)
}

pub fn failed_event(turn: u32, exhausted: bool, removed: u32) -> Event {
    Event::TurnFailed {
        turn,
        now_ms: turn as u64 * 1_000,
        exhausted,
        removed,
    }
}

pub fn reset_event(turn: u32) -> Event {
    Event::SessionReset {
        turn,
        now_ms: turn as u64 * 1_000,
    }
}

pub fn rotation_event(turn: u32, old: u32) -> Event {
    Event::Rotation {
        turn,
        old,
        new: old + 1,
    }
}

/// One step of [`run_served`]: the event, the list after it (`None`: unchanged) and the
/// summarizer calls served during it.
pub type ServedStep = (Event, Option<Vec<Message>>, Vec<ServedCall>);

/// [`run_same`] with the summarizer calls the harness served at each step.
pub fn run_served(
    inv: &mut dyn Invariant,
    initial: &[Message],
    steps: &[ServedStep],
) -> Vec<(u32, Witness)> {
    let mut fired = Vec::new();
    let mut current: Vec<Message> = initial.to_vec();
    for (step, (event, after, calls)) in steps.iter().enumerate() {
        let next = after.clone().unwrap_or_else(|| current.clone());
        let t = Transition::new(
            step as u32,
            event,
            &current,
            if after.is_some() { &next } else { &current },
            calls,
        );
        if let Some(w) = inv.observe(&t) {
            fired.push((step as u32, readable(w)));
        }
        current = next;
    }
    fired
}

/// Feeds `steps` (event, transcript after it; `None` = unchanged, passed as the same
/// slice) to `inv` from `initial`, returning each firing as (step, witness).
pub fn run_same(
    inv: &mut dyn Invariant,
    initial: &[Message],
    steps: &[(Event, Option<Vec<Message>>)],
) -> Vec<(u32, Witness)> {
    let mut fired = Vec::new();
    let mut current: Vec<Message> = initial.to_vec();
    for (step, (event, after)) in steps.iter().enumerate() {
        let w = match after {
            None => inv.observe(&Transition::new(
                step as u32,
                event,
                &current,
                &current,
                &[],
            )),
            Some(after) => {
                let w = inv.observe(&Transition::new(step as u32, event, &current, after, &[]));
                current = after.clone();
                w
            }
        };
        if let Some(w) = w {
            fired.push((step as u32, readable(w)));
        }
    }
    fired
}

/// Three user turns, the first with a tool call: ids 0..=6, user rows 0, 4 and 6.
pub fn three_turns() -> Vec<Message> {
    vec![
        user(0),
        calling(1, &[1]),
        tool(2, 1),
        reply(3),
        user(4),
        reply(5),
        user(6),
    ]
}

#[test]
fn debug_free_tells_report_words_from_debug_structs() {
    let old = "after MicroPass(MicroPass { turn: 17, pass: 18, exchange: [MsgId(13)] })";
    assert!(!debug_free(old));
    assert!(!debug_free("the pass reported Some(3)"));
    assert!(!debug_free("error=None"));
    assert!(!debug_free("role Assistant(x)"));
    assert!(debug_free(&absorbed(1, &[13, 15]).describe()));
    assert!(debug_free(
        "(a) 5 committed passes in turn 3 (bound 4 = 2 preflight + 2)"
    ));
}
