//! Each family has the character its description promises.

use super::*;
use crate::shapes::{message_cap_chars, tail_chars};
use compactsim_model::{ContentKind, Role};

/// Cases and turns per family for the character checks.
const CASES: u32 = 100;
const TURNS: u32 = 20;

fn runs(family: Family, turns: u32) -> Vec<Run> {
    (0..CASES).map(|c| run(family, c, turns)).collect()
}

fn tool_rows(r: &Run) -> impl Iterator<Item = &Message> {
    r.turns.iter().flatten().filter(|m| m.role == Role::Tool)
}

/// Share of turns that call tools, per mille.
fn tool_turns_per_mille(runs: &[Run]) -> u64 {
    let turns = runs.iter().flat_map(|r| &r.turns);
    let (with, all) = turns.fold((0u64, 0u64), |(w, a), t| (w + (t.len() > 2) as u64, a + 1));
    with * 1000 / all
}

/// Mean tool-output size as a share of the tail budget, per mille.
fn tool_size_per_mille_of_tail(runs: &[Run]) -> u64 {
    let (sum, n) = runs.iter().fold((0u64, 0u64), |(s, n), r| {
        let tail = tail_chars(r.params.context_length) as u64;
        tool_rows(r).fold((s, n), |(s, n), m| {
            (s + m.content.chars() as u64 * 1000 / tail, n + 1)
        })
    });
    sum / n.max(1)
}

#[test]
fn chatty_talks_more_than_it_calls_tools() {
    let chatty = runs(Family::Chatty, TURNS);
    assert!(tool_turns_per_mille(&chatty) < 250);
    let heavy = runs(Family::ToolHeavy, TURNS);
    assert!(tool_turns_per_mille(&heavy) > 700);
}

#[test]
fn tool_heavy_has_parallel_calls_many_rounds_and_some_long_arguments() {
    let runs = runs(Family::ToolHeavy, TURNS);
    let calls = || runs.iter().flat_map(|r| r.turns.iter().flatten());
    assert!(calls().any(|m| m.tool_calls.len() >= 3), "parallel calls");
    let long = calls()
        .flat_map(|m| m.tool_calls.iter())
        .filter(|c| c.arguments.len() > 500)
        .count();
    assert!(long > 0, "some arguments are long enough to be truncated");
    let rows: usize = runs.iter().flat_map(|r| &r.turns).map(Vec::len).sum();
    assert!(rows / (CASES * TURNS) as usize >= 6, "many rows per turn");
}

#[test]
fn long_tool_outputs_are_larger_than_tool_heavy_outputs() {
    let long = tool_size_per_mille_of_tail(&runs(Family::LongToolOutputs, TURNS));
    let heavy = tool_size_per_mille_of_tail(&runs(Family::ToolHeavy, TURNS));
    assert!(long > 2 * heavy, "{long} ‰ vs {heavy} ‰ of the tail");
}

#[test]
fn huge_prompts_exceed_the_row_cap_and_stay_within_120_percent_of_the_tail() {
    let mut over_cap = 0;
    for r in runs(Family::HugePrompts, TURNS) {
        let cap = message_cap_chars(r.params.context_length);
        let tail = tail_chars(r.params.context_length);
        for m in r.turns.iter().flatten().filter(|m| m.role == Role::User) {
            over_cap += (m.content.chars() > cap) as u32;
            assert!(
                m.content.chars() <= tail * 6 / 5,
                "at most 120 % of the tail"
            );
        }
    }
    assert!(over_cap > CASES, "huge prompts are common: {over_cap}");
}

