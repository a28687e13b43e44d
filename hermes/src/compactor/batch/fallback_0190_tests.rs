//! The ported pieces against the release's Python (values checked in the 0.19.0 venv).

use super::*;

#[test]
fn path_mentions_follow_the_releases_regex() {
    let mut files = vec![];
    path_mentions(
        "see /a/b.rs, then ~/x: and C:\\dir\\f and a/ b / `/q` /r) /s.;",
        &mut files,
    );
    // re.findall(_PATH_MENTION_RE, ...) with .rstrip(".,:;")
    assert_eq!(files, ["/a/b.rs", "~/x", "C:\\dir\\f", "/q", "/r", "/s"]);
    let mut many = vec![];
    let text: Vec<String> = (0..20).map(|i| format!("/p{i}")).collect();
    path_mentions(&text.join(" "), &mut many);
    assert_eq!(many.len(), FILES_MAX, "at most 12, the first ones");
    assert_eq!(many[0], "/p0");
}

#[test]
fn error_words_need_word_boundaries() {
    assert!(names_an_error("the build Error here"));
    assert!(names_an_error("it timed out."));
    assert!(names_an_error("error"));
    assert!(!names_an_error("errors and failedx and xerror"));
    assert!(!names_an_error("error_code"));
}

#[test]
fn repr_picks_the_quote_python_does() {
    assert_eq!(py_repr("a b"), "'a b'");
    assert_eq!(py_repr("it's"), "\"it's\"");
    assert_eq!(py_repr("it's \"x\""), "'it\\'s \"x\"'");
    assert_eq!(py_repr("a\\b"), "'a\\\\b'");
}

#[test]
fn a_long_turn_is_cut_by_characters_and_bullets_are_distinct() {
    let long = format!("{}\u{2014}{}", "x".repeat(690), "y".repeat(50));
    let cut = compact_turn(&long);
    assert_eq!(cut.chars().count(), 685 + TURN_TRUNCATED.len());
    assert!(cut.ends_with(" ...[truncated]"));
    assert_eq!(compact_turn("  a \n\n b  "), "a b");
    let items = vec![" a ".to_string(), "a".into(), "".into(), "b".into()];
    assert_eq!(bullets(&items, 8), "- a\n- b");
    assert_eq!(bullets(&items, 1), "- a");
    assert_eq!(bullets(&[], 8), "None.");
}

#[test]
fn the_fixed_text_for_no_rows_is_the_releases() {
    // _build_static_fallback_summary([]) in the venv: 1,782 characters of body, with the
    // prefix and its line break 3,415 characters, 3,433 bytes (9 em dashes).
    let text = release_text(&Dropped::all(&[]), false, None);
    assert_eq!(text.chars().count(), 1_632 + 1 + 1_782);
    assert_eq!(text.len(), 3_433);
    let with = release_text(&Dropped::all(&[]), true, Some("Request timed out"));
    assert!(with.contains("Previous compaction summary was present"));
    assert!(
        with.ends_with("for 0 compacted message(s). Summary failure reason: Request timed out.")
    );
}

/// A tool result the prune described in this pass reads as the release's line (its
/// command, exit `?`, line count), not as the generated text of the line's length; the
/// call's path goes to the relevant files.
#[test]
fn a_result_described_in_the_pass_reads_as_the_releases_line() {
    use crate::compactor::batch::scaffold;
    use crate::compactor::batch::testkit::Builder;
    use compactsim_model::Content;
    let mut b = Builder::new();
    b.user(40);
    b.round_with_args(1_000, "{\"command\":\"cat /src/a.rs\"}".into());
    let before = b.rows;
    let mut after = before.clone();
    let line = describe(before[1].tool_calls.first(), 1_000, 1);
    assert_eq!(
        line,
        "[terminal] ran `cat /src/a.rs` -> exit ?, 1 lines output"
    );
    let id = after[2].id;
    after[2].set_content(Content::single(scaffold::plain(id, line.len() as u32, 7)));
    let rows = Dropped {
        pruned: &after,
        unpruned: &before,
        range: 0..after.len(),
    };
    let text = release_text(&rows, false, None);
    assert!(text.contains(&format!("- TOOL: {line}")), "{text}");
    assert!(text.contains("## Relevant Files\n- /src/a.rs\n"));
    assert!(text.contains("2. [terminal] ran `cat /src/a.rs` -> exit ?, 1 lines output"));
    // Unpruned, the row is its generated text (no line).
    let plain = release_text(&Dropped::all(&before), false, None);
    assert!(!plain.contains(&format!("- TOOL: {line}")));
}

/// The shortened generation gives the start of the whole text, for every kind.
#[test]
fn a_long_segment_is_read_by_its_prefix() {
    use compactsim_model::{Content, ContentKind, FactId, MsgId};
    let texts = TextOf::new(&[]);
    for kind in [
        ContentKind::Prose,
        ContentKind::Code,
        ContentKind::Json,
        ContentKind::Summary,
    ] {
        let seg = Segment {
            kind,
            chars: 9_000,
            seed: 99,
            origin: MsgId(1),
            facts: vec![FactId(3), FactId(4)],
        };
        let whole = seg.materialize();
        for room in [1, 7, 700, 2_048] {
            assert_eq!(
                texts.segment_prefix(&seg, room),
                whole[..room],
                "{kind:?} {room}"
            );
        }
        let m = Message::new(MsgId(1), Role::Tool, Content::single(seg.clone()));
        assert_eq!(compact_turn(&texts.content(&m, &m)), compact_turn(&whole));
    }
}
