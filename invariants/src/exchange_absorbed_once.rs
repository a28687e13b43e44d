use crate::class::{classify, EventClass};
use crate::head::ProtectedHead;
use crate::idset::{IdMarks, IdSet};
use crate::{Invariant, InvariantInfo, OracleConfig};
use compactsim_model::{Event, Message, MicroOutcome, MicroPass, Role, Transition, Witness};

/// Micro-compaction absorbs every exchange exactly once, in order, unless it was declared
/// skipped after repeated summarizer failures.
///
/// Checked on micro passes with outcome `Absorbed`. Removed rows are the non-summary rows
/// of `before` whose id is gone from `after`. It fails when
/// (a) a removed id was already absorbed by an earlier pass (e.g. rows double-loaded
///     after a restart and absorbed again);
/// (b) a row the pass names in its `exchange` is still in `after`;
/// (c) a live non-summary assistant or tool row outside the protected head and not
///     declared skipped is older (smaller id) than the newest removed row: an older
///     exchange was jumped over (H-M-cursor). Tool results of a summary row (a batch
///     summary merged into an assistant row with calls) are not an exchange.
/// Every micro pass adds its `skipped` rows to the case's skipped set. Other events,
/// unknown kinds and non-micro compactions included, are not checked (batch compaction
/// removes rows without absorbing them one exchange at a time); they only advance the
/// protected head — micro's head, which a batch compaction re-fixes from the list it
/// leaves (micro takes its head from the current list on every pass).
#[derive(Debug)]
pub struct ExchangeAbsorbedOnce {
    head: ProtectedHead,
    absorbed: IdSet,
    skipped: IdSet,
    after_ids: IdMarks,
}

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

fn absorbing(event: &Event) -> Option<&MicroPass> {
    match classify(event) {
        EventClass::Micro(pass) if pass.outcome == MicroOutcome::Absorbed => Some(pass),
        _ => None,
    }
}

impl ExchangeAbsorbedOnce {
    pub fn new(config: OracleConfig) -> Self {
        ExchangeAbsorbedOnce {
            head: ProtectedHead::refixing(config.protect_first_n),
            absorbed: IdSet::default(),
            skipped: IdSet::default(),
            after_ids: IdMarks::default(),
        }
    }

    fn check(&mut self, t: &Transition<'_>, pass: &MicroPass) -> Option<Witness> {
        self.after_ids.fill(t.after.iter().map(|m| m.id));
        let mut w = Witness::default();
        let mut newest_removed: Option<(usize, &Message)> = None;
        let mut again: Option<(usize, &Message)> = None;
        for (i, m) in t.before.iter().enumerate() {
            if m.is_summary() || self.after_ids.contains(m.id) {
                continue;
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
        if let Some(id) = pass
            .exchange
            .iter()
            .find(|&&id| self.after_ids.contains(id))
        {
            w = w.fact(format!("(b) exchange row {id} is still in the transcript"));
            if let Some((i, m)) = t.after.iter().enumerate().find(|(_, m)| m.id == *id) {
                w = w.row(i, m, "after: exchange row not absorbed");
            }
        }
        if let Some((r, newest)) = newest_removed {
            let jumped = t.after.iter().enumerate().find(|&(i, m)| {
                matches!(m.role, Role::Assistant | Role::Tool)
                    && !m.is_summary()
                    && m.id < newest.id
                    && !self.head.contains(m.id)
                    && !self.skipped.contains(m.id)
                    && !answers_a_summary(t.after, i)
            });
            if let Some((i, m)) = jumped {
                w = w
                    .fact(format!(
                        "(c) {} is older than absorbed {} but neither absorbed, protected \
                         nor declared skipped",
                        m.id, newest.id
                    ))
                    .row(i, m, "after: older exchange jumped over")
                    .row(r, newest, "before: newest row absorbed by this pass");
            }
        }
        if w.facts.is_empty() {
            return None;
        }
        w.facts
            .insert(0, format!("exchange absorbed out of turn on {:?}", t.event));
        Some(w)
    }
}

impl Invariant for ExchangeAbsorbedOnce {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, event: &Event) -> bool {
        absorbing(event).is_some()
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        self.head.begin(t);
        if let EventClass::Micro(pass) = classify(t.event) {
            for &id in &pass.skipped {
                self.skipped.add(id);
            }
        }
        let found = absorbing(t.event).and_then(|pass| self.check(t, pass));
        self.head.end(t);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use compactsim_model::MsgId;

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

    #[test]
    fn quiet_when_the_jumped_exchange_was_declared_skipped_or_is_head() {
        let skip = micro(2, MicroOutcome::ExchangeSkipped, &[5, 6, 7], &[5, 6, 7]);
        let steps = [
            (append_event(1), start()),
            (absorbed(1, &[1, 2, 3]), without(&[1])),
            (skip, without(&[1])),
            (absorbed(3, &[9, 10, 11]), without(&[1, 9])),
        ];
        assert!(run(&mut inv(1), &[], &steps).is_empty());
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
    fn fires_when_a_named_exchange_row_survives() {
        let mut after = without(&[1]);
        after.insert(2, tool(2, 1));
        let steps = [(append_event(1), start()), (absorbed(1, &[1, 2, 3]), after)];
        let fired = run(&mut inv(1), &[], &steps);
        let w = &fired.first().expect("row 2 survived").1;
        assert!(w.facts[1].starts_with("(b)"));
        assert_eq!((w.rows[0].id, w.rows[0].index), (MsgId(2), 2));
    }
}
