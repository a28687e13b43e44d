use crate::class::{classify, unchanged, EventClass};
use crate::marker_contained::missing_from;
use crate::{Invariant, InvariantInfo, MAX_WITNESS_ROWS};
use compactsim_model::{Event, FactId, Message, Role, ServedCall, Transition, Witness};

/// The micro marker stays what a micro pass made it, and the newest one holds the
/// rolling summary the harness served last.
///
/// - **Intact after the pass** (micro passes): every micro marker of `after`, and every
///   summary row the pass wrote (a new row, or a marker of `before` it changed in text,
///   flags or role; a batch summary a supersede merged a user row into is not the
///   pass's marker), is an
///   assistant row carrying both summary metadata flags (`_compressed_summary` and
///   `_micro_compact_marker`): a micro pass writes nothing but its marker. A user-role
///   marker is the one the pre-send repair merges away (H-75345-A); a marker without
///   its micro flag is one no later pass can find or supersede.
/// - **Intact after the repair** (pre-send repair): every micro marker of `before` is
///   still in `after` with its id, as an assistant row with both flags and the same text
///   (text identity, see `text.rs`): the repair merges, drops and prunes other rows, never
///   a marker, and never merges another row's text into one.
/// - **Newest holds the current summary** (micro passes that changed the list): when a
///   summary call the harness served during the pass answered (a condense call counts:
///   it rewrites the summary in place), the newest micro marker of `after` (the one with
///   the largest id: ids are assigned in creation order) holds (its text spells,
///   `text.rs`) every fact of the last answer that was adopted — the last answered call
///   that did not come back expanded,
///   else the last answered call. A pass that keeps an older marker and deletes the new
///   one, or writes a stale summary, fails here. A pass that changed the list while no
///   call answered is left to no-silent-drop.
/// - **Worded as declared** (micro passes, policy `marker_template`): every micro marker
///   the pass wrote (new, or its text rewritten) starts with the declared prefix and ends
///   with the declared suffix (`marker_template.rs`). The harness reads the marker's
///   bytes and records what it lacks on the pass's event (`MicroPass::marker_mismatch`,
///   set only when the compactor declared a template); a marker of the summary alone
///   keeps every fact and loses the words that tell the model the row is a handoff.
///
/// Other transitions are not judged (a batch pass may fold the marker into its summary;
/// marker-contained judges the facts).
#[derive(Clone, Debug, Default)]
pub struct MarkerPristine;

pub const INFO: InvariantInfo = InvariantInfo {
    id: "marker-pristine",
    statement: "after the pre-send repair a marker is still an intact assistant row with its \
                metadata, and the newest marker holds the current rolling summary",
    catches: &["H-75345-A", "IOT-0.22.2-M4"],
    class: crate::InvariantClass::Universal,
};

fn well_formed(m: &Message) -> bool {
    m.role == Role::Assistant && m.flags.summary_marker && m.flags.micro_marker
}

/// The answer the pass adopted (see the type doc).
fn adopted(served: &[ServedCall]) -> Option<&ServedCall> {
    let ok = || served.iter().rev().filter(|c| c.ok);
    ok().find(|c| !c.expanded).or_else(|| ok().next())
}

fn micro_markers(rows: &[Message]) -> impl Iterator<Item = (usize, &Message)> {
    rows.iter().enumerate().filter(|(_, m)| m.is_micro_marker())
}

/// A marker the pass wrote that the harness read as not the declared template.
fn off_template(t: &Transition<'_>) -> Option<Witness> {
    let Event::MicroPass(p) = t.event else {
        return None;
    };
    let miss = p.marker_mismatch.as_ref()?;
    let mut w = Witness::default().fact(format!(
        "a micro marker written by {} is not worded as the declared marker template \
         (policy marker_template): {miss}",
        t.event.describe()
    ));
    if let Some(j) = t
        .after
        .iter()
        .position(|m| miss.starts_with(&format!("{} (", m.id)))
    {
        w = w.row(j, &t.after[j], "after: the marker the harness read");
    }
    Some(w)
}

