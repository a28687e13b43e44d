use crate::class::{classify, pure_append, unchanged, EventClass};
use crate::idset::{IdMarks, IdSet};
use crate::text::{text_key, TextKey};
use crate::user_segments::{collect_tracked, segment, SegRef};
use crate::user_turns_batch::batch_breach;
use crate::{Invariant, InvariantInfo};
use compactsim_model::{ContentKind, Event, Message, MsgId, Role, Transition, Witness};
use std::collections::BTreeSet;

/// Real user text is never lost, altered, duplicated or reordered.
///
/// A real user row (role user, not a summary) is recorded when it first appears after an
/// append (and, conservatively, every real user row of the case's first transcript);
/// what is tracked is its own text, the segments whose `origin` is its id. The tracked
/// segments found inside user-role rows, read in order, form a sequence that every
/// transition — append, compaction, repair, restart, unknown kinds — must leave equal,
/// segment by segment, in `after` as in `before` (rows an append adds are recorded after
/// the check, so appends may add user text only at the end, as new rows). Merging
/// two user rows keeps both segments and is allowed; a tracked segment that ends up in a
/// non-user row (an assistant marker, say) is lost. On micro passes and repairs a real
/// user row that keeps its id also gains no text but tracked user text: appending a
/// marker's or any other text to a user message alters it as surely as cutting it.
///
/// Batch compaction (compaction events that are not micro passes) summarizes user turns
/// on purpose and is judged by the weaker batch rule of `user_turns_batch.rs`: kept user
/// text unaltered and in order, the newest user text verbatim, and (the
/// `newest_reply_verbatim` policy's rule, only when declared) the newest visible reply
/// verbatim.
///
/// The agent loop's failed turn rolls back the rows of its turn (they are never
/// persisted): on a failed-turn transition, user text written in that turn (origin at or
/// after the first row the turn's user append added) may vanish; every older tracked
/// segment must stay equal. A session reset archives the whole transcript and is not
/// checked. A transition that provably changed nothing (same list) is skipped.
#[derive(Clone, Debug)]
pub struct UserTurnsIntact {
    /// The `newest_reply_verbatim` policy is declared: the batch rule keeps the newest
    /// visible reply verbatim too.
    newest_reply: bool,
    recorded: IdSet,
    /// First id the latest turn's first append added, with that turn.
    turn_first: Option<(u32, MsgId)>,
    started: bool,
    seq_before: Vec<SegRef>,
    seq_after: Vec<SegRef>,
    /// Ids of `before`, marked for an append that was not a pure one.
    before_ids: IdMarks,
}

pub const INFO: InvariantInfo = InvariantInfo {
    id: "user-turns-intact",
    statement: "every real user message stays byte-identical and in order (batch: the \
                newest real user message and newest visible reply stay verbatim in the tail)",
    catches: &["H-M-defrag", "H-10896", "HERMES-0.19.0-B4"],
    class: crate::InvariantClass::Universal,
};

impl Default for UserTurnsIntact {
    /// Judged as for Hermes (every policy declared).
    fn default() -> Self {
        UserTurnsIntact::new(crate::OracleConfig::default())
    }
}

impl UserTurnsIntact {
    pub fn new(config: crate::OracleConfig) -> Self {
        UserTurnsIntact {
            newest_reply: config.policies.newest_reply_verbatim,
            recorded: IdSet::default(),
            turn_first: None,
            started: false,
            seq_before: Vec::new(),
            seq_after: Vec::new(),
            before_ids: IdMarks::default(),
        }
    }

    fn record_new(&mut self, rows: &[Message], is_new: impl Fn(&Message) -> bool) {
        for m in rows {
            if m.is_real_user() && is_new(m) {
                self.recorded.add(m.id);
            }
        }
    }

    /// Bookkeeping after an append: records its real user rows and the first id of its
    /// turn. The new rows are `after[from..]` when `before` is untouched (a pure
    /// append), else the rows of `after` whose id is not in `before`. Ids need not grow
    /// in append order (a gateway allocates a message's rows when it arrives, before a
    /// `/compress` at the start of its turn writes a summary), so newness is judged by
    /// presence, never by comparing ids.
    fn after_append(&mut self, t: &Transition<'_>, class: EventClass<'_>, from: Option<usize>) {
        if matches!(class, EventClass::Append) {
            // After a pure append every row past `from` is new; else newness is asked of
            // the ids of `before`, marked once.
            let pure = from.is_some();
            if !pure {
                self.before_ids.fill(t.before.iter().map(|m| m.id));
            }
            let old = &self.before_ids;
            let rows = &t.after[from.unwrap_or(0)..];
            let is_new = |m: &Message| pure || !old.contains(m.id);
            let turn = t.event.turn();
            if self.turn_first.is_none_or(|(last, _)| last != turn) {
                if let Some(first) = rows.iter().filter(|m| is_new(m)).map(|m| m.id).min() {
                    self.turn_first = Some((turn, first));
                }
            }
            for m in rows {
                if m.is_real_user() && is_new(m) {
                    self.recorded.add(m.id);
                }
            }
        }
    }

