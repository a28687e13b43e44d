//! The oracle believes observations, not labels (issue 7, DESIGN "The system under
//! test, and what the oracle may believe"):
//! - every label scrambled (compactor outcomes, exchange/skip lists, cursors, fallback
//!   and failure flags, preflight decisions, error classes) while the transcript and the
//!   observations stay as they are gives the same verdicts;
//! - mutants: the reference compactor wrapped so that it misbehaves while its labels
//!   stay as they were; each is caught by a named invariant.

mod common;

use common::wrapper::{Hooks, Wrapped};
use compactsim::bugs::CATALOGUE;
use compactsim::cli::args::{CaseParams, SEED_DEFAULT};
use compactsim::compactor::reference::Reference;
use compactsim::compactor::seam::{BatchReport, Compactor};
use compactsim::engine::scramble::Labels;
use compactsim::engine::{reference, run_case_labels, CaseOutcome, CaseResult, CaseSpec, Record};
use compactsim::selftest;
use compactsim::strategy::Strategy;
use compactsim_invariants::text::{chars_to_spell, spelled_facts};
use compactsim_model::{
    BatchPassOutcome, Content, ContentKind, Message, MicroOutcome, MicroPass, MsgId, Role, Segment,
};

/// Cases per default suite the scramble test compares (of 480; the whole suites run in
/// `.ci/run` — this keeps `cargo test` short while covering every family).
const SCRAMBLE_CASES: u32 = 160;
/// Cases a mutant may take to be caught.
const MUTANT_CASES_MAX: u32 = 96;

/// What a verdict is made of: the outcome kind, the invariants and where.
fn verdict(r: &CaseResult) -> (String, Vec<String>, u32) {
    let kind = match &r.outcome {
        CaseOutcome::Clean => "clean",
        CaseOutcome::Violation(_) => "violation",
        CaseOutcome::Liveness(_) => "liveness",
        CaseOutcome::Internal(_) => "internal",
    };
    let ids = r
        .outcome
        .violations()
        .iter()
        .map(|v| format!("{}@{}", v.invariant, v.step))
        .collect();
    (kind.to_string(), ids, r.transitions)
}

fn both_views(spec: &CaseSpec) -> (CaseResult, CaseResult) {
    let plain = run_case_labels(spec, Record::default(), &reference, Labels::AsReported);
    let scrambled = run_case_labels(spec, Record::default(), &reference, Labels::Scrambled);
    (plain, scrambled)
}

#[test]
fn scrambled_labels_give_the_same_verdicts_on_the_default_suites() {
    let mut failing = 0;
    for strategy in ["micro", "batch", "both"] {
        let suite = CaseParams::parse(SEED_DEFAULT, 25, strategy, &[])
            .unwrap()
            .suite(0, SCRAMBLE_CASES);
        for case in 0..SCRAMBLE_CASES {
            let (plain, scrambled) = both_views(&suite.spec(case));
            assert_eq!(
                verdict(&plain),
                verdict(&scrambled),
                "{strategy} case {case}"
            );
            failing += u32::from(plain.outcome != CaseOutcome::Clean);
        }
    }
    assert_eq!(failing, 0, "the default suites are clean");
}

#[test]
fn scrambled_labels_give_the_same_verdicts_with_every_bug_switch() {
    let mut caught = 0;
    for info in CATALOGUE {
        let strategy = Strategy::parse(info.strategy).unwrap();
        for case in 0..24 {
            let spec = selftest::spec(info, strategy, SEED_DEFAULT, 25, case);
            let (plain, scrambled) = both_views(&spec);
            assert_eq!(
                verdict(&plain),
                verdict(&scrambled),
                "{} case {case}",
                info.id
            );
            caught += u32::from(plain.outcome != CaseOutcome::Clean);
        }
    }
    assert!(
        caught > 0,
        "some switch fails a case, so verdicts were compared"
    );
}

