//! Previous-summary rehydration and the summarizer call (hermes-domain §2.3 steps 5–6,
//! §2.6): which rows feed the summary, how big the serialized input is, the size budget,
//! and the call itself with the cooldown early-return.

use super::boundaries::{first_non_system, Window};
use super::scaffold::split_row;
use super::state::BatchState;
use super::{released, SummaryBackend};
use crate::bug_set::BugSet;
use compactsim_fakes::summarizer::{RollingSummary, SummaryFailure};
use compactsim_model::{tokens::rough_tokens, FactId, Message, MsgId, Segment};
use serde::Serialize;

/// The budget is this share of the content tokens, per mille…
pub const SUMMARY_RATIO_PER_MILLE: u64 = 200;
/// …but at least this many tokens (wins over the ceiling).
pub const SUMMARY_BUDGET_MIN_TOKENS: u32 = 2_000;
/// A serialized message keeps at most this many characters (4,000 head + 1,500 tail).
pub const MESSAGE_INPUT_MAX_CHARS: u32 = 6_000;
/// Serialized tool-call arguments keep at most this many characters.
pub const ARGUMENTS_INPUT_MAX_CHARS: u32 = 1_500;
/// The whole serialized block is capped at this many characters…
pub const INPUT_MAX_CHARS: u64 = 160_000;
/// …keeping this share from the start (per mille) and the rest from the end.
pub const INPUT_HEAD_SHARE_PER_MILLE: u64 = 450;
/// `[TOOL RESULT id]: ` / `[ASSISTANT]: ` label and line break per serialized row.
const ROW_LABEL_CHARS: u32 = 20;

/// What the window holds for the summarizer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Source {
    /// The previous summary to update: the joined bodies of the summary rows in the
    /// scan range, or the in-memory one while a summary row exists anywhere.
    pub previous: Option<RollingSummary>,
    /// Window rows with genuine (non-summary) text, each with that text's chars, facts
    /// and tool-call characters.
    pub rows: Vec<SourceRow>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceRow {
    pub id: MsgId,
    pub index: usize,
    pub chars: u32,
    pub call_chars: u32,
    pub facts: Vec<FactId>,
}

/// Collects the previous summary (from summary rows between the first non-system row
/// and the window end, and from batch summaries left in the tail, which assembly
/// unwraps so one live batch summary remains, §2.4) and the genuine content of the
/// window. Standalone summary rows contribute only their body; merged rows are unwrapped
/// to their own text.
pub fn rehydrate(messages: &[Message], window: &Window, state: &BatchState) -> Source {
    rehydrate_with(messages, window, state, &BugSet::none())
}

/// [`rehydrate`] with the release's bugs B3 and B5 when `bugs` has them ([`released`]).
pub fn rehydrate_with(
    messages: &[Message],
    window: &Window,
    state: &BatchState,
    bugs: &BugSet,
) -> Source {
    let scan = first_non_system(messages).min(window.end)..window.end;
    let mut fossils: Vec<&Message> = messages[scan].iter().filter(|m| m.is_summary()).collect();
    let tail = &messages[window.end.min(messages.len())..];
    if released::supersedes_tail_summaries(tail, bugs) {
        fossils.extend(tail.iter().filter(|m| m.is_batch_summary()));
    }
    let previous = if !fossils.is_empty() {
        Some(join_bodies(&fossils))
    } else if messages.iter().any(Message::is_summary) {
        state.previous_summary.clone()
    } else {
        None // an in-memory summary with no row in the transcript is leakage
    };
    let rows = released::summarized_rows(messages, window, bugs)
        .filter_map(|i| source_row(messages, i))
        .collect();
    Source { previous, rows }
}

fn join_bodies(rows: &[&Message]) -> RollingSummary {
    let body = rows.iter().flat_map(|m| split_row(m).0);
    let mut facts = vec![];
    let mut chars = 0u32;
    for s in body {
        facts.extend_from_slice(&s.facts);
        chars += s.chars;
    }
    facts.sort_unstable();
    facts.dedup();
    RollingSummary {
        facts,
        tokens: rough_tokens(chars),
    }
}

fn source_row(messages: &[Message], index: usize) -> Option<SourceRow> {
    let m = &messages[index];
    let call_chars: u32 = m
        .tool_calls
        .iter()
        .map(|c| c.name.len() as u32 + (c.arguments.len() as u32).min(ARGUMENTS_INPUT_MAX_CHARS))
        .sum();
    // A row that is no summary is all its own text ([`split_row`]): read in place.
    let (chars, facts) = if m.is_summary() {
        own_text(split_row(m).1.into_iter())
    } else {
        own_text(m.content.segments.iter())
    };
    if chars == 0 && call_chars == 0 && m.is_summary() {
        return None;
    }
    Some(SourceRow {
        id: m.id,
        index,
        chars,
        call_chars,
        facts,
    })
}

