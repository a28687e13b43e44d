//! What `hermes-agent==0.19.0` does byte for byte where the default model only keeps the
//! shape (adapters/hermes/DIFF.md, D3 and D6–D9), used when
//! [`BatchConfig::hermes_0_19_0`](super::BatchConfig) is set (`--profile hermes-0.19.0`):
//!
//! - D3: the row price of the tail walks (`_estimate_msg_budget_tokens`) and the tail cut
//!   (`_find_tail_cut_by_tokens` with its anchors and alignments);
//! - D6: the wrapper texts' lengths in bytes, as the harness counts them (three of them
//!   hold an em dash), and the single line break after `SUMMARY_PREFIX`;
//! - D7: the deterministic task snapshot `_ground_historical_task_snapshot` writes in
//!   front of every LLM summary;
//! - D8: the one-line tool-result descriptions of `_summarize_tool_result`;
//! - D9: tool-call arguments truncated and re-serialized by `json.dumps` (`", "` and
//!   `": "` separators).
//!
//! The default model keeps its own versions, so the default suites do not move.

use super::boundaries::{first_non_system, Window};
use super::released;
use super::scaffold::Fixed;
use crate::bug_set::BugSet;
use compactsim_model::{Content, Message, Role, Segment, ToolCall};
use serde_json::Value;

/// `_CHARS_PER_TOKEN`.
const CHARS_PER_TOKEN: u64 = 4;
/// `+10 for role/key overhead` of `_estimate_msg_budget_tokens`.
const ROW_OVERHEAD_TOKENS: u64 = 10;
/// `len(str(tool_call))` minus the id, name and arguments: the Python dict repr
/// `{'id': '', 'type': 'function', 'function': {'name': '', 'arguments': ''}}`.
const CALL_REPR_FIXED_CHARS: u64 = 73;
/// `_MAX_TAIL_MESSAGE_FLOOR`.
const TAIL_FLOOR_MAX: usize = 8;
/// `_ACTIVE_TASK_MAX_CHARS`: the quoted user text of the task snapshot.
pub const ACTIVE_TASK_MAX_CHARS: usize = 1_400;
/// `" ...[truncated]"`, appended to a cut task text.
const ACTIVE_TASK_TRUNCATED: &str = " ...[truncated]";
/// `## Historical Task Snapshot\n` + `User asked (deterministic, from compacted turns): `
/// + `\nHistorical only; newer protected-tail messages after this summary win.`
const SNAPSHOT_FIXED_CHARS: u32 = 28 + 50 + 71;

/// `SUMMARY_PREFIX` of 0.19.0 (1,646 bytes).
pub const SUMMARY_PREFIX: &str = include_str!("texts/summary_prefix_0_19_0.txt");
/// `_SUMMARY_END_MARKER` without its first `-` (see [`wrapper_text`]).
const END_MARKER_SHORT: &str =
    "-- END OF CONTEXT SUMMARY \u{2014} respond to the message below, not the summary above ---";
/// `_MERGED_PRIOR_CONTEXT_HEADER` with its em dash as `--` (see [`wrapper_text`]).
const PRIOR_OPEN_ASCII: &str = "[PRIOR CONTEXT -- for reference only; not a new message]";
/// `_MERGED_SUMMARY_DELIMITER`.
const PRIOR_CLOSE: &str = "[END OF PRIOR CONTEXT \u{2014} COMPACTION SUMMARY BELOW]";
/// The compaction note `compress()` appends to the system prompt after `\n\n`.
const SYSTEM_NOTE: &str = "[Note: Some earlier conversation turns have been compacted into a handoff summary to preserve context space. The current session state may still reflect earlier work, so build on that summary and state rather than re-doing work. Your persistent memory (MEMORY.md, USER.md) remains fully authoritative regardless of compaction.]";
/// The placeholder of an older duplicate tool output.
const DUPLICATE_OUTPUT: &str =
    "[Duplicate tool output \u{2014} same content as a more recent call]";

/// The text a wrapper segment carries under the 0.19.0 profile, sent as such to an
/// adapter (so the real code recognizes the model's summaries, notes and placeholders
/// by their text, as it does its own). Its length in bytes is the segment's: the
/// harness counts bytes. Two texts differ from the release's so that the joined row has
/// the release's length: the release writes one line break after `SUMMARY_PREFIX` and
/// after `[PRIOR CONTEXT …]` where segments are joined by two, so the end marker loses
/// its first `-` and the header's em dash (3 bytes) becomes `--`. The real code matches
/// neither text (it finds summaries by the prefix and merges by the delimiter).
pub fn wrapper_text(f: Fixed) -> Option<&'static str> {
    match f {
        Fixed::SummaryPrefix => Some(SUMMARY_PREFIX),
        Fixed::EndMarker => Some(END_MARKER_SHORT),
        Fixed::PriorOpen => Some(PRIOR_OPEN_ASCII),
        Fixed::PriorClose => Some(PRIOR_CLOSE),
        Fixed::SystemNote => Some(SYSTEM_NOTE),
        Fixed::DuplicateOutput => Some(DUPLICATE_OUTPUT),
        Fixed::ToolCallRemoved => None,
    }
}

