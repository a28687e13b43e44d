use crate::class::{classify, pure_append, unchanged, EventClass};
use crate::fact_lists::FactLists;
use crate::idset::IdMarks;
use crate::text::{text_facts_of, text_key, texts_of, TextKey};
use crate::{Invariant, InvariantInfo, Policies, MAX_WITNESS_ROWS};
use compactsim_model::{
    CallId, Content, Event, FactId, Message, MsgId, Role, ServedCall, Transition, Witness,
};
use std::collections::BTreeSet;

/// Every row that leaves the transcript either went through a summarizer call the
/// harness served, or left by an explicit, declared policy.
///
/// Judged on the transitions the system under test makes: micro passes, batch passes
/// (and any unknown compaction kind) and the pre-send repair. A non-summary row of
/// `before` whose id is not in `after` has *left* (superseded summary rows are
/// marker-contained's business). A row that left is accounted for when:
///
/// - **carried**: its text is still in `after`, every segment of it, byte for byte
///   (text identity, see `text.rs`), and every tool call it made is still made by some
///   row of `after` — a merge (the repair, the batch role-merge) moves text, it loses
///   none. A row with neither text nor calls carries nothing and is always accounted for;
/// - **summarized** (compaction passes): a batch pass summarizes one window (hermes-domain
///   §2.3: head + summary + tail), so the rows that left a batch pass uncarried form one
///   run of `before` (summary and carried rows aside); a row past a row that stayed is
///   outside it. Then: a summary call the harness served during the
///   transition answered (a condense call re-summarizes the summary alone and does not
///   count; an answer cut at `max_tokens`, finish reason `length`, is a failed call
///   whatever text it carried, so a pass that adopts one has no answered call: Hermes
///   N1), every fact spelled in the row's text (`text::text_facts`: a tiny row may
///   list a fact its text has no room to spell) was in the input or the answer of an
///   answered call or is already held by a summary row of `before` (micro and batch
///   passes alike), and every fact of the row the answers kept is spelled in the text of
///   a row of `after` that this transition wrote (new or changed) or of a summary row:
///   the summary that is now in the transcript. Facts the summarizer itself dropped are the summarizer's
///   retention policy (the harness's own fake), not the compactor's;
/// - **declared policy**, judged from observations and the specification, never from
///   the compactor's labels:
///   - batch fallback (hermes-domain §2.3 step 6), the `static_fallback` policy: a batch
///     pass during which no served call answered (every call failed, or none was made: a
///     cooldown) writes the deterministic fallback summary, and its window may go
///     without its facts (summary-failure-safe checks that a summary was written). A
///     compactor that does not declare the policy drops no row it does not carry during
///     such a pass: with no answered call, no summary saw the row;
///   - summarizer input caps (§2.3, the summarizer input; micro-compaction serializes
///     its exchange with the same serializer, iot's `_serialize_for_summary`): a row over
///     [`MESSAGE_INPUT_CAP_CHARS`] reaches the summarizer cut to its head and tail, and
///     a window whose rows that left hold at least half of [`SUMMARY_INPUT_CAP_CHARS`]
///     (counting each row at most at the per-message cap: a lower bound of what was
///     serialized, so the policy is never denied where it applied) may have had its
///     middle rows cut from the input; such rows need not have been seen by the call;
///     the facts the answer kept must still be in the transcript;
///   - batch prune (§2.3 step 3), the `tool_output_prune` policy: a batch pass rewrites
///     old tool outputs to one-line descriptions before it summarizes, so a tool row's
///     facts need not reach the summarizer — when an answered call named the row (the
///     harness saw its pruned output in the prompt: its call id, or a quote of its text,
///     [`ServedCall::tool_results_named`]; a seam that does not read prompts, the Rust
///     reference's, records no names and the policy alone excuses the row). A tool row
///     no answered call named was never in the window the call summarized (a tool
///     result cut from its call and dropped from the kept tail); without the policy a
///     tool row is judged like any other;
///   - repair (§1.3 pass 1): the pre-send repair drops stray tool rows, a tool row that
///     answers no call of the nearest preceding assistant row in `before`.
///
/// Transitions that provably changed nothing or only appended are skipped. The harness's
/// own transitions (appends, provider calls, a failed turn's rollback, a session reset,
/// a restart's reload) are declared policies of the agent loop and are not judged here.
#[derive(Clone, Debug, Default)]
pub struct NoSilentDrop {
    kept: IdMarks,
    /// The declared policies (`static_fallback`, `tool_output_prune`).
    policies: Policies,
}

