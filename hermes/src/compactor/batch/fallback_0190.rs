//! `ContextCompressor._build_static_fallback_summary` of hermes-agent 0.19.0, ported so
//! that the profile's fallback row has the release's text length exactly (issue 12,
//! adapters/hermes/DIFF-s7-dfall.md). The release builds its text from the rows it
//! drops (`turns_to_summarize`), whose text is the text the harness sends it: generated
//! segment text, or the release's own wrapper text for the profile's wrapper segments.
//! Two steps are left out: `redact_sensitive_text` and the `gh?_` token masks (the
//! shapes' words, fact names and `[a-z0-9_-./ ]` arguments hold no secret the release
//! recognizes; a random argument that does is a known, rare difference).

use super::boundaries::Window;
use super::release::{self, describe, wrapper_texts, SUMMARY_PREFIX};
use super::summary::Miss;
use compactsim_fakes::summarizer::{SummaryErrorClass, SummaryFailure};
use compactsim_model::{CallId, Message, Role, Segment, ToolCall, MERGE_SEPARATOR};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ops::Range;

/// `_FALLBACK_SUMMARY_MAX_CHARS`: the text with its prefix, in characters.
const SUMMARY_MAX_CHARS: usize = 8_000;
/// Characters kept of a text over [`SUMMARY_MAX_CHARS`] before the truncation note.
const SUMMARY_CUT_KEEP_CHARS: usize = SUMMARY_MAX_CHARS - 42;
const SUMMARY_TRUNCATED: &str = "\n...[fallback summary truncated]";
/// `_FALLBACK_TURN_MAX_CHARS` and the 15 characters its cut leaves for the note.
const TURN_MAX_CHARS: usize = 700;
const TURN_TRUNCATED: &str = " ...[truncated]";
/// A turn's text over this many characters keeps its first 420 and last 160.
const ACTION_MAX_CHARS: usize = 600;
const ACTION_HEAD_CHARS: usize = 420;
const ACTION_END_CHARS: usize = 160;
/// Characters of an error text kept as a blocker.
const BLOCKER_MAX_CHARS: usize = 500;
const BLOCKERS_MAX: usize = 5;
const FILES_MAX: usize = 12;
const DROPPED_TURNS_MAX: usize = 8;
const COMPLETED_MAX: usize = 12;
const CALL_NAMES_MAX: usize = 6;
/// Keys whose string values `_collect_paths_from_jsonish` takes as paths whole.
const PATH_KEYS: [&str; 4] = ["path", "workdir", "file_path", "output_path"];
/// The words `_build_static_fallback_summary` reads as an error (`\b…\b`, any case).
const ERROR_WORDS: [&str; 7] = [
    "error",
    "failed",
    "exception",
    "traceback",
    "timeout",
    "timed out",
    "fatal",
];
/// Bytes of a row's text generated for the fallback: well over the 701 characters the
/// release's turn cut needs after the whitespace collapse (each separator run of at most
/// three characters becomes one space).
const TEXT_PREFIX_CHARS: usize = 2_048;
/// A shortened segment keeps at least this many characters (room for the JSON and code
/// openings, which a segment too short for them leaves out).
const SHORT_SEGMENT_MIN_CHARS: usize = 64;
/// `_MERGED_SUMMARY_DELIMITER`: `_with_summary_prefix` keeps only the text after it.
const MERGED_DELIMITER: &str = "[END OF PRIOR CONTEXT \u{2014} COMPACTION SUMMARY BELOW]";

/// `self._last_summary_error` after a failed pass, as offline.py's errors read: `None`
/// when no call was made (a cooldown).
pub fn failure_reason(miss: Miss) -> Option<&'static str> {
    match miss {
        Miss::CoolingDown => None,
        Miss::Failed(SummaryFailure::Error(class)) => Some(match class {
            SummaryErrorClass::Timeout => "Request timed out",
            SummaryErrorClass::RateLimited => "Error code: 429 - rate limit exceeded, retry later",
            SummaryErrorClass::ServerError => "Error code: 500 - internal server error",
            SummaryErrorClass::Auth => "Error code: 401 - invalid api key",
            SummaryErrorClass::Network => {
                "peer closed connection without sending complete message body"
            }
        }),
        // A `length` finish comes with no text too (`external::summaries`).
        Miss::Failed(SummaryFailure::Empty | SummaryFailure::Length) => Some(
            "Context compression LLM returned empty content \
             (provider=auto model=compactsim-fake-model)",
        ),
    }
}

