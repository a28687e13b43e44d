use crate::text::text_facts;
use crate::{Invariant, InvariantInfo, Policies, MAX_WITNESS_ROWS};
use compactsim_model::{written_summaries, Event, FactId, Message, Transition, Witness};
use std::collections::{BTreeMap, BTreeSet};

/// A batch pass either compacts — writes a summary in place of what it takes out — or
/// leaves the transcript as it was (H-29559).
///
/// On every batch pass, whatever outcome it reports (an "aborted" or "no-op" pass that
/// drops rows is judged like any other): if a non-summary row of `before` is gone from
/// `after`, or is still there with its text, role or tool calls rewritten, then `after`
/// holds a summary row written by this pass — one whose id is new or whose content
/// changed. When the summarizer failed that row is the deterministic fallback (an
/// explicit policy); a pass that drops the window with no summary at all fails here.
///
/// A rewrite counts like a removal: the prune of old tool outputs (hermes-domain §2.3
/// step 3) is part of a compaction and stands or falls with it. A pass that aborts
/// (auth, network, quota: "return unchanged, session not rotated", §2.3 step 6 and the
/// #29559 fix) or does nothing must return the list untouched; a pass that rewrote tool
/// outputs and wrote no summary lost their text with nothing in its place. Metadata
/// flags alone (persistence stamps) are not text and are not judged here. Other events
/// are not checked.
///
/// A summary row with no text is no summary: a pass that removes or rewrites rows and
/// writes a summary row with no text (an empty answer adopted as the summary: ADK's A2)
/// fails here, beside whatever other summaries it wrote.
///
/// Under the `static_fallback` policy, a summary row a batch pass writes while no
/// summarizer call of the pass was answered (every call failed, or none was made; a
/// condense call does not count) is the fallback, judged in [`fallback_row`]: it is the
/// declared fallback text when one is declared (the harness reads the row's bytes, where
/// a seam has them: an external adapter's), and it spells no fact the harness never saw
/// before the pass — in no row of the transcript at any step, in no summary it served
/// (the fallback is built locally, from what the compactor was given: the dropped rows,
/// the previous summary, even one whose row is gone).
#[derive(Clone, Debug, Default)]
pub struct SummaryFailureSafe {
    policies: Policies,
    /// Every fact the harness saw spelled in a row of the transcript or in a summary it
    /// served, up to the transition being judged.
    seen: BTreeSet<FactId>,
    /// `seen` holds the rows of the first transition's `before`.
    primed: bool,
}

impl SummaryFailureSafe {
    /// The invariant for a compactor declaring `policies`.
    pub fn new(policies: Policies) -> Self {
        SummaryFailureSafe {
            policies,
            ..Default::default()
        }
    }
}

pub const INFO: InvariantInfo = InvariantInfo {
    id: "summary-failure-safe",
    statement: "a batch pass never removes or rewrites rows without writing a summary in \
                their place (the LLM summary or the explicit fallback)",
    catches: &["H-29559", "HERMES-0.19.0-B6"],
    class: crate::InvariantClass::Universal,
};

/// Facts a fallback row's witness lists at most.
const FOREIGN_FACTS_LISTED: usize = 8;

/// The first summary row `t`'s pass wrote with no answered call that is not a fallback:
/// its text the harness read as not the declared fallback template
/// (`BatchPass::fallback_mismatch`), or it spells a fact the harness never saw before
/// the pass (`seen`: a fallback is built locally, from what the compactor was given).
/// `None` when every such row is one, or the pass had an answer.
fn fallback_row(
    policies: &Policies,
    t: &Transition<'_>,
    seen: &BTreeSet<FactId>,
) -> Option<Witness> {
    if !policies.static_fallback || t.served.iter().any(|c| c.ok && !c.condense) {
        return None;
    }
    if let (Event::BatchPass(p), Some(_)) = (t.event, policies.static_fallback_text) {
        if let Some(miss) = &p.fallback_mismatch {
            let j = t
                .after
                .iter()
                .position(|m| miss.starts_with(&format!("{} (", m.id)));
            let mut w = Witness::default()
                .fact(format!(
                    "a summary row written with no answered summarizer call ({} served, 0 \
                     answered) on {} is not the declared static fallback text: {miss}",
                    t.served.len(),
                    t.event.describe()
                ))
                .fact(format!("declared: static_fallback {}", declared(policies)));
            if let Some(j) = j {
                w = w.row(j, &t.after[j], "after: the row the harness read");
            }
            return Some(w);
        }
    }
    for (j, m) in written_summaries(t.before, t.after) {
        let foreign: Vec<FactId> = text_facts(&m.content)
            .into_iter()
            .filter(|f| !seen.contains(f))
            .collect();
        if !foreign.is_empty() {
            let listed: Vec<String> = foreign
                .iter()
                .take(FOREIGN_FACTS_LISTED)
                .map(FactId::to_string)
                .collect();
            return Some(
                Witness::default()
                    .fact(format!(
                        "summary row {} written with no answered summarizer call ({} served, 0 \
                         answered) on {}: it spells {} facts the harness never saw before the \
                         pass (in no row, in no summary it served): {}",
                        m.id,
                        t.served.len(),
                        t.event.describe(),
                        foreign.len(),
                        listed.join(", ")
                    ))
                    .fact(format!("declared: static_fallback {}", declared(policies)))
                    .row(j, m, "after: the fallback row"),
            );
        }
    }
    None
}

