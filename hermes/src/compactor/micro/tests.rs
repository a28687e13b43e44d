use super::*;
use crate::compactor::repair::repair;
use compactsim_fakes::rng::{stream, Stream};
use compactsim_fakes::summarizer::{Summarizer, SummarizerConfig};
use compactsim_model::{tokens_rough_total, CallId, Content, ContentKind, Role, Segment, ToolCall};

/// A scripted session: fixed-size turns with `calls` tool calls each.
struct Script {
    ids: IdAlloc,
    msgs: Vec<Message>,
}

impl Script {
    fn new() -> Self {
        Script {
            ids: IdAlloc::default(),
            msgs: Vec::new(),
        }
    }

    fn row(&mut self, role: Role, kind: ContentKind, chars: u32) -> Message {
        let id = self.ids.msg();
        let fact = self.ids.fact();
        let seg = Segment {
            kind,
            chars,
            seed: id.0 as u64,
            origin: id,
            facts: vec![fact],
        };
        Message::new(id, role, Content::single(seg))
    }

    fn turn(&mut self, calls: u32, tool_chars: u32) {
        let user = self.row(Role::User, ContentKind::Prose, 200);
        self.msgs.push(user);
        if calls > 0 {
            let call_ids: Vec<CallId> = (0..calls).map(|_| self.ids.call()).collect();
            let tool_calls = call_ids
                .iter()
                .map(|&id| ToolCall {
                    id,
                    name: "terminal".into(),
                    arguments: "{\"cmd\":\"ls\"}".into(),
                })
                .collect();
            let a = self
                .row(Role::Assistant, ContentKind::Prose, 40)
                .with_tool_calls(tool_calls);
            self.msgs.push(a);
            for id in call_ids {
                let t = self
                    .row(Role::Tool, ContentKind::Code, tool_chars)
                    .with_tool_call_id(id);
                self.msgs.push(t);
            }
        }
        let reply = self.row(Role::Assistant, ContentKind::Prose, 400);
        self.msgs.push(reply);
    }
}

fn reliable() -> Summarizer {
    Summarizer::new(SummarizerConfig::reliable(), stream(1, Stream::Summarizer))
}

fn compactor(bugs: &[Bug]) -> MicroCompactor {
    MicroCompactor::new(MicroConfig::with_tail_budget(2_000), BugSet::of(bugs))
}

/// Runs `turns` turns with a pass and a repair after each; returns tokens after each turn.
fn session(
    micro: &mut MicroCompactor,
    script: &mut Script,
    turns: u32,
    calls: u32,
) -> (Vec<u64>, Vec<MicroPass>) {
    let mut summarizer = reliable();
    let mut tokens = Vec::new();
    let mut passes = Vec::new();
    for turn in 0..turns {
        script.turn(calls, 2_000);
        let ev = micro.pass(&mut script.msgs, turn, &mut summarizer, &mut script.ids);
        repair(&mut script.msgs);
        tokens.push(tokens_rough_total(&script.msgs));
        passes.push(ev);
    }
    (tokens, passes)
}

#[test]
fn keeps_one_assistant_marker_and_never_absorbs_users() {
    let mut script = Script::new();
    let mut micro = compactor(&[]);
    let (_, passes) = session(&mut micro, &mut script, 30, 2);
    let absorbed = passes
        .iter()
        .filter(|p| p.outcome == MicroOutcome::Absorbed)
        .count();
    assert!(absorbed >= 20, "absorbed {absorbed}");
    let markers: Vec<&Message> = script.msgs.iter().filter(|m| m.is_micro_marker()).collect();
    assert_eq!(markers.len(), 1);
    assert_eq!(markers[0].role, Role::Assistant);
    let users = script
        .msgs
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.segments.len())
        .sum::<usize>();
    assert_eq!(users, 30, "every user text is still in a user row");
    let last = passes.last().unwrap();
    let marker_at = script
        .msgs
        .iter()
        .position(|m| m.is_micro_marker())
        .unwrap();
    assert_eq!(last.cursor as usize, marker_at + 1);
}

#[test]
fn from_the_second_committed_pass_the_transcript_never_grows() {
    let mut script = Script::new();
    let mut micro = compactor(&[]);
    let mut summarizer = reliable();
    let mut committed = 0;
    for turn in 0..30 {
        script.turn(2, 2_000);
        let before = tokens_rough_total(&script.msgs);
        let ev = micro.pass(&mut script.msgs, turn, &mut summarizer, &mut script.ids);
        let after = tokens_rough_total(&script.msgs);
        if ev.outcome.committed() {
            committed += 1;
            if committed >= 2 {
                assert!(after <= before, "pass {committed} grew {before} -> {after}");
            }
        }
    }
    assert!(committed > 10);
}

#[test]
fn stale_markers_stack_with_h75345b() {
    let mut script = Script::new();
    let (_, _) = session(&mut compactor(&[Bug::H75345B]), &mut script, 12, 1);
    assert!(marker::count(&script.msgs) > 1);
}

#[test]
fn user_role_marker_is_merged_away_with_h75345a() {
    let mut script = Script::new();
    let mut micro = compactor(&[Bug::H75345A]);
    let mut summarizer = reliable();
    let mut merged_into_user = false;
    for turn in 0..12 {
        script.turn(1, 2_000);
        let ev = micro.pass(&mut script.msgs, turn, &mut summarizer, &mut script.ids);
        if ev.outcome == MicroOutcome::Absorbed {
            assert!(script
                .msgs
                .iter()
                .any(|m| m.is_micro_marker() && m.role == Role::User));
        }
        repair(&mut script.msgs);
        merged_into_user |= script.msgs.iter().any(|m| {
            m.role == Role::User
                && m.content
                    .segments
                    .iter()
                    .any(|s| s.kind == ContentKind::Summary)
        });
    }
    assert!(merged_into_user);
}

