//! The deterministic fallback summary (hermes-domain §2.3 step 6): built locally when
//! the summarizer fails and `abort_on_summary_failure` is false. Bounded: ≤ 8,000
//! characters, a ≤ 3,000-character snapshot of the previous summary, ≤ 700 characters
//! for each of the last 8 dropped turns. Facts that do not fit are dropped by policy.

use super::boundaries::Window;
use super::fallback_0190::{self, Dropped};
use super::release::wrapper_chars;
use super::scaffold::Fixed;
use super::summary::{Miss, Source};
use compactsim_fakes::summarizer::RollingSummary;
use compactsim_model::content::{chars_to_spell, spelled_facts};
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
/// Characters one fact takes in the text (`FACT-000001` and a separator).
const FACT_CHARS: u32 = 12;

/// A fallback summary and, under 0.19.0, the characters of a scaffold segment
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

/// [`fallback_summary`] under `--profile hermes-0.19.0`: the release's own text
/// ([`fallback_0190::release_text`] over the rows it drops), its facts the fact names
/// spelled in it, written as a pad segment and a body so that the row has the release's
/// length in bytes exactly.
pub fn fallback_summary_0_19_0(dropped: &Dropped, window: &Window, miss: Miss) -> Fallback {
    let text = fallback_0190::release_text(
        dropped,
        fallback_0190::has_previous(dropped.pruned, window.end),
        fallback_0190::failure_reason(miss),
    );
    let joined = pad_and_body_bytes_0_19_0(text.len() as u32);
    // A pad of 1 to 4 characters: one of none would still add its separator.
    let tokens = joined.saturating_sub(1) / 4;
    Fallback {
        summary: RollingSummary {
            facts: spelled_facts(&text),
            tokens,
        },
        pad_chars: Some(joined - chars_for_rough_tokens(tokens)),
    }
}

/// Bytes of the pad and the body of a 0.19.0 fallback row whose release text has
/// `release_bytes`: the release's row is that text, `"\n\n"` and its end marker; the
/// model's is the prefix, the pad and the body joined by separators, a separator and
/// the profile's end marker (one byte shorter than the release's, [`super::release::wrapper_text`]).
pub fn pad_and_body_bytes_0_19_0(release_bytes: u32) -> u32 {
    let sep = MERGE_SEPARATOR.len() as u32;
    let marker = wrapper_chars(Fixed::EndMarker);
    (release_bytes + sep + marker + 1)
        .saturating_sub(wrapper_chars(Fixed::SummaryPrefix) + 3 * sep + marker)
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

/// The dropped turns, each with the facts its rows' text spells: the fallback copies
/// text, so a fact a row lists but is too short to spell (a 27-character code segment
/// listing two facts spells one) is not in it, even when the turn's characters together
/// would have room for it.
fn split_turns(messages: &[Message], source: &Source) -> Vec<Turn> {
    let mut turns: Vec<Turn> = vec![];
    for row in &source.rows {
        let m = &messages[row.index];
        if turns.is_empty() || m.is_real_user() {
            turns.push(Turn::default());
        }
        let turn = turns.last_mut().expect("pushed above");
        turn.chars += row.chars;
        let spelled = spelled_by(m);
        turn.facts.extend(
            row.facts
                .iter()
                .filter(|f| spelled.binary_search(f).is_ok()),
        );
    }
    turns
}

/// The facts the text of `m` spells, ascending: a segment's listed facts when it has the
/// room to spell them all ([`chars_to_spell`]), else the names read from its bytes.
fn spelled_by(m: &Message) -> Vec<FactId> {
    let mut facts: Vec<FactId> = vec![];
    for s in m.content.segments.iter() {
        if s.chars >= chars_to_spell(s.kind, &s.facts) {
            facts.extend_from_slice(&s.facts);
        } else {
            facts.extend(spelled_facts(&s.materialize()));
        }
    }
    facts.sort_unstable();
    facts.dedup();
    facts
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

    /// A row too short to spell every fact it lists gives the fallback only the facts its
    /// text spells, though the turn around it has room for more (default batch suite,
    /// case 100: a 27-character code segment listing two facts spelled one).
    #[test]
    fn a_fact_a_row_lists_but_does_not_spell_is_not_in_the_fallback() {
        let (mut m, _) = source_of(2, None);
        let short = compactsim_model::Segment {
            kind: compactsim_model::ContentKind::Code,
            chars: 27,
            seed: 7,
            origin: m[1].id,
            facts: vec![FactId(947), FactId(948)],
        };
        let spelled = spelled_facts(&short.materialize());
        assert_eq!(spelled.len(), 1, "the segment spells one of its two facts");
        m[1].content = compactsim_model::Content::single(short);
        let w = Window {
            head_end: 0,
            start: 0,
            end: m.len(),
        };
        let src = rehydrate(&m, &w, &BatchState::default());
        let f = fallback_summary(&m, &src);
        assert!(f.facts.contains(&spelled[0]), "{:?}", f.facts);
        let unspelled = if spelled[0] == FactId(947) { 948 } else { 947 };
        assert!(!f.facts.contains(&FactId(unspelled)), "{:?}", f.facts);
    }

    /// The release's row is its text, `"\n\n"` and the 86-byte end marker; the model's
    /// row (prefix, pad, body, profile end marker, joined) has that length for every
    /// text length, and a cut text (7,990 characters, 8,008 bytes) gives session 6's
    /// 6,359 bytes of pad and body.
    #[test]
    fn a_0_19_0_fallback_row_has_the_release_texts_length() {
        assert_eq!(pad_and_body_bytes_0_19_0(8_008), 6_359);
        let sep = MERGE_SEPARATOR.len() as u32;
        for release_bytes in [1_700, 3_001, 3_002, 3_003, 3_004, 8_008] {
            let joined = pad_and_body_bytes_0_19_0(release_bytes);
            let tokens = joined.saturating_sub(1) / 4;
            let pad = joined - chars_for_rough_tokens(tokens);
            assert!((1..=4).contains(&pad), "{release_bytes}: pad {pad}");
            let row = wrapper_chars(Fixed::SummaryPrefix) + sep + pad + sep + tokens * 4 + sep;
            assert_eq!(
                row + wrapper_chars(Fixed::EndMarker),
                release_bytes + 2 + 86
            );
        }
    }

    /// Under the profile the text is the release's: one dropped turn of 400-character
    /// rows, a timeout (its reason written), no previous summary.
    #[test]
    fn a_0_19_0_fallback_spells_the_facts_of_the_releases_text() {
        let (m, _) = source_of(1, None);
        let w = Window {
            head_end: 0,
            start: 0,
            end: m.len(),
        };
        let miss = Miss::Failed(compactsim_fakes::summarizer::SummaryFailure::Error(
            compactsim_fakes::summarizer::SummaryErrorClass::Timeout,
        ));
        let f = fallback_summary_0_19_0(&Dropped::of(&m, &m, &w), &w, miss);
        let text = fallback_0190::release_text(&Dropped::all(&m), false, Some("Request timed out"));
        assert!(text.ends_with("Summary failure reason: Request timed out."));
        assert_eq!(f.summary.facts, spelled_facts(&text));
        assert!(!f.summary.facts.is_empty(), "the dropped turns name facts");
        let joined = pad_and_body_bytes_0_19_0(text.len() as u32);
        assert_eq!(f.summary.tokens * 4 + f.pad_chars.expect("pad"), joined);
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
