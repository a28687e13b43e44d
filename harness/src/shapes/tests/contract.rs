//! The turn contract of `shapes/mod.rs`, checked on every family.

use super::*;
use crate::shapes::assert_turn_shape;
use compactsim_model::{CallId, FactId, MsgId, Role};
use serde_json::Value;

/// Cases and turns per family for the structural checks.
const CASES: u32 = 40;
const TURNS: u32 = 30;

#[test]
fn every_turn_follows_the_contract() {
    for family in Family::ALL {
        for c in 0..CASES {
            let r = run(family, c, TURNS);
            let mut last = Last::default();
            if let Some(s) = &r.system {
                assert!(r.params.system_prompt);
                assert_eq!(s.role, Role::System);
                check_row(s, &mut last);
            } else {
                assert!(!r.params.system_prompt);
            }
            for (t, rows) in r.turns.iter().enumerate() {
                let at = format!("{} case {c} turn {t}", family.name());
                check_turn(rows, &at);
                rows.iter().for_each(|m| check_row(m, &mut last));
            }
        }
    }
}

/// One user row, rounds of (assistant with calls, one tool row per call in call order),
/// a final reply with text and no calls.
fn check_turn(rows: &[Message], at: &str) {
    assert!(rows.len() >= 2, "{at}: too short");
    let user = &rows[0];
    assert!(user.is_real_user() && user.tool_calls.is_empty(), "{at}");
    assert!(
        !user.content.facts().is_empty(),
        "{at}: user rows carry a fact"
    );
    let reply = rows.last().unwrap();
    assert!(
        reply.is_visible_reply() && reply.tool_calls.is_empty(),
        "{at}"
    );
    let mut i = 1;
    while i < rows.len() - 1 {
        let call_row = &rows[i];
        assert_eq!(call_row.role, Role::Assistant, "{at} row {i}");
        assert!(
            !call_row.tool_calls.is_empty(),
            "{at} row {i}: a round has calls"
        );
        for (k, call) in call_row.tool_calls.iter().enumerate() {
            let tool = &rows[i + 1 + k];
            assert_eq!(tool.role, Role::Tool, "{at} row {}", i + 1 + k);
            assert_eq!(
                tool.tool_call_id,
                Some(call.id),
                "{at}: results in call order"
            );
            assert!(tool.tool_calls.is_empty());
            let args: Value = serde_json::from_str(&call.arguments).expect("JSON args");
            assert!(args.is_object(), "{at}: {}", call.arguments);
            assert!(
                call.arguments.len() >= 20 && call.arguments.len() <= 1_500,
                "{at}"
            );
        }
        i += 1 + call_row.tool_calls.len();
    }
    assert_eq!(
        i,
        rows.len() - 1,
        "{at}: tool rows answer the preceding calls"
    );
}

/// Ids seen so far; each must increase.
#[derive(Default)]
struct Last {
    msg: Option<MsgId>,
    call: Option<CallId>,
    fact: Option<FactId>,
}

fn check_row(m: &Message, last: &mut Last) {
    assert!(last.msg < Some(m.id), "message ids increase: {}", m.id);
    last.msg = Some(m.id);
    for call in m.tool_calls.iter() {
        assert!(last.call < Some(call.id), "call ids increase");
        last.call = Some(call.id);
    }
    assert_eq!(m.flags, Default::default());
    assert!(m.role == Role::Tool || m.tool_call_id.is_none());
    for seg in m.content.segments.iter() {
        assert_eq!(seg.origin, m.id, "a segment's origin is its row");
        for &f in &seg.facts {
            assert!(last.fact < Some(f), "facts are fresh and ascending");
            last.fact = Some(f);
        }
        assert!(
            seg.facts.len() as u32 * 12 <= seg.chars,
            "facts fit in the text"
        );
    }
}

#[test]
fn the_same_seed_gives_the_same_turns_and_another_seed_other_turns() {
    for family in Family::ALL {
        let a = run(family, 3, 20);
        let b = run(family, 3, 20);
        assert_eq!(a.params, b.params);
        assert_eq!(a.system, b.system);
        assert_eq!(a.turns, b.turns, "{}", family.name());
        let c = run(family, 4, 20);
        assert_ne!(a.turns, c.turns, "{}", family.name());
    }
}