    /// Drops from the sequences the segments written in turn `turn` (rolled back).
    fn forget_turn(&mut self, t: &Transition<'_>, turn: u32) {
        let Some((first_turn, first)) = self.turn_first else {
            return;
        };
        if first_turn != turn {
            return;
        }
        self.seq_before
            .retain(|&at| segment(t.before, at).origin < first);
        self.seq_after
            .retain(|&at| segment(t.after, at).origin < first);
    }

    /// First position where the sequences disagree.
    fn first_difference(&self, t: &Transition<'_>) -> Option<usize> {
        let (b, a) = (&self.seq_before, &self.seq_after);
        let common = b.len().min(a.len());
        if let Some(j) = (0..common).find(|&j| segment(t.before, b[j]) != segment(t.after, a[j])) {
            return Some(j);
        }
        (a.len() != b.len()).then_some(common)
    }

    /// Micro passes and repairs: a real user row of `before` that holds tracked text and
    /// is still in `after` with its id gained no text but tracked user text (the repair
    /// merges user rows; nothing else is ever written into one).
    fn grown_user_row(&self, t: &Transition<'_>) -> Option<Witness> {
        // Real user rows keep their order (the sequence check above), so one forward walk
        // over `before` finds each row's old self.
        let holders: BTreeSet<usize> = self.seq_after.iter().map(|&(i, _)| i).collect();
        let mut olds = t
            .before
            .iter()
            .enumerate()
            .filter(|(_, o)| o.is_real_user());
        let mut next_old = olds.next();
        for i in holders {
            let m = &t.after[i];
            if !m.is_real_user() {
                continue;
            }
            while next_old.is_some_and(|(_, o)| o.id < m.id) {
                next_old = olds.next();
            }
            let Some((b, old)) = next_old.filter(|(_, o)| o.id == m.id) else {
                continue;
            };
            if std::sync::Arc::ptr_eq(&old.content.segments, &m.content.segments) {
                continue;
            }
            let own: BTreeSet<TextKey<'_>> = old.content.segments.iter().map(text_key).collect();
            let foreign = m.content.segments.iter().find(|s| {
                let user_text = !matches!(s.kind, ContentKind::Summary | ContentKind::Scaffold)
                    && self.recorded.contains(s.origin);
                !user_text && !own.contains(&text_key(s))
            });
            if let Some(s) = foreign {
                return Some(
                    Witness::default()
                        .fact(format!(
                            "real user row {} gained {} chars of text that is not user text \
                             (written in {}) on {}",
                            m.id,
                            s.chars,
                            s.origin,
                            t.event.describe()
                        ))
                        .row(b, old, "before: the user row")
                        .row(i, m, "after: the same row with text appended"),
                );
            }
        }
        None
    }

    /// The changed window alone shows that a pass or a repair broke nothing: its tracked
    /// user text is the same sequence in `before` and `after` (the rows outside the window
    /// are equal, so the whole sequences are then equal too), and every real user row in
    /// it kept its own text (its old self in the window, by id, shares it or holds every
    /// segment that is not user text). False means: judge the whole lists.
    fn window_clean(&mut self, t: &Transition<'_>) -> bool {
        let (old, new) = (t.delta.removed(t.before), t.delta.added(t.after));
        collect_tracked(&self.recorded, old, &mut self.seq_before);
        collect_tracked(&self.recorded, new, &mut self.seq_after);
        let same = self.seq_before.len() == self.seq_after.len()
            && self
                .seq_before
                .iter()
                .zip(&self.seq_after)
                .all(|(&b, &a)| segment(old, b) == segment(new, a));
        same && new
            .iter()
            .filter(|m| m.is_real_user())
            .all(|m| self.kept_own_text(old, m))
    }

