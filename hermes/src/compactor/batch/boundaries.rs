//! Batch boundaries (hermes-domain §2.3 step 4) on top of the shared primitives in
//! `compactor::boundaries`: head decay after the first compaction, the last-user and
//! last-visible-reply anchors, the head-edge pair push (#22523) and the bridge that
//! keeps the newest user row from being the merge target.

use super::scaffold::split_row;
use super::state::BatchState;
use super::{released, BatchConfig};
use crate::bug_set::BugSet;
use crate::bugs::Bug;
use crate::compactor::boundaries as shared;
use compactsim_model::{Message, Role};

/// Rows past `protect_first_n` that the restart probe looks at for a summary. The
/// compactor's own copy: the oracle owns the specification's value
/// (`compactsim_invariants::RESTART_PROBE_EXTRA_ROWS`) and the compactor shares no code
/// with the oracle that judges it; a test proves the two agree.
pub const RESTART_PROBE_EXTRA_ROWS: usize = 4;

/// The compressible window `[start, end)`; `head_end <= start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// End of the protected head (after decay).
    pub head_end: usize,
    /// First summarized row (`compress_start`).
    pub start: usize,
    /// First verbatim tail row (`compress_end`).
    pub end: usize,
}

impl Window {
    pub fn is_empty(&self) -> bool {
        self.start >= self.end
    }
}

/// Index of the first non-system row.
pub fn first_non_system(messages: &[Message]) -> usize {
    usize::from(messages.first().is_some_and(|m| m.role == Role::System))
}

/// The non-system head decays to nothing once a compaction happened, a previous
/// summary exists, or a summary sits in the restart probe window (#11996).
pub fn head_decays(messages: &[Message], protect_first_n: u32, state: &BatchState) -> bool {
    let first = first_non_system(messages);
    let probe_end =
        (first + protect_first_n as usize + RESTART_PROBE_EXTRA_ROWS).min(messages.len());
    state.compression_count >= 1
        || state.previous_summary.is_some()
        || messages[first.min(probe_end)..probe_end]
            .iter()
            .any(Message::is_summary)
}

/// End of the protected head: the system row plus the effective `protect_first_n`
/// (0 after decay; never 0 under H-11996), pushed past tool rows.
pub fn head_end(messages: &[Message], config: &BatchConfig, state: &BatchState) -> usize {
    shared::head_end(messages, effective_protect_first_n(messages, config, state))
}

/// `_protect_head_size`: the system row plus the effective `protect_first_n`, not pushed
/// past tool rows. `compress()` measures "too few messages" against it (0.19.0
/// `agent/context_compressor.py:3370`), not against the aligned head.
pub fn head_size(messages: &[Message], config: &BatchConfig, state: &BatchState) -> usize {
    let protect = effective_protect_first_n(messages, config, state) as usize;
    (first_non_system(messages) + protect).min(messages.len())
}

/// `_effective_protect_first_n`: 0 after decay, never 0 under H-11996.
fn effective_protect_first_n(
    messages: &[Message],
    config: &BatchConfig,
    state: &BatchState,
) -> u32 {
    let decayed =
        head_decays(messages, config.protect_first_n, state) && !config.bugs.has(Bug::H11996);
    if decayed {
        0
    } else {
        config.protect_first_n
    }
}

/// The window for a head ending at `head_end`: the token-budget tail, then the anchors.
/// May be empty (the caller reports a no-op).
pub fn window(messages: &[Message], head_end: usize, config: &BatchConfig) -> Window {
    let mut w = Window {
        head_end,
        start: head_end,
        end: shared::tail_start(
            messages,
            head_end,
            config.tail_budget_tokens,
            config.protect_last_n,
            config.tail_floor_when_fits,
        ),
    };
    // H-10896 is asked only when the anchor moves the window (all it decides).
    let mut anchored = w;
    anchor_last_user(messages, &mut anchored, &config.bugs);
    if anchored != w && !config.bugs.has(Bug::H10896) {
        w = anchored;
    }
    anchor_last_reply(messages, &mut w);
    bridge(messages, &mut w, &config.bugs);
    w.end = shared::align_backward(messages, w.end, w.start);
    w
}

/// The newest user row holding words a person wrote: a real user row that is not blank,
/// or a user row an earlier pass merged its summary into (its own text follows the
/// summary, hermes-domain §2.3 role choice and merge). A merged row is still the
/// newest user message: anchoring only unmerged rows would summarize it away on the
/// next pass (found by marathon turns, whose compactions fall inside one turn).
pub fn last_real_user(messages: &[Message]) -> Option<usize> {
    messages.iter().rposition(holds_user_words)
}

pub fn holds_user_words(m: &Message) -> bool {
    if m.role != Role::User {
        return false;
    }
    if m.is_batch_summary() {
        return !split_row(m).1.is_empty();
    }
    m.is_real_user() && !m.content.is_empty()
}

