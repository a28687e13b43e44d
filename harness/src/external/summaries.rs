//! The harness side of `summarize`: the adapter's prompt is read as text (facts are the
//! fact names spelled in it, size is its rough token count), a summary the harness served
//! earlier that appears in the prompt is the *previous* summary, and so is every fact of
//! a summary row of the transcript that the prompt names (kept, as the cumulative
//! contract says, however the adapter rewrapped the summary), and the answer comes from the case's summary backend —
//! the fake summarizer with its faults — so determinism and fault injection hold for
//! foreign code. A served summary's text is registered in the book, so a row that carries
//! it maps back to the summary's facts.

use super::chat::{spelled_facts, TextBook};
use super::quotes::quoted_chars_each;
pub use super::quotes::{quoted_chars, QUOTED_PIECE_CHARS_MIN};
use super::session::{SummarizeCall, SummaryService};
use super::wire::{Purpose, SummaryAnswer};
use compactsim_fakes::seam::SummaryBackend;
use compactsim_fakes::summarizer::{fit, RollingSummary, SummaryFailure};
use compactsim_model::content::chars_to_spell;
use compactsim_model::tokens::{chars_for_rough_tokens, rough_tokens};
use compactsim_model::{CallId, ContentKind, FactId, MsgId, Segment, MERGE_SEPARATOR};
use std::sync::Arc;

/// Served summary segments carry this origin until a row adopts them.
pub const SERVED_ORIGIN: MsgId = MsgId(u32::MAX);
/// Seeds of served summaries: this tag plus the call number in the case.
const SERVED_SEED_TAG: u64 = 0x5EED_0000_0000_0000;
/// Seeds of the cut answers of `length` stops (`Served::cut_answer`): this tag plus the
/// number of the next served summary.
const CUT_SEED_TAG: u64 = 0x5EED_C000_0000_0000;

/// Answers `summarize` calls of one request from `backend`, recording served texts.
pub struct Served<'a> {
    pub book: &'a mut TextBook,
    pub backend: &'a mut dyn SummaryBackend,
    /// How many summaries this case has served (seeds the generated text).
    pub served_calls: &'a mut u64,
    /// Virtual latency of the calls answered, for the transition's event.
    pub latency_ms: u64,
    /// Facts of the summary rows of the request's transcript, ascending: a prompt that
    /// names one of them is updating that summary, and a cumulative summarizer keeps it
    /// (however the adapter rewrapped the summary text).
    pub summary_facts: Vec<FactId>,
    /// Texts of the request transcript's segments that are conversation (not summary or
    /// scaffold): the input a prompt can carry. The input size of a call is the part of
    /// these the prompt quotes, so an adapter's own instructions do not count as input.
    pub input_texts: Vec<Arc<str>>,
    /// The request transcript's tool rows (call id, text): an answered call records
    /// which of them its prompt names (`named.rs`).
    pub tool_rows: Vec<(CallId, Arc<str>)>,
    /// Calls of the request answered with a summary (`stop`, within `max_tokens`).
    pub answered: u32,
}

#[cfg(test)]
impl<'a> Served<'a> {
    /// A request whose only conversation text is `input`, no summary rows, no tool rows.
    pub fn over_input(
        book: &'a mut TextBook,
        backend: &'a mut dyn SummaryBackend,
        served_calls: &'a mut u64,
        input: &str,
    ) -> Self {
        Served {
            book,
            backend,
            served_calls,
            latency_ms: 0,
            summary_facts: vec![],
            input_texts: vec![Arc::from(input)],
            tool_rows: vec![],
            answered: 0,
        }
    }
}

