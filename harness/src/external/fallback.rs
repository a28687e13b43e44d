//! The harness's reading of a batch pass that wrote a summary with no answered
//! summarizer call, against the static fallback text the adapter declared (policy
//! `static_fallback {"text": …}`, `invariants/src/fallback_text.rs`). The oracle sees
//! segments, not an adapter's bytes, so the text is read here, where the bytes are, and
//! handed to summary-failure-safe as an observation on the pass's event.

use super::chat::TextBook;
use compactsim_invariants::fallback_text;
use compactsim_model::{written_summaries, Message};

/// The first summary row of `after` written by the pass (new id, or its content changed
/// from `before`) whose text is not `template` with its holes filled: `m12: lacks piece
/// 2 of 3 "…"` (with its length in characters); `None` when every such row is.
pub fn mismatch(
    template: &str,
    book: &TextBook,
    before: &[Message],
    after: &[Message],
) -> Option<String> {
    written_summaries(before, after).find_map(|(_, m)| {
        let text = book.content_text(&m.content);
        fallback_text::mismatch(template, &text).map(|miss| {
            format!(
                "{} ({} characters) lacks {miss}",
                m.id,
                text.chars().count()
            )
        })
    })
}
