//! The batch-compaction rule of `user-turns-intact` (DESIGN.md catalogue): a batch pass
//! summarizes user turns on purpose, so instead of equality it requires that
//! - the tracked user text left in `after` is a subsequence of `before`'s, each segment
//!   byte-identical (nothing altered, reordered or duplicated);
//! - the newest tracked user text stays verbatim in a user row (#10896), and still last;
//! - (the `newest_reply_verbatim` policy's rule, only when declared) the newest visible
//!   assistant reply of `before` stays, same id, its segments a
//!   contiguous run of its content (#29824): the summary may be merged into it, before
//!   its text or around it (role choice and merge, hermes-domain §2.3), never into it.
//!
//! Applied to compaction events that are not micro passes (none exist yet).

use crate::user_segments::{segment, SegRef};
use compactsim_model::{Message, Transition, Witness};

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