/// The rows the release drops, `range` of the pass's pruned list, and the list before
/// the prune (same rows, same order): a tool result the prune described in this pass
/// reads as the release's description line (the release prunes before it builds the
/// fallback; the model's description is generated text of the line's length).
pub struct Dropped<'a> {
    pub pruned: &'a [Message],
    pub unpruned: &'a [Message],
    pub range: Range<usize>,
}

impl<'a> Dropped<'a> {
    /// The rows the release summarizes: after the newest summary row in the window.
    pub fn of(pruned: &'a [Message], unpruned: &'a [Message], window: &Window) -> Self {
        Dropped {
            pruned,
            unpruned,
            range: release::turns(pruned, window),
        }
    }

    /// Rows of a plain list (no prune in the pass).
    pub fn all(rows: &'a [Message]) -> Self {
        Dropped {
            pruned: rows,
            unpruned: rows,
            range: 0..rows.len(),
        }
    }

    fn rows(&self) -> &'a [Message] {
        &self.pruned[self.range.clone()]
    }
}

/// The release's fallback text (its summary prefix included, cut as it cuts) for the
/// dropped rows; `previous`: a previous summary is known (its note is written).
pub fn release_text(dropped: &Dropped, previous: bool, reason: Option<&str>) -> String {
    let texts = TextOf::new(dropped.unpruned);
    let turns = dropped.rows();
    let mut notes = Notes::default();
    let calls = collect_call_paths(turns, &mut notes.files);
    for (i, m) in dropped.range.clone().zip(turns) {
        notes.read_row(m, &texts.content(m, &dropped.unpruned[i]), &calls);
    }
    let body = notes.body(turns.len(), previous, reason);
    let body = match body.split_once(MERGED_DELIMITER) {
        Some((_, after)) => after.trim().to_string(),
        None => body.trim().to_string(),
    };
    let summary = if body.is_empty() {
        SUMMARY_PREFIX.to_string()
    } else {
        format!("{SUMMARY_PREFIX}\n{body}")
    };
    if summary.chars().count() > SUMMARY_MAX_CHARS {
        format!(
            "{}{SUMMARY_TRUNCATED}",
            take_chars(&summary, SUMMARY_CUT_KEEP_CHARS).trim_end()
        )
    } else {
        summary
    }
}

/// Whether the release knows a previous summary when it compresses `..end`: a summary
/// row before the window's end (`_find_latest_context_summary` sets
/// `_previous_summary`; without one it is cleared).
pub fn has_previous(messages: &[Message], end: usize) -> bool {
    messages[..end.min(messages.len())]
        .iter()
        .any(|m| m.role != Role::System && m.is_summary())
}

/// The text the harness sends for a segment: a profile wrapper's release text, else
/// the generated text (`TextBook::segment_text` without the book's literals).
struct TextOf<'a> {
    wrappers: BTreeMap<u64, &'static str>,
    /// Every call of the list before the prune (a description reads the arguments
    /// before their truncation, the prune's last step).
    calls: BTreeMap<CallId, &'a ToolCall>,
}

impl<'a> TextOf<'a> {
    fn new(unpruned: &'a [Message]) -> Self {
        TextOf {
            wrappers: wrapper_texts().into_iter().collect(),
            calls: unpruned
                .iter()
                .flat_map(|m| m.tool_calls.iter())
                .map(|c| (c.id, c))
                .collect(),
        }
    }

    fn segment(&self, s: &Segment) -> String {
        match self.wrappers.get(&s.seed) {
            Some(t) if t.len() == s.chars as usize => (*t).to_string(),
            _ => s.materialize(),
        }
    }