impl SummaryService for Served<'_> {
    fn answer(&mut self, call: &SummarizeCall) -> SummaryAnswer {
        let prompt = prompt_text(call);
        let served = self.book.previous_summary(&prompt).unwrap_or_default();
        let mut previous = served.clone();
        let spelled = spelled_facts(&prompt);
        let quoted = spelled
            .iter()
            .filter(|f| self.summary_facts.binary_search(f).is_ok());
        previous.facts.extend(quoted);
        previous.facts.sort_unstable();
        previous.facts.dedup();
        if let Some(max) = call.max_tokens {
            previous.facts = previous_within(previous.facts, &served.facts, max);
        }
        let input_facts: Vec<FactId> = spelled
            .into_iter()
            .filter(|f| previous.facts.binary_search(f).is_err())
            .collect();
        // One pass over the prompt for the input texts and the tool rows both.
        let texts: Vec<&str> = (self.input_texts.iter().map(|t| &**t))
            .chain(self.tool_rows.iter().map(|(_, t)| &**t))
            .collect();
        let quoted_each = quoted_chars_each(&prompt, &texts);
        let (input_quoted, tool_quoted) = quoted_each.split_at(self.input_texts.len());
        let quoted_chars: usize = input_quoted.iter().sum();
        let input_tokens = rough_tokens(u32::try_from(quoted_chars).unwrap_or(u32::MAX));
        // The answer is written to fit the call's `max_tokens` (a `length` failure when
        // it runs over: the backend's drawn overrun, or no room for its facts).
        let result = if condenses(call, &previous, &input_facts) {
            self.backend.condense_within(&previous, call.max_tokens)
        } else {
            self.backend
                .summarize_within(&previous, &input_facts, input_tokens, call.max_tokens)
        };
        self.latency_ms += result.latency_ms;
        match result.result {
            Ok(summary) => {
                let named = super::named::named_tool_results(&prompt, &self.tool_rows, tool_quoted);
                self.backend.named_tool_results(named);
                let seg = self.serve(&summary);
                let text = self.book.register_served(&seg, &summary);
                match call.max_tokens {
                    Some(max) if rough_tokens(text.len() as u32) > max => {
                        // A backend that wrote past the cap (the fake summarizer never
                        // does): cut there, a failed call, as observed.
                        self.backend.truncated();
                        SummaryAnswer::Ok {
                            text: text[..chars_for_rough_tokens(max) as usize].to_string(),
                            finish_reason: "length".into(),
                        }
                    }
                    _ => {
                        self.answered += 1;
                        SummaryAnswer::Ok {
                            text: String::from(&*text),
                            finish_reason: "stop".into(),
                        }
                    }
                }
            }
            Err(SummaryFailure::Empty) => SummaryAnswer::Ok {
                text: String::new(),
                finish_reason: "stop".into(),
            },
            // A `length` stop is the answer cut at the cap, as a provider returns it; a
            // call that asked for no cap gets no text.
            Err(SummaryFailure::Length) => SummaryAnswer::Ok {
                text: call
                    .max_tokens
                    .map(|max| self.cut_answer(&previous, &input_facts, max))
                    .unwrap_or_default(),
                finish_reason: "length".into(),
            },
            Err(SummaryFailure::Error(class)) => {
                let error = serde_json::to_value(class)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_else(|| "error".into());
                let message = format!("summarizer call failed: {error}");
                self.book.seen_words.see_str(&message);
                SummaryAnswer::Err { message, error }
            }
        }
    }
}

/// A call served as a condense (`purpose` `condense`, PROTOCOL.md): its prompt carries a
/// previous summary and no fact outside it, so the summarizer re-summarizes that summary
/// alone, as the Rust reference's defrag asks (`condense_within`: same facts, the size
/// shrunk by the condense ratio). Quoted conversation text is no reason to update: a
/// summary's generated words match pieces of the transcript by chance (seen in
/// code-review-3h: 8 quoted tokens made a defrag an update one token larger). Any other
/// call, whatever its purpose, is an update of the previous summary with its input.
fn condenses(call: &SummarizeCall, previous: &RollingSummary, input_facts: &[FactId]) -> bool {
    call.purpose == Some(Purpose::Condense) && !previous.facts.is_empty() && input_facts.is_empty()
}

/// The previous summary's `facts` as far as an answer within `max` tokens can carry them:
/// all of them when they fit; else those of the served summary the prompt carries
/// (`served`, ascending), then the others (facts of summary rows the prompt quotes, e.g. a
/// tail row's own text merged beside a summary) oldest first while they fit. The rest
/// are the call's input like any other quoted fact, which the summarizer may drop. The
/// served summary's own facts are never cut here: when they alone do not fit, the
/// summarizer has no room (`length`).
fn previous_within(facts: Vec<FactId>, served: &[FactId], max: u32) -> Vec<FactId> {
    let all = RollingSummary { facts, tokens: 0 };
    match fit(&all, served, max) {
        Some(fitted) => fitted.facts,
        None => all.facts,
    }
}

