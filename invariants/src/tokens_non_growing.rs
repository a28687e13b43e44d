use crate::class::{changed, classify, EventClass};
use crate::{Invariant, InvariantInfo, MAX_WITNESS_ROWS};
use compactsim_model::{tokens_rough_total, Event, Message, MsgId, Transition, Witness};
use std::collections::BTreeMap;

/// After the first committed micro pass of a case, no micro pass increases the
/// transcript's rough token total (the DESIGN catalogue's statement).
///
/// The first committed pass is exempt: the marker's fixed scaffolding (~411 tokens) is
/// paid against a single exchange (hermes-domain §3.5). Every micro pass observed after
/// it is checked — committed or not (an uncommitted pass must change nothing). Batch
/// passes and other compaction kinds are not (see `is_pass`). A restart grants no new
/// exemption: the marker survives it; a session reset does (the transcript starts
/// over), and so does a committed batch compaction (it folds the micro marker into the
/// batch summary: the next committed micro pass pays a new marker's scaffolding, and the
/// rolling summary it still holds, once more). Appends, repairs (a merge may add a separator token) and non-compaction events
/// are not checked.
#[derive(Clone, Debug, Default)]
pub struct TokensNonGrowing {
    committed_passes: u32,
    /// A batch compaction committed since the last committed micro pass.
    batch_since: bool,
}

pub const INFO: InvariantInfo = InvariantInfo {
    id: "tokens-non-growing",
    statement:
        "after the first committed compaction pass, a pass never increases transcript tokens",
    catches: &["H-75345-A", "H-75345-B", "IOT-0.22.2-M3"],
    class: crate::InvariantClass::Universal,
};

/// Micro passes only: a batch summary is bounded by a "Target ~N tokens" prompt, never
/// by `max_tokens` (hermes-domain §2.3 step 6), so Hermes lets a batch pass with a long
/// or expanded summary grow the transcript (#104331, #109681 are open).
fn is_pass(event: &Event) -> bool {
    matches!(classify(event), EventClass::Micro)
}

impl Invariant for TokensNonGrowing {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, event: &Event) -> bool {
        is_pass(event) && self.committed_passes >= 1
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        match classify(t.event) {
            // A fresh session pays its first marker's scaffolding again.
            EventClass::SessionReset => self.committed_passes = 0,
            EventClass::OtherCompaction if changed(t) => self.batch_since = true,
            _ => {}
        }
        if !is_pass(t.event) {
            return None;
        }
        let exempt = self.committed_passes == 0 || self.batch_since;
        if changed(t) {
            self.batch_since = false;
            self.committed_passes = self.committed_passes.saturating_add(1);
        }
        if exempt {
            return None;
        }
        // The rows outside the changed window are equal: only the window can grow.
        if t.delta.tokens_rough_change(t.before, t.after) <= 0 {
            return None;
        }
        let tokens_before = tokens_rough_total(t.before);
        let tokens_after = tokens_rough_total(t.after);
        Some(witness(
            t,
            tokens_before,
            tokens_after,
            self.committed_passes,
        ))
    }
}