/// Under `static_fallback`'s `connection_dropped_aborts`: the first summary row `t`'s
/// pass wrote when no summarizer call of the pass was answered and the last one (not a
/// condense) failed with a dropped connection. Such a pass aborts — it returns the list
/// as it was, no fallback (Hermes' #29559 fix) — so any summary it writes is a fallback
/// written where the declared policy says none is. `None` otherwise.
fn written_after_dropped_connection(policies: &Policies, t: &Transition<'_>) -> Option<Witness> {
    if !policies.static_fallback_connection_dropped_aborts
        || t.served.iter().any(|c| c.ok && !c.condense)
    {
        return None;
    }
    let last = t.served.iter().rev().find(|c| !c.condense)?;
    if !last.connection_dropped {
        return None;
    }
    let (j, m) = written_summaries(t.before, t.after).next()?;
    Some(
        Witness::default()
            .fact(format!(
                "summary row {} written on {} after its last summarizer call failed with a \
                 dropped connection ({} served, 0 answered): such a pass aborts and returns \
                 the list as it was, it writes no fallback",
                m.id,
                t.event.describe(),
                t.served.len()
            ))
            .fact("declared: static_fallback connection_dropped_aborts".to_string())
            .row(j, m, "after: the summary written instead of aborting"),
    )
}

/// The `static_fallback` parameters as declared, shortened for a witness.
fn declared(policies: &Policies) -> String {
    policies
        .declared()
        .into_iter()
        .find(|(name, _)| *name == crate::policy::STATIC_FALLBACK)
        .map(|(_, params)| {
            let n = params.chars().count();
            if n > 200 {
                format!(
                    "{}… ({n} characters)",
                    params.chars().take(200).collect::<String>()
                )
            } else {
                params
            }
        })
        .unwrap_or_default()
}

impl Invariant for SummaryFailureSafe {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, event: &Event) -> bool {
        matches!(event, Event::BatchPass(_))
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        if !self.primed {
            self.primed = true;
            see(&mut self.seen, t.before);
        }
        let verdict = self.judge(t);
        see(&mut self.seen, t.delta.added(t.after));
        for c in t.served {
            self.seen.extend(c.facts_out.iter().copied());
        }
        verdict
    }
}

/// Records the facts `rows` spell as seen.
fn see(seen: &mut BTreeSet<FactId>, rows: &[Message]) {
    for m in rows {
        seen.extend(text_facts(&m.content));
    }
}

impl SummaryFailureSafe {
    /// The rules a pass that wrote a summary answers to: no summary after a dropped
    /// connection where the declared policy aborts, and a fallback is the declared one.
    fn fallback_rules(&self, t: &Transition<'_>) -> Option<Witness> {
        written_after_dropped_connection(&self.policies, t)
            .or_else(|| fallback_row(&self.policies, t, &self.seen))
    }