/// Characters and facts (sorted, each once) of a row's own segments. Facts already
/// strictly increasing (one segment's, as written) are sorted and unique as they are.
fn own_text<'a>(own: impl Iterator<Item = &'a Segment> + Clone) -> (u32, Vec<FactId>) {
    let chars = own.clone().map(|s| s.chars).sum();
    let mut facts: Vec<FactId> = own.flat_map(|s| s.facts.iter().copied()).collect();
    if !facts.is_sorted_by(|a, b| a < b) {
        facts.sort_unstable();
        facts.dedup();
    }
    (chars, facts)
}

/// The serialized summarizer input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Input {
    pub facts: Vec<FactId>,
    pub tokens: u32,
    /// Rows whose text reached the summarizer.
    pub rows_seen: Vec<MsgId>,
    /// Rows cut out of the middle by the 160,000-character cap (their facts are lost).
    pub rows_omitted: Vec<MsgId>,
}

/// Serializes the window rows with the per-message and whole-block caps. A row survives
/// the block cap if it starts in the first 45 % or in the last 55 % of the budget.
pub fn input(source: &Source) -> Input {
    let sizes: Vec<u64> = source.rows.iter().map(serialized_chars).collect();
    let total: u64 = sizes.iter().sum();
    let head_chars = INPUT_MAX_CHARS * INPUT_HEAD_SHARE_PER_MILLE / 1000;
    let tail_from = total.saturating_sub(INPUT_MAX_CHARS - head_chars);
    let mut out = Input::default();
    let mut offset = 0u64;
    for (row, size) in source.rows.iter().zip(&sizes) {
        let kept = total <= INPUT_MAX_CHARS || offset < head_chars || offset >= tail_from;
        if kept {
            out.facts.extend_from_slice(&row.facts);
            out.rows_seen.push(row.id);
        } else {
            out.rows_omitted.push(row.id);
        }
        offset += size;
    }
    out.facts.sort_unstable();
    out.facts.dedup();
    out.tokens = rough_tokens(total.min(INPUT_MAX_CHARS) as u32);
    out
}

fn serialized_chars(row: &SourceRow) -> u64 {
    ((row.chars + row.call_chars).min(MESSAGE_INPUT_MAX_CHARS) + ROW_LABEL_CHARS) as u64
}

/// The "Target ~N tokens" of the prompt: 20 % of the content, at least 2,000, at most
/// `summary_tokens_max` unless that is below the minimum. Not sent as `max_tokens`.
pub fn budget_tokens(content_tokens: u32, summary_tokens_max: u32) -> u32 {
    let share = (content_tokens as u64 * SUMMARY_RATIO_PER_MILLE / 1000) as u32;
    share.min(summary_tokens_max).max(SUMMARY_BUDGET_MIN_TOKENS)
}

/// Why no LLM summary came back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Miss {
    /// The call failed.
    Failed(SummaryFailure),
    /// A failure cooldown was in force: no call was made.
    CoolingDown,
}

/// One summarizer call (or its cooldown early-return).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Called {
    pub result: Result<RollingSummary, Miss>,
    pub expanded: bool,
    pub latency_ms: u64,
}