/// A micro pass: every marker well formed and worded as declared; the newest holds the
/// adopted answer.
fn after_pass(t: &Transition<'_>) -> Option<Witness> {
    if unchanged(t) {
        return None;
    }
    // A summary row the pass made: a new row, or a marker of `before` it rewrote (a
    // batch summary that a supersede merged a user row into is not the pass's marker).
    let written = |m: &Message| {
        t.before.iter().find(|o| o.id == m.id).is_none_or(|o| {
            o.is_micro_marker()
                && (o.content != m.content || o.flags != m.flags || o.role != m.role)
        })
    };
    let malformed = t
        .after
        .iter()
        .enumerate()
        .filter(|(_, m)| m.is_summary())
        .find(|(_, m)| !well_formed(m) && (m.is_micro_marker() || written(m)));
    if let Some(w) = off_template(t) {
        return Some(w);
    }
    if let Some((i, m)) = malformed {
        return Some(
            Witness::default()
                .fact(format!(
                    "summary row {} written or kept by a micro pass is a {} row with \
                     summary flag {} and micro-marker flag {} after {}",
                    m.id,
                    m.role.as_str(),
                    m.flags.summary_marker,
                    m.flags.micro_marker,
                    t.event.describe()
                ))
                .row(i, m, "after: malformed marker"),
        );
    }
    let answer = adopted(t.served)?;
    if t.delta.is_empty() {
        return None;
    }
    let newest = micro_markers(t.after).max_by_key(|(_, m)| m.id);
    // Judged as text: the facts the marker's text spells (`text.rs`).
    let facts = newest
        .map(|(_, m)| crate::text::text_facts_of(&m.content))
        .unwrap_or_default();
    // One merge walk when the answer's facts are ascending (as the harness serves them).
    let missing: Vec<FactId> = if answer.facts_out.is_sorted() {
        missing_from(&answer.facts_out, &facts)
    } else {
        answer
            .facts_out
            .iter()
            .copied()
            .filter(|f| facts.binary_search(f).is_err())
            .collect()
    };
    if missing.is_empty() {
        return None;
    }
    let mut w = Witness::default().fact(format!(
        "the newest micro marker does not hold the summary served last: {} of its {} facts \
         missing ({}) after {}",
        missing.len(),
        answer.facts_out.len(),
        missing
            .iter()
            .take(MAX_WITNESS_ROWS)
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        t.event.describe()
    ));
    for (i, m) in micro_markers(t.after).take(MAX_WITNESS_ROWS) {
        let note = if newest.is_some_and(|(j, _)| j == i) {
            "after: newest marker"
        } else {
            "after: older marker"
        };
        w = w.row(i, m, note);
    }
    Some(w)
}

/// The repair: every marker of `before` survives, well formed, with its text.
fn after_repair(t: &Transition<'_>) -> Option<Witness> {
    for (i, m) in micro_markers(t.before) {
        let found = t.after.iter().enumerate().find(|(_, a)| a.id == m.id);
        let problem = match found {
            None => "is gone (merged into another row or dropped)",
            Some((_, a)) if !well_formed(a) => "lost its role or metadata",
            Some((_, a)) if a.content != m.content => "had its text changed",
            Some(_) => continue,
        };
        let mut w = Witness::default()
            .fact(format!(
                "micro marker {} {problem} on {}",
                m.id,
                t.event.describe()
            ))
            .row(i, m, "before: marker");
        if let Some((j, a)) = found {
            w = w.row(j, a, "after: the same id");
        }
        return Some(w);
    }
    None
}

