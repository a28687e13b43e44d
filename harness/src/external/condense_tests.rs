//! `purpose: condense` on a `summarize` call: served with the fake summarizer's
//! `condense` (the in-process reference's defrag), and only when the prompt carries a
//! previous summary and no input.

use super::chat::{spelled_facts, TextBook};
use super::session::{SummarizeCall, SummaryService};
use super::summaries::Served;
use super::wire::{Purpose, SummaryAnswer};
use compactsim_fakes::rng::{stream, Stream};
use compactsim_fakes::summarizer::{Summarizer, SummarizerConfig};
use compactsim_model::tokens::rough_tokens;
use compactsim_model::FactId;

fn text_of(answer: SummaryAnswer) -> String {
    match answer {
        SummaryAnswer::Ok {
            text,
            finish_reason,
        } if finish_reason == "stop" => text,
        other => panic!("a summary: {other:?}"),
    }
}

fn call(prompt: &str, purpose: Option<Purpose>) -> SummarizeCall {
    SummarizeCall {
        prompt: Some(prompt.into()),
        messages: None,
        max_tokens: None,
        purpose,
    }
}

/// A summary served from 40 facts in ~8,000 characters of input, then the calls `second` makes with its text:
/// each answer's (rough tokens, facts), and whether the backend served a condense.
fn after_a_summary(second: &[(String, Option<Purpose>)]) -> (u32, Vec<(u32, Vec<FactId>)>) {
    let mut book = TextBook::default();
    let mut fake = Summarizer::new(SummarizerConfig::reliable(), stream(5, Stream::Summarizer));
    // ~200 characters a fact: the summary grows past the size that spells its facts, so
    // a condense has room to shrink it.
    let filler = " ran the tests, read the parser module and the config loader again".repeat(3);
    let input: String = (1..=40).map(|i| format!(" FACT-{i:06}{filler}")).collect();
    let mut served = 0;
    let mut s = Served::over_input(&mut book, &mut fake, &mut served, &input);
    let first = text_of(s.answer(&call(&format!("Summarize:{input}"), None)));
    let answers = second
        .iter()
        .map(|(extra, purpose)| {
            let text = text_of(s.answer(&call(&format!("{first}{extra}"), *purpose)));
            (rough_tokens(text.len() as u32), spelled_facts(&text))
        })
        .collect();
    (rough_tokens(first.len() as u32), answers)
}

#[test]
fn a_condense_halves_the_summary_and_keeps_its_facts() {
    let (first, answers) = after_a_summary(&[(String::new(), Some(Purpose::Condense))]);
    let (tokens, facts) = &answers[0];
    assert_eq!(facts, &(1..=40).map(FactId).collect::<Vec<_>>());
    // condense_per_mille 500, floored at the size that names every fact.
    assert!(*tokens < first, "{tokens} of {first}");
    assert!(*tokens >= first / 2 - 1, "{tokens} of {first}");
}

#[test]
fn without_the_purpose_the_same_prompt_is_an_update_at_the_same_size() {
    let (first, answers) = after_a_summary(&[
        (String::new(), None),
        (String::new(), Some(Purpose::Summarize)),
    ]);
    for (tokens, facts) in &answers {
        assert_eq!(*tokens, first, "an update with no input does not shrink");
        assert_eq!(facts.len(), 40);
    }
}

#[test]
fn a_condense_with_input_is_served_as_an_update() {
    // A fact outside the previous summary is input: the call is an update, which keeps
    // the new fact (retention 1000 ‰) and grows.
    let (first, answers) =
        after_a_summary(&[(" FACT-000099 new".to_string(), Some(Purpose::Condense))]);
    let (tokens, facts) = &answers[0];
    assert!(facts.contains(&FactId(99)), "{facts:?}");
    assert!(*tokens >= first, "{tokens} of {first}");
}
