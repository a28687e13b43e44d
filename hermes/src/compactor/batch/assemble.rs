//! Phase 4 of `compress()` (hermes-domain §2.3 step 7): head + summary + tail. The
//! summary's role follows the neighbour rule with the forced-user rules; a collision
//! with the first tail row flips the role when allowed, otherwise the summary is merged
//! into that row (which keeps its id and its own segments).

use super::boundaries::{first_non_system, Window};
use super::scaffold::{split_row, Fixed};
use super::{release, released, BatchConfig};
use crate::bug_set::BugSet;
use crate::bugs::Bug;
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::rng::mix64;
use compactsim_fakes::summarizer::RollingSummary;
use compactsim_model::{
    tokens::chars_for_rough_tokens, Content, ContentKind, Flags, Message, MsgId, Role, Segment,
};

/// What decides the summary's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoleInputs {
    /// Role of the last head row after stale summaries left it (`None`: empty head).
    pub head_last: Option<Role>,
    /// Some head or tail row has role user.
    pub user_survives: bool,
    pub tail_first: Option<Role>,
}

/// Where the summary goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// A row of its own with this role.
    Standalone(Role),
    /// Forced user colliding with a user tail row: summary + end marker prepended.
    MergePrepend,
    /// Otherwise colliding: `[PRIOR CONTEXT …]` + old text + `[END OF PRIOR CONTEXT …]`
    /// then summary + end marker.
    MergeWrapped,
}

/// The role rule of §2.3 step 7. H-52160 drops the first-visible forcing (empty or
/// system-only head); H-58753 drops the user-survival forcing, writing the summary as
/// an assistant note when no user row survives.
pub fn place(inputs: RoleInputs, bugs: &BugSet) -> Placement {
    let first_visible = matches!(inputs.head_last, None | Some(Role::System));
    if !inputs.user_survives && bugs.has(Bug::H58753) {
        return Placement::Standalone(Role::Assistant);
    }
    // H-52160 is asked only where it decides: no user-survival forcing to fall back on.
    let forced = !inputs.user_survives || (first_visible && !bugs.has(Bug::H52160));
    let role = if forced || matches!(inputs.head_last, Some(Role::Assistant | Role::Tool)) {
        Role::User
    } else {
        Role::Assistant
    };
    if inputs.tail_first != Some(role) {
        return Placement::Standalone(role);
    }
    let flipped = if role == Role::User {
        Role::Assistant
    } else {
        Role::User
    };
    if !forced && inputs.head_last != Some(flipped) {
        Placement::Standalone(flipped)
    } else if forced {
        Placement::MergePrepend
    } else {
        Placement::MergeWrapped
    }
}

/// Whether a summary written before a tail starting on a real user row would be merged
/// into that row (the head as phase 4 keeps it; a user row survives). Under 0.19.0 this
/// is when the model's bridge is needed: otherwise the summary is a row of its own.
pub fn merges_into_user_row(work: &[Message], window: &Window, config: &BatchConfig) -> bool {
    let head = clean_head(&work[..window.start], config.system_note_chars);
    let inputs = RoleInputs {
        head_last: released::head_last_role(&head, &config.bugs),
        user_survives: true,
        tail_first: Some(Role::User),
    };
    !matches!(place(inputs, &config.bugs), Placement::Standalone(_))
}

/// The assembled list and what it did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembled {
    pub messages: Vec<Message>,
    /// The row holding the summary (new or merged), if a summary was written.
    pub summary_row: Option<MsgId>,
    pub placement: Option<Placement>,
}

/// Builds head + summary + tail from the pruned list `work`. With `summary == None`
/// (H-29559) the window is dropped with no summary row.
pub fn assemble(
    work: &[Message],
    window: &Window,
    summary: Option<&RollingSummary>,
    config: &BatchConfig,
    ids: &mut IdAlloc,
) -> Assembled {
    assemble_with(work, window, summary, config, ids, None)
}