/// The length of a wrapper segment under the 0.19.0 profile ([`wrapper_text`]).
pub fn wrapper_chars(f: Fixed) -> u32 {
    wrapper_text(f).map_or(f.chars(0), |t| t.len() as u32)
}

/// Every wrapper text of 0.19.0 with the seed of its segment, for the harness's text
/// book. A segment of another length (the default model's) is not given the text.
pub fn wrapper_texts() -> Vec<(u64, &'static str)> {
    Fixed::ALL
        .into_iter()
        .filter_map(|f| wrapper_text(f).map(|t| (f.seed(), t)))
        .collect()
}

/// `_estimate_msg_budget_tokens`: content `// 4` + 10 + every call's `str(tc)` `// 4`,
/// the content measured as Python measures it ([`py_chars`]).
pub fn price_tokens(m: &Message) -> u64 {
    let calls: u64 = m
        .tool_calls
        .iter()
        .map(|c| call_repr_chars(c) / CHARS_PER_TOKEN)
        .sum();
    py_chars(&m.content) / CHARS_PER_TOKEN + ROW_OVERHEAD_TOKENS + calls
}

/// `len(content)` in Python: characters, not bytes. A segment's length is its bytes
/// (D6: the wrappers are sent as the release's texts), so each 0.19.0 wrapper text in
/// the row counts its multi-byte characters (the em dashes, 3 bytes each) once.
/// Generated text is ASCII: its bytes are its characters.
pub fn py_chars(content: &Content) -> u64 {
    let surplus: u64 = content.segments.iter().map(wrapper_surplus_bytes).sum();
    u64::from(content.chars()) - surplus
}

/// Bytes beyond its characters of a segment that is a 0.19.0 wrapper text (0 for any
/// other segment, a wrapper of another length included).
fn wrapper_surplus_bytes(s: &Segment) -> u64 {
    Fixed::ALL
        .into_iter()
        .find(|f| f.is(s))
        .and_then(wrapper_text)
        .filter(|t| t.len() == s.chars as usize)
        .map_or(0, |t| (t.len() - t.chars().count()) as u64)
}

/// `len(str(tool_call))`: the Python dict repr of one call (iot 0.22.2 prices it too).
pub fn call_repr_chars(c: &ToolCall) -> u64 {
    CALL_REPR_FIXED_CHARS
        + c.id.to_string().len() as u64
        + c.name.len() as u64
        + c.arguments.len() as u64
}

/// `_find_tail_cut_by_tokens(messages, head_end)` of 0.19.0: the soft-ceiling walk, the
/// raw re-walk when everything fits, the floor, the backward alignment, the last-user
/// and last-assistant anchors and the forward alignment.
pub fn tail_cut(messages: &[Message], head_end: usize, budget: u32, protect_last_n: u32) -> usize {
    tail_cut_with(messages, head_end, budget, protect_last_n, &BugSet::none())
}

/// [`tail_cut`] with the release's bug B4 when `bugs` has it: the last-user anchor skips
/// a user row a summary was merged into ([`released::last_user_anchor`]).
pub fn tail_cut_with(
    messages: &[Message],
    head_end: usize,
    budget: u32,
    protect_last_n: u32,
    bugs: &BugSet,
) -> usize {
    let n = messages.len();
    let available = n.saturating_sub(head_end + 1);
    let floor = (protect_last_n as usize).clamp(3, TAIL_FLOOR_MAX);
    let min_tail = if available > 1 {
        floor.min(available.saturating_sub(2).max(3)).min(available)
    } else {
        0
    };
    let soft = budget as u64 * 3 / 2;
    let (mut cut, mut acc) = (n, 0u64);
    for i in (head_end..n).rev() {
        let t = price_tokens(&messages[i]);
        if acc + t > soft && n - i >= min_tail {
            break;
        }
        acc += t;
        cut = i;
    }
    if cut <= head_end && acc <= soft && acc > 0 {
        let mut raw = 0u64;
        for j in (head_end..n).rev() {
            let t = price_tokens(&messages[j]);
            cut = j;
            if raw + t > budget as u64 && n - j >= min_tail {
                break;
            }
            raw += t;
        }
    }
    let fallback = n - min_tail;
    cut = cut.min(fallback);
    if cut <= head_end {
        cut = fallback.max(head_end + 1);
    }
    cut = align_backward(messages, cut);
    cut = anchor_last_user(messages, cut, head_end, bugs);
    cut = anchor_last_assistant(messages, cut, head_end);
    align_forward(messages, cut.max(head_end + 1))
}