/// How a mutant misbehaves; its labels stay as the reference reported them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Misbehaviour {
    /// A batch pass that says aborted or no-op drops its window anyway.
    UnchangedPassDropsWindow,
    /// A micro pass deletes the marker it just wrote.
    DeletesFreshMarker,
    /// A micro pass that absorbed one exchange removes the next one too.
    AbsorbsTwoReportsOne,
    /// A micro pass rewrites an older user row by appending the marker's text to it.
    RewritesUserRow,
    /// A micro pass that found nothing to do drops the oldest exchange (no summary call).
    DropsWithoutSummaryCall,
    /// A micro pass whose exchange end is off by one: the user row after the exchange
    /// goes too (the resume cursor itself cannot be off by one observably: the row after
    /// a marker is a user or summary row, which the exchange search skips either way).
    ExchangeEndOffByOne,
    /// A micro pass whose exchange start is off by one: the first row of the exchange
    /// (the assistant row that made the calls) stays in front of the marker.
    ExchangeStartOffByOne,
    /// A batch pass that summarized its window also drops the first reply after it,
    /// which no summary call saw.
    BatchDropsUnsummarizedRow,
    /// A micro pass keeps the previous marker's text in the fresh marker (the summary
    /// served last is lost).
    StaleNewestMarker,
    /// A micro pass writes its marker without the micro-marker flag.
    StripsMarkerFlag,
    /// A micro pass that supersedes an older marker writes a fresh marker whose summary
    /// segment still lists every fact while its text is cut to a few words (it spells
    /// almost none of them).
    MarkerListsWhatItsTextDropped,
    /// A micro pass that absorbed one exchange also removes the next one (one that spells
    /// a fact) and spells its facts in the marker, though no summary call saw them.
    SwallowsUnsummarizedExchange,
    /// A batch pass that says aborted or no-op rewrites an old tool output (0.19.0's
    /// prune returned by an abort).
    UnchangedPassRewritesToolOutput,
}

/// Characters the lying marker's summary text is cut to (too few to spell a fact).
const LYING_SUMMARY_CHARS: u32 = 8;

/// `content` with every summary segment's text cut to `chars`, its fact list kept.
fn cut_summary_text(content: &Content, chars: u32) -> Content {
    let segments = content
        .segments
        .iter()
        .map(|s| match s.kind {
            ContentKind::Summary => Segment {
                chars: chars.min(s.chars),
                ..s.clone()
            },
            _ => s.clone(),
        })
        .collect();
    Content::from_segments(segments)
}

/// `content` with one more summary segment spelling `facts`.
fn with_spelled(content: &Content, facts: Vec<compactsim_model::FactId>, seed: u64) -> Content {
    let mut segments = content.segments.to_vec();
    segments.push(Segment {
        kind: ContentKind::Summary,
        chars: chars_to_spell(ContentKind::Summary, &facts),
        seed,
        origin: MsgId(0),
        facts,
    });
    Content::from_segments(segments)
}

/// The first run of assistant/tool rows (from an assistant row) after index `from`
/// that follows a user row.
fn next_exchange(msgs: &[Message], from: usize) -> Option<(usize, usize)> {
    let agent = |m: &Message| matches!(m.role, Role::Assistant | Role::Tool) && !m.is_summary();
    let start = (from..msgs.len()).find(|&i| {
        msgs[i].role == Role::Assistant
            && !msgs[i].is_summary()
            && i > 0
            && msgs[i - 1].is_real_user()
    })?;
    let end = (start..msgs.len())
        .find(|&i| !agent(&msgs[i]))
        .unwrap_or(msgs.len());
    (end < msgs.len()).then_some((start, end))
}