/// [`assemble`] with 0.19.0's task snapshot of `snapshot_chars` characters between the
/// prefix and the summary body (`config.hermes_0_19_0`, [`release::snapshot_chars`]).
pub fn assemble_with(
    work: &[Message],
    window: &Window,
    summary: Option<&RollingSummary>,
    config: &BatchConfig,
    ids: &mut IdAlloc,
    snapshot_chars: Option<u32>,
) -> Assembled {
    let wrappers = Wrappers::of(config, snapshot_chars);
    let mut head = clean_head(&work[..window.start], config.system_note_chars);
    let mut tail = work[window.end..].to_vec();
    let Some(summary) = summary else {
        head.extend(tail);
        return Assembled {
            messages: head,
            summary_row: None,
            placement: None,
        };
    };
    if released::supersedes_tail_summaries(&tail, &config.bugs) {
        tail = without_stale_summaries(&tail);
    }
    let inputs = RoleInputs {
        head_last: released::head_last_role(&head, &config.bugs),
        user_survives: head.iter().chain(&tail).any(|m| m.role == Role::User),
        tail_first: tail.first().map(|m| m.role),
    };
    let mut placement = place(inputs, &config.bugs);
    if config.hermes_0_19_0 && placement == Placement::MergePrepend {
        // 0.19.0 has one merge: the tail row's text wrapped before the summary.
        placement = Placement::MergeWrapped;
    }
    let summary_row = match placement {
        Placement::Standalone(role) => {
            let id = ids.msg();
            ids.assert_new_row(id, &work[window.start..window.end]);
            let body = summary_segments(summary, id, &wrappers);
            let row = Message::new(id, role, Content::from_segments(body)).with_flags(Flags {
                summary_marker: true,
                ..Flags::default()
            });
            head.push(row);
            id
        }
        Placement::MergePrepend | Placement::MergeWrapped => {
            merge_into(&mut tail[0], summary, placement, &wrappers);
            tail[0].id
        }
    };
    head.extend(tail);
    Assembled {
        messages: head,
        summary_row: Some(summary_row),
        placement: Some(placement),
    }
}

/// The tail without stale batch summaries (the new summary supersedes them, their bodies
/// having been rehydrated): a standalone summary is dropped — two user rows it separated
/// are merged, first row kept, as the pre-send repair would — and a merged row keeps its
/// own text (and its calls).
fn without_stale_summaries(tail: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(tail.len());
    let mut dropped = false;
    for m in tail {
        match unwrap_stale(m) {
            None => dropped = true,
            Some(row) => {
                let joins = dropped
                    && row.role == Role::User
                    && out.last().is_some_and(|l| l.role == Role::User);
                if joins {
                    let last = out.last_mut().expect("checked");
                    last.merge_content(&row.content);
                } else {
                    out.push(row);
                }
                dropped = false;
            }
        }
    }
    out
}

/// A tail row without its stale batch summary: `None` for a standalone summary, the own
/// text (and calls) of a merged row, other rows as they are.
fn unwrap_stale(m: &Message) -> Option<Message> {
    if !m.is_batch_summary() {
        return Some(m.clone());
    }
    let own: Vec<Segment> = split_row(m).1.into_iter().cloned().collect();
    if own.is_empty() && m.tool_calls.is_empty() {
        return None;
    }
    let mut row = m.clone();
    row.set_content(Content::from_segments(own));
    row.flags = Flags {
        persisted: m.flags.persisted,
        ..Flags::default()
    };
    Some(row)
}