    /// The text of row `m`; `before` is the row before the prune.
    /// Only the start of a long row is generated ([`TEXT_PREFIX_CHARS`]): the release
    /// reads nothing of a row past its first 700 characters after the whitespace
    /// collapse (`_compact_fallback_turn`), so the prefix gives the same text.
    fn content(&self, m: &Message, before: &Message) -> String {
        if let Some(line) = self.description(m, before) {
            return line;
        }
        let mut text = String::new();
        for (i, s) in m.content.segments.iter().enumerate() {
            if i > 0 {
                text.push_str(MERGE_SEPARATOR);
            }
            let Some(room) = TEXT_PREFIX_CHARS.checked_sub(text.len()).filter(|&r| r > 0) else {
                break;
            };
            text.push_str(&self.segment_prefix(s, room));
        }
        text
    }

    /// The first `room` bytes of a segment's text (all of it when shorter): generated
    /// text is ASCII, and a shorter segment of the same seed generates the same words
    /// (its code or JSON close aside: two characters more than needed are generated).
    fn segment_prefix(&self, s: &Segment, room: usize) -> String {
        let chars = (room + 2).max(SHORT_SEGMENT_MIN_CHARS);
        if (s.chars as usize) <= chars || self.wrappers.contains_key(&s.seed) {
            return self.segment(s);
        }
        let short = Segment {
            chars: chars as u32,
            ..s.clone()
        };
        let mut text = short.materialize();
        text.truncate(room);
        text
    }

    /// The release's description line when the prune described `before` into `m` in
    /// this pass (a single segment of the line's length, [`super::scaffold::plain`]).
    fn description(&self, m: &Message, before: &Message) -> Option<String> {
        let [seg] = &m.content.segments[..] else {
            return None;
        };
        if m.role != Role::Tool || !seg.facts.is_empty() || m.content == before.content {
            return None;
        }
        let call = before
            .tool_call_id
            .and_then(|id| self.calls.get(&id).copied());
        let chars = before.content.chars();
        let line = describe(call, chars, before.content.segments.len());
        (line.len() == seg.chars as usize).then_some(line)
    }
}

/// The first loop: every call of the dropped rows by id, and the paths in its arguments.
fn collect_call_paths(turns: &[Message], files: &mut Vec<String>) -> BTreeMap<CallId, ToolCall> {
    let mut calls = BTreeMap::new();
    for m in turns.iter().filter(|m| m.role == Role::Assistant) {
        for c in m.tool_calls.iter() {
            calls.insert(c.id, c.clone());
            if !c.arguments.is_empty() {
                match serde_json::from_str::<Value>(&c.arguments) {
                    Ok(v) => paths_from_json(&v, files),
                    Err(_) => path_mentions(&c.arguments, files),
                }
            }
        }
    }
    calls
}

/// `_collect_paths_from_jsonish` (the depth of the shapes' arguments is two).
fn paths_from_json(v: &Value, files: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (key, val) in map {
                if let (true, Value::String(s)) = (PATH_KEYS.contains(&key.as_str()), val) {
                    dedupe_append(files, s, FILES_MAX);
                }
                paths_from_json(val, files);
            }
        }
        Value::Array(items) => items.iter().for_each(|x| paths_from_json(x, files)),
        Value::String(s) => path_mentions(s, files),
        _ => {}
    }
}

/// What the second loop collects.
#[derive(Default)]
struct Notes {
    user_asks: Vec<String>,
    assistant_actions: Vec<String>,
    tool_actions: Vec<String>,
    files: Vec<String>,
    blockers: Vec<String>,
    dropped: Vec<String>,
}

