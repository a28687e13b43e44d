//! The harness's reading of a batch pass that wrote a summary with no answered
//! summarizer call, against the static fallback text the adapter declared (policy
//! `static_fallback {"text": …}`, `invariants/src/fallback_text.rs`). The oracle sees
//! segments, not an adapter's bytes, so the text is read here, where the bytes are, and
//! handed to summary-failure-safe as an observation on the pass's event.

use super::chat::TextBook;
use super::fallback_words::{add_words, foreign_among, judged, WordSet};
use compactsim_invariants::fallback_text;
use compactsim_model::{written_summaries, Message};

/// The words a declared fallback may write besides those the harness saw: the words
/// of its `text` and of its `words` (`fallback_words.rs`).
pub fn declared_words(template: &str, words: Option<&str>) -> WordSet {
    let mut set = WordSet::default();
    add_words(&mut set, template);
    add_words(&mut set, words.unwrap_or(""));
    set
}

/// The first summary row of `after` written by the pass (new id, or its content changed
/// from `before`) that is not `template` with its holes filled by what the fallback was
/// entitled to: it lacks a piece (`m12 (340 characters) lacks piece 2 of 3 "…"`), or it
/// holds words from nowhere (`m12 (340 characters) holds 3 words …: approved, …`): in no
/// text the harness sent or served (`book.seen_words`: the rows, the previous summary,
/// the served summaries and failure messages), not in `declared`. `None` when every such
/// row is the fallback.
pub fn mismatch(
    template: &str,
    declared: &WordSet,
    book: &mut TextBook,
    before: &[Message],
    after: &[Message],
) -> Option<String> {
    // Each written summary with the words of it only the seen words can excuse (found
    // once: they choose how far the seen texts are split, then are looked up).
    let written: Vec<_> = written_summaries(before, after)
        .map(|(_, m)| {
            let text = book.content_text(&m.content);
            let words: Vec<String> = judged(&text, declared).collect();
            (m.id, text, words)
        })
        .collect();
    let wanted = written
        .iter()
        .flat_map(|(_, _, words)| words.iter().cloned());
    book.seen_words.settle_for(wanted.collect::<Vec<_>>());
    let book = &*book;
    written.into_iter().find_map(|(id, text, words)| {
        let chars = text.chars().count();
        if let Some(miss) = fallback_text::mismatch(template, &text) {
            return Some(format!("{id} ({chars} characters) lacks {miss}"));
        }
        let (n, listed) = foreign_among(words, &book.seen_words);
        (n > 0).then(|| {
            format!(
                "{} ({chars} characters) holds {n} words in no text the harness sent or \
                 served (rows, summaries, failure messages) and not in the declared text or \
                 words: {}",
                id,
                listed.join(", ")
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::external::wire::ChatMessage;
    use compactsim_fakes::ids::IdAlloc;
    use compactsim_model::{Content, ContentKind, FactId, MsgId, Role, Segment};

    const TEMPLATE: &str = "{prefix}Summary unavailable.{rest}";

    fn row(id: u32, role: Role) -> Message {
        Message::new(
            MsgId(id),
            role,
            Content::single(Segment {
                kind: ContentKind::Prose,
                chars: 300,
                seed: 40 + u64::from(id),
                origin: MsgId(id),
                facts: vec![FactId(id)],
            }),
        )
    }

    /// The pass's reply: a fallback summary row `text` in front of the last row.
    fn judged(rest: impl Fn(&str) -> String, declared: &WordSet) -> Option<String> {
        let before = vec![
            row(0, Role::User),
            row(1, Role::Assistant),
            row(2, Role::User),
        ];
        let mut book = TextBook::default();
        let sent = book.to_chat(&before);
        let copied = sent[1].content.clone().unwrap_or_default();
        let mut summary = ChatMessage::plain(
            "assistant",
            &format!("[CTX] Summary unavailable.{}", rest(&copied)),
            None,
        );
        summary.compressed_summary = Some(true);
        let rows = vec![sent[0].clone(), summary, sent[2].clone()];
        let after = book
            .from_chat(&rows, &before, &mut IdAlloc::default())
            .expect("rows read back");
        mismatch(TEMPLATE, declared, &mut book, &before, &after)
    }

    #[test]
    fn fires_on_a_fallback_holding_words_from_nowhere() {
        let declared = declared_words(TEMPLATE, Some("CTX"));
        let miss =
            judged(|_| " Approved: zyxwvut qwrtpl.".into(), &declared).expect("prose from nowhere");
        assert!(
            miss.contains("holds 3 words in no text the harness sent or served"),
            "{miss}"
        );
        assert!(miss.ends_with(": approved, zyxwvut, qwrtpl"), "{miss}");
    }

    #[test]
    fn quiet_on_a_fallback_copying_rows_and_declared_words() {
        // Words of a row the harness sent, cut, and declared labels.
        let copy = |sent: &str| {
            let head: String = sent.chars().take(120).collect();
            format!(" ZQXLABEL: Called tool(s): {head}... 3,400")
        };
        let labels = declared_words(TEMPLATE, Some("CTX Called tool s zqxlabel"));
        assert_eq!(judged(copy, &labels), None);
        // Without the declared label it is from nowhere.
        let declared = declared_words(TEMPLATE, Some("CTX Called tool s"));
        let miss = judged(copy, &declared).expect("ZQXLABEL is declared nowhere");
        assert!(miss.ends_with(": zqxlabel"), "{miss}");
    }
}