#[test]
fn cursor_points_past_the_marker_only_without_h_m_cursor() {
    let mut good = Script::new();
    let (_, passes) = session(&mut compactor(&[]), &mut good, 10, 3);
    let mut bad = Script::new();
    let (_, bad_passes) = session(&mut compactor(&[Bug::HMCursor]), &mut bad, 10, 3);
    let good_skips = passes
        .iter()
        .zip(&bad_passes)
        .filter(|(g, b)| g.cursor != b.cursor)
        .count();
    assert!(
        good_skips > 0,
        "the buggy cursor differs from the re-derived one"
    );
}

#[test]
fn restart_rehydrates_unless_h_m_resume() {
    for (bugs, keeps_history) in [(vec![], true), (vec![Bug::HMResume], false)] {
        let mut script = Script::new();
        let mut micro = compactor(&bugs);
        session(&mut micro, &mut script, 10, 1);
        let old = script
            .msgs
            .iter()
            .find(|m| m.is_micro_marker())
            .unwrap()
            .content
            .facts();
        micro.restart();
        session(&mut micro, &mut script, 1, 1);
        let new = script
            .msgs
            .iter()
            .find(|m| m.is_micro_marker())
            .unwrap()
            .content
            .facts();
        assert_eq!(
            old.iter().all(|f| new.contains(f)),
            keeps_history,
            "bugs {bugs:?}"
        );
    }
}

#[test]
fn defrag_rewrites_in_place_and_h_m_defrag_drops_users() {
    for (bugs, users_kept) in [(vec![], true), (vec![Bug::HMDefrag], false)] {
        let mut script = Script::new();
        let mut micro = compactor(&bugs);
        micro.config.defrag_threshold_tokens = 300;
        let (_, passes) = session(&mut micro, &mut script, 20, 2);
        assert!(
            passes.iter().any(|p| p.outcome == MicroOutcome::Defrag),
            "{bugs:?}"
        );
        let users = script
            .msgs
            .iter()
            .filter(|m| m.role == Role::User)
            .map(|m| m.content.segments.len())
            .sum::<usize>();
        assert_eq!(
            users == 20,
            users_kept,
            "bugs {bugs:?}: {users} user texts left"
        );
    }
}

/// The reclaim-size gate: below the gate a pass leaves the list alone; once the buffered
/// exchanges reach it, one pass absorbs all of them into the single marker and every
/// user row stays.
#[test]
fn reclaim_gate_buffers_exchanges_then_absorbs_them_in_one_splice() {
    let mut script = Script::new();
    let mut config = MicroConfig::with_tail_budget(2_000);
    // One tool turn is 40 + 2 × 1,200 + 400 characters of agent rows: ~710 tokens.
    config.reclaim_gate_tokens = 1_800;
    let mut micro = MicroCompactor::new(config, BugSet::none());
    let mut summarizer = reliable();
    let mut gated_passes = 0;
    let mut absorbed = None;
    for turn in 0..12 {
        script.turn(2, 1_200);
        let before = script.msgs.clone();
        let ev = micro.pass(&mut script.msgs, turn, &mut summarizer, &mut script.ids);
        match ev.outcome {
            MicroOutcome::NoExchange => {
                assert_eq!(
                    script.msgs, before,
                    "turn {turn}: a gated pass changed the list"
                );
                gated_passes += 1;
            }
            MicroOutcome::Absorbed => {
                absorbed.get_or_insert((turn, ev.exchange.len(), before));
            }
            other => panic!("turn {turn}: unexpected {other:?}"),
        }
        assert!(marker::count(&script.msgs) <= 1);
    }
    let (turn, rows, before) = absorbed.expect("the gate never opened");
    assert!(gated_passes > 0, "the gate never held a pass back");
    // Each exchange has 4 agent rows; the first gated splice took at least 3 exchanges.
    assert!(rows >= 12, "turn {turn}: absorbed only {rows} rows at once");
    // User rows are never absorbed (neighbours merge, keeping their content).
    let user_facts = |msgs: &[Message]| -> Vec<_> {
        let mut f: Vec<_> = msgs
            .iter()
            .filter(|m| m.role == Role::User)
            .flat_map(|m| m.content.facts())
            .collect();
        f.sort();
        f
    };
    assert_eq!(
        user_facts(&script.msgs).len(),
        12,
        "a user row was absorbed"
    );
    assert!(user_facts(&before).len() <= 12);
}

#[test]
fn gate_off_by_default_and_not_serialized() {
    let config = MicroConfig::with_tail_budget(2_000);
    assert_eq!(config.reclaim_gate_tokens, 0);
    let json = serde_json::to_string(&config).unwrap();
    assert!(!json.contains("reclaim_gate"), "{json}");
}

/// The scaffold a release is sent ends with the heading its
/// `_rolling_summary_from_marker` reads the rolling summary back from, at the length of
/// the generated scaffold (so no token count moves).
#[test]
fn the_released_scaffold_text_ends_with_the_heading_at_the_scaffold_length() {
    let tokens = crate::profile::IOT_0_22_2_SCAFFOLD_TOKENS;
    let text = marker::scaffold_text(tokens).expect("521 tokens hold the heading");
    assert_eq!(
        text.len() as u32,
        compactsim_model::tokens::chars_for_rough_tokens(tokens)
    );
    assert!(text.is_ascii());
    assert!(text.ends_with(&format!("\n\n{}", marker::HISTORICAL_TASK_HEADING)));
    assert_eq!(marker::scaffold_text(5), None, "too short for the heading");
}
