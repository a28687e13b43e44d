//! The batch-compaction rule of `user-turns-intact` (DESIGN.md catalogue): a batch pass
//! summarizes user turns on purpose, so instead of equality it requires that
//! - the tracked user text left in `after` is a subsequence of `before`'s, each segment
//!   byte-identical (nothing altered, reordered or duplicated);
//! - the newest tracked user text stays verbatim in a user row (#10896), and still last;
//! - and still the newest message: no summary text follows it in its row (a summary
//!   merged behind the user's words makes them the summary's prior context, hermes
//!   0.19.0 B4), unless it did already before the pass;
//! - (the `newest_reply_verbatim` policy's rule, only when declared) the newest visible
//!   assistant reply of `before` stays, same id, its segments a
//!   contiguous run of its content (#29824): the summary may be merged into it, before
//!   its text or around it (role choice and merge, hermes-domain §2.3), never into it.
//!
//! Applied to compaction events that are not micro passes (none exist yet).

use crate::user_segments::{segment, SegRef};
use compactsim_model::{ContentKind, Message, Transition, Witness};

/// The first breach of the batch rule on `t`, given the tracked-segment sequences.
/// `newest_reply`: the `newest_reply_verbatim` policy is declared (its rule runs).
pub(crate) fn batch_breach(
    t: &Transition<'_>,
    seq_before: &[SegRef],
    seq_after: &[SegRef],
    newest_reply: bool,
) -> Option<Witness> {
    not_a_subsequence(t, seq_before, seq_after)
        .or_else(|| newest_user_lost(t, seq_before, seq_after))
        .or_else(|| newest_user_demoted(t, seq_before, seq_after))
        .or_else(|| newest_reply.then(|| newest_reply_lost(t)).flatten())
}

fn not_a_subsequence(t: &Transition<'_>, b: &[SegRef], a: &[SegRef]) -> Option<Witness> {
    let mut j = 0;
    for &at in a {
        let seg = segment(t.after, at);
        while j < b.len() && segment(t.before, b[j]) != seg {
            j += 1;
        }
        if j == b.len() {
            return Some(
                Witness::default()
                    .fact(format!(
                        "user text of {} altered, reordered or duplicated by {}",
                        seg.origin,
                        t.event.describe()
                    ))
                    .row(
                        at.0,
                        &t.after[at.0],
                        "after: user text not from before in this order",
                    ),
            );
        }
        j += 1;
    }
    None
}

fn newest_user_lost(t: &Transition<'_>, b: &[SegRef], a: &[SegRef]) -> Option<Witness> {
    let &newest = b.last()?;
    let kept = a
        .last()
        .is_some_and(|&last| segment(t.after, last) == segment(t.before, newest));
    if kept {
        return None;
    }
    let seg = segment(t.before, newest);
    Some(
        Witness::default()
            .fact(format!(
                "newest user text (of {}) left the verbatim tail on {}",
                seg.origin,
                t.event.describe()
            ))
            .row(newest.0, &t.before[newest.0], "before: newest user text"),
    )
}

/// Whether the tracked segment at `at` is followed, in its own row, by summary text: the
/// row then reads as the summary's prior context, the user's words no longer the
/// message that the summary hands over to.
fn before_a_summary(rows: &[Message], at: SegRef) -> bool {
    rows[at.0].content.segments[at.1 + 1..]
        .iter()
        .any(|s| s.kind == ContentKind::Summary)
}

/// The newest user text, kept verbatim in a user row, now has summary text after it in
/// its row (a summary merged behind it: "prior context, not a new message", hermes
/// 0.19.0 B4). The user turn stopped being one at this pass; a row that was so already
/// in `before` is not this pass's doing.
fn newest_user_demoted(t: &Transition<'_>, b: &[SegRef], a: &[SegRef]) -> Option<Witness> {
    let (&newest, &kept) = (b.last()?, a.last()?);
    if !before_a_summary(t.after, kept) || before_a_summary(t.before, newest) {
        return None;
    }
    let seg = segment(t.after, kept);
    Some(
        Witness::default()
            .fact(format!(
                "newest user text (of {}) demoted on {}: row {} puts summary text after \
                 it, so the user's words read as prior context, not as the newest message",
                seg.origin,
                t.event.describe(),
                t.after[kept.0].id
            ))
            .row(newest.0, &t.before[newest.0], "before: the newest user row")
            .row(
                kept.0,
                &t.after[kept.0],
                "after: its words before a summary",
            ),
    )
}

/// `run` appears in `all` contiguously, in order.
fn holds_run<T: PartialEq>(all: &[T], run: &[T]) -> bool {
    run.is_empty() || all.windows(run.len()).any(|w| w == run)
}