/// The newest assistant row the user sees.
pub fn last_visible_reply(messages: &[Message]) -> Option<usize> {
    messages.iter().rposition(Message::is_visible_reply)
}

/// Keeps the newest real user row verbatim. If it is the first row of the window,
/// anchoring it would empty the window: the window starts after the user's pair
/// instead (#22523), so the user row stays verbatim before the summary.
pub fn anchor_last_user(messages: &[Message], w: &mut Window, bugs: &BugSet) {
    let Some(u) = released::last_user_anchor(messages, bugs) else {
        return;
    };
    if u < w.start || u >= w.end {
        return;
    }
    if u == w.start {
        w.start = pair_end(messages, u);
    } else {
        w.end = u;
    }
}

/// End of the user row at `u` and the assistant row answering it (with its results):
/// `_find_turn_pair_end`.
pub fn pair_end(messages: &[Message], u: usize) -> usize {
    let mut i = u + 1;
    if messages.get(i).is_some_and(|m| m.role == Role::Assistant) {
        i += 1;
        while messages.get(i).is_some_and(|m| m.role == Role::Tool) {
            i += 1;
        }
    }
    i
}

/// Keeps the newest visible assistant reply verbatim (#29824).
pub fn anchor_last_reply(messages: &[Message], w: &mut Window) {
    if let Some(v) = last_visible_reply(messages) {
        if v >= w.start && v < w.end {
            w.end = v;
        }
    }
}

