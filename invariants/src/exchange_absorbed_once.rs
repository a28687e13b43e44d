use crate::class::{changed, classify, EventClass};
use crate::head::ProtectedHead;
use crate::idset::{IdMap, IdMarks, IdSet};
use crate::text::text_facts;
use crate::{Invariant, InvariantInfo, OracleConfig};
use compactsim_model::{Event, FactId, Message, Role, Transition, Witness};

/// Micro-compaction absorbs every exchange exactly once, in order, unless it was skipped
/// after repeated summarizer failures.
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
#[derive(Debug)]
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
    let spelled: Vec<FactId> = rows.iter().flat_map(|m| text_facts(&m.content)).collect();
    let mut anywhere = spelled.clone();
    anywhere.sort_unstable();
    let mut unspelled: Vec<FactId> = rows
        .iter()
        .flat_map(|m| m.content.facts())
        .filter(|f| anywhere.binary_search(f).is_err())
        .collect();
    unspelled.sort_unstable();
    unspelled.dedup();
    (spelled, unspelled)
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
            let mut spelled: Vec<FactId> = rows[s..e]
                .iter()
                .flat_map(|m| text_facts(&m.content))
                .collect();
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
            head: ProtectedHead::refixing(config.protect_first_n),
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
mod tests {
    use super::*;
    use crate::testkit::*;
    use compactsim_model::{event::BatchTrigger, MicroOutcome, MsgId};

    /// user 0 (head), then three exchanges [1 2 3], [5 6 7], [9 10 11] each followed by
    /// a user row 4, 8, 12.
    fn start() -> Vec<Message> {
        let mut rows = vec![user(0)];
        for (k, first) in [1u32, 5, 9].into_iter().enumerate() {
            let call = k as u32 + 1;
            rows.extend([
                calling(first, &[call]),
                tool(first + 1, call),
                reply(first + 2),
                user(first + 3),
            ]);
        }
        rows
    }

    /// `start()` with the given exchanges replaced by one marker (id 13) at the first.
    fn without(exchanges: &[u32]) -> Vec<Message> {
        let mut rows: Vec<Message> = start()
            .into_iter()
            .filter(|m| !exchanges.iter().any(|&e| (e..e + 3).contains(&m.id.0)))
            .collect();
        let at = rows.iter().position(|m| m.id.0 > exchanges[0]).unwrap();
        rows.insert(at, micro_marker(13, &[1]));
        rows
    }

    fn inv(protect_first_n: u32) -> ExchangeAbsorbedOnce {
        ExchangeAbsorbedOnce::new(OracleConfig {
            protect_first_n,
            ..OracleConfig::default()
        })
    }

    /// Every list of up to 5 rows over 6 shapes: the forward pass visits exactly the
    /// rows that are summaries or answer one (`answers_a_summary`), in order.
    #[test]
    fn the_forward_summary_group_pass_equals_the_backward_search() {
        const SHAPES: u32 = 6;
        const ROWS_MAX: u32 = 5;
        let shape = |id: u32, k: u32| match k {
            0 => user(id),
            1 => reply(id),
            2 => calling(id, &[1]),
            3 => tool(id, 1),
            4 => micro_marker(id, &[]),
            _ => batch_summary(id, &[]),
        };
        for len in 0..=ROWS_MAX {
            for code in 0..SHAPES.pow(len) {
                let rows: Vec<Message> = (0..len)
                    .map(|i| shape(i, code / SHAPES.pow(i) % SHAPES))
                    .collect();
                let mut forward = Vec::new();
                for_summary_group_rows(&rows, |m| forward.push(m.id));
                let backward: Vec<_> = (0..rows.len())
                    .filter(|&i| rows[i].is_summary() || answers_a_summary(&rows, i))
                    .map(|i| rows[i].id)
                    .collect();
                assert_eq!(forward, backward, "{rows:?}");
            }
        }
    }