    fn judge(&self, t: &Transition<'_>) -> Option<Witness> {
        let Event::BatchPass(p) = t.event else {
            return None;
        };
        if t.delta.is_empty() {
            return None;
        }
        // A pass that wrote a summary with text is safe whatever it removed (the
        // fallback rules aside): asked first, as it reads the few summary rows only.
        let mut written = written_summaries(t.before, t.after).peekable();
        let any_written = written.peek().is_some();
        let empty = written.find(|(_, m)| m.content.is_empty());
        if any_written && empty.is_none() {
            return self.fallback_rules(t);
        }
        let touched = touched_rows(t);
        if touched.is_empty() {
            return any_written.then(|| self.fallback_rules(t)).flatten();
        }
        let removed = touched.iter().filter(|(_, _, n)| *n == REMOVED).count();
        let summary = match empty {
            Some((_, m)) => format!("beside summary row {}, written with no text", m.id),
            None => "with no summary written".to_string(),
        };
        let mut w = Witness::default().fact(format!(
            "{removed} rows removed and {} rewritten {summary} (the pass reported {}, {} \
             summarizer calls served, {} answered) on {}",
            touched.len() - removed,
            p.outcome.label(),
            t.served.len(),
            t.served.iter().filter(|c| c.ok).count(),
            t.event.describe()
        ));
        if let Some((j, m)) = empty {
            w = w.row(j, m, "after: a summary row with no text");
        }
        for (i, m, note) in touched.into_iter().take(MAX_WITNESS_ROWS) {
            w = w.row(i, m, note);
            if let Some(j) = t.after.iter().position(|a| a.id == m.id) {
                w = w.row(j, &t.after[j], "after: the same row rewritten");
            }
        }
        Some(w)
    }
}

const REMOVED: &str = "before: removed without a summary";

/// The non-summary rows of `before` the transition removed or rewrote, with their
/// positions and the witness note of each.
fn touched_rows<'a>(t: &Transition<'a>) -> Vec<(usize, &'a Message, &'static str)> {
    let after: BTreeMap<_, _> = t.after.iter().map(|m| (m.id, m)).collect();
    t.before
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.is_summary())
        .filter_map(|(i, m)| match after.get(&m.id) {
            None => Some((i, m, REMOVED)),
            Some(a) if rewritten(m, a) => Some((i, m, "before: rewritten without a summary")),
            Some(_) => None,
        })
        .collect()
}

