//! The deterministic fallback summary (hermes-domain §2.3 step 6): built locally when
//! the summarizer fails and `abort_on_summary_failure` is false. Bounded: ≤ 8,000
//! characters, a ≤ 3,000-character snapshot of the previous summary, ≤ 700 characters
//! for each of the last 8 dropped turns. Facts that do not fit are dropped by policy.

use super::summary::Source;
use crate::summarizer::RollingSummary;
use compactsim_model::tokens::{chars_for_rough_tokens, rough_tokens};
use compactsim_model::{FactId, Message, MERGE_SEPARATOR};

/// The whole fallback text.
pub const FALLBACK_MAX_CHARS: u32 = 8_000;
/// The snapshot of the previous summary.
pub const FALLBACK_PREVIOUS_MAX_CHARS: u32 = 3_000;
/// Each dropped turn.
pub const FALLBACK_TURN_MAX_CHARS: u32 = 700;
/// Dropped turns described (the newest ones).
pub const FALLBACK_TURNS_MAX: usize = 8;
/// "Summary generation was unavailable…" header (length inferred).
pub const FALLBACK_HEADER_CHARS: u32 = 160;
/// 0.19.0's fixed text: the body `_build_static_fallback_summary` writes for no turns
/// (its headings and notes: 1,782 characters, measured on the release).
pub const FALLBACK_HEADER_CHARS_0_19_0: u32 = 1_782;
/// Characters one fact takes in the text (`FACT-000001` and a separator).
const FACT_CHARS: u32 = 12;

/// 0.19.0 caps the fallback *with* its prefix (`_with_summary_prefix` comes before the
/// `_FALLBACK_SUMMARY_MAX_CHARS` cut of `_build_static_fallback_summary`): a body of more
/// than 8,000 − 1,632 (the prefix's characters) − 1 (its line break) characters is cut.
pub const FALLBACK_BODY_MAX_CHARS_0_19_0: u32 = FALLBACK_MAX_CHARS - 1_632 - 1;
/// Bytes of a cut 0.19.0 fallback body: the text is cut to 8,000 − 42 characters and
/// `"\n...[fallback summary truncated]"` (32) appended, 7,990 characters with the prefix;
/// the body's part holds two em dashes (3 bytes each: the `Historical In-Progress` and
/// `Historical Pending User Asks` notes, both before the cut on 173 of 197 cut fallbacks
/// the release wrote on the dtokens cases; DIFF-s6-dtokens.md).
pub const FALLBACK_CUT_BODY_BYTES_0_19_0: u32 = FALLBACK_MAX_CHARS - 42 + 32 - 1_632 - 1 + 2 * 2;

/// A fallback summary and, for 0.19.0's cut text, the characters of a scaffold segment
/// written before the body so that the row has the release's length exactly (a body's
/// characters are a multiple of 4: [`chars_for_rough_tokens`]).
pub struct Fallback {
    pub summary: RollingSummary,
    pub pad_chars: Option<u32>,
}

/// The fallback summary of the dropped window `source` over `messages`.
pub fn fallback_summary(messages: &[Message], source: &Source) -> RollingSummary {
    let text = fallback_text(messages, source, FALLBACK_MAX_CHARS - FALLBACK_HEADER_CHARS);
    RollingSummary {
        facts: text.facts_sorted(),
        tokens: rough_tokens(FALLBACK_HEADER_CHARS + text.used),
    }
}

/// [`fallback_summary`] under `--profile hermes-0.19.0`: the same text, cut where the
/// release cuts it ([`FALLBACK_BODY_MAX_CHARS_0_19_0`]); a cut body has the release's
/// length ([`FALLBACK_CUT_BODY_BYTES_0_19_0`]) as a body plus a pad segment (joined by a
/// 2-character separator).
pub fn fallback_summary_0_19_0(messages: &[Message], source: &Source) -> Fallback {
    // One character over the cut's threshold: a text that reaches it is cut.
    let budget = FALLBACK_BODY_MAX_CHARS_0_19_0 + 1 - FALLBACK_HEADER_CHARS_0_19_0;
    let text = fallback_text(messages, source, budget);
    let facts = text.facts_sorted();
    if text.left > 0 {
        return Fallback {
            summary: RollingSummary {
                facts,
                tokens: rough_tokens(FALLBACK_HEADER_CHARS_0_19_0 + text.used),
            },
            pad_chars: None,
        };
    }
    let joined = FALLBACK_CUT_BODY_BYTES_0_19_0 - MERGE_SEPARATOR.len() as u32;
    let tokens = joined / 4;
    let pad = joined - chars_for_rough_tokens(tokens);
    debug_assert!(
        pad > 0,
        "a pad segment of no characters would still add its separator"
    );
    Fallback {
        summary: RollingSummary { facts, tokens },
        pad_chars: Some(pad),
    }
}

/// The previous summary's snapshot and the newest dropped turns under `budget` chars.
fn fallback_text(messages: &[Message], source: &Source, budget: u32) -> Budgeted {
    let mut text = Budgeted::new(budget);
    if let Some(prev) = &source.previous {
        let chars = (prev.tokens * 4).min(FALLBACK_PREVIOUS_MAX_CHARS);
        text.add(chars, &prev.facts);
    }
    let turns = split_turns(messages, source);
    let newest = &turns[turns.len().saturating_sub(FALLBACK_TURNS_MAX)..];
    for turn in newest {
        text.add(turn.chars.min(FALLBACK_TURN_MAX_CHARS), &turn.facts);
    }
    text
}

