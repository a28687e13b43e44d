//! An answer written to fit the `max_tokens` a call asked for, and the counts of what
//! the caps did.

use super::RollingSummary;
use compactsim_model::content::chars_to_spell;
use compactsim_model::tokens::rough_tokens;
use compactsim_model::{ContentKind, FactId};

/// What the `max_tokens` of a summarizer's calls did, counted per case (the run's
/// coverage counters `summarizer.max_tokens.*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CapCounts {
    /// Calls that asked for `max_tokens`.
    pub asked: u64,
    /// Answers larger than the cap, written to fit it instead.
    pub fitted: u64,
    /// Facts those answers dropped to fit.
    pub facts_dropped: u64,
    /// Answers that had to shrink and ran over the cap instead (drawn): `length`.
    pub overrun: u64,
    /// Answers whose kept facts alone do not fit the cap: `length`.
    pub no_room: u64,
}

/// `summary` written to fit `max` tokens, or `None` when the facts of `keep` (ascending) it holds
/// take more than `max` to spell (or `max` is 0). Its size is `min(summary, max)`; if
/// its facts do not fit, it keeps those in `keep` and then the others in ascending id
/// order (the oldest first) while they fit; the rest are dropped. Deterministic: no
/// draw.
pub fn fit(summary: &RollingSummary, keep: &[FactId], max: u32) -> Option<RollingSummary> {
    if max == 0 {
        return None;
    }
    let spell = |facts: &[FactId]| rough_tokens(chars_to_spell(ContentKind::Summary, facts));
    if spell(&summary.facts) <= max {
        return Some(RollingSummary {
            facts: summary.facts.clone(),
            tokens: summary.tokens.min(max),
        });
    }
    let (kept, rest): (Vec<FactId>, Vec<FactId>) = summary
        .facts
        .iter()
        .partition(|f| keep.binary_search(f).is_ok());
    let base = chars_to_spell(ContentKind::Summary, &[]);
    let mut chars = chars_to_spell(ContentKind::Summary, &kept);
    if rough_tokens(chars) > max {
        return None;
    }
    let mut facts = kept;
    for f in rest {
        let more = chars_to_spell(ContentKind::Summary, &[f]) - base;
        if rough_tokens(chars + more) > max {
            break;
        }
        chars += more;
        facts.push(f);
    }
    facts.sort_unstable();
    Some(RollingSummary { facts, tokens: max })
}