impl NoSilentDrop {
    /// The invariant for a compactor declaring `policies`.
    pub fn new(policies: Policies) -> Self {
        NoSilentDrop {
            kept: IdMarks::default(),
            policies,
        }
    }
}

pub const INFO: InvariantInfo = InvariantInfo {
    id: "no-silent-drop",
    statement: "every row that leaves the transcript either passed through a served summary \
                call (its facts are in the new summary) or left by an explicit, declared \
                policy (fallback, prune, repair)",
    catches: &["H-M-defrag", "IOT-0.22.2-M4", "HERMES-0.19.0-B3"],
    class: crate::InvariantClass::Universal,
};

/// The summarizer input holds at most this many characters of one message (head and
/// tail kept; hermes-domain §2.3, 4,000 + 1,500 of 6,000).
pub const MESSAGE_INPUT_CAP_CHARS: u32 = 6_000;
/// The whole summarizer input holds at most this many characters (45 % head, rest tail;
/// hermes-domain §2.3).
pub const SUMMARY_INPUT_CAP_CHARS: u64 = 160_000;

/// Which transitions this invariant judges, and how.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Judged {
    Micro,
    Batch,
    Repair,
}

fn judged(event: &Event) -> Option<Judged> {
    match classify(event) {
        EventClass::Micro => Some(Judged::Micro),
        EventClass::OtherCompaction => Some(Judged::Batch),
        EventClass::Repair => Some(Judged::Repair),
        _ => None,
    }
}

/// What the summary calls of one transition answered (condense calls left out). The
/// calls' fact lists are asked one fact at a time where they lie (`fact_lists.rs`): a
/// rolling summary's lists hold every fact summarized so far.
struct Answers<'a> {
    any: bool,
    /// Tool results an answered call named (`None`: a call's seam reads no prompt).
    named: Option<BTreeSet<CallId>>,
    /// Facts that went in an answered call (compaction passes only).
    seen_in: FactLists<'a>,
    /// Facts the answers kept (they also came out of an answered call).
    kept: FactLists<'a>,
    /// Facts the summary rows of `before` spell: read on the first fact no call saw
    /// (see [`Answers::saw`]), as most transitions never ask.
    summarized_before: Option<FactLists<'a>>,
}

fn answers(how: Judged, served: &[ServedCall]) -> Answers<'_> {
    let mut answered = Answers {
        any: false,
        named: Some(BTreeSet::new()),
        seen_in: FactLists::default(),
        kept: FactLists::default(),
        summarized_before: None,
    };
    for c in served.iter().filter(|c| c.ok && !c.condense) {
        answered.any = true;
        answered.named = match (answered.named.take(), &c.tool_results_named) {
            (Some(mut all), Some(named)) => {
                all.extend(named.iter().copied());
                Some(all)
            }
            _ => None,
        };
        answered.kept.add_list(&c.facts_out);
        // Compaction passes are held to what their calls saw (see `Judge::verdict`).
        if how != Judged::Repair {
            answered.seen_in.add_list(&c.facts_in);
        }
    }
    answered
}

impl<'a> Answers<'a> {
    /// Whether an answered call saw `fact` (compaction passes): it went in or came out
    /// of one, or a live summary of `before` already holds it (the harness counts it as
    /// the previous summary's, not as new input; marker-contained judges what becomes of
    /// that summary).
    fn saw(&mut self, how: Judged, before: &'a [Message], fact: FactId) -> bool {
        if how == Judged::Repair {
            return false;
        }
        if self.seen_in.contains(fact) || self.kept.contains(fact) {
            return true;
        }
        if !self.any {
            return false;
        }
        let held = self
            .summarized_before
            .get_or_insert_with(|| texts_of_rows(before.iter().filter(|m| m.is_summary())));
        held.contains(fact)
    }
}

/// The facts of `after` a transition wrote, asked one fact at a time: those of the rows
/// of the changed window that are new or changed (by id against `before`) and of every
/// summary row of `after`. The window is read first; the summary rows outside it only
/// when a fact is not found there.
struct Written<'a> {
    window: FactLists<'a>,
    summaries_kept: Option<FactLists<'a>>,
}

/// The facts the rows' text spells (judged as text, `text.rs`).
fn texts_of_rows<'a>(rows: impl Iterator<Item = &'a Message>) -> FactLists<'a> {
    let mut facts = FactLists::default();
    rows.for_each(|m| facts.add_text(&m.content));
    facts
}