/// Asks the backend for the new cumulative summary unless a cooldown is in force.
pub fn call(
    backend: &mut dyn SummaryBackend,
    previous: Option<&RollingSummary>,
    input: &Input,
    state: &BatchState,
    now_ms: u64,
) -> Called {
    if state.cooling_down(now_ms) {
        return Called {
            result: Err(Miss::CoolingDown),
            expanded: false,
            latency_ms: 0,
        };
    }
    let empty = RollingSummary::default();
    let reply = backend.summarize(previous.unwrap_or(&empty), &input.facts, input.tokens);
    Called {
        result: reply.result.map_err(Miss::Failed),
        expanded: reply.expanded,
        latency_ms: reply.latency_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compactor::batch::testkit::Builder;
    use compactsim_model::{Content, ContentKind, Flags, Role, Segment};

    /// Segments with facts in order, out of order and repeated: the facts come out as
    /// sorting and deduplicating every segment's facts gives them.
    #[test]
    fn own_text_facts_are_the_sorted_unique_facts() {
        let seg = |chars: u32, facts: &[u32]| Segment {
            kind: ContentKind::Prose,
            chars,
            seed: 1,
            origin: MsgId(0),
            facts: facts.iter().map(|&f| FactId(f)).collect(),
        };
        let cases = [
            vec![],
            vec![seg(10, &[])],
            vec![seg(10, &[1, 4, 9])],
            vec![seg(10, &[4, 1, 9])],
            vec![seg(10, &[1, 4]), seg(5, &[4, 7])],
            vec![seg(10, &[5, 6]), seg(5, &[1, 2])],
            vec![seg(3, &[2, 2])],
        ];
        for own in &cases {
            let mut plain: Vec<FactId> = own.iter().flat_map(|s| s.facts.clone()).collect();
            plain.sort_unstable();
            plain.dedup();
            let chars: u32 = own.iter().map(|s| s.chars).sum();
            assert_eq!(own_text(own.iter()), (chars, plain), "{own:?}");
        }
    }

    fn window(start: usize, end: usize) -> Window {
        Window {
            head_end: start,
            start,
            end,
        }
    }

    #[test]
    fn budget_is_a_fifth_clamped_with_the_minimum_winning() {
        assert_eq!(budget_tokens(5_000, 10_000), 2_000);
        assert_eq!(budget_tokens(30_000, 10_000), 6_000);
        assert_eq!(budget_tokens(200_000, 10_000), 10_000);
        assert_eq!(budget_tokens(200_000, 1_600), 2_000);
    }

    #[test]
    fn standalone_summaries_feed_previous_and_merged_rows_unwrap() {
        let mut b = Builder::new();
        b.system();
        b.summary(Role::User, &[100, 101]);
        b.turn(400, 1, 400);
        let merged = b.user(400);
        b.reply(400);
        let mut m = b.rows;
        // merge a summary body into the user row, as assembly does
        let body = Segment {
            kind: ContentKind::Summary,
            chars: 400,
            seed: 3,
            origin: merged,
            facts: vec![FactId(102)],
        };
        let own = m[6].content.segments.to_vec();
        let mut segs = vec![body];
        segs.extend(own.clone());
        m[6].set_content(Content::from_segments(segs));
        m[6].flags = Flags {
            summary_marker: true,
            has_user_turn: true,
            ..Flags::default()
        };
        let src = rehydrate(&m, &window(1, 7), &BatchState::default());
        let prev = src.previous.expect("rehydrated");
        assert_eq!(prev.facts, vec![FactId(100), FactId(101), FactId(102)]);
        assert_eq!(prev.tokens, 300);
        let ids: Vec<MsgId> = src.rows.iter().map(|r| r.id).collect();
        assert!(!ids.contains(&m[1].id), "standalone summary is not input");
        let unwrapped = src.rows.iter().find(|r| r.id == merged).unwrap();
        assert_eq!(unwrapped.facts, own[0].facts);
        assert_eq!(unwrapped.chars, 400);
    }

    #[test]
    fn in_memory_summary_without_a_row_is_discarded() {
        let mut b = Builder::new();
        b.turn(400, 1, 400);
        b.turn(400, 1, 400);
        let state = BatchState {
            previous_summary: Some(RollingSummary {
                facts: vec![FactId(9)],
                tokens: 50,
            }),
            ..BatchState::default()
        };
        assert_eq!(rehydrate(&b.rows, &window(0, 4), &state).previous, None);
        b.summary(Role::Assistant, &[9]);
        let kept = rehydrate(&b.rows, &window(0, 4), &state).previous;
        let from_row = RollingSummary {
            facts: vec![FactId(9)],
            tokens: 200,
        };
        assert_eq!(
            kept,
            Some(from_row),
            "a batch summary in the tail is read back"
        );
        let mut micro = b.rows.clone();
        micro.last_mut().unwrap().flags.micro_marker = true;
        let kept = rehydrate(&micro, &window(0, 4), &state).previous;
        assert_eq!(
            kept, state.previous_summary,
            "a micro marker in the tail: memory"
        );
    }

    #[test]
    fn block_cap_omits_the_middle_rows_and_their_facts() {
        let mut b = Builder::new();
        for _ in 0..60 {
            b.user(6_000);
        }
        let m = b.rows;
        let src = rehydrate(&m, &window(0, 60), &BatchState::default());
        let inp = input(&src);
        assert!(!inp.rows_omitted.is_empty());
        assert_eq!(inp.rows_seen.len() + inp.rows_omitted.len(), 60);
        assert_eq!(inp.rows_seen[0], m[0].id);
        assert_eq!(*inp.rows_seen.last().unwrap(), m[59].id);
        assert_eq!(inp.facts.len(), inp.rows_seen.len());
        assert_eq!(inp.tokens, 40_000);
        let small = input(&rehydrate(&m[..5], &window(0, 5), &BatchState::default()));
        assert!(small.rows_omitted.is_empty() && small.tokens < 8_000);
    }
}
