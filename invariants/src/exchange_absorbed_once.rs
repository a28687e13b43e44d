use crate::class::{changed, classify, EventClass};
use crate::head::ProtectedHead;
use crate::idset::{IdMap, IdMarks, IdSet};
use crate::text::text_facts_of;
use crate::{Invariant, InvariantInfo, OracleConfig};
use compactsim_model::{Event, FactId, Message, Role, Transition, Witness};

/// Micro-compaction absorbs every exchange exactly once, in order, unless it was skipped
/// after repeated summarizer failures.
///
/// Class: the `absorb_exchanges` policy (Hermes micro-compaction's one-exchange-per-pass
/// rule): it judges only a compactor that declares it; the protected head it lets a pass
/// jump is the declared `protect_first_n`'s (none when that is not declared).
///
/// Judged from observations only, on every micro pass that changed the list (whatever
/// outcome, exchange or skip list it reports). Removed rows are the non-summary rows of
/// `before` whose id is gone from `after`. It fails when
/// (a) a removed id was already absorbed by an earlier pass (e.g. rows double-loaded
///     after a restart and absorbed again);
/// (b) the removed rows are more than one exchange: a kept non-summary row lies between
///     two removed assistant/tool rows in `before` (a user row that left was merged
///     into its neighbour when two user rows met);
/// (c) a live non-summary assistant or tool row outside the protected head and not
///     skipped is older (smaller id) than the newest removed row: an older exchange was
///     jumped over (H-M-cursor). Tool results of a summary row (a batch summary merged
///     into an assistant row with calls) are not an exchange. Nor is a row that was a
///     summary row (or such a tool result) when a micro pass absorbed rows after it: the
///     pass went past it legitimately, and a later batch pass that unwraps its merged
///     summary (hermes-domain §2.4) leaves it behind micro's cursor, where micro's
///     cursor recovery (past the newest summary) never returns (sweep seed 35 case 306
///     under `both`, adapters/hermes/DIFF.md D1).
/// Skipped, as observed: an exchange (a run of assistant/tool rows starting at an
/// assistant row) whose rough tokens and the facts its text spells (facts are judged as
/// text, `text.rs`) equal the input of at least
/// [`SKIP_AFTER_FAILURES`] failed (or expanded) summarize calls the harness served
/// during micro passes. Other events, unknown kinds and non-micro compactions included, are not
/// checked (batch compaction removes rows without absorbing them one exchange at a
/// time); they only advance the protected head — micro's head, which a batch compaction
/// re-fixes from the list it leaves (micro takes its head from the current list on
/// every pass).
#[derive(Clone, Debug)]
pub struct ExchangeAbsorbedOnce {
    head: ProtectedHead,
    absorbed: IdSet,
    skipped: IdSet,
    /// Rows a micro pass went past while they were a summary row or its tool result.
    passed: IdSet,
    /// Failed summarize calls observed per exchange (keyed by its first row).
    failures: IdMap<u32>,
    after_ids: IdMarks,
}

/// Failed summarizer calls at one exchange before micro-compaction may skip it
/// (hermes-domain §3.4: `_MICRO_COMPACT_MAX_CONSECUTIVE_FAILURES`).
pub const SKIP_AFTER_FAILURES: u32 = 3;

pub const INFO: InvariantInfo = InvariantInfo {
    id: "exchange-absorbed-once",
    statement: "micro-compaction absorbs every exchange exactly once, in order \
                (unless skipped after 3 failures)",
    catches: &["H-M-cursor"],
    class: crate::InvariantClass::Policy(crate::policy::ABSORB_EXCHANGES),
};

/// Row `i` is a tool result of a summary row (a batch summary merged into an assistant
/// row keeps that row's calls): it belongs to the summary's group, not to an exchange.
fn answers_a_summary(rows: &[Message], i: usize) -> bool {
    rows[i].role == Role::Tool
        && rows[..i]
            .iter()
            .rev()
            .find(|m| m.role != Role::Tool)
            .is_some_and(Message::is_summary)
}

/// Calls `f` on each row of `rows` that is a summary row or a tool result of one
/// ([`answers_a_summary`]), in order, in one forward pass: the nearest preceding
/// non-tool row is carried along, not searched back for at every row.
fn for_summary_group_rows<'m>(rows: &'m [Message], mut f: impl FnMut(&'m Message)) {
    let mut group_is_summary = false;
    for m in rows {
        if m.role != Role::Tool {
            group_is_summary = m.is_summary();
        }
        if m.is_summary() || (m.role == Role::Tool && group_is_summary) {
            f(m);
        }
    }
}

fn is_agent_row(m: &Message) -> bool {
    matches!(m.role, Role::Assistant | Role::Tool) && !m.is_summary()
}