    /// Whether real user row `m` of a changed window holds only its own text: user text,
    /// or a segment its old self in `old` (found by id) held. No old self: unknown, false.
    fn kept_own_text(&self, old: &[Message], m: &Message) -> bool {
        let Some(o) = old.iter().find(|o| o.id == m.id) else {
            return false;
        };
        if std::sync::Arc::ptr_eq(&o.content.segments, &m.content.segments) {
            return true;
        }
        let own: BTreeSet<TextKey<'_>> = o.content.segments.iter().map(text_key).collect();
        m.content.segments.iter().all(|s| {
            let user_text = !matches!(s.kind, ContentKind::Summary | ContentKind::Scaffold)
                && self.recorded.contains(s.origin);
            user_text || own.contains(&text_key(s))
        })
    }

    fn witness(&self, t: &Transition<'_>, j: usize) -> Witness {
        let mut w = Witness::default();
        if let Some(&at) = self.seq_before.get(j) {
            let lost = segment(t.before, at);
            w = w
                .fact(format!(
                    "real user text of {} lost or changed ({} chars, segment {} of row {}) \
                     on {}",
                    lost.origin,
                    lost.chars,
                    at.1,
                    t.before[at.0].id,
                    t.event.describe()
                ))
                .row(
                    at.0,
                    &t.before[at.0],
                    "before: holds the first lost user text",
                );
            if let Some(&found) = self.seq_after.get(j) {
                w = w.row(found.0, &t.after[found.0], "after: other text in its place");
            }
            let elsewhere = t.after.iter().enumerate().find(|(_, m)| {
                m.role != Role::User && m.content.segments.iter().any(|s| s == lost)
            });
            if let Some((i, m)) = elsewhere {
                w = w.row(i, m, "after: the text now sits in a non-user row");
            }
        } else if let Some(&extra) = self.seq_after.get(j) {
            let seg = segment(t.after, extra);
            w = w
                .fact(format!(
                    "real user text of {} appears an extra time on {}",
                    seg.origin,
                    t.event.describe()
                ))
                .row(extra.0, &t.after[extra.0], "after: extra copy of user text");
        }
        w
    }
}

impl Invariant for UserTurnsIntact {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, _event: &Event) -> bool {
        true
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        if !self.started {
            self.started = true;
            self.record_new(t.before, |_| true);
        }
        if unchanged(t) {
            return None;
        }
        let class = classify(t.event);
        if matches!(class, EventClass::SessionReset) {
            return None;
        }
        if let Some(from) = pure_append(t) {
            // `before` is untouched: the sequences are equal unless an appended user row
            // carries tracked text (checked in full below).
            collect_tracked(&self.recorded, &t.after[from..], &mut self.seq_after);
            if self.seq_after.is_empty() {
                self.after_append(t, class, Some(from));
                return None;
            }
        }
        if matches!(class, EventClass::Micro | EventClass::Repair) && self.window_clean(t) {
            return None;
        }
        collect_tracked(&self.recorded, t.before, &mut self.seq_before);
        collect_tracked(&self.recorded, t.after, &mut self.seq_after);
        if matches!(class, EventClass::TurnFailed) {
            self.forget_turn(t, t.event.turn());
        }
        let witness = match class {
            EventClass::OtherCompaction => {
                batch_breach(t, &self.seq_before, &self.seq_after, self.newest_reply)
            }
            EventClass::Micro | EventClass::Repair => self
                .first_difference(t)
                .map(|j| self.witness(t, j))
                .or_else(|| self.grown_user_row(t)),
            _ => self.first_difference(t).map(|j| self.witness(t, j)),
        };
        self.after_append(t, class, None);
        witness
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use compactsim_model::MicroOutcome;

    /// Appends `three_turns()` row by row so every user row is recorded, then runs `steps`.
    fn run_after_start(steps: Vec<(Event, Vec<Message>)>) -> Vec<(u32, Witness)> {
        let mut all = vec![(append_event(1), three_turns())];
        all.extend(steps);
        run(&mut UserTurnsIntact::default(), &[], &all)
    }

    #[test]
    fn fires_when_a_defrag_drops_user_turns() {
        let after = vec![user(0), micro_marker(7, &[1]), user(6)];
        let fired = run_after_start(vec![(micro(1, MicroOutcome::Defrag, &[], &[]), after)]);
        assert_eq!(fired.len(), 1);
        let (step, w) = &fired[0];
        assert_eq!(*step, 1);
        assert_eq!((w.rows[0].id, w.rows[0].index), (MsgId(4), 4));
        assert_eq!(w.rows[1].id, MsgId(6), "user 6 now sits where 4 was");
    }