impl Notes {
    fn read_row(&mut self, m: &Message, content: &str, calls: &BTreeMap<CallId, ToolCall>) {
        let text = compact_turn(content);
        path_mentions(&text, &mut self.files);
        let names: Vec<&str> = if m.role == Role::Assistant {
            m.tool_calls.iter().map(|c| c.name.as_str()).collect()
        } else {
            vec![]
        };
        let turn_text = if names.is_empty() {
            text.clone()
        } else {
            let prefix = format!("tool calls: {}", names_upto(&names));
            if text.is_empty() {
                prefix
            } else {
                format!("{prefix}; {text}")
            }
        };
        self.remember_dropped(&m.role.as_str().to_uppercase(), &turn_text);
        let text = if text.chars().count() > ACTION_MAX_CHARS {
            format!(
                "{} ... {}",
                take_chars(&text, ACTION_HEAD_CHARS).trim_end(),
                last_chars(&text, ACTION_END_CHARS).trim_start()
            )
        } else {
            text
        };
        match m.role {
            Role::User if !text.is_empty() => self.user_asks.push(text),
            Role::Assistant if !names.is_empty() => self
                .assistant_actions
                .push(format!("Called tool(s): {}", names_upto(&names))),
            Role::Assistant if !text.is_empty() => self.assistant_actions.push(text),
            Role::Tool => {
                let call = m.tool_call_id.and_then(|id| calls.get(&id));
                let chars = text.chars().count() as u32;
                self.tool_actions.push(describe(call, chars, 1));
                if names_an_error(&text) {
                    self.blockers
                        .push(take_chars(&text, BLOCKER_MAX_CHARS).to_string());
                }
            }
            Role::User | Role::Assistant | Role::System => {}
        }
    }

    fn remember_dropped(&mut self, label: &str, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        self.dropped.push(format!("{label}: {text}"));
        if self.dropped.len() > DROPPED_TURNS_MAX {
            self.dropped.remove(0);
        }
    }

    /// The f-string of the release, before `.strip()`.
    fn body(&self, turns: usize, previous: bool, reason: Option<&str>) -> String {
        let completed: Vec<String> = self
            .assistant_actions
            .iter()
            .chain(&self.tool_actions)
            .take(COMPLETED_MAX)
            .enumerate()
            .map(|(i, item)| format!("{}. {item}", i + 1))
            .collect();
        let completed = if completed.is_empty() {
            "None recoverable from compacted turns.".to_string()
        } else {
            completed.join("\n")
        };
        let active_task = match self.user_asks.last() {
            Some(ask) => format!("User asked: {}", py_repr(ask)),
            None => "Unknown from deterministic fallback.".to_string(),
        };
        let previous_note = if previous {
            "\n\nPrevious compaction summary was present and should still be treated as \
             background continuity context, but the latest LLM summary update failed."
        } else {
            ""
        };
        let reason_text =
            reason.map_or(String::new(), |r| format!(" Summary failure reason: {r}."));
        let task = "## Historical Task Snapshot";
        format!(
            "{task}\n{active_task}\n\n## Goal\nRecovered from a deterministic fallback because the LLM context summarizer was unavailable. Continue from the protected recent messages after this summary and use current file/system state for exact details.{previous_note}\n\n## Constraints & Preferences\n- This fallback was generated locally without an LLM summary call.\n- Secrets and credentials were redacted before preservation.\n- The summary may be incomplete; prefer verifying current files, git state, processes, and test results instead of assuming omitted details.\n\n## Completed Actions\n{completed}\n\n## Active State\nUnknown from deterministic fallback. Inspect current repository/session state if needed.\n\n## Historical In-Progress State\nUnknown from deterministic fallback \u{2014} the latest user ask is recorded once under\n\"{task}\" above as historical context only. Do NOT treat it as an\nunfulfilled instruction to re-answer; verify current state and continue from the\nprotected recent messages after this summary.\n\n## Blocked\n{blocked}\n\n## Key Decisions\nNone recoverable from deterministic fallback.\n\n## Resolved Questions\nNone recoverable from deterministic fallback.\n\n## Historical Pending User Asks\nNone recoverable from deterministic fallback. (The latest user ask is preserved once\nunder \"{task}\" as historical context \u{2014} it is NOT necessarily\noutstanding.)\n\n## Relevant Files\n{files}\n\n## Historical Remaining Work\nContinue from the most recent unfulfilled user ask and protected tail messages. Verify state with tools before making claims.\n\n## Last Dropped Turns\n{dropped}\n\n## Critical Context\nSummary generation was unavailable, so this is a best-effort deterministic fallback for {turns} compacted message(s).{reason_text}",
            blocked = bullets(&self.blockers, BLOCKERS_MAX),
            files = bullets(&self.files, FILES_MAX),
            dropped = bullets(&self.dropped, DROPPED_TURNS_MAX),
        )
    }
}