/// What the rows `[s, e)` say as text: the facts their text spells, in row order (each
/// row's ascending), and the facts a row lists that no row of them spells (ascending).
/// An exchange is recognized by what a summarizer could read in it: a listed fact its
/// text does not spell is no evidence either way, so it is taken out of a call's input
/// before the two are compared (an in-process compactor passes a row's listed facts; an
/// external one can only quote the text).
fn exchange_text(rows: &[Message]) -> (Vec<FactId>, Vec<FactId>) {
    let spelled = spelled_in_row_order(rows);
    let mut anywhere = spelled.clone();
    anywhere.sort_unstable();
    // Every listed fact of every segment (duplicates go with the dedup below).
    let mut unspelled: Vec<FactId> = rows
        .iter()
        .flat_map(|m| m.content.segments.iter())
        .flat_map(|s| s.facts.iter().copied())
        .filter(|f| anywhere.binary_search(f).is_err())
        .collect();
    unspelled.sort_unstable();
    unspelled.dedup();
    (spelled, unspelled)
}

/// The facts each row's text spells (`text::text_facts`), row after row.
fn spelled_in_row_order(rows: &[Message]) -> Vec<FactId> {
    let mut spelled: Vec<FactId> = Vec::new();
    for m in rows {
        spelled.extend_from_slice(&text_facts_of(&m.content));
    }
    spelled
}

/// `facts` without the ones in `unspelled` (ascending), order kept.
fn without_unspelled(facts: &[FactId], unspelled: &[FactId]) -> Vec<FactId> {
    facts
        .iter()
        .copied()
        .filter(|f| unspelled.binary_search(f).is_err())
        .collect()
}

/// The exchanges of `rows` (runs of agent rows from an assistant row) whose rough
/// tokens sum to `tokens` and whose text spells `facts` in row order (see
/// [`exchange_text`]): `[start, end)`.
fn exchanges_matching<'a>(
    rows: &'a [Message],
    tokens: u32,
    facts: &[FactId],
) -> impl Iterator<Item = (usize, usize)> + 'a {
    let facts = facts.to_vec();
    (0..rows.len())
        .filter(|&s| rows[s].role == Role::Assistant && !rows[s].is_summary())
        .filter_map(move |s| {
            let mut sum = 0u64;
            for (e, m) in rows.iter().enumerate().skip(s) {
                if !is_agent_row(m) {
                    break;
                }
                sum += m.tokens().rough as u64;
                if sum == tokens as u64 {
                    let (spelled, unspelled) = exchange_text(&rows[s..=e]);
                    return (spelled == without_unspelled(&facts, &unspelled))
                        .then_some((s, e + 1));
                }
            }
            None
        })
}

/// The exchanges of `rows` — whole runs of agent rows from an assistant row — whose
/// text spells every one of `facts` (a fact a row lists but does not spell is no
/// evidence): `[start, end)`. A
/// compactor in another language serializes an exchange its own way, so the size of
/// the prompt it sends says little (instructions and role labels added, per-row
/// overhead or tool-call arguments dropped); the facts it spells still come from the
/// rows. Used when no exchange matches a call exactly.
fn exchanges_covered<'a>(
    rows: &'a [Message],
    facts: &[FactId],
) -> impl Iterator<Item = (usize, usize)> + 'a {
    let facts = facts.to_vec();
    (0..rows.len())
        .filter(|&s| rows[s].role == Role::Assistant && !rows[s].is_summary())
        .filter(move |&s| s == 0 || !is_agent_row(&rows[s - 1]))
        .filter_map(move |s| {
            let e = (s..rows.len())
                .find(|&e| !is_agent_row(&rows[e]))
                .unwrap_or(rows.len());
            let mut spelled = spelled_in_row_order(&rows[s..e]);
            spelled.sort_unstable();
            facts
                .iter()
                .all(|f| spelled.binary_search(f).is_ok())
                .then_some((s, e))
        })
}

impl ExchangeAbsorbedOnce {
    pub fn new(config: OracleConfig) -> Self {
        ExchangeAbsorbedOnce {
            // The head the micro pass may jump: the declared `protect_first_n`, else none.
            head: ProtectedHead::refixing(
                config
                    .policies
                    .head_rows(config.protect_first_n)
                    .unwrap_or(0),
            ),
            absorbed: IdSet::default(),
            skipped: IdSet::default(),
            passed: IdSet::default(),
            failures: IdMap::default(),
            after_ids: IdMarks::default(),
        }
    }