/// `_align_boundary_backward`: a cut right after an assistant row with calls (and any
/// of its results) moves before that row.
pub fn align_backward(messages: &[Message], idx: usize) -> usize {
    if idx == 0 || idx >= messages.len() {
        return idx;
    }
    let mut check = idx;
    while check > 0 && messages[check - 1].role == Role::Tool {
        check -= 1;
    }
    match check.checked_sub(1).map(|c| (c, &messages[c])) {
        Some((c, m)) if m.role == Role::Assistant && !m.tool_calls.is_empty() => c,
        _ => idx,
    }
}

/// `_align_boundary_forward`: past tool rows.
pub fn align_forward(messages: &[Message], mut idx: usize) -> usize {
    while idx < messages.len() && messages[idx].role == Role::Tool {
        idx += 1;
    }
    idx
}

/// `_ensure_last_user_message_in_tail` with the #22523 pair push. The release skips a
/// user row its summary was merged into (B4, FINDINGS.md); the model does so only under
/// the switch: otherwise such a row still holds the user's words ([`holds_user_words`]).
fn anchor_last_user(messages: &[Message], cut: usize, head_end: usize, bugs: &BugSet) -> usize {
    let Some(u) = (head_end..messages.len())
        .rev()
        .find(|&i| released::anchors_user_row(&messages[i], bugs))
    else {
        return cut;
    };
    if u >= cut {
        return cut;
    }
    if head_end + 1 > u {
        // The release pushes the cut past the pair (#22523) and summarizes the newest
        // user row; the model keeps it verbatim and starts the window after the pair
        // instead (`boundaries::anchor_last_user`, applied by the caller), so the cut
        // stays where the budget put it (else the window is empty on every pass of a
        // long tool loop: a death spiral on profile sweep seed 16 case 33).
        return cut;
    }
    u
}

/// `_ensure_last_assistant_message_in_tail`: the newest assistant row with text, else
/// the newest assistant row. The release counts an assistant-role summary as a reply
/// and can summarize the newest visible reply behind it (user-turns-intact fired on
/// profile sweep seeds 1 and 2); the model anchors the newest visible reply, as its
/// default does.
fn anchor_last_assistant(messages: &[Message], cut: usize, head_end: usize) -> usize {
    let assistants = || {
        (head_end..messages.len())
            .rev()
            .filter(|&i| messages[i].role == Role::Assistant && !messages[i].is_summary())
    };
    let Some(a) = assistants()
        .find(|&i| !messages[i].content.is_empty())
        .or_else(|| assistants().next())
    else {
        return cut;
    };
    if a >= cut {
        return cut;
    }
    align_backward(messages, a).max(head_end + 1)
}

/// `turns_to_summarize` of `compress()`: the window after the newest summary row between
/// the first non-system row and the window's end.
pub fn turns(messages: &[Message], window: &Window) -> std::ops::Range<usize> {
    let first = first_non_system(messages).min(window.end);
    let after_summary = (first..window.end)
        .rev()
        .find(|&i| messages[i].is_summary())
        .map_or(window.start, |i| (i + 1).max(window.start));
    after_summary.min(window.end)..window.end
}

/// Characters of the task snapshot 0.19.0 writes in front of an LLM summary, for the
/// newest real user row among `rows` (`None`: no such row, no snapshot).
pub fn snapshot_chars<'a>(rows: impl DoubleEndedIterator<Item = &'a Message>) -> Option<u32> {
    let user = rows
        .rev()
        .find(|m| m.role == Role::User && !m.is_summary() && !m.content.is_empty())?;
    let text = collapse_whitespace(&user.content.materialize());
    if text.is_empty() {
        return None;
    }
    let text = if text.chars().count() > ACTIVE_TASK_MAX_CHARS {
        let keep = ACTIVE_TASK_MAX_CHARS - ACTIVE_TASK_TRUNCATED.len();
        let cut: String = text.chars().take(keep).collect();
        format!("{}{ACTIVE_TASK_TRUNCATED}", cut.trim_end())
    } else {
        text
    };
    Some(SNAPSHOT_FIXED_CHARS + repr_chars(&text))
}