fn newest_reply_lost(t: &Transition<'_>) -> Option<Witness> {
    let (i, reply) = t
        .before
        .iter()
        .enumerate()
        .rev()
        .find(|(_, m)| m.is_visible_reply())?;
    let kept = t.after.iter().any(|m: &Message| {
        m.id == reply.id && holds_run(&m.content.segments, &reply.content.segments)
    });
    if kept {
        return None;
    }
    Some(
        Witness::default()
            .fact(format!(
                "newest visible reply {} left the verbatim tail on {}",
                reply.id,
                t.event.describe()
            ))
            .row(i, reply, "before: newest visible reply"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idset::IdSet;
    use crate::testkit::*;
    use crate::user_segments::collect_tracked;
    use compactsim_model::MsgId;

    fn breach(after: &[Message]) -> Option<Witness> {
        breach_with(after, true)
    }

    /// The breach of `after` with the `newest_reply_verbatim` policy declared or not.
    fn breach_with(after: &[Message], newest_reply: bool) -> Option<Witness> {
        let mut recorded = IdSet::default();
        for id in [0, 4, 6] {
            recorded.add(MsgId(id));
        }
        let (mut b, mut a) = (Vec::new(), Vec::new());
        let before = three_turns();
        collect_tracked(&recorded, &before, &mut b);
        collect_tracked(&recorded, after, &mut a);
        let ev = absorbed(1, &[]);
        batch_breach(&transition(&ev, &before, after), &b, &a, newest_reply)
    }

    #[test]
    fn quiet_when_old_turns_are_summarized_and_the_tail_is_verbatim() {
        assert!(breach(&[batch_summary(7, &[1]), reply(5), user(6)]).is_none());
        assert!(breach(&[user(0), batch_summary(7, &[1]), reply(5), user(6)]).is_none());
    }

    #[test]
    fn fires_when_the_newest_user_or_reply_is_summarized() {
        let w = breach(&[user(0), batch_summary(7, &[1]), reply(5)]).expect("user 6 gone");
        assert_eq!((w.rows[0].id, w.rows[0].index), (MsgId(6), 6));
        let w = breach(&[batch_summary(7, &[1]), user(6)]).expect("reply 5 gone");
        assert_eq!((w.rows[0].id, w.rows[0].index), (MsgId(5), 5));
    }

    /// The reply with the summary merged into it: before its text, or (wrapped) after.
    fn merged(summary_first: bool) -> Message {
        let mut r = reply(5);
        let own = r.content.segments.clone();
        let summary = batch_summary(7, &[1]).content.segments;
        let segments = if summary_first {
            [summary, own].concat()
        } else {
            [own, summary].concat()
        };
        r.set_content(compactsim_model::Content::from_segments(segments));
        r
    }

    #[test]
    fn quiet_when_the_summary_is_merged_into_the_newest_reply_around_its_text() {
        assert!(breach(&[user(0), merged(true), user(6)]).is_none());
        assert!(breach(&[user(0), merged(false), user(6)]).is_none());
        let mut cut = merged(true);
        let n = cut.content.segments.len();
        cut.set_content(compactsim_model::Content::from_segments(
            cut.content.segments[..n - 1].to_vec(),
        ));
        assert!(
            breach(&[user(0), cut, user(6)]).is_some(),
            "the reply's own text was dropped"
        );
    }

    #[test]
    fn fires_when_kept_user_text_is_reordered_or_altered() {
        let w = breach(&[batch_summary(7, &[1]), user(4), user(0), reply(5), user(6)]);
        assert_eq!(w.expect("reordered").rows[0].id, MsgId(0));
        let w = breach(&[batch_summary(7, &[1]), user_sized(4, 3), reply(5), user(6)]);
        assert_eq!(w.expect("altered").rows[0].index, 1);
    }

    /// User row 6 with summary text (kind `Summary`, written in m7) merged into it:
    /// behind its words (0.19.0's merge: the words become prior context) or before them.
    fn user_six_merged(summary_behind: bool) -> Message {
        let mut row = user(6);
        let own = row.content.segments.clone();
        let mut summary = batch_summary(7, &[1]).content.segments.to_vec();
        summary[0].kind = compactsim_model::ContentKind::Summary;
        let segments = if summary_behind {
            [own.to_vec(), summary].concat()
        } else {
            [summary, own.to_vec()].concat()
        };
        row.set_content(compactsim_model::Content::from_segments(segments));
        row.flags.summary_marker = true;
        row
    }

    #[test]
    fn fires_when_a_summary_is_merged_behind_the_newest_user_words() {
        let w = breach(&[user(0), reply(5), user_six_merged(true)]).expect("user 6 demoted");
        assert!(w.facts[0].contains("demoted"), "{:?}", w.facts);
        assert_eq!(
            w.rows.iter().map(|r| (r.id, r.index)).collect::<Vec<_>>(),
            vec![(MsgId(6), 6), (MsgId(6), 2)]
        );
    }

    #[test]
    fn quiet_when_the_summary_comes_first_or_the_words_were_demoted_already() {
        assert!(breach(&[user(0), reply(5), user_six_merged(false)]).is_none());
        // Already prior context before the pass: not this pass's doing.
        let mut recorded = IdSet::default();
        for id in [0, 4, 6] {
            recorded.add(MsgId(id));
        }
        let mut before = three_turns();
        before[6] = user_six_merged(true);
        let after = [batch_summary(8, &[1]), reply(5), user_six_merged(true)];
        let (mut b, mut a) = (Vec::new(), Vec::new());
        collect_tracked(&recorded, &before, &mut b);
        collect_tracked(&recorded, &after, &mut a);
        let ev = absorbed(1, &[]);
        assert!(batch_breach(&transition(&ev, &before, &after), &b, &a, true).is_none());
        // An older user row's words before a summary are a batch pass's to summarize.
        let mut older = user(4);
        let summary = user_six_merged(false).content.segments[..1].to_vec();
        older.set_content(compactsim_model::Content::from_segments(
            [user(4).content.segments.to_vec(), summary].concat(),
        ));
        assert!(breach(&[user(0), older, reply(5), user(6)]).is_none());
    }

    /// The newest-reply rule is the `newest_reply_verbatim` policy's; the newest user
    /// text stays verbatim for everyone.
    #[test]
    fn the_newest_reply_rule_runs_only_when_declared() {
        let no_reply = [batch_summary(7, &[1]), user(6)];
        assert!(breach_with(&no_reply, true).is_some());
        assert!(breach_with(&no_reply, false).is_none());
        let no_user = [user(0), batch_summary(7, &[1]), reply(5)];
        assert!(breach_with(&no_user, false).is_some());
    }
}