/// One dropped turn: from a real user row to the next (or from the window start).
#[derive(Default)]
struct Turn {
    chars: u32,
    facts: Vec<FactId>,
}

fn split_turns(messages: &[Message], source: &Source) -> Vec<Turn> {
    let mut turns: Vec<Turn> = vec![];
    for row in &source.rows {
        if turns.is_empty() || messages[row.index].is_real_user() {
            turns.push(Turn::default());
        }
        let turn = turns.last_mut().expect("pushed above");
        turn.chars += row.chars;
        turn.facts.extend_from_slice(&row.facts);
    }
    turns
}

/// Text written under a character budget; a part keeps the facts that fit its size.
struct Budgeted {
    left: u32,
    used: u32,
    facts: Vec<FactId>,
}

impl Budgeted {
    fn new(budget: u32) -> Self {
        Budgeted {
            left: budget,
            used: 0,
            facts: vec![],
        }
    }

    fn add(&mut self, chars: u32, facts: &[FactId]) {
        let chars = chars.min(self.left);
        let fit = (chars / FACT_CHARS) as usize;
        self.facts.extend(facts.iter().take(fit));
        self.left -= chars;
        self.used += chars;
    }

    fn facts_sorted(&self) -> Vec<FactId> {
        let mut f = self.facts.clone();
        f.sort_unstable();
        f.dedup();
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compactor::batch::boundaries::Window;
    use crate::compactor::batch::state::BatchState;
    use crate::compactor::batch::summary::rehydrate;
    use crate::compactor::batch::testkit::Builder;

    fn source_of(turns: u32, previous: Option<RollingSummary>) -> (Vec<Message>, Source) {
        let mut b = Builder::new();
        for _ in 0..turns {
            b.turn(400, 1, 400);
        }
        let m = b.rows;
        let w = Window {
            head_end: 0,
            start: 0,
            end: m.len(),
        };
        let mut src = rehydrate(&m, &w, &BatchState::default());
        src.previous = previous;
        (m, src)
    }

    #[test]
    fn keeps_the_newest_eight_turns_and_the_previous_facts() {
        let prev = RollingSummary {
            facts: vec![FactId(900), FactId(901)],
            tokens: 100,
        };
        let (m, src) = source_of(12, Some(prev));
        let f = fallback_summary(&m, &src);
        assert!(f.facts.contains(&FactId(900)) && f.facts.contains(&FactId(901)));
        let newest: Vec<FactId> = src.rows[16..]
            .iter()
            .flat_map(|r| r.facts.clone())
            .collect();
        let oldest: Vec<FactId> = src.rows[..16]
            .iter()
            .flat_map(|r| r.facts.clone())
            .collect();
        assert!(newest.iter().all(|x| f.facts.contains(x)));
        assert!(oldest.iter().all(|x| !f.facts.contains(x)));
        // 400 + 0 + 400 + 400 chars per turn, cut to 700; plus the 400-char snapshot
        assert_eq!(
            f.tokens,
            rough_tokens(FALLBACK_HEADER_CHARS + 400 + 8 * 700)
        );
    }

    /// The release's cut text is 7,990 characters, 8,008 bytes (the prefix's 7 em dashes
    /// and 2 of the body's), its row that + `"\n\n"` + the 86-byte end marker.
    #[test]
    fn a_0_19_0_fallback_is_cut_at_the_releases_threshold_to_the_releases_length() {
        use crate::compactor::batch::release::wrapper_chars;
        use crate::compactor::batch::scaffold::Fixed;
        let prev = RollingSummary {
            facts: vec![FactId(900)],
            tokens: 100,
        };
        // 8 turns × 700: 160 + 5,600 = 5,760 characters for the default model, whole (cap
        // 8,000); 1,782 + 400 + 5,600 = 7,782 under 0.19.0, over its 6,367.
        let (m, src) = source_of(12, Some(prev));
        assert_eq!(
            fallback_summary(&m, &src).tokens,
            rough_tokens(160 + 400 + 5_600)
        );
        let cut = fallback_summary_0_19_0(&m, &src);
        let pad = cut.pad_chars.expect("cut");
        let body = chars_for_rough_tokens(cut.summary.tokens);
        let row = wrapper_chars(Fixed::SummaryPrefix) + 2 + pad + 2 + body + 2;
        assert_eq!(row + wrapper_chars(Fixed::EndMarker), 8_008 + 2 + 86);
        assert!(
            cut.summary.facts.contains(&FactId(900)),
            "the snapshot fits first"
        );
        // 3 turns: 1,782 + 2,100 = 3,882, under the threshold: whole, no pad.
        let (m, src) = source_of(3, None);
        let whole = fallback_summary_0_19_0(&m, &src);
        assert_eq!(whole.pad_chars, None);
        assert_eq!(whole.summary.tokens, rough_tokens(1_782 + 2_100));
        assert_eq!(whole.summary.facts, fallback_summary(&m, &src).facts);
    }

    #[test]
    fn stays_under_the_character_cap_with_a_huge_previous_summary() {
        let prev = RollingSummary {
            facts: (0..5_000).map(FactId).collect(),
            tokens: 50_000,
        };
        let (m, src) = source_of(20, Some(prev));
        let f = fallback_summary(&m, &src);
        assert!(f.tokens * 4 <= FALLBACK_MAX_CHARS);
        assert!(f.facts.len() < 5_000 && f.facts.len() <= (FALLBACK_MAX_CHARS / 12) as usize);
        assert!(
            f.facts.contains(&FactId(0)),
            "snapshot keeps the start of the previous summary"
        );
    }
}