/// The rows that are new or grew, biggest growth first.
fn witness(t: &Transition<'_>, before: u64, after: u64, committed: u32) -> Witness {
    let mut w = Witness::default().fact(format!(
        "transcript grew from {before} to {after} rough tokens (+{}) on {}, \
         committed pass {committed} of the case",
        after - before,
        t.event.describe()
    ));
    // What the harness served: an expansion fault is an answer longer than its input.
    let expanded = t.served.iter().filter(|c| c.ok && c.expanded).count();
    w = w.fact(format!(
        "{} summarizer calls served during the pass, {expanded} answered with an expanded summary",
        t.served.len()
    ));
    let old: BTreeMap<MsgId, u32> = t.before.iter().map(|m| (m.id, m.tokens().rough)).collect();
    let mut grown: Vec<(u32, usize, &Message)> = t
        .after
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let now = m.tokens().rough;
            let was = old.get(&m.id).copied().unwrap_or(0);
            (now > was).then_some((now - was, i, m))
        })
        .collect();
    grown.sort_by_key(|&(growth, i, _)| (std::cmp::Reverse(growth), i));
    for (growth, i, m) in grown.into_iter().take(MAX_WITNESS_ROWS) {
        w = w.row(i, m, format!("after: +{growth} rough tokens"));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use compactsim_model::MicroOutcome;

    fn exchange() -> Vec<Message> {
        vec![user(0), calling(1, &[1]), tool(2, 1), reply(3), user(4)]
    }

    /// An exchange, the list after absorbing it, a second exchange appended, and the
    /// list after a second pass that grew it (a second marker).
    fn two_passes() -> (Vec<Message>, Vec<Message>, Vec<Message>, Vec<Message>) {
        let after_first = vec![user(0), micro_marker(5, &[1]), user(4)];
        let mut second = after_first.clone();
        second.extend([calling(6, &[2]), tool(7, 2), reply(8), user(9)]);
        let after_second = vec![
            user(0),
            micro_marker(5, &[1]),
            user(4),
            micro_marker(10, &[1, 2]),
            user(9),
        ];
        (exchange(), after_first, second, after_second)
    }

    #[test]
    fn first_committed_pass_may_grow_the_second_may_not() {
        let (start, after_first, second, after_second) = two_passes();
        let steps = vec![
            (micro(1, MicroOutcome::NoExchange, &[], &[]), start.clone()),
            (absorbed(2, &[1, 2, 3]), after_first),
            (append_event(3), second),
            (absorbed(3, &[6, 7, 8]), after_second),
        ];
        let fired = run(&mut TokensNonGrowing::default(), &start, &steps);
        assert_eq!(fired.len(), 1, "{fired:?}");
        let (step, w) = &fired[0];
        assert_eq!(*step, 3);
        assert_eq!(w.rows[0].id, MsgId(10), "the new marker is the growth");
        assert_eq!(w.rows[0].index, 3);
        assert!(w.facts[1].contains("0 summarizer calls"), "{:?}", w.facts);
    }

    /// The witness says when the growth came with an expansion fault the harness served.
    #[test]
    fn the_witness_names_an_expanded_answer() {
        let (start, after_first, second, after_second) = two_passes();
        let mut expanded = served(true, 40, &[1, 2]);
        expanded.expanded = true;
        let steps: Vec<ServedStep> = vec![
            (absorbed(1, &[1, 2, 3]), Some(after_first), vec![]),
            (append_event(2), Some(second), vec![]),
            (absorbed(2, &[6, 7, 8]), Some(after_second), vec![expanded]),
        ];
        let fired = run_served(&mut TokensNonGrowing::default(), &start, &steps);
        assert_eq!(fired.len(), 1, "{fired:?}");
        let facts = &fired[0].1.facts;
        let want = "1 summarizer calls served during the pass, 1 answered with an expanded summary";
        assert!(facts[1].contains(want), "{facts:?}");
    }

    #[test]
    fn quiet_when_later_passes_shrink_and_on_repairs() {
        let start = exchange();
        let after_first = vec![user(0), micro_marker(5, &[1]), user(4)];
        let mut grown = after_first.clone();
        grown.extend([calling(6, &[2]), tool(7, 2), reply(8), user(9)]);
        let after_second = vec![user(0), micro_marker(10, &[1, 2]), user(4), user(9)];
        let repaired = vec![
            user(0),
            micro_marker(10, &[1, 2]),
            merged(&[&user(4), &user(9)]),
        ];
        let steps = vec![
            (absorbed(1, &[1, 2, 3]), after_first),
            (append_event(2), grown),
            (absorbed(2, &[6, 7, 8]), after_second),
            (repair_event(2), repaired),
        ];
        let mut inv = TokensNonGrowing::default();
        assert!(run(&mut inv, &start, &steps).is_empty());
        assert!(inv.checks(&absorbed(3, &[])) && !inv.checks(&repair_event(3)));
    }
}