#[test]
fn turn_content_comes_from_the_shape_stream_only() {
    let family = Family::ToolHeavy;
    let seed = case_seed(ROOT, 1);
    let params = ShapeParams::draw(family, &mut stream(seed, Stream::Params));
    let turns = |shape_seed| {
        let mut c = Conversation::new(params.clone(), stream(shape_seed, Stream::Shape));
        let mut ids = IdAlloc::default();
        (0..5).map(|t| c.next_turn(t, &mut ids)).collect::<Vec<_>>()
    };
    assert_eq!(turns(seed), turns(seed));
    assert_ne!(turns(seed), turns(seed + 1));
}

#[test]
fn names_are_kebab_case_and_round_trip() {
    let mut seen = std::collections::BTreeSet::new();
    for family in Family::ALL {
        let name = family.name();
        let serde_name = serde_json::to_string(&family).unwrap();
        assert_eq!(serde_name, format!("\"{name}\""));
        assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '-'));
        assert_eq!(Family::parse(name), Some(family));
        let d = family.description();
        assert!(!d.is_empty() && d.len() <= 80 && !d.contains('\n'), "{d}");
        assert!(seen.insert(name));
    }
    assert_eq!(Family::parse("images"), None);
}

#[test]
fn draw_family_reaches_every_family_by_weight() {
    let mut rng = stream(7, Stream::Params);
    let mut counts = std::collections::BTreeMap::new();
    for _ in 0..4_000 {
        *counts
            .entry(super::super::draw_family(&mut rng))
            .or_insert(0u32) += 1;
    }
    assert_eq!(counts.len(), Family::ALL.len());
    let total: u32 = Family::ALL.iter().map(|f| f.weight()).sum();
    for f in Family::ALL {
        let expected = 4_000 * f.weight() / total;
        let got = counts[&f];
        assert!(
            got * 10 > expected * 7 && got * 10 < expected * 13,
            "{f:?} {got}"
        );
    }
}

/// A turn of `user`, one round of `calls` with their results, and a reply.
fn turn_rows(calls: u32) -> Vec<Message> {
    let mut ids = compactsim_fakes::ids::IdAlloc::default();
    let mut rows = vec![compactsim_fakes::test_rows::row(
        ids.msg().0,
        Role::User,
        40,
    )];
    let call_ids: Vec<CallId> = (0..calls).map(|_| ids.call()).collect();
    let call = |id: CallId| compactsim_model::ToolCall {
        id,
        name: "t".into(),
        arguments: "{}".into(),
    };
    rows.push(
        compactsim_fakes::test_rows::row(ids.msg().0, Role::Assistant, 40)
            .with_tool_calls(call_ids.iter().map(|&c| call(c)).collect()),
    );
    for c in call_ids {
        rows.push(
            compactsim_fakes::test_rows::row(ids.msg().0, Role::Tool, 40).with_tool_call_id(c),
        );
    }
    rows.push(compactsim_fakes::test_rows::row(
        ids.msg().0,
        Role::Assistant,
        40,
    ));
    rows
}

#[test]
fn the_release_assert_passes_a_well_formed_turn() {
    assert_turn_shape(&turn_rows(2));
}

#[test]
#[should_panic(expected = "CONTRACT: one tool row per call follows its assistant row")]
fn a_turn_missing_a_result_fires() {
    let mut rows = turn_rows(2);
    rows.remove(3);
    assert_turn_shape(&rows);
}

#[test]
#[should_panic(expected = "CONTRACT: one tool row per call follows its assistant row")]
fn a_turn_with_results_out_of_call_order_fires() {
    let mut rows = turn_rows(2);
    rows.swap(2, 3);
    assert_turn_shape(&rows);
}

#[test]
#[should_panic(expected = "CONTRACT: every row of a turn gets a fresh id")]
fn a_turn_reusing_an_id_fires() {
    let mut rows = turn_rows(1);
    rows[3].id = rows[0].id;
    assert_turn_shape(&rows);
}

#[test]
#[should_panic(expected = "CONTRACT: a turn ends with one assistant reply")]
fn a_turn_without_its_reply_fires() {
    let mut rows = turn_rows(1);
    rows.pop();
    assert_turn_shape(&rows);
}