/// The content `before` holds under `id` (the last row with it), window first.
fn old_content<'m>(t: &Transition<'m>, id: MsgId) -> Option<&'m Content> {
    let removed = t.delta.removed_range();
    t.before[removed.clone()]
        .iter()
        .rev()
        .chain(t.before[removed.end..].iter().rev())
        .chain(t.before[..removed.start].iter().rev())
        .find(|m| m.id == id)
        .map(|m| &m.content)
}

impl<'a> Written<'a> {
    fn new(t: &Transition<'a>) -> Self {
        let window = texts_of_rows(
            t.delta
                .added(t.after)
                .iter()
                .filter(|m| m.is_summary() || old_content(t, m.id) != Some(&m.content)),
        );
        Written {
            window,
            summaries_kept: None,
        }
    }

    fn holds(&mut self, t: &Transition<'a>, fact: FactId) -> bool {
        if self.window.contains(fact) {
            return true;
        }
        let added = t.delta.added_range();
        let rest = self.summaries_kept.get_or_insert_with(|| {
            texts_of_rows(
                t.after[..added.start]
                    .iter()
                    .chain(&t.after[added.end..])
                    .filter(|m| m.is_summary()),
            )
        });
        rest.contains(fact)
    }
}

/// Whether each row of `before` at `left` is carried into `after`: every segment of its
/// text (by identity) and every tool call it made is still in `after`. Two equal ways
/// (`both_carriage_walks_agree`): when the rows that left hold more texts and calls
/// than the whole of `after` (a batch pass: most of the list left, a short one
/// remains), `after` is indexed once and each row that left is looked up in it;
/// otherwise (a micro pass: one exchange left a long list) the rows' keys are
/// collected and `after` is scanned for them.
fn carried_rows(t: &Transition<'_>, left: &[usize]) -> Vec<bool> {
    let keys_of = |m: &Message| m.content.segments.len() + m.tool_calls.len();
    let left_keys: usize = left.iter().map(|&i| keys_of(&t.before[i])).sum();
    let after_keys: usize = t.after.iter().map(keys_of).sum();
    if after_keys <= left_keys {
        carried_rows_by_index(t, left)
    } else {
        carried_rows_by_missing(t, left)
    }
}

/// [`carried_rows`] by one sorted index of every text and call of `after`.
fn carried_rows_by_index(t: &Transition<'_>, left: &[usize]) -> Vec<bool> {
    let mut texts: Vec<TextKey<'_>> = t
        .after
        .iter()
        .flat_map(|m| m.content.segments.iter().map(text_key))
        .collect();
    texts.sort_unstable();
    let mut calls: Vec<CallId> = t
        .after
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|c| c.id))
        .collect();
    calls.sort_unstable();
    rows_carried(
        t,
        left,
        |k| texts.binary_search(k).is_ok(),
        |c| calls.binary_search(c).is_ok(),
    )
}

/// For each row of `before` at `left`: every text of it is `text_in` and every call of
/// it `call_in`.
fn rows_carried<'m>(
    t: &Transition<'m>,
    left: &[usize],
    text_in: impl Fn(&TextKey<'m>) -> bool,
    call_in: impl Fn(&CallId) -> bool,
) -> Vec<bool> {
    left.iter()
        .map(|&i| {
            let m = &t.before[i];
            m.content.segments.iter().all(|s| text_in(&text_key(s)))
                && m.tool_calls.iter().all(|c| call_in(&c.id))
        })
        .collect()
}

/// [`carried_rows`] by the keys of the rows that left: the changed window of `after`
/// is read first; the rows the transition kept are scanned once for what is still
/// missing.
fn carried_rows_by_missing(t: &Transition<'_>, left: &[usize]) -> Vec<bool> {
    let window = t.delta.added(t.after);
    let texts = texts_of(window);
    let calls: BTreeSet<CallId> = window
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|c| c.id))
        .collect();
    let mut texts_missing: Missing<TextKey<'_>> = Missing::default();
    let mut calls_missing: Missing<CallId> = Missing::default();
    for &i in left {
        let m = &t.before[i];
        let keys = m.content.segments.iter().map(text_key);
        texts_missing
            .keys
            .extend(keys.filter(|k| !texts.contains(k)));
        let ids = m.tool_calls.iter().map(|c| c.id);
        calls_missing
            .keys
            .extend(ids.filter(|c| !calls.contains(c)));
    }
    texts_missing.seal(|k| seed_bit(k.1));
    calls_missing.seal(|c| seed_bit(c.0 as u64));
    let added = t.delta.added_range();
    for m in t.after[..added.start].iter().chain(&t.after[added.end..]) {
        if texts_missing.unfound == 0 && calls_missing.unfound == 0 {
            break;
        }
        for s in m.content.segments.iter() {
            if texts_missing.may_hold(seed_bit(s.seed)) {
                texts_missing.find(&text_key(s));
            }
        }
        for c in m.tool_calls.iter() {
            if calls_missing.may_hold(seed_bit(c.id.0 as u64)) {
                calls_missing.find(&c.id);
            }
        }
    }
    rows_carried(
        t,
        left,
        |k| !texts_missing.still_missing(k),
        |c| !calls_missing.still_missing(c),
    )
}

