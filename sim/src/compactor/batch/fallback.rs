//! The deterministic fallback summary (hermes-domain §2.3 step 6): built locally when
//! the summarizer fails and `abort_on_summary_failure` is false. Bounded: ≤ 8,000
//! characters, a ≤ 3,000-character snapshot of the previous summary, ≤ 700 characters
//! for each of the last 8 dropped turns. Facts that do not fit are dropped by policy.

use super::summary::Source;
use crate::summarizer::RollingSummary;
use compactsim_model::{tokens::rough_tokens, FactId, Message};

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

/// The fallback summary of the dropped window `source` over `messages`.
pub fn fallback_summary(messages: &[Message], source: &Source) -> RollingSummary {
    let mut text = Budgeted::new(FALLBACK_MAX_CHARS - FALLBACK_HEADER_CHARS);
    if let Some(prev) = &source.previous {
        let chars = (prev.tokens * 4).min(FALLBACK_PREVIOUS_MAX_CHARS);
        text.add(chars, &prev.facts);
    }
    let turns = split_turns(messages, source);
    let newest = &turns[turns.len().saturating_sub(FALLBACK_TURNS_MAX)..];
    for turn in newest {
        text.add(turn.chars.min(FALLBACK_TURN_MAX_CHARS), &turn.facts);
    }
    RollingSummary {
        facts: text.facts_sorted(),
        tokens: rough_tokens(FALLBACK_HEADER_CHARS + text.used),
    }
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