/// Head copies: stale summaries dropped (standalone) or unwrapped (merged); the system
/// row gets the compaction note once.
fn clean_head(head: &[Message], note_chars: u32) -> Vec<Message> {
    let mut out = Vec::with_capacity(head.len() + 1);
    for (i, m) in head.iter().enumerate() {
        if i < first_non_system(head) || !m.is_summary() {
            out.push(m.clone());
            continue;
        }
        let own: Vec<Segment> = split_row(m).1.into_iter().cloned().collect();
        if !own.is_empty() {
            let mut row = m.clone();
            row.set_content(Content::from_segments(own));
            row.flags = Flags {
                persisted: m.flags.persisted,
                ..Flags::default()
            };
            out.push(row);
        }
    }
    if let Some(system) = out.first_mut().filter(|m| m.role == Role::System) {
        if !system
            .content
            .segments
            .iter()
            .any(|s| Fixed::SystemNote.is(s))
        {
            let note = Segment {
                chars: note_chars,
                ..Fixed::SystemNote.segment(system.id, 0)
            };
            system.merge_content(&Content::single(note));
        }
    }
    out
}

/// The wrapper texts of a summary, as this configuration writes them.
struct Wrappers {
    prefix_chars: u32,
    exact_0_19_0: bool,
    /// 0.19.0's task snapshot after the prefix, if one is written.
    snapshot_chars: Option<u32>,
}

/// Seed of the task snapshot segment (a wrapper text like [`Fixed`]'s).
const SNAPSHOT_SEED: u64 = 0x5CAF_F01D_0000_0100;

impl Wrappers {
    fn of(config: &BatchConfig, snapshot_chars: Option<u32>) -> Self {
        Wrappers {
            prefix_chars: config.summary_prefix_chars,
            exact_0_19_0: config.hermes_0_19_0,
            snapshot_chars,
        }
    }

    fn segment(&self, f: Fixed, origin: MsgId) -> Segment {
        let mut s = f.segment(origin, self.prefix_chars);
        if self.exact_0_19_0 {
            s.chars = release::wrapper_chars(f);
        }
        s
    }
}

/// Prefix, (0.19.0's task snapshot), body, end marker. The body's seed is the row's, so
/// bodies never collide.
fn summary_segments(summary: &RollingSummary, origin: MsgId, w: &Wrappers) -> Vec<Segment> {
    let body = Segment {
        kind: ContentKind::Summary,
        chars: chars_for_rough_tokens(summary.tokens),
        seed: mix64(origin.0 as u64 ^ (summary.facts.len() as u64) << 32),
        origin,
        facts: summary.facts.clone(),
    };
    let mut out = vec![w.segment(Fixed::SummaryPrefix, origin)];
    if let Some(chars) = w.snapshot_chars {
        out.push(Segment {
            kind: ContentKind::Scaffold,
            chars,
            seed: SNAPSHOT_SEED,
            origin,
            facts: vec![],
        });
    }
    out.push(body);
    out.push(w.segment(Fixed::EndMarker, origin));
    out
}