impl Hooks for Misbehaviour {
    fn after_micro(&mut self, old: &[Message], msgs: &mut Vec<Message>, pass: &MicroPass) {
        let before: Vec<MsgId> = old.iter().map(|m| m.id).collect();
        let marker_at = msgs.iter().rposition(|m| m.is_micro_marker());
        match (*self, pass.outcome) {
            (Misbehaviour::DeletesFreshMarker, MicroOutcome::Absorbed) => {
                msgs.retain(|m| !m.is_micro_marker() || before.contains(&m.id));
            }
            (Misbehaviour::AbsorbsTwoReportsOne, MicroOutcome::Absorbed) => {
                if let Some((s, e)) = next_exchange(msgs, marker_at.map_or(0, |i| i + 1)) {
                    msgs.drain(s..e);
                }
            }
            (Misbehaviour::RewritesUserRow, MicroOutcome::Absorbed) => {
                let old = msgs.iter().position(|m| m.is_real_user() && m.id.0 > 0);
                if let (Some(u), Some(k)) = (old, marker_at) {
                    let extra = msgs[k].content.clone();
                    msgs[u].merge_content(&extra);
                }
            }
            (Misbehaviour::DropsWithoutSummaryCall, MicroOutcome::NoExchange) => {
                if let Some((s, e)) = next_exchange(msgs, 1) {
                    msgs.drain(s..e);
                }
            }
            (Misbehaviour::ExchangeEndOffByOne, MicroOutcome::Absorbed) => {
                if let Some(k) =
                    marker_at.filter(|&k| msgs.get(k + 1).is_some_and(Message::is_real_user))
                {
                    msgs.remove(k + 1);
                }
            }
            (Misbehaviour::ExchangeStartOffByOne, MicroOutcome::Absorbed) => {
                let first = pass
                    .exchange
                    .first()
                    .and_then(|id| old.iter().find(|m| m.id == *id));
                if let (Some(k), Some(row)) = (marker_at, first) {
                    msgs.insert(k, row.clone());
                }
            }
            (Misbehaviour::StaleNewestMarker, MicroOutcome::Absorbed) => {
                let previous = old.iter().rev().find(|m| m.is_micro_marker());
                if let (Some(k), Some(p)) = (marker_at, previous) {
                    msgs[k].set_content(p.content.clone());
                }
            }
            (Misbehaviour::StripsMarkerFlag, MicroOutcome::Absorbed) => {
                if let Some(k) = marker_at {
                    msgs[k].flags.micro_marker = false;
                }
            }
            (Misbehaviour::MarkerListsWhatItsTextDropped, MicroOutcome::Absorbed) => {
                let superseded = old.iter().any(Message::is_micro_marker);
                if let (Some(k), true) = (marker_at, superseded) {
                    let cut = cut_summary_text(&msgs[k].content, LYING_SUMMARY_CHARS);
                    msgs[k].set_content(cut);
                }
            }
            (Misbehaviour::SwallowsUnsummarizedExchange, MicroOutcome::Absorbed) => {
                let next = next_exchange(msgs, marker_at.map_or(0, |i| i + 1));
                if let (Some(k), Some((s, e))) = (marker_at, next) {
                    let facts: Vec<_> = msgs[s..e]
                        .iter()
                        .flat_map(|m| spelled_facts(&m.content.materialize()))
                        .collect();
                    // An exchange that spells no fact loses nothing a reader could name.
                    if !facts.is_empty() {
                        let seed = msgs[k].id.0 as u64 ^ 0x5A11_0000;
                        let grown = with_spelled(&msgs[k].content, facts, seed);
                        msgs[k].set_content(grown);
                        msgs.drain(s..e);
                    }
                }
            }
            _ => {}
        }
    }

    fn after_batch(&mut self, _before: &[Message], msgs: &mut Vec<Message>, report: &BatchReport) {
        let unchanged = report.outcome != BatchPassOutcome::Compacted;
        if *self == Misbehaviour::UnchangedPassRewritesToolOutput && unchanged {
            let oldest_tool = msgs
                .iter()
                .position(|m| m.role == Role::Tool && m.content.chars() > PRUNED_CHARS);
            if let Some(i) = oldest_tool {
                let line = Segment {
                    kind: ContentKind::Prose,
                    chars: PRUNED_CHARS,
                    seed: 0x9_2E00 ^ msgs[i].id.0 as u64,
                    origin: msgs[i].id,
                    facts: Vec::new(),
                };
                msgs[i].set_content(Content::single(line));
            }
        }
        if *self == Misbehaviour::UnchangedPassDropsWindow && unchanged && msgs.len() > 8 {
            let head = usize::from(msgs[0].role == Role::System) + 1;
            let tail = msgs.len() - 4;
            msgs.drain(head..tail);
        }
        let summarized = report.outcome == BatchPassOutcome::Compacted && !report.fallback;
        if *self == Misbehaviour::BatchDropsUnsummarizedRow && summarized {
            let newest_reply = msgs.iter().rposition(Message::is_visible_reply);
            let after_summary = msgs
                .iter()
                .rposition(Message::is_summary)
                .map_or(0, |i| i + 1);
            let victim = (after_summary..msgs.len()).find(|&i| {
                msgs[i].is_visible_reply()
                    && msgs[i].tool_calls.is_empty()
                    && Some(i) != newest_reply
            });
            if let Some(i) = victim {
                msgs.remove(i);
            }
        }
    }
}

