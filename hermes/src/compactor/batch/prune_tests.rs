//! Tests of `prune.rs`: each fast path against its plain rule, and the passes' texts.

use super::*;
use crate::compactor::batch::testkit::{invalid_json_calls, Builder};
use compactsim_model::{Arguments, MsgId, Segment};
use std::collections::BTreeSet;

#[test]
fn the_released_boundary_protects_the_breaking_row_and_the_floor() {
    let mut b = Builder::new();
    for _ in 0..10 {
        b.user(400); // 100 rough + 10 per row
    }
    let each = b.rows[0].tokens().tail_walk();
    assert_eq!(each, 110);
    // 3 rows exceed 300: the third is the breaking row, protected too.
    assert_eq!(released_boundary(&b.rows, 300, 2, false), 7);
    assert_eq!(
        released_boundary(&b.rows, 300, 5, false),
        5,
        "the floor wins"
    );
    assert_eq!(
        released_boundary(&b.rows, 10_000, 2, false),
        0,
        "everything fits"
    );
    assert_eq!(
        released_boundary(&b.rows, 300, 20, false),
        0,
        "floor past the list"
    );
}

fn with_bugs(bugs: &[Bug]) -> BatchConfig {
    BatchConfig {
        bugs: crate::bug_set::BugSet::of(bugs),
        ..BatchConfig::default()
    }
}

fn long_args() -> String {
    let body = "x".repeat(900);
    format!("{{\"path\":\"a.rs\",\"content\":\"{body}\",\"n\":[1,\"{body}\"]}}")
}

#[test]
fn dedupe_keeps_the_newest_copy_anywhere() {
    let mut b = Builder::new();
    b.user(40);
    let (_, old) = b.round(600);
    let (_, new) = b.round(600);
    let (_, short) = b.round(100);
    b.reply(40);
    let mut m = b.rows;
    let (old_i, new_i, short_i) = (2, 4, 6);
    let same = m[old_i].content.clone();
    m[new_i].set_content(same.clone());
    let stats = prune(&mut m, 0, &BatchConfig::default());
    assert_eq!(stats.deduped, 1);
    assert!(Fixed::DuplicateOutput.is(&m[old_i].content.segments[0]));
    assert_eq!(m[old_i].id, old);
    assert_eq!(m[new_i].content, same, "newest copy kept (tail included)");
    assert_eq!(m[new_i].id, new);
    assert_eq!(m[short_i].id, short);
    assert_eq!(m[short_i].content.chars(), 100);
}

#[test]
fn outputs_before_the_tail_become_one_line_descriptions() {
    let mut b = Builder::new();
    b.user(40);
    b.round(5_000);
    b.round(150);
    let tail = b.rows.len();
    b.round(5_000);
    let mut m = b.rows;
    let stats = prune(&mut m, tail, &BatchConfig::default());
    assert_eq!(stats.described, 1);
    let desc = &m[2].content;
    assert!(desc.chars() < 200 && desc.facts().is_empty(), "{desc:?}");
    assert_eq!(m[4].content.chars(), 150, "short output untouched");
    assert_eq!(m[tail + 1].content.chars(), 5_000, "tail untouched");
}