    #[test]
    fn fires_when_user_text_is_merged_into_an_assistant_marker() {
        let mut marker = micro_marker(7, &[1]);
        marker.merge_content(&user(4).content);
        let after = vec![user(0), marker, reply(5), user(6)];
        let fired = run_after_start(vec![(absorbed(1, &[1, 2, 3]), after)]);
        let w = &fired.first().expect("user text inside a marker is lost").1;
        assert_eq!(witness_ids(w), vec![4, 6, 7]);
        assert_eq!(w.rows[2].index, 1);
    }

    #[test]
    fn fires_when_user_text_is_altered_in_place() {
        let mut after = three_turns();
        after[4] = user_sized(4, 39);
        let fired = run_after_start(vec![(repair_event(1), after)]);
        assert_eq!(witness_ids(&fired[0].1), vec![4, 4]);
    }

    #[test]
    fn fires_when_text_is_appended_to_a_user_row_by_a_pass_or_a_repair() {
        for ev in [absorbed(1, &[1, 2, 3]), repair_event(1)] {
            let mut after = three_turns();
            after[4].merge_content(&micro_marker(7, &[1]).content);
            let fired = run_after_start(vec![(ev, after)]);
            let (step, w) = fired.first().expect("marker text appended to user 4");
            assert_eq!(*step, 1);
            assert!(w.facts[0].contains("m4 gained"), "{:?}", w.facts);
            assert_eq!(witness_ids(w), vec![4, 4]);
        }
        // Its own text twice is a duplicate (the sequence check), another user's text a
        // merge: quiet.
        let mut merge = three_turns();
        let six = merge.remove(6);
        merge[4].merge_content(&six.content);
        assert!(run_after_start(vec![(repair_event(1), merge)]).is_empty());
    }

    #[test]
    fn fires_when_an_append_rewrites_history_or_a_restart_duplicates() {
        let mut rewritten = three_turns();
        rewritten.remove(0);
        rewritten.push(user(7));
        let fired = run_after_start(vec![(append_event(2), rewritten)]);
        assert_eq!(fired[0].1.rows[0].id, MsgId(0));

        let mut doubled = three_turns();
        doubled.push(user(4));
        let fired = run_after_start(vec![(restart_event(2), doubled)]);
        assert_eq!(fired.len(), 1);
        assert!(fired[0].1.facts[0].contains("extra"));
        assert_eq!(fired[0].1.rows[0].index, 7);
    }

    #[test]
    fn quiet_on_absorb_merge_append_and_summary_prefixed_user_rows() {
        let absorbed_rows = vec![user(0), micro_marker(7, &[1]), user(4), reply(5), user(6)];
        let no_assistant = vec![user(0), micro_marker(7, &[1]), user(4), user(6)];
        let repaired = vec![
            user(0),
            micro_marker(7, &[1]),
            merged(&[&user(4), &user(6)]),
        ];
        let mut appended = repaired.clone();
        appended.extend([user(8), reply(9)]);
        let mut with_summary = vec![merged(&[&batch_summary(10, &[1]), &user(0)])];
        with_summary.extend(appended[1..].iter().cloned());
        let fired = run_after_start(vec![
            (absorbed(1, &[1, 2, 3]), absorbed_rows),
            (repair_event(1), no_assistant),
            (repair_event(1), repaired),
            (append_event(2), appended),
            (restart_event(2), with_summary),
        ]);
        assert!(fired.is_empty(), "{fired:?}");
    }

    #[test]
    fn an_append_that_repeats_old_user_text_fires_new_user_rows_do_not() {
        let mut repeated = three_turns();
        repeated.push(merged(&[&user(7), &user(4)]));
        let fired = run_after_start(vec![(append_event(2), repeated)]);
        assert_eq!(fired.len(), 1);
        assert_eq!(fired[0].1.rows[0].index, 7);
        let mut fresh = three_turns();
        fresh.extend([user(7), reply(8)]);
        let mut dropped = fresh.clone();
        dropped.remove(7);
        let fired = run_after_start(vec![(append_event(2), fresh), (absorbed(2, &[]), dropped)]);
        assert_eq!(fired.len(), 1, "user 7 was recorded by its append");
        assert!(fired[0].1.facts[0].contains("m7"));
    }