/// The first case of the default suite of `strategy` that catches `how`, with every
/// invariant that failed on its failing transition.
fn caught_by(how: Misbehaviour, strategy: &str) -> Option<(u32, Vec<String>)> {
    let suite = CaseParams::parse(SEED_DEFAULT, 25, strategy, &[])
        .unwrap()
        .suite(0, MUTANT_CASES_MAX);
    let make = |inner: Reference| -> Box<dyn Compactor> {
        Box::new(Wrapped {
            inner,
            hooks: how,
            name: format!("mutant:{how:?}"),
        })
    };
    (0..MUTANT_CASES_MAX).find_map(|case| {
        let r = run_case_labels(
            &suite.spec(case),
            Record::default(),
            &make,
            Labels::AsReported,
        );
        let ids: Vec<String> = r
            .outcome
            .violations()
            .iter()
            .map(|v| v.invariant.clone())
            .collect();
        (!ids.is_empty()).then_some((case, ids))
    })
}

/// Each mutant and the invariants that must all be among those failing on the first
/// transition that catches it.
const MUTANTS: &[(Misbehaviour, &str, &[&str])] = &[
    (
        Misbehaviour::UnchangedPassDropsWindow,
        "batch",
        &["summary-failure-safe"],
    ),
    (
        Misbehaviour::DeletesFreshMarker,
        "micro",
        &["api-valid", "no-silent-drop"],
    ),
    (
        Misbehaviour::AbsorbsTwoReportsOne,
        "micro",
        &["exchange-absorbed-once"],
    ),
    (
        Misbehaviour::RewritesUserRow,
        "micro",
        &["user-turns-intact"],
    ),
    (
        Misbehaviour::DropsWithoutSummaryCall,
        "micro",
        &["no-silent-drop"],
    ),
    (
        Misbehaviour::ExchangeEndOffByOne,
        "micro",
        &["user-turns-intact"],
    ),
    (
        Misbehaviour::ExchangeStartOffByOne,
        "micro",
        &["count-non-growing"],
    ),
    (
        Misbehaviour::BatchDropsUnsummarizedRow,
        "batch",
        &["no-silent-drop"],
    ),
    (
        Misbehaviour::StaleNewestMarker,
        "micro",
        &["marker-pristine"],
    ),
    (
        Misbehaviour::StripsMarkerFlag,
        "micro",
        &["marker-pristine"],
    ),
    (
        Misbehaviour::MarkerListsWhatItsTextDropped,
        "micro",
        &["marker-contained", "no-silent-drop"],
    ),
    (
        Misbehaviour::SwallowsUnsummarizedExchange,
        "micro",
        &["no-silent-drop"],
    ),
    (
        Misbehaviour::UnchangedPassRewritesToolOutput,
        "batch",
        &["summary-failure-safe"],
    ),
];

/// Characters of the one-line description the pruning mutant writes.
const PRUNED_CHARS: u32 = 60;

#[test]
fn every_mutant_is_caught_by_its_named_invariant() {
    let mut seen = Vec::new();
    let mut missed = Vec::new();
    for &(how, strategy, want) in MUTANTS {
        let got = caught_by(how, strategy);
        seen.push(format!("{how:?} ({strategy}): {got:?}"));
        let caught = got
            .as_ref()
            .is_some_and(|(_, ids)| want.iter().all(|w| ids.iter().any(|i| i == w)));
        if !caught {
            missed.push(format!("{how:?} not caught by all of {want:?}"));
        }
    }
    println!("{}", seen.join("\n"));
    assert!(missed.is_empty(), "{missed:#?}\n{seen:#?}");
}