    /// Counts the unsuccessful summarize calls of a micro pass against the exchange each
    /// was for; an exchange at [`SKIP_AFTER_FAILURES`] is skipped. A call is unsuccessful
    /// when the harness served an error or an expanded summary, or when the exchange it
    /// was for is still whole in the list after the pass (the compactor found the answer
    /// unusable: an external compactor may judge sizes its own way). True when it filled
    /// `after_ids` with the ids of `after`.
    fn note_failures(&mut self, t: &Transition<'_>) -> bool {
        let calls = t.served.iter().filter(|c| !c.condense);
        let mut after_filled = false;
        for call in calls {
            // The first matching exchange not skipped already (identical exchanges are
            // tried in order), past the protected head when one matches there: micro
            // never summarizes the head, so a head exchange of the same size is not the
            // one asked for unless nothing past the head matches.
            let (skipped, head) = (&self.skipped, &self.head);
            let open =
                |&(s, e): &(usize, usize)| !t.before[s..e].iter().all(|m| skipped.contains(m.id));
            let past_head = |&(s, _): &(usize, usize)| !head.contains(t.before[s].id);
            // A call that spells no fact gives no evidence of its exchange: it is for the
            // first open exchange past the protected head (iot cuts long tool outputs and
            // their facts with them).
            let evidence = |x: &(usize, usize)| !call.facts_in.is_empty() || past_head(x);
            let found = exchanges_matching(t.before, call.input_tokens, &call.facts_in)
                .filter(past_head)
                .find(open)
                .or_else(|| {
                    exchanges_matching(t.before, call.input_tokens, &call.facts_in).find(open)
                })
                .or_else(|| {
                    exchanges_covered(t.before, &call.facts_in)
                        .filter(evidence)
                        .find(open)
                });
            let Some((s, e)) = found else {
                continue;
            };
            if !after_filled {
                self.after_ids.fill(t.after.iter().map(|m| m.id));
                after_filled = true;
            }
            let kept = &self.after_ids;
            let still_whole = t.before[s..e].iter().all(|m| kept.contains(m.id));
            if call.ok && !call.expanded && !still_whole {
                continue;
            }
            let first = t.before[s].id;
            let n = self.failures.get(first).copied().unwrap_or(0) + 1;
            self.failures.insert(first, n);
            if n >= SKIP_AFTER_FAILURES {
                for m in &t.before[s..e] {
                    self.skipped.add(m.id);
                }
            }
        }
        after_filled
    }

    /// `after_filled`: `after_ids` already holds the ids of `after`.
    fn check(&mut self, t: &Transition<'_>, after_filled: bool) -> Option<Witness> {
        if !after_filled {
            self.after_ids.fill(t.after.iter().map(|m| m.id));
        }
        let mut w = Witness::default();
        let mut newest_removed: Option<(usize, &Message)> = None;
        let mut again: Option<(usize, &Message)> = None;
        let mut span: Option<(usize, usize)> = None;
        // Rows outside the changed window are in `after`: only the window can lose rows.
        let window = t.delta.removed_range();
        for (i, m) in window.clone().zip(&t.before[window]) {
            if m.is_summary() || self.after_ids.contains(m.id) {
                continue;
            }
            if m.role != Role::User {
                // A user row that left was merged into its neighbour (supersede).
                span = Some(span.map_or((i, i), |(first, _)| (first, i)));
            }
            if !self.absorbed.add(m.id) && again.is_none() {
                again = Some((i, m));
            }
            if newest_removed.is_none_or(|(_, n)| m.id > n.id) {
                newest_removed = Some((i, m));
            }
        }
        if let Some((i, m)) = again {
            w = w
                .fact(format!(
                    "(a) {} was absorbed by an earlier pass already",
                    m.id
                ))
                .row(i, m, "before: absorbed a second time");
        }
        if let Some((first, last)) = span {
            let kept = (first..=last)
                .find(|&k| !t.before[k].is_summary() && self.after_ids.contains(t.before[k].id));
            if let Some(k) = kept {
                let m = &t.before[k];
                w = w
                    .fact(format!(
                        "(b) rows of more than one exchange removed: {} was kept between \
                         removed {} and {}",
                        m.id, t.before[first].id, t.before[last].id
                    ))
                    .row(k, m, "before: kept between removed rows");
            }
        }
        if let Some((r, newest)) = newest_removed {
            let passed = &mut self.passed;
            for_summary_group_rows(&t.before[..r], |m| {
                passed.add(m.id);
            });
            let jumped = t.after.iter().enumerate().find(|&(i, m)| {
                is_agent_row(m)
                    && m.id < newest.id
                    && !self.head.contains(m.id)
                    && !self.skipped.contains(m.id)
                    && !self.passed.contains(m.id)
                    && !answers_a_summary(t.after, i)
            });
            if let Some((i, m)) = jumped {
                w = w
                    .fact(format!(
                        "(c) {} is older than absorbed {} but neither absorbed, protected \
                         nor skipped after {SKIP_AFTER_FAILURES} failed summary calls",
                        m.id, newest.id
                    ))
                    .row(i, m, "after: older exchange jumped over")
                    .row(r, newest, "before: newest row absorbed by this pass");
            }
        }
        if w.facts.is_empty() {
            return None;
        }
        w.facts.insert(
            0,
            format!("exchange absorbed out of turn on {}", t.event.describe()),
        );
        Some(w)
    }
}

impl Invariant for ExchangeAbsorbedOnce {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, event: &Event) -> bool {
        matches!(classify(event), EventClass::Micro)
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        self.head.begin(t);
        let mut found = None;
        if matches!(classify(t.event), EventClass::Micro) {
            let after_filled = self.note_failures(t);
            if changed(t) {
                found = self.check(t, after_filled);
            }
        }
        self.head.end(t);
        found
    }
}

#[cfg(test)]
mod tests;