#[test]
fn code_review_reads_code_and_its_file_reads_grow() {
    let runs = runs(Family::CodeReview, 40);
    let (mut code, mut all) = (0u64, 0u64);
    let (mut early, mut late) = (0u64, 0u64);
    for r in &runs {
        for m in tool_rows(r) {
            let chars = m.content.chars() as u64;
            all += chars;
            if m.content.segments[0].kind == ContentKind::Code {
                code += chars;
            }
        }
        if r.params.features.growth_per_mille > 0 {
            let tool_chars = |turns: &[Vec<Message>]| -> u64 {
                let rows = turns.iter().flatten().filter(|m| m.role == Role::Tool);
                rows.map(|m| m.content.chars() as u64).sum()
            };
            early += tool_chars(&r.turns[..10]);
            late += tool_chars(&r.turns[30..]);
        }
    }
    assert!(code * 2 > all, "code is most of the tool output");
    assert!(late > early * 3 / 2, "file reads grow: {early} -> {late}");
}

#[test]
fn multi_agent_rooms_write_short_rows_in_bursts() {
    let runs = runs(Family::MultiAgentRoom, TURNS);
    for r in &runs {
        let rows = r.system.iter().chain(r.turns.iter().flatten());
        assert!(rows.map(|m| m.content.chars()).all(|c| c <= 600));
    }
    let bursts = runs
        .iter()
        .flat_map(|r| &r.turns)
        .filter(|t| t.len() >= 2 + 2 * 8)
        .count();
    assert!(bursts > CASES as usize, "bursts of 8+ rounds: {bursts}");
    assert!(
        runs.iter().any(|r| r.params.features.burst.is_none()),
        "swarm"
    );
}

#[test]
fn cron_repeats_its_prompt_and_its_plan() {
    let runs = runs(Family::Cron, TURNS);
    let (mut repeat, mut fixed) = (0, 0);
    for r in &runs {
        let users: Vec<_> = r.turns.iter().map(|t| &t[0].content.segments[0]).collect();
        let same_prompt = users
            .iter()
            .all(|s| (s.chars, s.seed) == (users[0].chars, users[0].seed));
        assert_eq!(same_prompt, r.params.features.repeat_prompt);
        repeat += same_prompt as u32;
        let plan = |t: &Vec<Message>| -> Vec<Vec<String>> {
            let calls = t.iter().filter(|m| !m.tool_calls.is_empty());
            calls
                .map(|m| m.tool_calls.iter().map(|c| c.name.clone()).collect())
                .collect()
        };
        let plans: Vec<_> = r.turns.iter().map(plan).collect();
        assert!(plans.iter().all(|p| !p.is_empty()), "every run calls tools");
        if r.params.features.fixed_plan {
            assert!(plans.iter().all(|p| *p == plans[0]));
            fixed += 1;
        }
    }
    assert!(repeat > 0 && repeat < CASES && fixed > 0 && fixed < CASES);
}

#[test]
fn tiny_windows_are_8k_to_32k() {
    let windows: Vec<u32> = runs(Family::TinyWindow, 1)
        .iter()
        .map(|r| r.params.context_length)
        .collect();
    assert!(windows.iter().all(|w| (8_000..=32_768).contains(w)));
    assert!(windows.iter().any(|&w| w < 12_000) && windows.iter().any(|&w| w > 30_000));
}

/// Whether a swarm switch is on in a case.
type Switch = fn(&ShapeParams) -> bool;

#[test]
fn swarm_switches_are_sometimes_on_and_sometimes_off() {
    let all: Vec<ShapeParams> = Family::ALL
        .into_iter()
        .flat_map(|f| (0..CASES).map(move |c| case(f, c).0))
        .collect();
    let switches: [(&str, Switch); 6] = [
        ("system prompt", |p| p.system_prompt),
        ("parallel calls", |p| p.parallel_calls),
        ("silent calls", |p| p.features.silent_calls_per_mille > 0),
        ("long args", |p| p.features.long_args_per_mille > 0),
        ("code off", |p| p.text_kinds.code == 0),
        ("json tool output off", |p| p.tool_kinds.json == 0),
    ];
    for (name, on) in switches {
        let n = all.iter().filter(|p| on(p)).count();
        assert!(n > 0 && n < all.len(), "{name}: on in {n} of {}", all.len());
    }
}