/// If the tail would start on the newest real user row, start it one assistant/tool
/// group earlier (when the window stays non-empty), so the summary never merges into
/// that user row. Under B4 ([`released::bridges`]) it does not.
pub fn bridge(messages: &[Message], w: &mut Window, bugs: &BugSet) {
    if released::last_user_anchor(messages, bugs) != Some(w.end) || w.end <= w.start + 1 {
        return;
    }
    let candidate = shared::align_backward(messages, w.end - 1, w.start);
    if candidate > w.start && messages[candidate].role != Role::User && released::bridges(bugs) {
        w.end = candidate;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bug_set::BugSet;
    use crate::compactor::batch::testkit::{index_of, Builder};
    use compactsim_fakes::summarizer::RollingSummary;
    use compactsim_model::Content;

    fn config(budget: u32, bugs: &[Bug]) -> BatchConfig {
        BatchConfig {
            tail_budget_tokens: budget,
            bugs: BugSet::of(bugs),
            ..BatchConfig::default()
        }
    }

    fn compacted_state() -> BatchState {
        BatchState {
            compression_count: 1,
            ..BatchState::default()
        }
    }

    #[test]
    fn restart_probe_window_agrees_with_the_oracle() {
        assert_eq!(
            RESTART_PROBE_EXTRA_ROWS,
            compactsim_invariants::RESTART_PROBE_EXTRA_ROWS
        );
    }

    #[test]
    fn head_decays_after_first_compaction_or_with_a_summary() {
        let mut b = Builder::new();
        b.system();
        for _ in 0..4 {
            b.turn(200, 1, 200);
        }
        let m = b.rows;
        let cfg = config(1_000, &[]);
        assert_eq!(head_end(&m, &cfg, &BatchState::default()), 4);
        assert_eq!(head_end(&m, &cfg, &compacted_state()), 1);
        let with_prev = BatchState {
            previous_summary: Some(RollingSummary::default()),
            ..BatchState::default()
        };
        assert_eq!(head_end(&m, &cfg, &with_prev), 1);
        assert_eq!(head_end(&m[1..], &cfg, &compacted_state()), 0);
    }

    #[test]
    fn restart_probe_finds_a_summary_near_the_head() {
        let mut b = Builder::new();
        b.summary(Role::User, &[1]);
        for _ in 0..4 {
            b.turn(200, 1, 200);
        }
        assert!(head_decays(&b.rows, 3, &BatchState::default()));
        let mut far = Builder::new();
        for _ in 0..3 {
            far.turn(200, 1, 200);
        }
        far.summary(Role::User, &[1]);
        assert!(!head_decays(&far.rows, 3, &BatchState::default()));
    }

    #[test]
    fn h11996_head_never_decays() {
        let mut b = Builder::new();
        b.system();
        for _ in 0..4 {
            b.turn(200, 1, 200);
        }
        let cfg = config(1_000, &[Bug::H11996]);
        assert_eq!(head_end(&b.rows, &cfg, &compacted_state()), 4);
    }

    /// Many turns, then a last turn whose tool outputs alone exceed the tail budget.
    fn heavy_last_turn() -> (Vec<Message>, usize) {
        let mut b = Builder::new();
        for _ in 0..5 {
            b.turn(400, 1, 400);
        }
        let u = b.user(400);
        for _ in 0..6 {
            b.round(4_000);
        }
        let rows = b.rows;
        let i = index_of(&rows, u).unwrap();
        (rows, i)
    }

    #[test]
    fn last_user_is_anchored_into_the_tail() {
        let (m, u) = heavy_last_turn();
        let w = window(&m, 0, &config(2_000, &[]));
        assert!(w.end <= u && !w.is_empty(), "{w:?} user at {u}");
        let raw = shared::tail_start(&m, 0, 2_000, 20, false);
        assert!(
            raw > u,
            "the budget alone would summarize the user ({raw} > {u})"
        );
    }

    #[test]
    fn h10896_leaves_the_last_user_in_the_window() {
        let mut b = Builder::new();
        for _ in 0..5 {
            b.turn(400, 1, 400);
        }
        let u = b.user(400);
        for _ in 0..6 {
            b.talking_round(4_000);
        }
        let u = index_of(&b.rows, u).unwrap();
        let m = b.rows;
        let anchored = window(&m, 0, &config(2_000, &[]));
        assert!(anchored.end < u, "{anchored:?} user at {u}");
        let w = window(&m, 0, &config(2_000, &[Bug::H10896]));
        assert!(w.start <= u && u < w.end, "{w:?} user at {u}");
    }

    /// `b` then a user row holding a merged summary and six long talking rounds: the
    /// rows and the merged row's index.
    fn with_merged_user(mut b: Builder) -> (Vec<Message>, usize) {
        b.user(400);
        let own = b.rows.pop().expect("just pushed").content;
        let s = b.summary(Role::User, &[1]);
        let i = index_of(&b.rows, s).unwrap();
        b.rows[i].merge_content(&own);
        for _ in 0..6 {
            b.talking_round(4_000);
        }
        (b.rows, i)
    }

    #[test]
    fn a_user_row_holding_a_merged_summary_is_still_the_newest_user() {
        let mut b = Builder::new();
        for _ in 0..5 {
            b.turn(400, 1, 400);
        }
        let (m, i) = with_merged_user(b);
        assert_eq!(last_real_user(&m), Some(i), "merged row with its own words");
        let w = window(&m, 0, &config(2_000, &[]));
        assert!(w.end <= i && !w.is_empty(), "{w:?} merged user at {i}");
        let mut bare = m.clone();
        let body = Content::single(bare[i].content.segments[0].clone());
        bare[i].set_content(body);
        assert_ne!(last_real_user(&bare), Some(i), "a summary alone is no user");
    }

    #[test]
    fn under_b4_the_anchor_skips_a_merged_user_row_for_an_older_one() {
        let mut b = Builder::new();
        for _ in 0..5 {
            b.turn(400, 1, 400);
        }
        let older = b.user(400);
        let reply = b.reply(400);
        let (m, i) = with_merged_user(b);
        let b4 = BugSet::of(&[Bug::H019B4]);
        assert_eq!(released::last_user_anchor(&m, &BugSet::none()), Some(i));
        assert_eq!(released::last_user_anchor(&m, &b4), index_of(&m, older));
        // The anchor pulls the window's end back to the older user row instead.
        let on = window(&m, 0, &config(2_000, &[Bug::H019B4]));
        assert_eq!(Some(on.end), index_of(&m, older));
        // Off: the merged row is the newest user row, and the bridge keeps the reply.
        let off = window(&m, 0, &config(2_000, &[]));
        assert_eq!(Some(off.end), index_of(&m, reply));
    }

    #[test]
    fn user_at_the_window_start_pushes_the_start_past_its_pair() {
        let mut b = Builder::new();
        let u = b.user(400);
        b.reply(400);
        for _ in 0..8 {
            b.round(4_000);
        }
        let w = window(&b.rows, 0, &config(2_000, &[]));
        assert_eq!(index_of(&b.rows, u), Some(0));
        assert_eq!(w.start, 2, "user and its reply stay before the summary");
        assert!(!w.is_empty() && b.rows[w.end].role != Role::Tool);
    }

    #[test]
    fn last_visible_reply_is_anchored_without_the_user_anchor() {
        let (m, u) = heavy_last_turn();
        let w = window(&m, 0, &config(2_000, &[Bug::H10896]));
        assert!(m[u - 1].is_visible_reply());
        assert_eq!(w.end, u - 1, "{w:?}");
        let anchored = window(&m, 0, &config(2_000, &[]));
        assert_eq!(anchored.end, u - 1, "user anchor, then the reply before it");
    }

    #[test]
    fn bridge_keeps_the_newest_user_from_starting_the_tail() {
        let mut b = Builder::new();
        b.user(400);
        b.round(400);
        let u = b.user(400);
        for _ in 0..6 {
            b.round(4_000);
        }
        let m = b.rows;
        let w = window(&m, 0, &config(2_000, &[]));
        assert_eq!(index_of(&m, u), Some(3));
        assert_eq!(
            (w.start, w.end),
            (0, 1),
            "tail starts at the calling assistant"
        );
    }
}
