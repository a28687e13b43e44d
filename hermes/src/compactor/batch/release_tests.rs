//! Tests of `release.rs`: the 0.19.0 rules against the release's own numbers.

use super::*;
use compactsim_model::CallId;

fn call(name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: CallId(12),
        name: name.into(),
        arguments: arguments.into(),
    }
}

/// Each line is what the release's `_summarize_tool_result` returns for the same
/// name, arguments and a 3,400-character single-line result.
#[test]
fn descriptions_are_the_releases_lines() {
    let cases = [
        (
            "terminal",
            r#"{"command":"ls -la"}"#,
            "[terminal] ran `ls -la` -> exit ?, 1 lines output",
        ),
        (
            "read_file",
            r#"{"path":"a/b.rs"}"#,
            "[read_file] read a/b.rs from line 1 (3,400 chars)",
        ),
        (
            "write_file",
            r#"{"path":"x"}"#,
            "[write_file] wrote to x (? lines)",
        ),
        (
            "search_files",
            r#"{"query":"q"}"#,
            "[search_files] content search for '?' in . -> ? matches",
        ),
        (
            "patch",
            r#"{"path":"p"}"#,
            "[patch] replace in p (3,400 chars result)",
        ),
        (
            "browser_navigate",
            r#"{"url":"u"}"#,
            "[browser_navigate] u (3,400 chars)",
        ),
        (
            "web_search",
            r#"{"query":"q"}"#,
            "[web_search] query='q' (3,400 chars result)",
        ),
        (
            "web_extract",
            r#"{"url":"u"}"#,
            "[web_extract] ? (3,400 chars)",
        ),
        ("memory", r#"{"query":"q"}"#, "[memory] ? on ?"),
        (
            "send_message",
            r#"{"text":"hello"}"#,
            "[send_message] text=hello (3,400 chars result)",
        ),
        (
            "terminal",
            "not json",
            "[terminal] ran `` -> exit ?, 1 lines output",
        ),
    ];
    for (name, args, want) in cases {
        assert_eq!(describe(Some(&call(name, args)), 3_400, 1), want, "{name}");
    }
    assert_eq!(describe(None, 201, 2), "[unknown] (201 chars result)");
    let long = format!(r#"{{"command":"{}"}}"#, "a".repeat(90));
    let line = describe(Some(&call("terminal", &long)), 10, 2);
    assert!(line.contains(&format!("`{}...`", "a".repeat(77))) && line.ends_with("3 lines output"));
}

/// A summary row (prefix, body, end marker) is priced by its Python length: the
/// text the release gets, measured in characters (case 321 of the 480-case diff sat
/// 5 tokens from the soft ceiling when the em dashes counted 3 each).
#[test]
fn a_summary_row_is_priced_by_its_python_characters() {
    use crate::compactor::batch::scaffold::plain;
    use compactsim_model::{ContentKind, MsgId};
    let origin = MsgId(7);
    let prefix = SUMMARY_PREFIX.len() as u32;
    let mut body = plain(origin, 1_001, 42);
    body.kind = ContentKind::Prose;
    let wrapper = |f: Fixed| Segment {
        chars: wrapper_chars(f),
        ..f.segment(origin, prefix)
    };
    let segments = vec![
        wrapper(Fixed::SummaryPrefix),
        body,
        wrapper(Fixed::EndMarker),
    ];
    let content = Content::from_segments(segments);
    let text = format!(
        "{SUMMARY_PREFIX}{sep}{}{sep}{END_MARKER_SHORT}",
        "a".repeat(1_001),
        sep = compactsim_model::MERGE_SEPARATOR
    );
    assert_eq!(u64::from(content.chars()), text.len() as u64, "bytes");
    assert_eq!(py_chars(&content), text.chars().count() as u64);
    assert!(py_chars(&content) < u64::from(content.chars()), "em dashes");
    let row = Message::new(origin, Role::Assistant, content);
    assert_eq!(
        price_tokens(&row),
        text.chars().count() as u64 / 4 + 10,
        "len(str) // 4 + 10"
    );
    // A segment of another length than the wrapper's (the default model's) is its bytes.
    let other = Fixed::SummaryPrefix.segment(origin, 100);
    assert_eq!(py_chars(&Content::single(other)), 100);
}

/// Rows of 400 characters price at 110 (100 + 10); the walk over a 1,000-token
/// budget (soft ceiling 1,500) keeps 13 rows, then the floor and the anchors apply.
#[test]
fn the_tail_cut_follows_the_releases_walk_and_anchors() {
    use crate::compactor::batch::testkit::Builder;
    let mut b = Builder::new();
    b.system();
    for _ in 0..10 {
        b.user(400);
        b.reply(400);
    }
    let rows = b.rows;
    assert_eq!(price_tokens(&rows[1]), 110);
    let n = rows.len(); // 21
    assert_eq!(
        tail_cut(&rows, 1, 1_000, 20),
        n - 13,
        "soft ceiling: 13 × 110 ≤ 1,500"
    );
    // Everything fits the soft ceiling: the raw re-walk keeps the breaking row.
    assert_eq!(
        tail_cut(&rows, 1, 100_000, 20),
        n - 8,
        "the floor when all fits"
    );
    // A budget below one row: the floor of 8 (the last user row is in it).
    assert_eq!(tail_cut(&rows, 1, 10, 20), n - 8);
    // A cut after an assistant row with calls moves before it (alignment).
    let mut b = Builder::new();
    b.system();
    b.user(400);
    for _ in 0..6 {
        b.round(400);
    }
    b.reply(400);
    let rows = b.rows;
    let cut = tail_cut(&rows, 1, 300, 3);
    assert!(rows[cut].role != Role::Tool, "never starts on a result");
    assert_eq!(
        align_backward(&rows, 4),
        2,
        "after a complete group: before its call"
    );
    // The newest user row is the head's end (row 1): the release would cut right
    // after its pair; the model leaves the budget's cut, further on.
    let pair = crate::compactor::batch::boundaries::pair_end(&rows, 1);
    assert_eq!(rows[1].role, Role::User);
    assert!(tail_cut(&rows, 1, 300, 3) > pair);
}

#[test]
fn the_snapshot_quotes_the_newest_real_user_text_truncated() {
    use crate::compactor::batch::testkit::Builder;
    let mut b = Builder::new();
    b.user(100);
    b.reply(50);
    b.user(30);
    let rows = b.rows;
    let text = collapse_whitespace(&rows[2].content.materialize());
    assert_eq!(
        snapshot_chars(rows.iter()),
        Some(SNAPSHOT_FIXED_CHARS + text.len() as u32 + 2)
    );
    assert_eq!(snapshot_chars(rows[1..2].iter()), None, "no user row");
    let mut b = Builder::new();
    b.user(5_000);
    let long = snapshot_chars(b.rows.iter()).unwrap();
    assert!(long <= SNAPSHOT_FIXED_CHARS + ACTIVE_TASK_MAX_CHARS as u32 + 2);
    assert!(long >= SNAPSHOT_FIXED_CHARS + ACTIVE_TASK_MAX_CHARS as u32 - 1);
}

#[test]
fn the_turns_to_summarize_start_after_the_newest_summary_in_the_window() {
    use crate::compactor::batch::testkit::Builder;
    let mut b = Builder::new();
    b.system();
    b.user(40);
    b.summary(Role::User, &[1]);
    b.reply(40);
    b.user(40);
    b.reply(40);
    let w = |start, end| Window {
        head_end: start,
        start,
        end,
    };
    assert_eq!(turns(&b.rows, &w(1, 5)), 3..5, "after the summary at 2");
    assert_eq!(
        turns(&b.rows, &w(4, 6)),
        4..6,
        "the summary before the window"
    );
    assert_eq!(turns(&b.rows, &w(1, 2)), 1..2, "no summary in range");
}

#[test]
fn wrapper_lengths_join_to_the_releases_row_lengths() {
    let len = |f| wrapper_chars(f) as usize;
    assert_eq!(len(Fixed::SummaryPrefix), 1_646);
    // prefix "\n" body "\n\n" end (1 + 86) against prefix "\n\n" body "\n\n" end
    assert_eq!(
        len(Fixed::SummaryPrefix) + 2 + len(Fixed::EndMarker),
        1_646 + 1 + 86
    );
    // header "\n" own against open "\n\n" own
    assert_eq!(len(Fixed::PriorOpen) + 2, 57 + 1);
    assert_eq!((len(Fixed::PriorClose), len(Fixed::SystemNote)), (51, 327));
    assert_eq!(len(Fixed::DuplicateOutput), 62);
    assert!(SUMMARY_PREFIX.starts_with("[CONTEXT COMPACTION"));
    assert!(SUMMARY_PREFIX.ends_with("avoid repeating it:"));
    assert_eq!(wrapper_texts().len(), 6);
}

#[test]
fn python_json_spaces_separators_and_the_price_counts_the_call_repr() {
    let v: Value = serde_json::from_str(r#"{"path":"a","n":[1,2]}"#).unwrap();
    assert_eq!(python_json(&v), r#"{"n": [1, 2], "path": "a"}"#);
    let c = call("terminal", r#"{"command":"ab"}"#);
    // len(str({'id': 'call_12', 'type': 'function', 'function': {'name': 'terminal',
    // 'arguments': '{"command":"ab"}'}})) == 104
    assert_eq!(call_repr_chars(&c), 104);
    assert_eq!(thousands(1_234_567), "1,234,567");
    assert_eq!(thousands(999), "999");
}