/// Keys not found yet, sorted, with a flag per key: one scan of the kept rows marks the
/// ones it finds (a binary search each, no allocation). `mask` has the bit of every key
/// (see [`seed_bit`]), so most rows that hold no key are passed over without a search.
struct Missing<K> {
    keys: Vec<K>,
    found: Vec<bool>,
    unfound: usize,
    mask: u64,
}

/// One of 64 bits for a key, from its seed or id (a filter only: equal keys have equal
/// bits, so a clear bit proves the key absent).
fn seed_bit(seed: u64) -> u64 {
    1 << (seed % 64)
}

impl<K> Default for Missing<K> {
    fn default() -> Self {
        Missing {
            keys: Vec::new(),
            found: Vec::new(),
            unfound: 0,
            mask: 0,
        }
    }
}

impl<K: Ord> Missing<K> {
    fn seal(&mut self, bit: impl Fn(&K) -> u64) {
        self.keys.sort_unstable();
        self.keys.dedup();
        self.found = vec![false; self.keys.len()];
        self.unfound = self.keys.len();
        self.mask = self.keys.iter().fold(0, |mask, k| mask | bit(k));
    }

    /// False when no key has this bit: the key sought is not among them.
    fn may_hold(&self, bit: u64) -> bool {
        self.mask & bit != 0
    }

    fn find(&mut self, key: &K) {
        if let Ok(k) = self.keys.binary_search(key) {
            if !self.found[k] {
                self.found[k] = true;
                self.unfound -= 1;
            }
        }
    }

    fn still_missing(&self, key: &K) -> bool {
        self.keys.binary_search(key).is_ok_and(|k| !self.found[k])
    }
}

/// Tool rows of `rows` that answer no call of the nearest preceding assistant row (the
/// repair's "stray" rows; the known set resets at every user and assistant row).
fn stray_tool_rows(rows: &[Message]) -> BTreeSet<usize> {
    let mut known: &[compactsim_model::ToolCall] = &[];
    let mut stray = BTreeSet::new();
    for (i, m) in rows.iter().enumerate() {
        match m.role {
            Role::Assistant => known = &m.tool_calls,
            Role::User => known = &[],
            Role::Tool => {
                let answers = m
                    .tool_call_id
                    .is_some_and(|id| known.iter().any(|c| c.id == id));
                if !answers {
                    stray.insert(i);
                }
            }
            Role::System => {}
        }
    }
    stray
}

/// Why a row that left is not accounted for.
#[derive(Debug, PartialEq)]
enum Unaccounted {
    /// A batch pass summarizes one window: a row that left outside it (after a row that
    /// stayed) reached no summary, whatever its facts.
    OutsideWindow,
    /// No served call answered and no policy applies.
    NoSummary,
    /// A batch pass with no answered call dropped the row behind a summary, and the
    /// compactor declares no static fallback.
    NoFallbackDeclared,
    /// A tool row of a batch pass that no answered call named (its pruned output or its
    /// text), though the prune is declared.
    NotNamed,
    /// Facts of the row that no answered call saw.
    NotSummarized(Vec<FactId>),
    /// Facts the answers kept that no written row holds.
    NotInSummary(Vec<FactId>),
}

struct Judge<'a> {
    how: Judged,
    policies: Policies,
    answers: Answers<'a>,
    written: Option<Written<'a>>,
    stray: BTreeSet<usize>,
    /// A batch window large enough for the block cap to have cut its middle.
    block_capped: bool,
}