    #[test]
    fn an_appended_user_row_is_tracked_even_when_its_id_is_older_than_a_summary() {
        // A gateway allocates a message's rows when it arrives; a `/compress` at the
        // start of its turn then writes summary m9 before the user row m7 is appended.
        let compacted = vec![user(0), micro_marker(9, &[1]), user(4), reply(5), user(6)];
        let mut appended = compacted.clone();
        appended.extend([user(7), reply(8)]);
        let mut dropped = appended.clone();
        dropped.remove(5);
        let fired = run_after_start(vec![
            (absorbed(1, &[1]), compacted.clone()),
            (append_event(2), appended.clone()),
            (absorbed(2, &[]), dropped),
        ]);
        assert_eq!(
            fired.len(),
            1,
            "user 7 was recorded by its append: {fired:?}"
        );
        assert!(fired[0].1.facts[0].contains("m7"), "{fired:?}");
        let quiet = run_after_start(vec![
            (absorbed(1, &[1]), compacted),
            (append_event(2), appended),
        ]);
        assert!(quiet.is_empty(), "{quiet:?}");
    }

    #[test]
    fn rows_of_the_first_transcript_are_tracked_without_an_append() {
        let after = vec![user(0), micro_marker(7, &[1])];
        let fired = run(
            &mut UserTurnsIntact::default(),
            &three_turns(),
            &[(absorbed(1, &[1]), after)],
        );
        assert_eq!(fired[0].1.rows[0].id, MsgId(4));
    }

    #[test]
    fn a_user_role_summary_is_not_user_text() {
        let initial = vec![batch_summary(0, &[1]), reply(1), user(2), reply(3), user(4)];
        let after = vec![batch_summary(5, &[1, 2]), user(4)];
        let fired = run(
            &mut UserTurnsIntact::default(),
            &initial,
            &[(absorbed(1, &[]), after)],
        );
        assert_eq!(fired.len(), 1, "only user 2 is lost: {fired:?}");
        assert_eq!(fired[0].1.rows[0].id, MsgId(2));
    }

    #[test]
    fn a_failed_turn_may_roll_back_its_own_user_text_only() {
        let mut turn = three_turns();
        turn.push(user(7));
        let mut answered = turn.clone();
        answered.extend([calling(8, &[5]), tool(9, 5)]);
        let quiet = run_after_start(vec![
            (append_event(2), turn.clone()),
            (call_event(2, Some(10), None), answered.clone()),
            (failed_event(2, false, 3), three_turns()),
            (reset_event(2), vec![]),
        ]);
        assert!(quiet.is_empty(), "{quiet:?}");
        let mut older_gone = three_turns();
        older_gone.remove(4);
        let fired = run_after_start(vec![
            (append_event(2), turn),
            (failed_event(2, false, 2), older_gone),
        ]);
        assert_eq!(fired.len(), 1);
        assert_eq!(fired[0].1.rows[0].id, MsgId(4));
    }

    #[test]
    fn summary_text_merged_into_a_user_row_is_not_user_text() {
        let mut merged_row = merged(&[&batch_summary(4, &[1]), &user(4)]);
        merged_row.id = MsgId(4);
        merged_row.content.segments = std::sync::Arc::from(
            merged_row
                .content
                .segments
                .iter()
                .cloned()
                .map(|mut s| {
                    if s.chars == 2000 {
                        s.kind = compactsim_model::ContentKind::Summary;
                    }
                    s
                })
                .collect::<Vec<_>>(),
        );
        let after = vec![merged_row, reply(5), user(6)];
        let fired = run_after_start(vec![(
            batch_event(1, compactsim_model::BatchTrigger::Preflight, true),
            after,
        )]);
        assert!(fired.is_empty(), "{fired:?}");
    }

    /// A batch pass that summarizes the newest reply: caught only under the
    /// `newest_reply_verbatim` policy.
    #[test]
    fn a_summarized_newest_reply_fires_only_under_newest_reply_verbatim() {
        let pass = batch_event(1, compactsim_model::BatchTrigger::Preflight, true);
        let after = vec![batch_summary(7, &[1]), user(6)];
        let steps = vec![(append_event(1), three_turns()), (pass, after)];
        let with = |newest_reply_verbatim| {
            UserTurnsIntact::new(crate::OracleConfig {
                policies: crate::Policies {
                    newest_reply_verbatim,
                    ..crate::Policies::HERMES
                },
                ..crate::OracleConfig::default()
            })
        };
        let fired = run(&mut with(true), &[], &steps);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(fired[0].1.facts[0].contains("newest visible reply"));
        assert!(run(&mut with(false), &[], &steps).is_empty());
    }
}