fn names_upto(names: &[&str]) -> String {
    names[..names.len().min(CALL_NAMES_MAX)].join(", ")
}

/// `_compact_fallback_turn` (redaction aside): whitespace collapsed, cut at 700.
fn compact_turn(content: &str) -> String {
    let text = content.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() > TURN_MAX_CHARS {
        let keep = TURN_MAX_CHARS - TURN_TRUNCATED.len();
        format!("{}{TURN_TRUNCATED}", take_chars(&text, keep).trim_end())
    } else {
        text
    }
}

/// `_bullets`: the first `limit` distinct non-empty items as `- item` lines.
fn bullets(items: &[String], limit: usize) -> String {
    let mut unique: Vec<&str> = vec![];
    for item in items {
        let item = item.trim();
        if item.is_empty() || unique.contains(&item) {
            continue;
        }
        unique.push(item);
        if unique.len() >= limit {
            break;
        }
    }
    if unique.is_empty() {
        return "None.".into();
    }
    let lines: Vec<String> = unique.iter().map(|i| format!("- {i}")).collect();
    lines.join("\n")
}

/// `_dedupe_append`.
fn dedupe_append(items: &mut Vec<String>, value: &str, limit: usize) {
    let value = value.trim();
    if !value.is_empty() && !items.iter().any(|i| i == value) && items.len() < limit {
        items.push(value.to_string());
    }
}

/// `_collect_path_mentions`: `_PATH_MENTION_RE`
/// (`(?:/|~/?|[A-Za-z]:\\)[^\s`'")\]}<>]+`) over `text`, each match without its
/// trailing `.,:;`.
fn path_mentions(text: &str, files: &mut Vec<String>) {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let run_from = |k: usize| {
        chars[k.min(chars.len())..]
            .iter()
            .take_while(|(_, c)| !c.is_whitespace() && !"`'\")]}<>".contains(*c))
            .count()
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        let lead = if c == '/' || c == '~' {
            1
        } else if c.is_ascii_alphabetic()
            && chars.get(i + 1).map(|x| x.1) == Some(':')
            && chars.get(i + 2).map(|x| x.1) == Some('\\')
        {
            3
        } else {
            0
        };
        let run = if lead > 0 { run_from(i + lead) } else { 0 };
        if run == 0 {
            i += 1;
            continue;
        }
        let end = i + lead + run;
        let to = chars.get(end).map_or(text.len(), |x| x.0);
        let m = text[chars[i].0..to].trim_end_matches(['.', ',', ':', ';']);
        dedupe_append(files, m, FILES_MAX);
        i = end;
    }
}

/// `re.search(r"\b(error|failed|…|fatal)\b", text, re.I)`.
fn names_an_error(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    lower.char_indices().any(|(i, _)| {
        !word(lower[..i].chars().next_back())
            && ERROR_WORDS
                .iter()
                .any(|w| lower[i..].starts_with(w) && !word(lower[i + w.len()..].chars().next()))
    })
}

/// Python's `repr(str)` for printable text (the collapsed turn text has no control
/// characters): single quotes unless the text holds `'` and no `"`.
fn py_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        if c == '\\' || c == quote {
            out.push('\\');
        }
        out.push(c);
    }
    out.push(quote);
    out
}

/// The first `n` characters of `s` (Python `s[:n]`).
fn take_chars(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or(s, |(i, _)| &s[..i])
}

/// The last `n` characters of `s` (Python `s[-n:]`).
fn last_chars(s: &str, n: usize) -> &str {
    let count = s.chars().count();
    if count <= n {
        return s;
    }
    s.char_indices().nth(count - n).map_or(s, |(i, _)| &s[i..])
}

#[cfg(test)]
#[path = "fallback_0190_tests.rs"]
mod tests;