    #[test]
    fn quiet_when_exchanges_are_absorbed_in_order() {
        let steps = [
            (append_event(1), start()),
            (absorbed(1, &[1, 2, 3]), without(&[1])),
            (repair_event(1), without(&[1])),
            (absorbed(2, &[5, 6, 7]), without(&[1, 5])),
            (absorbed(3, &[9, 10, 11]), without(&[1, 5, 9])),
        ];
        assert!(run(&mut inv(1), &[], &steps).is_empty());
    }

    #[test]
    fn fires_when_the_cursor_jumps_over_an_exchange() {
        let steps = [
            (append_event(1), start()),
            (absorbed(1, &[1, 2, 3]), without(&[1])),
            (absorbed(2, &[9, 10, 11]), without(&[1, 9])),
        ];
        let fired = run(&mut inv(1), &[], &steps);
        assert_eq!(fired.len(), 1);
        let (step, w) = &fired[0];
        assert_eq!(*step, 2);
        assert!(w.facts[1].starts_with("(c)"));
        assert_eq!(witness_ids(w), vec![5, 11]);
        assert_eq!((w.rows[0].index, w.rows[1].index), (3, 9));
    }

    /// Violations when exchange 5 gets `failures` micro passes, each served `calls`,
    /// and the next pass jumps over it to absorb exchange 9.
    fn jump_after(failures: u32, calls: &[compactsim_model::ServedCall]) -> usize {
        let any = || micro(2, MicroOutcome::SummarizeFailed, &[], &[]);
        let mut steps = vec![
            (append_event(1), Some(start()), vec![]),
            (absorbed(1, &[1, 2, 3]), Some(without(&[1])), vec![]),
        ];
        for _ in 0..failures {
            steps.push((any(), None, calls.to_vec()));
        }
        steps.push((absorbed(3, &[9, 10, 11]), Some(without(&[1, 9])), vec![]));
        run_served(&mut inv(1), &[], &steps).len()
    }

    /// A failed call whose prompt spells no fact (iot cuts long tool outputs, the
    /// exchange's facts were in the cut) is for the first exchange past the protected
    /// head, never for a head exchange micro does not summarize.
    #[test]
    fn a_failed_call_spelling_no_fact_is_never_pinned_on_a_head_exchange() {
        let unused = [served(true, 9_999, &[])];
        let fail = || micro(2, MicroOutcome::SummarizeFailed, &[], &[]);
        let jump = |failures: u32| {
            let mut steps = vec![(append_event(1), Some(start()), vec![])];
            for _ in 0..failures {
                steps.push((fail(), None, unused.to_vec()));
            }
            steps.push((absorbed(3, &[9, 10, 11]), Some(without(&[9])), vec![]));
            // Rows 0-3 (user 0 and exchange 1-3) are the protected head.
            run_served(&mut inv(4), &[], &steps).len()
        };
        assert_eq!(jump(SKIP_AFTER_FAILURES - 1), 1, "exchange 5 jumped over");
        assert_eq!(jump(SKIP_AFTER_FAILURES), 0, "exchange 5 skipped");
    }

    /// Exchange 5 lists fact 43 in a row too small to spell it; exchange 9 spells it.
    fn with_fact_43() -> Vec<Message> {
        let mut rows = start();
        rows[7].set_content(prose(7, 8, &[43]));
        rows[10].set_content(prose(10, 200, &[43]));
        rows
    }