/// `re.sub(r"\s+", " ", text.strip())`.
fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `len(repr(text))` for text without control characters.
fn repr_chars(text: &str) -> u32 {
    let singles = text.matches('\'').count();
    let doubles = text.matches('"').count();
    let backslashes = text.matches('\\').count();
    let escaped_quotes = if singles > 0 && doubles == 0 {
        0
    } else {
        singles
    };
    (text.len() + 2 + backslashes + escaped_quotes) as u32
}

/// `_summarize_tool_result(tool_name, tool_args, content)` for a result of
/// `content_chars` characters (ASCII) in `content_segments` segments (joined by a blank
/// line, so `2 × (segments − 1)` line breaks); `call` is `None` when no call has the
/// result's id (`"unknown"`).
pub fn describe(call: Option<&ToolCall>, content_chars: u32, content_segments: usize) -> String {
    let (name, args) = call.map_or(("unknown", ""), |c| (c.name.as_str(), c.arguments.as_str()));
    let args: Vec<(String, Value)> = match serde_json::from_str::<Value>(args) {
        Ok(Value::Object(map)) => map.into_iter().collect(),
        _ => vec![],
    };
    let get = |key: &str| args.iter().find(|(k, _)| k == key).map(|(_, v)| py_str(v));
    let n = thousands(content_chars);
    let lines = if content_chars == 0 {
        0
    } else {
        2 * content_segments.saturating_sub(1) + 1
    };
    match name {
        "terminal" => {
            let mut cmd = get("command").unwrap_or_default();
            if cmd.chars().count() > 80 {
                cmd = format!("{}...", cmd.chars().take(77).collect::<String>());
            }
            format!("[terminal] ran `{cmd}` -> exit ?, {lines} lines output")
        }
        "read_file" => {
            let path = get("path").unwrap_or_else(|| "?".into());
            let offset = get("offset").unwrap_or_else(|| "1".into());
            format!("[read_file] read {path} from line {offset} ({n} chars)")
        }
        "write_file" => {
            let path = get("path").unwrap_or_else(|| "?".into());
            let written = match get("content").filter(|c| !c.is_empty()) {
                Some(c) => (c.matches('\n').count() + 1).to_string(),
                None => "?".into(),
            };
            format!("[write_file] wrote to {path} ({written} lines)")
        }
        "search_files" => {
            let pattern = get("pattern").unwrap_or_else(|| "?".into());
            let path = get("path").unwrap_or_else(|| ".".into());
            let target = get("target").unwrap_or_else(|| "content".into());
            format!("[search_files] {target} search for '{pattern}' in {path} -> ? matches")
        }
        "patch" => {
            let path = get("path").unwrap_or_else(|| "?".into());
            let mode = get("mode").unwrap_or_else(|| "replace".into());
            format!("[patch] {mode} in {path} ({n} chars result)")
        }
        "browser_navigate" | "browser_click" | "browser_snapshot" | "browser_type"
        | "browser_scroll" | "browser_vision" => {
            let url = get("url").unwrap_or_default();
            let reference = get("ref").unwrap_or_default();
            let detail = if !url.is_empty() {
                format!(" {url}")
            } else if !reference.is_empty() {
                format!(" ref={reference}")
            } else {
                String::new()
            };
            format!("[{name}]{detail} ({n} chars)")
        }
        "web_search" => {
            let query = get("query").unwrap_or_else(|| "?".into());
            format!("[web_search] query='{query}' ({n} chars result)")
        }
        "web_extract" => format!("[web_extract] ? ({n} chars)"),
        "memory" => {
            let action = get("action").unwrap_or_else(|| "?".into());
            let target = get("target").unwrap_or_else(|| "?".into());
            format!("[memory] {action} on {target}")
        }
        "todo" => "[todo] updated task list".into(),
        "clarify" => "[clarify] asked user a question".into(),
        _ => {
            let first: String = args
                .iter()
                .take(2)
                .map(|(k, v)| format!(" {k}={}", py_str(v).chars().take(40).collect::<String>()))
                .collect();
            format!("[{name}]{first} ({n} chars result)")
        }
    }
}

/// `str(value)` for the JSON values the shapes draw (strings; others as JSON).
fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `f"{n:,}"`.
fn thousands(n: u32) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// `json.dumps(value, ensure_ascii=False)`: `", "` between items, `": "` after keys.
pub fn python_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), python_json(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(python_json).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
#[path = "release_tests.rs"]
mod tests;