/// The row kept its id but not its text, role or tool calls.
fn rewritten(before: &Message, after: &Message) -> bool {
    before.content != after.content
        || before.role != after.role
        || before.tool_calls != after.tool_calls
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use compactsim_model::{BatchTrigger, ServedCall};

    /// The invariant without the fallback rule (no `static_fallback`).
    fn sfs() -> SummaryFailureSafe {
        SummaryFailureSafe::new(Policies::NONE)
    }

    fn declaring(text: Option<&'static str>) -> SummaryFailureSafe {
        SummaryFailureSafe::new(Policies {
            static_fallback: true,
            static_fallback_text: text,
            ..Policies::NONE
        })
    }

    fn fact_rows() -> Vec<Message> {
        let mut r = start();
        r[1].set_content(prose(1, 400, &[3, 4]));
        r
    }

    #[test]
    fn fires_on_a_fallback_that_is_not_the_declared_text() {
        let before = fact_rows();
        let after = vec![batch_summary(9, &[]), user(4), reply(5)];
        let mut e = pass();
        if let Event::BatchPass(p) = &mut e {
            p.fallback_mismatch = Some("m9 (143 characters) lacks piece 1 of 1 \"x\"".into());
        }
        let failed = [served(false, 100, &[])];
        let w = declaring(Some("{p}x{q}"))
            .observe(&transition_served(&e, &before, &after, &failed))
            .map(readable)
            .expect("not the declared fallback");
        assert!(
            w.facts[0].contains("m9 (143 characters) lacks"),
            "{:?}",
            w.facts
        );
        assert!(
            w.facts[1].contains("static_fallback {\"text\":\"{p}x{q}\"}"),
            "{:?}",
            w.facts
        );
        assert_eq!(witness_ids(&w), vec![9]);
        // Quiet: no text declared, no policy, or an answered call (then it is no fallback).
        let tx = transition_served(&e, &before, &after, &failed);
        assert!(declaring(None).observe(&tx).is_none());
        assert!(sfs().observe(&tx).is_none());
        let ok = [served(true, 100, &[])];
        assert!(declaring(Some("{p}x{q}"))
            .observe(&transition_served(&e, &before, &after, &ok))
            .is_none());
    }

    #[test]
    fn fires_on_a_fallback_spelling_a_fact_the_harness_never_saw() {
        let before = fact_rows();
        let failed = [served(false, 100, &[])];
        let foreign = vec![batch_summary(9, &[3, 77]), user(4), reply(5)];
        let w = declaring(None)
            .observe(&transition_served(&pass(), &before, &foreign, &failed))
            .map(readable)
            .expect("fact 77 came from nowhere");
        assert!(
            w.facts[0].contains("1 facts the harness never saw before the pass"),
            "{:?}",
            w.facts
        );
        assert!(w.facts[0].contains("FACT-000077"), "{:?}", w.facts);
        assert_eq!(witness_ids(&w), vec![9]);
        // Quiet: the fallback spells only facts the rows before spelled…
        let carried = vec![batch_summary(9, &[3, 4]), user(4), reply(5)];
        assert!(declaring(None)
            .observe(&transition_served(&pass(), &before, &carried, &failed))
            .is_none());
        // …or facts of a row an earlier step showed and a pass since removed.
        let mut inv = declaring(None);
        let mut shown = before.clone();
        shown.push(Message::new(
            compactsim_model::MsgId(6),
            compactsim_model::Role::Assistant,
            prose(6, 400, &[77]),
        ));
        assert!(inv
            .observe(&transition(&append_event(1), &before, &shown))
            .is_none());
        assert!(inv
            .observe(&transition(&append_event(1), &shown, &before))
            .is_none());
        assert!(inv
            .observe(&transition_served(&pass(), &before, &foreign, &failed))
            .is_none());
        // …or facts of a summary the harness served earlier.
        let mut inv = declaring(None);
        let answered = [served(true, 100, &[77])];
        assert!(inv
            .observe(&transition_served(
                &append_event(1),
                &before,
                &before,
                &answered
            ))
            .is_none());
        assert!(inv
            .observe(&transition_served(&pass(), &before, &foreign, &failed))
            .is_none());
        // Not a fallback: a pass with an answered call, or no static_fallback policy.
        assert!(declaring(None)
            .observe(&transition_served(&pass(), &before, &foreign, &answered))
            .is_none());
        assert!(sfs()
            .observe(&transition_served(&pass(), &before, &foreign, &failed))
            .is_none());
    }

    fn start() -> Vec<Message> {
        vec![user(0), reply(1), user(2), reply(3), user(4), reply(5)]
    }

    fn pass() -> Event {
        batch_event(1, BatchTrigger::Preflight, true)
    }

    #[test]
    fn fires_when_the_window_is_dropped_without_a_summary() {
        let after = vec![user(4), reply(5)];
        let w = sfs()
            .observe(&transition(&pass(), &start(), &after))
            .expect("dropped silently");
        let w = readable(w);
        assert_eq!(w.rows.len(), 4);
        let mut with_old = vec![batch_summary(9, &[1])];
        with_old.extend(start());
        let mut kept_old = vec![batch_summary(9, &[1])];
        kept_old.extend([user(4), reply(5)]);
        assert!(
            sfs()
                .observe(&transition(&pass(), &with_old, &kept_old))
                .is_some(),
            "an untouched old summary is not a new one"
        );
    }

    #[test]
    fn quiet_with_a_new_or_rewritten_summary_and_on_other_events() {
        let after = vec![batch_summary(9, &[1]), user(4), reply(5)];
        assert!(sfs()
            .observe(&transition(&pass(), &start(), &after))
            .is_none());
        let mut merged = merged(&[&batch_summary(9, &[1]), &user(4)]);
        merged.id = compactsim_model::MsgId(4);
        let after = vec![merged, reply(5)];
        assert!(sfs()
            .observe(&transition(&pass(), &start(), &after))
            .is_none());
        let noop = batch_event(1, BatchTrigger::Preflight, false);
        assert!(sfs()
            .observe(&transition(&noop, &start(), &start()))
            .is_none());
        let append = append_event(1);
        assert!(sfs()
            .observe(&transition(&append, &start(), &[user(4), reply(5)]))
            .is_none());
    }

    #[test]
    fn fires_when_a_pass_without_a_summary_rewrites_a_tool_output() {
        let before = vec![user(0), calling(1, &[7]), tool(2, 7), reply(3), user(4)];
        let mut pruned = before.clone();
        pruned[2].set_content(prose(2, 40, &[]));
        let aborted = batch_event(1, BatchTrigger::Preflight, false);
        let w = sfs()
            .observe(&transition(&aborted, &before, &pruned))
            .map(readable)
            .expect("an aborted pass pruned a tool output");
        assert!(
            w.facts[0].contains("0 rows removed and 1 rewritten"),
            "{:?}",
            w.facts
        );
        assert_eq!(witness_ids(&w), vec![2, 2]);
        // The same prune beside a summary the pass wrote is a compaction: quiet.
        let mut compacted = vec![batch_summary(9, &[1])];
        compacted.extend(pruned[2..].iter().cloned());
        assert!(sfs()
            .observe(&transition(&aborted, &before, &compacted))
            .is_none());
        // Flags alone are no rewrite.
        let mut stamped = before.clone();
        stamped[2].flags.persisted = !stamped[2].flags.persisted;
        assert!(sfs()
            .observe(&transition(&aborted, &before, &stamped))
            .is_none());
    }

    /// A summary row with no text (an empty answer adopted as the summary).
    fn empty_summary(id: u32) -> Message {
        let mut m = batch_summary(id, &[]);
        m.set_content(compactsim_model::Content::empty());
        m
    }

    #[test]
    fn fires_on_a_summary_row_with_no_text_in_place_of_the_window() {
        let empty = [served(false, 100, &[])];
        let after = vec![empty_summary(9), user(4), reply(5)];
        let w = sfs()
            .observe(&transition_served(&pass(), &start(), &after, &empty))
            .map(readable)
            .expect("an empty summary stands for nothing");
        assert!(
            w.facts[0].contains(
                "4 rows removed and 0 rewritten beside summary row m9, written \
                                 with no text"
            ),
            "{:?}",
            w.facts
        );
        assert!(w.facts[0].contains("1 summarizer calls served, 0 answered"));
        assert_eq!(witness_ids(&w), vec![9, 0, 1, 2, 3]);
        // Beside another summary with text (a pass that wrote several) it still fires.
        let both = vec![batch_summary(8, &[1]), empty_summary(9), user(4), reply(5)];
        assert!(sfs()
            .observe(&transition_served(&pass(), &start(), &both, &empty))
            .is_some());
        // Quiet: the summary has text, or the pass removed nothing beside the empty row.
        let written = vec![batch_summary(9, &[]), user(4), reply(5)];
        assert!(sfs()
            .observe(&transition_served(&pass(), &start(), &written, &empty))
            .is_none());
        let mut kept = start();
        kept.push(empty_summary(9));
        assert!(sfs()
            .observe(&transition_served(&pass(), &start(), &kept, &empty))
            .is_none());
    }

    #[test]
    fn an_aborted_or_noop_label_does_not_excuse_a_dropped_window() {
        let dropped = vec![user(4), reply(5)];
        let noop = batch_event(1, BatchTrigger::Preflight, false);
        assert!(sfs()
            .observe(&transition(&noop, &start(), &dropped))
            .is_some());
    }

    fn aborting_on_dropped_connections() -> SummaryFailureSafe {
        SummaryFailureSafe::new(Policies {
            static_fallback: true,
            static_fallback_connection_dropped_aborts: true,
            ..Policies::NONE
        })
    }

    fn dropped_connection() -> ServedCall {
        ServedCall {
            connection_dropped: true,
            ..served(false, 100, &[])
        }
    }

    #[test]
    fn fires_on_a_fallback_written_after_a_dropped_connection() {
        let before = fact_rows();
        let fallback = vec![batch_summary(9, &[3, 4]), user(4), reply(5)];
        let calls = [dropped_connection()];
        let w = aborting_on_dropped_connections()
            .observe(&transition_served(&pass(), &before, &fallback, &calls))
            .map(readable)
            .expect("a dropped connection aborts, no fallback");
        assert!(
            w.facts[0].contains("failed with a dropped connection (1 served, 0 answered)"),
            "{:?}",
            w.facts
        );
        assert_eq!(witness_ids(&w), vec![9]);
        // A failure of another kind last: the fallback is the declared policy's.
        let other_last = [dropped_connection(), served(false, 100, &[])];
        assert!(aborting_on_dropped_connections()
            .observe(&transition_served(&pass(), &before, &fallback, &other_last))
            .is_none());
    }

    #[test]
    fn quiet_after_a_dropped_connection_when_the_pass_aborts_or_the_rule_is_not_declared() {
        let before = fact_rows();
        let calls = [dropped_connection()];
        let aborted = batch_event(1, BatchTrigger::Preflight, false);
        // The pass returned the list as it was.
        assert!(aborting_on_dropped_connections()
            .observe(&transition_served(&aborted, &before, &before, &calls))
            .is_none());
        // Not declared: the fallback after a dropped connection is the policy's.
        let fallback = vec![batch_summary(9, &[3, 4]), user(4), reply(5)];
        assert!(declaring(None)
            .observe(&transition_served(&pass(), &before, &fallback, &calls))
            .is_none());
        // An answered call after the dropped one: a summary, no fallback.
        let answered = [dropped_connection(), served(true, 100, &[3, 4])];
        assert!(aborting_on_dropped_connections()
            .observe(&transition_served(&pass(), &before, &fallback, &answered))
            .is_none());
    }
}