/// A description over 200 characters (a long URL) is described again on the next
/// pass: under 0.19.0 that rewrites the row (the release writes its line over the
/// text it reads), even where the line's length is the same; the default model's
/// line stays under 200 characters and is left alone.
#[test]
fn a_long_description_is_rewritten_again_only_under_0_19_0() {
    for exact in [false, true] {
        let mut b = Builder::new();
        b.user(40);
        b.round(5_000);
        b.reply(40);
        let mut m = b.rows;
        let mut calls = m[1].tool_calls.to_vec();
        calls[0].name = "browser_navigate".into();
        calls[0].arguments = format!(r#"{{"url":"{}"}}"#, "u".repeat(300)).into();
        m[1].set_tool_calls(calls);
        // "(5,000 chars)", then the description's own length, then that again.
        assert_eq!(describe_old_results(&mut m, 3, exact), 1);
        if !exact {
            // The default line quotes 80 characters of arguments: under 200, kept.
            let first = m[2].content.clone();
            assert_eq!(describe_old_results(&mut m, 3, exact), 0);
            assert_eq!(m[2].content, first);
            continue;
        }
        assert_eq!(describe_old_results(&mut m, 3, exact), 1);
        let second = m[2].content.clone();
        assert!(second.chars() > DESCRIBE_ABOVE_CHARS, "{}", second.chars());
        assert_eq!(describe_old_results(&mut m, 3, exact), 1);
        assert_eq!(m[2].content.chars(), second.chars(), "the same line length");
        assert_eq!(m[2].content != second, exact, "exact: {exact}");
    }
}

#[test]
fn leaf_truncation_keeps_json_valid_and_shortens() {
    let args = long_args();
    let cut = truncate_leaves(&args).expect("json");
    let v: Value = serde_json::from_str(&cut).expect("valid");
    let content = v["content"].as_str().unwrap();
    assert_eq!(
        content.len(),
        ARGUMENT_LEAF_KEEP_CHARS + TRUNCATED_SUFFIX.len()
    );
    assert!(content.ends_with(TRUNCATED_SUFFIX));
    assert_eq!(v["path"], "a.rs");
    assert!(v["n"][1].as_str().unwrap().ends_with(TRUNCATED_SUFFIX));
    assert!(cut.len() < 700);
    assert_eq!(truncate_leaves("not json"), None);
}

fn with_long_call(in_tail: bool) -> (Vec<Message>, usize) {
    let mut b = Builder::new();
    b.user(40);
    b.round_with_args(10, long_args());
    let tail = if in_tail { 0 } else { b.rows.len() };
    b.reply(40);
    (b.rows, tail)
}

#[test]
fn arguments_outside_the_tail_are_truncated_validly_and_tokens_drop() {
    let (mut m, tail) = with_long_call(false);
    let before = m[1].tokens().rough;
    let stats = prune(&mut m, tail, &BatchConfig::default());
    assert_eq!(stats.arguments_truncated, 1);
    assert_eq!(invalid_json_calls(&m), 0);
    assert!(m[1].tokens().rough < before);
    let (mut kept, tail) = with_long_call(true);
    prune(&mut kept, tail, &BatchConfig::default());
    assert!(
        kept[1].tool_calls[0].arguments.len() > 900,
        "tail untouched"
    );
}

#[test]
fn h11762_cuts_by_offset_into_invalid_json() {
    let (mut m, tail) = with_long_call(false);
    let stats = prune(&mut m, tail, &with_bugs(&[Bug::H11762]));
    assert_eq!(stats.arguments_truncated, 1);
    assert_eq!(invalid_json_calls(&m), 1);
}

/// The counted length of a description is the written line's, whatever the name,
/// the arguments (short, long, multi-byte at the cut) and the digits of the size.
#[test]
fn a_description_s_counted_length_is_its_written_line_s() {
    let call = |name: &str, arguments: String| ToolCall {
        id: CallId(7),
        name: name.into(),
        arguments: arguments.into(),
    };
    let calls = [
        call("read_file", String::new()),
        call("read_file", r#"{"path":"a.rs"}"#.into()),
        call(
            "browser_navigate",
            format!(r#"{{"url":"{}"}}"#, "u".repeat(300)),
        ),
        call("t", "é".repeat(79) + "ab"),
        call("t", "x".repeat(79) + "€€"),
        call("ünï", "日本".repeat(60)),
        ToolCall {
            id: CallId(8),
            name: "terminal".into(),
            arguments: Arguments::generated("command", 300, 3),
        },
        ToolCall {
            id: CallId(9),
            name: "terminal".into(),
            arguments: Arguments::generated("command", 40, 3),
        },
    ];
    for result_chars in [0, 9, 10, 201, 5_000, 99_999, u32::MAX] {
        assert_eq!(
            described_len(None, result_chars),
            describe(None, result_chars).len()
        );
        for c in &calls {
            assert_eq!(
                described_len(Some(c), result_chars),
                describe(Some(c), result_chars).len(),
                "{c:?} {result_chars}"
            );
        }
    }
}

/// Pass 1 by the plain rule: walk from the newest row, keep a set of the outputs
/// seen, replace a row whose output is in it.
fn dedupe_plainly(messages: &mut [Message], exact: bool) -> u32 {
    let mut seen = BTreeSet::new();
    let mut count = 0;
    for m in messages.iter_mut().rev() {
        if m.role != Role::Tool || m.content.chars() < DEDUPE_MIN_CHARS {
            continue;
        }
        if !seen.insert(output_key(m).collect::<Vec<_>>()) {
            let mut placeholder = Fixed::DuplicateOutput.segment(m.id, 0);
            if exact {
                placeholder.chars = release::wrapper_chars(Fixed::DuplicateOutput);
            }
            m.set_content(Content::single(placeholder));
            count += 1;
        }
    }
    count
}

/// Lists with repeated outputs of one and two segments, short ones, and non-tool
/// rows with the same content: the sorted pass replaces the rows the plain walk does.
#[test]
fn dedupe_replaces_the_rows_the_plain_walk_replaces() {
    let mut x = 11u64;
    let mut next = |n: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    let seg = |seed: u64, chars: u32, kind: ContentKind| Segment {
        kind,
        chars,
        seed,
        origin: MsgId(0),
        facts: vec![],
    };
    let kinds = [ContentKind::Code, ContentKind::Prose];
    let mut replaced = 0;
    for _ in 0..300 {
        let rows: Vec<Message> = (0..next(40) as u32)
            .map(|i| {
                let role = if next(4) == 0 { Role::User } else { Role::Tool };
                let mut segments = vec![seg(
                    next(5),
                    [150, 250, 400][next(3) as usize],
                    kinds[next(2) as usize],
                )];
                if next(3) == 0 {
                    segments.push(seg(next(3), 100, ContentKind::Code));
                }
                let content = Content::from_segments(segments);
                Message::new(MsgId(i), role, content)
            })
            .collect();
        for exact in [false, true] {
            let (mut fast, mut plain) = (rows.clone(), rows.clone());
            let n = dedupe(&mut fast, exact);
            assert_eq!(n, dedupe_plainly(&mut plain, exact));
            assert_eq!(fast, plain);
            replaced += n;
        }
    }
    assert!(replaced > 100, "{replaced} rows replaced");
}

/// Ids repeated within a message and across messages, absent ids: the sorted list
/// finds the call a map collected from the same calls holds (the last of equal ids).
#[test]
fn calls_by_id_finds_what_a_map_of_the_calls_finds() {
    let call = |id: u32, name: &str| ToolCall {
        id: CallId(id),
        name: name.into(),
        arguments: Arguments::default(),
    };
    let mut rows = Vec::new();
    for (i, ids) in [vec![3, 1], vec![], vec![1, 7, 3], vec![9, 9], vec![2]]
        .into_iter()
        .enumerate()
    {
        let calls = ids
            .iter()
            .enumerate()
            .map(|(k, &id)| call(id, &format!("{i}.{k}")));
        rows.push(
            Message::new(MsgId(i as u32), Role::Assistant, Content::empty())
                .with_tool_calls(calls.collect()),
        );
    }
    let map: std::collections::BTreeMap<CallId, &ToolCall> = rows
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .map(|c| (c.id, c))
        .collect();
    let sorted = calls_by_id(&rows);
    for id in 0..12 {
        let id = CallId(id);
        assert_eq!(
            sorted.get(&id).map(|c| &c.name),
            map.get(&id).map(|c| &c.name)
        );
    }
    assert_eq!(sorted.get(&CallId(3)).unwrap().name, "2.2");
}

#[test]
fn output_identity_is_kind_seed_and_length() {
    let seg = |seed| Segment {
        kind: ContentKind::Code,
        chars: 300,
        seed,
        origin: MsgId(0),
        facts: vec![],
    };
    let a = Message::new(MsgId(1), Role::Tool, Content::single(seg(1)));
    let b = Message::new(MsgId(2), Role::Tool, Content::single(seg(2)));
    assert!(output_key(&a).ne(output_key(&b)));
    assert!(output_key(&a).eq(output_key(&Message::new(
        MsgId(3),
        Role::Tool,
        a.content.clone()
    ))));
}