/// Whether the rows of `before` at `left` hold enough text for the summarizer's block
/// cap to have applied (see the type doc).
fn block_capped(t: &Transition<'_>, left: &[usize]) -> bool {
    let chars: u64 = left
        .iter()
        .map(|&i| {
            let m = &t.before[i];
            let calls: u32 = m.tool_calls.iter().map(|c| c.envelope_chars()).sum();
            (m.content.chars() + calls).min(MESSAGE_INPUT_CAP_CHARS) as u64
        })
        .sum();
    chars >= SUMMARY_INPUT_CAP_CHARS / 2
}

impl<'a> Judge<'a> {
    fn new(how: Judged, policies: Policies, t: &Transition<'a>, left: &[usize]) -> Self {
        Judge {
            policies,
            block_capped: how != Judged::Repair && block_capped(t, left),
            how,
            answers: answers(how, t.served),
            written: None,
            stray: if how == Judged::Repair {
                stray_tool_rows(t.before)
            } else {
                BTreeSet::new()
            },
        }
    }

    /// `None` when row `i` of `before` that left is accounted for.
    fn verdict(
        &mut self,
        t: &Transition<'a>,
        (i, m): (usize, &Message),
        carried: bool,
    ) -> Option<Unaccounted> {
        if carried {
            return None;
        }
        match self.how {
            Judged::Repair => {
                return (!(m.role == Role::Tool && self.stray.contains(&i)))
                    .then_some(Unaccounted::NoSummary)
            }
            Judged::Batch if !self.answers.any => {
                return (!self.policies.static_fallback).then_some(Unaccounted::NoFallbackDeclared)
            }
            Judged::Micro if !self.answers.any => return Some(Unaccounted::NoSummary),
            _ => {}
        }
        if self.how == Judged::Batch && m.role == Role::Tool && self.policies.tool_output_prune {
            let named = match (&self.answers.named, m.tool_call_id) {
                (None, _) => true,
                (Some(named), Some(id)) => named.contains(&id),
                (Some(_), None) => false,
            };
            return (!named).then_some(Unaccounted::NotNamed);
        }
        // The row's facts as its text spells them (an external compactor only sees text).
        let facts = text_facts_of(&m.content);
        let mut unseen: Vec<FactId> = Vec::new();
        for &f in facts.iter() {
            if !self.answers.saw(self.how, t.before, f) {
                unseen.push(f);
            }
        }
        let capped = self.block_capped || m.content.chars() > MESSAGE_INPUT_CAP_CHARS;
        if !unseen.is_empty() && !capped {
            return Some(Unaccounted::NotSummarized(unseen));
        }
        let written = self.written.get_or_insert_with(|| Written::new(t));
        let missing: Vec<FactId> = facts
            .iter()
            .copied()
            .filter(|&f| self.answers.kept.contains(f))
            .filter(|&f| !written.holds(t, f))
            .collect();
        (!missing.is_empty()).then_some(Unaccounted::NotInSummary(missing))
    }
}

/// Facts listed in a witness line at most.
const MAX_FACTS_LISTED: usize = 8;

fn listed(facts: &[FactId]) -> String {
    let names: Vec<String> = facts
        .iter()
        .take(MAX_FACTS_LISTED)
        .map(ToString::to_string)
        .collect();
    let more = facts.len().saturating_sub(MAX_FACTS_LISTED);
    if more > 0 {
        format!("{} and {more} more", names.join(", "))
    } else {
        names.join(", ")
    }
}

fn witness(t: &Transition<'_>, bad: &[(usize, Unaccounted)]) -> Witness {
    let (first_i, why) = &bad[0];
    let reason = match why {
        Unaccounted::OutsideWindow => {
            "outside the one window the pass summarized (rows before it stayed)".into()
        }
        Unaccounted::NoSummary => "with no answered summary call and no declared policy".into(),
        Unaccounted::NoFallbackDeclared => "behind a batch pass with no answered summary call, \
            and the compactor declares no static fallback (policy static_fallback)"
            .into(),
        Unaccounted::NotNamed => "a tool result no answered summary call named (neither its \
            call id nor its text was in a prompt): no declared prune saw it"
            .into(),
        Unaccounted::NotSummarized(f) => {
            format!(
                "though no answered summary call saw its facts {}",
                listed(f)
            )
        }
        Unaccounted::NotInSummary(f) => format!(
            "and the facts the summarizer kept of it are in no summary now in the \
             transcript: {}",
            listed(f)
        ),
    };
    let answered = t.served.iter().filter(|c| c.ok).count();
    let mut w = Witness::default()
        .fact(format!(
            "{} rows left silently on {}; {} first, {reason}",
            bad.len(),
            t.event.describe(),
            t.before[*first_i].id
        ))
        .fact(format!(
            "{} summarizer calls served during the transition, {answered} answered",
            t.served.len()
        ));
    for (i, _) in bad.iter().take(MAX_WITNESS_ROWS) {
        w = w.row(
            *i,
            &t.before[*i],
            "before: left without a summary or policy",
        );
    }
    w
}