impl Invariant for MarkerPristine {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, event: &Event) -> bool {
        matches!(classify(event), EventClass::Micro | EventClass::Repair)
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        match classify(t.event) {
            EventClass::Micro => after_pass(t),
            EventClass::Repair if !unchanged(t) => after_repair(t),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use compactsim_model::MicroOutcome;

    fn start() -> Vec<Message> {
        vec![
            user(0),
            micro_marker(5, &[1, 2]),
            user(4),
            reply(6),
            user(7),
        ]
    }

    fn observe(ev: &Event, before: &[Message], after: &[Message], calls: &[ServedCall]) -> bool {
        MarkerPristine
            .observe(&transition_served(ev, before, after, calls))
            .map(readable)
            .is_some()
    }

    #[test]
    fn quiet_on_a_clean_absorb_a_defrag_and_a_repair_that_leaves_markers_alone() {
        let after = vec![user(0), user(4), micro_marker(8, &[1, 2, 3]), user(7)];
        let call = [served(true, 100, &[1, 2, 3])];
        assert!(!observe(&absorbed(1, &[6]), &start(), &after, &call));
        let defragged = vec![user(0), user(4), micro_marker(8, &[1, 2, 3]), user(7)];
        let mut condense = served(true, 0, &[1, 2, 3]);
        condense.condense = true;
        let ev = micro(2, MicroOutcome::Defrag, &[], &[]);
        assert!(!observe(&ev, &after, &defragged, &[condense]));
        let mut merged_users = after.clone();
        let last = merged_users.pop().unwrap();
        merged_users.push(merged(&[&user(9), &last]));
        assert!(!observe(&repair_event(1), &after, &merged_users, &[]));
        // An expanded answer the pass refused is not the current summary.
        let mut refused = served(true, 100, &[1, 2, 3, 4]);
        refused.expanded = true;
        let calls = [served(true, 100, &[1, 2, 3]), refused];
        assert!(!observe(&absorbed(1, &[6]), &start(), &after, &calls));
    }

    #[test]
    fn fires_on_a_user_role_marker_after_the_pass() {
        let mut marker = micro_marker(8, &[1, 2, 3]);
        marker.role = Role::User;
        let after = vec![user(0), user(4), marker, user(7)];
        let w = MarkerPristine
            .observe(&transition(&absorbed(1, &[6]), &start(), &after))
            .map(readable)
            .expect("user-role marker");
        assert!(w.facts[0].contains("a user row"), "{:?}", w.facts);
        let mut unflagged = micro_marker(8, &[1, 2, 3]);
        unflagged.flags.micro_marker = false;
        let after = vec![user(0), user(4), unflagged, user(7)];
        assert!(observe(&absorbed(1, &[6]), &start(), &after, &[]));
        // A batch summary the pass did not touch is not its business.
        let mut kept = start();
        kept.insert(0, batch_summary(3, &[9]));
        let mut after = kept.clone();
        after.remove(4);
        assert!(!observe(&absorbed(1, &[6]), &kept, &after, &[]));
        // ...nor one a supersede merged a user row into.
        after[0].merge_content(&user(0).content);
        after.remove(1);
        assert!(!observe(&absorbed(1, &[6]), &kept, &after, &[]));
        // A marker the pass rewrote without its flag is.
        let mut stripped = start();
        stripped[1].flags.micro_marker = false;
        assert!(observe(&absorbed(1, &[6]), &start(), &stripped, &[]));
    }

    #[test]
    fn fires_on_a_marker_the_harness_read_off_the_declared_template() {
        let after = vec![user(0), user(4), micro_marker(8, &[1, 2, 3]), user(7)];
        let call = [served(true, 100, &[1, 2, 3])];
        let mut ev = absorbed(1, &[6]);
        assert!(
            !observe(&ev, &start(), &after, &call),
            "no mismatch read: quiet"
        );
        if let Event::MicroPass(p) = &mut ev {
            p.marker_mismatch = Some("m8 (40 characters) lacks the declared prefix \"P\"".into());
        }
        let w = MarkerPristine
            .observe(&transition_served(&ev, &start(), &after, &call))
            .map(readable)
            .expect("off template");
        assert!(
            w.facts[0].contains("lacks the declared prefix"),
            "{:?}",
            w.facts
        );
        assert!(w.facts[0].contains("marker_template"), "{:?}", w.facts);
    }

    #[test]
    fn fires_when_the_repair_merges_or_strips_a_marker() {
        let before = start();
        let mut stripped = before.clone();
        stripped[1].flags.micro_marker = false;
        assert!(observe(&repair_event(1), &before, &stripped, &[]));
        let mut role = before.clone();
        role[1].role = Role::User;
        assert!(observe(&repair_event(1), &before, &role, &[]));
        let mut grown = before.clone();
        grown[1].merge_content(&reply(6).content);
        grown.remove(3);
        assert!(observe(&repair_event(1), &before, &grown, &[]));
        let mut gone = before.clone();
        gone.remove(1);
        assert!(observe(&repair_event(1), &before, &gone, &[]));
    }

    #[test]
    fn fires_when_the_pass_keeps_the_old_marker_as_the_newest() {
        let call = [served(true, 100, &[1, 2, 3])];
        // Supersede kept marker 5 and deleted the new one.
        let kept_old = vec![user(0), micro_marker(5, &[1, 2]), user(4), user(7)];
        assert!(observe(&absorbed(1, &[6]), &start(), &kept_old, &call));
        // Two markers, the newest with a stale summary.
        let stale = vec![
            user(0),
            micro_marker(5, &[1, 2, 3]),
            user(4),
            micro_marker(8, &[3]),
            user(7),
        ];
        assert!(observe(&absorbed(1, &[6]), &start(), &stale, &call));
        // Nothing answered: not this invariant's question.
        assert!(!observe(&absorbed(1, &[6]), &start(), &kept_old, &[]));
    }

    #[test]
    fn fires_when_the_newest_marker_lists_the_summary_its_text_does_not_spell() {
        let call = [served(true, 100, &[1, 2, 3])];
        let mut lying = micro_marker(8, &[1, 2, 3]);
        // 24 characters spell FACT-000001 and FACT-000002 only.
        lying.set_content(prose(8, 24, &[1, 2, 3]));
        let after = vec![user(0), user(4), lying, user(7)];
        assert!(observe(&absorbed(1, &[6]), &start(), &after, &call));
        let mut roomy = micro_marker(8, &[1, 2, 3]);
        roomy.set_content(prose(8, 60, &[1, 2, 3]));
        let after = vec![user(0), user(4), roomy, user(7)];
        assert!(!observe(&absorbed(1, &[6]), &start(), &after, &call));
    }
}