    #[test]
    fn failed_calls_are_attributed_by_the_facts_an_exchange_spells_not_lists() {
        let rows = with_fact_43();
        assert!(text_facts(&rows[7].content).is_empty());
        let absorb = |gone: &[u32]| {
            let mut after: Vec<Message> = rows
                .iter()
                .filter(|m| !gone.iter().any(|&e| (e..e + 3).contains(&m.id.0)))
                .cloned()
                .collect();
            let at = after.iter().position(|m| m.id.0 > gone[0]).unwrap();
            after.insert(at, micro_marker(13, &[1]));
            after
        };
        // Exchange 1 absorbed, three failed calls, then exchange 9 absorbed over 5.
        let jump = |call: compactsim_model::ServedCall| {
            let fail = || micro(2, MicroOutcome::SummarizeFailed, &[], &[]);
            let mut steps = vec![
                (append_event(1), Some(rows.clone()), vec![]),
                (absorbed(1, &[1, 2, 3]), Some(absorb(&[1])), vec![]),
            ];
            for _ in 0..SKIP_AFTER_FAILURES {
                steps.push((fail(), None, vec![call.clone()]));
            }
            steps.push((absorbed(3, &[9, 10, 11]), Some(absorb(&[1, 9])), vec![]));
            run_served(&mut inv(1), &[], &steps).len()
        };
        // A prompt of another size naming 43 was for exchange 9, whose text spells it:
        // exchange 5, which only lists 43, was never skipped and is jumped over.
        assert_eq!(jump(served(false, 9_999, &[43])), 1);
        // An in-process call passes exchange 5's listed facts at its exact size: the
        // unspelled 43 is no evidence either way, the size matches: 5 was skipped.
        let tokens: u32 = rows[5..8].iter().map(|m| m.tokens().rough).sum();
        assert_eq!(jump(served(false, tokens, &[43])), 0);
    }

    #[test]
    fn an_answer_the_compactor_left_unused_counts_as_a_failure_whatever_its_size() {
        // An external compactor's prompt is larger than the rows it serializes, and it
        // may refuse an answer the harness served as fine: the exchange stays whole.
        let unused = [served(true, 9_999, &[])];
        assert_eq!(jump_after(SKIP_AFTER_FAILURES - 1, &unused), 1);
        assert_eq!(jump_after(SKIP_AFTER_FAILURES, &unused), 0);
    }

    #[test]
    fn quiet_when_the_jumped_exchange_was_skipped_after_three_failures_or_is_head() {
        let tokens: u32 = start()[5..8].iter().map(|m| m.tokens().rough).sum();
        let fail = [served(false, tokens, &[])];
        assert_eq!(
            jump_after(SKIP_AFTER_FAILURES - 1, &fail),
            1,
            "two failures skip nothing"
        );
        assert_eq!(jump_after(SKIP_AFTER_FAILURES, &fail), 0);
        let steps = [
            (append_event(1), start()),
            (absorbed(1, &[5, 6, 7]), without(&[5])),
        ];
        assert_eq!(run(&mut inv(1), &[], &steps).len(), 1);
        assert!(
            run(&mut inv(4), &[], &steps).is_empty(),
            "rows 1-3 are head"
        );
    }

    #[test]
    fn a_failure_counts_against_the_exchange_past_the_head_not_a_head_one_of_its_size() {
        // Seed 61 case 243 (micro, a summary storm): three failures at an exchange as
        // large as one in the head were counted against the head one.
        let rows = start();
        let tokens =
            |r: std::ops::Range<usize>| -> u32 { rows[r].iter().map(|m| m.tokens().rough).sum() };
        assert_eq!(tokens(1..4), tokens(5..8), "head exchange 1 looks like 5");
        let any = || micro(2, MicroOutcome::SummarizeFailed, &[], &[]);
        let fail = vec![served(false, tokens(5..8), &[])];
        let jump = |failures: u32| {
            let mut steps = vec![(append_event(1), Some(start()), vec![])];
            for _ in 0..failures {
                steps.push((any(), None, fail.clone()));
            }
            steps.push((absorbed(3, &[9, 10, 11]), Some(without(&[9])), vec![]));
            run_served(&mut inv(4), &[], &steps).len()
        };
        assert_eq!(
            jump(SKIP_AFTER_FAILURES - 1),
            1,
            "two failures skip nothing"
        );
        assert_eq!(jump(SKIP_AFTER_FAILURES), 0);
    }