/// The rows of `left` not accounted for by a micro pass or a repair. Being carried
/// matters only for a row the other rules do not account for (a carried row is always
/// accounted for), so those rules are asked first and the kept rows are scanned for the
/// text of the few rows they leave, not of every row that left (an absorbed exchange
/// went into a summary: its text is in no row of `after`, so that scan would read the
/// whole list). Equal to [`NoSilentDrop::unaccounted_in_window`] for these transitions
/// (a test below).
fn unaccounted_suspects_first(
    how: Judged,
    policies: Policies,
    t: &Transition<'_>,
    left: &[usize],
) -> Vec<(usize, Unaccounted)> {
    let mut judge = Judge::new(how, policies, t, left);
    let suspects: Vec<(usize, Unaccounted)> = left
        .iter()
        .filter_map(|&i| judge.verdict(t, (i, &t.before[i]), false).map(|u| (i, u)))
        .collect();
    if suspects.is_empty() {
        return suspects;
    }
    let rows: Vec<usize> = suspects.iter().map(|(i, _)| *i).collect();
    let carried = carried_rows(t, &rows);
    suspects
        .into_iter()
        .zip(carried)
        .filter(|(_, carried)| !carried)
        .map(|(bad, _)| bad)
        .collect()
}

/// Whether kept row `k` of `t.before` stayed in place: the next kept row of `before`
/// (if any) still follows it in `t.after`. O(rows); asked only of a kept row found
/// between a batch window's rows.
fn stayed_in_place(t: &Transition<'_>, k: usize, kept: &IdMarks) -> bool {
    let at = |id| t.after.iter().position(|m| m.id == id);
    let Some(here) = at(t.before[k].id) else {
        return false;
    };
    t.before[k + 1..]
        .iter()
        .find(|m| kept.contains(m.id))
        .and_then(|next| at(next.id))
        .is_none_or(|next_at| next_at > here)
}

impl NoSilentDrop {
    /// The rows of `left` not accounted for, every row's carriage read first (a batch
    /// pass needs it for every row: its window ends at the rows it did not carry).
    fn unaccounted_in_window(
        &self,
        how: Judged,
        t: &Transition<'_>,
        left: &[usize],
    ) -> Vec<(usize, Unaccounted)> {
        let mut judge = Judge::new(how, self.policies, t, left);
        let carried = carried_rows(t, left);
        let mut bad: Vec<(usize, Unaccounted)> = Vec::new();
        let mut window_end: Option<usize> = None;
        for (&i, carried) in left.iter().zip(carried) {
            if let Some(u) = judge.verdict(t, (i, &t.before[i]), carried) {
                bad.push((i, u));
            } else if how == Judged::Batch && !carried {
                // Rows between the window's previous row and this one that stayed where
                // they were (a kept row the pass moved, such as a copy of a summarized
                // user row re-inserted after the tail, does not split the window).
                let outside = window_end.is_some_and(|end| {
                    (end + 1..i).any(|k| {
                        !t.before[k].is_summary()
                            && self.kept.contains(t.before[k].id)
                            && stayed_in_place(t, k, &self.kept)
                    })
                });
                if outside {
                    bad.push((i, Unaccounted::OutsideWindow));
                } else {
                    window_end = Some(i);
                }
            }
        }
        bad
    }
}

impl Invariant for NoSilentDrop {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, event: &Event) -> bool {
        judged(event).is_some()
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        let how = judged(t.event)?;
        if unchanged(t) || pure_append(t).is_some() {
            return None;
        }
        self.kept.fill(t.after.iter().map(|m| m.id));
        // Only rows in the changed window can have left.
        let left: Vec<usize> = t
            .delta
            .removed_range()
            .filter(|&i| !t.before[i].is_summary() && !self.kept.contains(t.before[i].id))
            .collect();
        if left.is_empty() {
            return None;
        }
        let bad = if how == Judged::Batch {
            self.unaccounted_in_window(how, t, &left)
        } else {
            unaccounted_suspects_first(how, self.policies, t, &left)
        };
        (!bad.is_empty()).then(|| witness(t, &bad))
    }
}

#[cfg(test)]
mod tests;