/// Merges the summary into `row`, keeping its id, role, calls and own segments.
fn merge_into(row: &mut Message, summary: &RollingSummary, how: Placement, w: &Wrappers) {
    let mut segments = vec![];
    let own = row.content.segments.iter().cloned();
    if how == Placement::MergeWrapped {
        segments.push(w.segment(Fixed::PriorOpen, row.id));
        if w.exact_0_19_0 && row.content.segments.is_empty() {
            // 0.19.0 wraps the empty text too: header, line break, "", blank line.
            segments.push(Segment {
                chars: 0,
                ..Fixed::PriorOpen.segment(row.id, 0)
            });
        }
        segments.extend(own);
        segments.push(w.segment(Fixed::PriorClose, row.id));
        segments.extend(summary_segments(summary, row.id, w));
    } else {
        segments.extend(summary_segments(summary, row.id, w));
        segments.extend(own);
    }
    let has_user_turn = row.is_real_user() || row.flags.has_user_turn;
    row.set_content(Content::from_segments(segments));
    row.flags = Flags {
        summary_marker: true,
        micro_marker: false,
        has_user_turn,
        persisted: row.flags.persisted,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compactor::batch::testkit::Builder;
    use Role::{Assistant, System, Tool, User};

    fn inputs(
        head_last: Option<Role>,
        user_survives: bool,
        tail_first: Option<Role>,
    ) -> RoleInputs {
        RoleInputs {
            head_last,
            user_survives,
            tail_first,
        }
    }

    fn none() -> BugSet {
        BugSet::none()
    }

    #[test]
    fn neighbour_rule_and_flip() {
        let p = |h, t| place(inputs(Some(h), true, Some(t)), &none());
        assert_eq!(p(Assistant, Assistant), Placement::Standalone(User));
        assert_eq!(p(Tool, Assistant), Placement::Standalone(User));
        assert_eq!(p(User, User), Placement::Standalone(Assistant));
        // user after a tool head collides with a user tail: flip to assistant
        assert_eq!(p(Tool, User), Placement::Standalone(Assistant));
        // flip would collide with the head: merge wrapped
        assert_eq!(p(Assistant, User), Placement::MergeWrapped);
        assert_eq!(p(User, Assistant), Placement::MergeWrapped);
    }

    #[test]
    fn first_visible_row_is_forced_user() {
        for head in [None, Some(System)] {
            assert_eq!(
                place(inputs(head, true, Some(Assistant)), &none()),
                Placement::Standalone(User)
            );
            assert_eq!(
                place(inputs(head, true, Some(User)), &none()),
                Placement::MergePrepend
            );
        }
    }

    #[test]
    fn h52160_lets_an_assistant_summary_lead() {
        let bugs = BugSet::of(&[Bug::H52160]);
        for head in [None, Some(System)] {
            assert_eq!(
                place(inputs(head, true, Some(User)), &bugs),
                Placement::Standalone(Assistant)
            );
        }
    }

    #[test]
    fn b1_reads_an_empty_head_as_user_and_keeps_the_system_head_guard() {
        let b1 = BugSet::of(&[Bug::H019B1]);
        let p = |head: &[Message], survives, tail| {
            let head_last = released::head_last_role(head, &b1);
            place(inputs(head_last, survives, Some(tail)), &b1)
        };
        // Empty head: the release's "user" default, so the summary leads as assistant,
        // or is merged into an assistant first tail row.
        assert_eq!(p(&[], true, User), Placement::Standalone(Assistant));
        assert_eq!(p(&[], true, Assistant), Placement::MergeWrapped);
        // #58753 still forces user when no user row survives.
        assert_eq!(p(&[], false, Assistant), Placement::Standalone(User));
        // A system-only head keeps the #52160 guard (H-52160 drops it, B1 does not).
        let mut b = Builder::new();
        b.system();
        assert_eq!(p(&b.rows, true, User), Placement::MergePrepend);
        assert_eq!(p(&b.rows, true, Assistant), Placement::Standalone(User));
    }

    #[test]
    fn no_surviving_user_forces_user_unless_h58753() {
        let off = place(inputs(Some(System), false, Some(Assistant)), &none());
        assert_eq!(off, Placement::Standalone(User));
        let on = place(
            inputs(Some(System), false, Some(Assistant)),
            &BugSet::of(&[Bug::H58753]),
        );
        assert_eq!(on, Placement::Standalone(Assistant));
        // with a surviving user the switch changes nothing
        let bugs = BugSet::of(&[Bug::H58753]);
        assert_eq!(
            place(inputs(Some(System), true, Some(User)), &bugs),
            Placement::MergePrepend
        );
    }

    #[test]
    fn only_a_merge_into_the_user_row_asks_for_the_bridge() {
        let window = |start| Window {
            head_end: start,
            start,
            end: start,
        };
        let mut b = Builder::new();
        b.system();
        b.user(100);
        b.reply(100);
        b.round(100);
        let cfg = |bugs: &[Bug]| BatchConfig {
            bugs: BugSet::of(bugs),
            ..BatchConfig::default()
        };
        let merges =
            |start, bugs: &[Bug]| merges_into_user_row(&b.rows, &window(start), &cfg(bugs));
        // An assistant head: user collides with the user tail and the flip with the head.
        assert!(merges(3, &[]));
        // A tool head: the summary flips to a row of its own (assistant).
        assert!(!merges(5, &[]));
        // A system-only head forces user: merged (0.19.0 and the default alike).
        assert!(merges(1, &[]));
        assert!(merges(1, &[Bug::H019B1]));
        // An empty head under B1 reads as user: the summary is a standalone assistant row.
        let empty = &b.rows[1..];
        let merges_empty = |bugs: &[Bug]| merges_into_user_row(empty, &window(0), &cfg(bugs));
        assert!(merges_empty(&[]));
        assert!(!merges_empty(&[Bug::H019B1]));
    }

    fn config() -> BatchConfig {
        BatchConfig::default()
    }

    fn summary() -> RollingSummary {
        RollingSummary {
            facts: vec![compactsim_model::FactId(77)],
            tokens: 500,
        }
    }

    #[test]
    fn merge_keeps_the_tail_row_id_segments_and_calls() {
        let mut b = Builder::new();
        b.system();
        b.turn(400, 1, 400);
        let u = b.user(400);
        b.reply(400);
        let before = b.rows[5].clone();
        let w = Window {
            head_end: 1,
            start: 1,
            end: 5,
        };
        let out = assemble(&b.rows, &w, Some(&summary()), &config(), &mut b.ids);
        assert_eq!(out.placement, Some(Placement::MergePrepend));
        assert_eq!(out.summary_row, Some(u));
        let merged = &out.messages[1];
        assert_eq!((merged.id, merged.role), (u, User));
        assert!(merged.flags.summary_marker && merged.flags.has_user_turn);
        let segs = &merged.content.segments;
        assert_eq!(segs.last(), before.content.segments.last(), "own text last");
        assert!(Fixed::SummaryPrefix.is(&segs[0]) && segs[1].facts == summary().facts);
        assert_eq!(out.messages.len(), 3);
    }

    #[test]
    fn wrapped_merge_and_system_note_once() {
        let mut b = Builder::new();
        b.system();
        b.user(400);
        b.reply(400);
        b.turn(400, 1, 400);
        let r = b.reply(400);
        let note = Content::single(Fixed::SystemNote.segment(b.rows[0].id, 0));
        b.rows[0].merge_content(&note);
        // head [system, user], tail [reply, ...]: assistant summary collides, flip to
        // user collides with the head → wrapped merge into the reply
        let w = Window {
            head_end: 2,
            start: 2,
            end: 7,
        };
        let out = assemble(&b.rows, &w, Some(&summary()), &config(), &mut b.ids);
        assert_eq!(out.placement, Some(Placement::MergeWrapped));
        let merged = &out.messages[2];
        assert_eq!(merged.id, r);
        assert!(Fixed::PriorOpen.is(&merged.content.segments[0]));
        assert!(!merged.flags.has_user_turn);
        let notes = out.messages[0]
            .content
            .segments
            .iter()
            .filter(|s| Fixed::SystemNote.is(s))
            .count();
        assert_eq!(notes, 1);
    }

    #[test]
    fn stale_head_summaries_are_dropped_and_no_summary_drops_the_window() {
        let mut b = Builder::new();
        b.summary(User, &[5]);
        b.turn(400, 1, 400);
        b.turn(400, 1, 400);
        let w = Window {
            head_end: 1,
            start: 1,
            end: 5,
        };
        let out = assemble(&b.rows, &w, None, &config(), &mut b.ids);
        assert_eq!(out.messages.len(), 4, "summary dropped, window dropped");
        assert!(out.messages.iter().all(|m| !m.is_summary()));
        assert_eq!(out.summary_row, None);
    }
}