    /// A batch summary merged into assistant row 5 (its tool result 6 follows); micro
    /// absorbs exchange `first` (1 or 9, before or after row 5); a batch pass then
    /// replaces user 0 by a summary and unwraps row 5 into a plain exchange (as
    /// hermes-domain §2.4 unwraps a batch summary left in the tail); micro next absorbs
    /// exchange 14. Returns the violations.
    fn unwrapped_then_passed(first: u32) -> Vec<(u32, Witness)> {
        let mut carrier = calling(5, &[2]);
        carrier.flags.summary_marker = true;
        let exchange =
            |id: u32, call: u32| [calling(id, &[call]), tool(id + 1, call), reply(id + 2)];
        let mut rows = vec![user(0)];
        if first == 1 {
            rows.extend(exchange(1, 1));
        }
        rows.extend([user(4), carrier, tool(6, 2), user(8)]);
        if first == 9 {
            rows.extend(exchange(9, 3));
            rows.push(user(12));
        }
        rows.extend(exchange(14, 4));
        rows.push(user(17));
        // The exchange from `first` replaced by marker `marker`, older markers gone.
        let absorb = |rows: &[Message], first: u32, marker: u32| -> Vec<Message> {
            let mut after = Vec::new();
            for m in rows {
                if m.id.0 == first {
                    after.push(micro_marker(marker, &[1]));
                }
                if !(first..first + 3).contains(&m.id.0) && !m.is_micro_marker() {
                    after.push(m.clone());
                }
            }
            after
        };
        let one = absorb(&rows, first, 13);
        let mut unwrapped = one.clone();
        unwrapped[0] = batch_summary(20, &[]);
        for m in unwrapped.iter_mut().filter(|m| m.id.0 == 5) {
            m.flags.summary_marker = false;
        }
        let two = absorb(&unwrapped, 14, 21);
        let steps = [
            (append_event(1), rows),
            (absorbed(1, &[first, first + 1, first + 2]), one),
            (batch_event(2, BatchTrigger::Preflight, true), unwrapped),
            (absorbed(2, &[14, 15, 16]), two),
        ];
        run(&mut inv(1), &[], &steps)
    }

    #[test]
    fn quiet_when_a_row_passed_as_a_summary_is_unwrapped_behind_the_cursor() {
        // Sweep seed 35 case 306 (both): micro passed row 5 while it carried a batch
        // summary; the next batch pass unwrapped it; micro never returns behind its marker.
        assert!(unwrapped_then_passed(9).is_empty());
    }

    #[test]
    fn fires_when_an_unwrapped_row_micro_had_not_passed_is_jumped_over() {
        // Micro absorbed exchange 1 before row 5: row 5 was never passed, and after the
        // unwrap the pass that absorbs 14 jumps over it.
        let fired = unwrapped_then_passed(1);
        assert_eq!(fired.len(), 1, "{fired:?}");
        let (step, w) = &fired[0];
        assert_eq!(*step, 3);
        assert!(w.facts[1].starts_with("(c) m5"), "{:?}", w.facts);
    }

    #[test]
    fn fires_when_rows_reloaded_after_a_restart_are_absorbed_again() {
        let steps = [
            (append_event(1), start()),
            (absorbed(1, &[1, 2, 3]), without(&[1])),
            (restart_event(1), start()),
            (absorbed(2, &[1, 2, 3]), without(&[1])),
        ];
        let fired = run(&mut inv(1), &[], &steps);
        assert_eq!(fired.len(), 1);
        assert!(fired[0].1.facts[1].starts_with("(a)"));
        assert_eq!(fired[0].1.rows[0].id, MsgId(1));
    }

    #[test]
    fn fires_when_a_pass_removes_two_exchanges_whatever_it_reports() {
        let mut after = without(&[1, 5]);
        after.retain(|m| m.id.0 != 13);
        after.insert(1, micro_marker(13, &[1]));
        let one = absorbed(1, &[1, 2, 3]);
        let steps = [(append_event(1), start()), (one, after)];
        let fired = run(&mut inv(1), &[], &steps);
        let w = &fired.first().expect("two exchanges in one pass").1;
        assert!(w.facts[1].starts_with("(b)"), "{:?}", w.facts);
        assert_eq!((w.rows[0].id, w.rows[0].index), (MsgId(4), 4));
        let cadence = micro(1, MicroOutcome::Cadence, &[], &[]);
        let mut after = without(&[1]);
        after.retain(|m| m.id.0 != 4);
        let steps = [(append_event(1), start()), (cadence, without(&[1]))];
        assert!(
            run(&mut inv(1), &[], &steps).is_empty(),
            "one exchange under any label"
        );
    }
}