impl Served<'_> {
    /// The text of a `length` stop on a call that asked for at most `max` tokens: the
    /// answer it would have written (the previous summary's facts and the input's,
    /// ascending, spelled first) cut at `max` tokens, trailing whitespace stripped as real
    /// code strips it. Not registered in the book and not counted as served: a row that
    /// adopts it is read as a literal (the facts its text spells), and the call is
    /// recorded failed (`SummaryFailure::Length`), so the oracle sees a compactor that
    /// keeps a cut answer (IOT-0.20-N1).
    fn cut_answer(&self, previous: &RollingSummary, input: &[FactId], max: u32) -> String {
        let mut facts: Vec<FactId> = previous.facts.iter().chain(input).copied().collect();
        facts.sort_unstable();
        facts.dedup();
        let cut_chars = chars_for_rough_tokens(max) as usize;
        let seg = Segment {
            kind: ContentKind::Summary,
            chars: (cut_chars as u32 + 1).max(chars_to_spell(ContentKind::Summary, &facts)),
            seed: CUT_SEED_TAG | (*self.served_calls + 1),
            origin: SERVED_ORIGIN,
            facts,
        };
        let text = seg.materialize();
        let mut end = cut_chars.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text[..end].trim_end().to_string()
    }

    fn serve(&mut self, summary: &RollingSummary) -> Segment {
        *self.served_calls += 1;
        // The text is what the oracle judges: it always has room to name every fact (the
        // fake summarizer sizes its summaries so; this holds for any backend).
        let spelled = chars_to_spell(ContentKind::Summary, &summary.facts);
        let seg = Segment {
            kind: ContentKind::Summary,
            chars: chars_for_rough_tokens(summary.tokens).max(spelled),
            seed: SERVED_SEED_TAG | *self.served_calls,
            origin: SERVED_ORIGIN,
            facts: summary.facts.clone(),
        };
        // Written once: the book keeps the generated text for `register_served`.
        if let Some(text) = without_trailing_whitespace(&self.book.segment_text(&seg)) {
            self.book.know_text(seg.seed, &text);
        }
        seg
    }
}

/// A served answer as a summarizer returns it: real code strips model output
/// (`.strip()`), so generated text that ends in whitespace would lose bytes the model
/// counts (the ±1 token of adapters/hermes/DIFF.md). The trailing whitespace becomes as
/// many `.` (same length, same facts); `None` when there is none.
fn without_trailing_whitespace(text: &str) -> Option<String> {
    let kept = text.trim_end();
    (kept.len() < text.len()).then(|| {
        let mut out = kept.to_string();
        out.extend(std::iter::repeat_n('.', text.len() - kept.len()));
        out
    })
}

/// The prompt as one text: `prompt`, or the contents of `messages` joined.
fn prompt_text(call: &SummarizeCall) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if let Some(p) = &call.prompt {
        parts.push(p);
    }
    for m in call.messages.iter().flatten() {
        parts.push(m.content.as_deref().unwrap_or(""));
    }
    parts.join(MERGE_SEPARATOR)
}

#[cfg(test)]
mod trailing_tests {
    use super::*;

    #[test]
    fn served_text_keeps_its_length_and_loses_its_trailing_whitespace() {
        assert_eq!(without_trailing_whitespace("a FACT-000001"), None);
        let text = without_trailing_whitespace("a FACT-000001 \n ").unwrap();
        assert_eq!(text, "a FACT-000001...");
        assert_eq!(text.trim().len(), text.len());
        let mut found = 0;
        for seed in 0..64u64 {
            let seg = Segment {
                kind: ContentKind::Summary,
                chars: 200 + seed as u32,
                seed: SERVED_SEED_TAG | seed,
                origin: SERVED_ORIGIN,
                facts: vec![FactId(1)],
            };
            let raw = seg.materialize();
            if let Some(t) = without_trailing_whitespace(&raw) {
                found += 1;
                assert_eq!((t.len(), t.trim_end().len()), (raw.len(), raw.len()));
                assert_eq!(spelled_facts(&t), spelled_facts(&raw));
            }
        }
        assert!(found > 0, "the generator ends some summaries in whitespace");
    }
}
