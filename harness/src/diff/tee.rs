//! The differential compactor: the Rust reference drives the world, and before every
//! pass a second compactor (the *other*: an external adapter, or a test's mutant) gets
//! a copy of the same transcript, a copy of the id allocator as it stood, and the same
//! summarizer answers — the answers the reference's pass was served, replayed in call
//! order, then (should the other ask for more) answers from a fork of the case's
//! summarizer as it stands after the reference's pass. The other's transcript is
//! observed and thrown away; the world continues with the reference's.
//!
//! What the other keeps in memory (a cursor, a rolling summary, a cooldown) follows its
//! own thrown-away results: after its first disagreement in a case, later passes may
//! disagree because of that one. The per-case first disagreement is the clean signal;
//! the report gives both.

use super::observe::{Field, Observed};
use compactsim_fakes::seam::{
    BatchReport, BatchRequest, Compactor, CompactorFailure, Harness, SummaryBackend,
};
use compactsim_fakes::summarizer::{
    RollingSummary, Summarizer, SummaryCall, SummaryErrorClass, SummaryFailure,
};
use compactsim_hermes::compactor::reference::Reference;
use compactsim_model::{FactId, Message, MicroPass};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Rows shown on each side of a first disagreement.
pub const WINDOW_ROWS_EACH_SIDE: usize = 3;

/// Which pass: micro or batch (with its trigger).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PassKind {
    Micro,
    Batch(&'static str),
}

impl PassKind {
    pub fn name(&self) -> String {
        match self {
            PassKind::Micro => "micro".into(),
            PassKind::Batch(trigger) => format!("batch ({trigger})"),
        }
    }
}

/// The first pass of a case on which the two compactors disagreed, readable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirstDisagreement {
    /// 0-based index of the pass in the case.
    pub pass: u32,
    pub turn: u32,
    pub kind: PassKind,
    pub fields: Vec<Field>,
    pub reference: Observed,
    pub other: Observed,
    /// Rows around the first index where the transcripts after differ: `[i] row`.
    pub before_rows: Vec<String>,
    pub reference_rows: Vec<String>,
    pub other_rows: Vec<String>,
}

/// Everything one case's passes showed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaseLog {
    pub passes: u32,
    pub passes_agreeing: u32,
    /// Passes up to and including the first disagreement (or all, if none).
    pub passes_until_first: u32,
    /// Disagreeing passes per field (a pass may count under several).
    pub fields: Vec<(Field, u32)>,
    /// Disagreeing passes per micro/batch kind.
    pub by_pass_kind: Vec<(String, u32, u32)>,
    pub first: Option<FirstDisagreement>,
}

impl CaseLog {
    fn add(&mut self, kind: &PassKind, turn: u32, views: Views<'_>) {
        let reference = Observed::of(views.before, views.reference, views.reference_calls);
        let other = Observed::of(views.before, views.other, views.other_calls);
        let fields = reference.differences(&other);
        self.passes += 1;
        let name = kind.name();
        let at = match self.by_pass_kind.iter().position(|(k, _, _)| *k == name) {
            Some(i) => i,
            None => {
                self.by_pass_kind.push((name, 0, 0));
                self.by_pass_kind.len() - 1
            }
        };
        self.by_pass_kind[at].1 += 1;
        if self.first.is_none() {
            self.passes_until_first += 1;
        }
        if fields.is_empty() {
            self.passes_agreeing += 1;
            return;
        }
        self.by_pass_kind[at].2 += 1;
        for f in &fields {
            match self.fields.iter_mut().find(|(g, _)| g == f) {
                Some((_, n)) => *n += 1,
                None => self.fields.push((*f, 1)),
            }
        }
        if self.first.is_none() {
            let at = first_difference(views.reference, views.other);
            self.first = Some(FirstDisagreement {
                pass: self.passes - 1,
                turn,
                kind: kind.clone(),
                fields,
                reference,
                other,
                before_rows: window(views.before, at),
                reference_rows: window(views.reference, at),
                other_rows: window(views.other, at),
            });
        }
    }
}

struct Views<'a> {
    before: &'a [Message],
    reference: &'a [Message],
    other: &'a [Message],
    reference_calls: u32,
    other_calls: u32,
}

/// The first index where two transcripts differ (role, text, calls or flags).
fn first_difference(a: &[Message], b: &[Message]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Rows `at - N .. at + N` of `rows`, one line each.
fn window(rows: &[Message], at: usize) -> Vec<String> {
    let lo = at.saturating_sub(WINDOW_ROWS_EACH_SIDE);
    let hi = (at + WINDOW_ROWS_EACH_SIDE).min(rows.len());
    (lo..hi)
        .map(|i| {
            let m = &rows[i];
            let role = if m.is_summary() {
                format!(" (role {})", m.role.as_str())
            } else {
                String::new()
            };
            format!("[{i}] {}{role}", m.describe())
        })
        .collect()
}

/// Forwards to the harness's summarizer and keeps a copy of every answer.
struct Recorder<'a> {
    inner: &'a mut dyn SummaryBackend,
    answers: VecDeque<SummaryCall>,
}

impl SummaryBackend for Recorder<'_> {
    fn summarize_within(
        &mut self,
        previous: &RollingSummary,
        facts: &[FactId],
        tokens: u32,
        max_tokens: Option<u32>,
    ) -> SummaryCall {
        let call = self
            .inner
            .summarize_within(previous, facts, tokens, max_tokens);
        self.answers.push_back(call.clone());
        call
    }

    fn condense_within(
        &mut self,
        summary: &RollingSummary,
        max_tokens: Option<u32>,
    ) -> SummaryCall {
        let call = self.inner.condense_within(summary, max_tokens);
        self.answers.push_back(call.clone());
        call
    }

    fn named_tool_results(&mut self, calls: Vec<compactsim_model::CallId>) {
        self.inner.named_tool_results(calls);
    }

    fn fork(&self) -> Option<Summarizer> {
        self.inner.fork()
    }
}

/// Serves the other compactor: the recorded answers in call order, then a fork.
struct Replay {
    answers: VecDeque<SummaryCall>,
    fork: Option<Summarizer>,
    calls: u32,
}

impl Replay {
    fn next(&mut self, fresh: impl FnOnce(&mut Summarizer) -> SummaryCall) -> SummaryCall {
        self.calls += 1;
        if let Some(answer) = self.answers.pop_front() {
            return answer;
        }
        match &mut self.fork {
            Some(fork) => fresh(fork),
            None => SummaryCall {
                result: Err(SummaryFailure::Error(SummaryErrorClass::ServerError)),
                expanded: false,
                latency_ms: 0,
            },
        }
    }
}

impl SummaryBackend for Replay {
    fn summarize_within(
        &mut self,
        previous: &RollingSummary,
        facts: &[FactId],
        tokens: u32,
        max_tokens: Option<u32>,
    ) -> SummaryCall {
        self.next(|s| s.summarize_within(previous, facts, tokens, max_tokens))
    }

    fn condense_within(
        &mut self,
        summary: &RollingSummary,
        max_tokens: Option<u32>,
    ) -> SummaryCall {
        self.next(|s| s.condense_within(summary, max_tokens))
    }
}

/// The reference (driving the world) and the other compactor, passes compared.
pub struct Tee {
    reference: Reference,
    other: Box<dyn Compactor>,
    log: Arc<Mutex<CaseLog>>,
}

impl Tee {
    pub fn new(reference: Reference, other: Box<dyn Compactor>, log: Arc<Mutex<CaseLog>>) -> Self {
        Tee {
            reference,
            other,
            log,
        }
    }

    /// Runs `ours` on the world and `theirs` on copies, then logs the comparison.
    fn both<T>(
        &mut self,
        msgs: &mut Vec<Message>,
        harness: &mut Harness<'_>,
        (kind, turn): (PassKind, u32),
        ours: impl FnOnce(
            &mut Reference,
            &mut Vec<Message>,
            &mut Harness<'_>,
        ) -> Result<T, CompactorFailure>,
        theirs: impl FnOnce(
            &mut dyn Compactor,
            &mut Vec<Message>,
            &mut Harness<'_>,
        ) -> Result<(), CompactorFailure>,
    ) -> Result<T, CompactorFailure> {
        let before = msgs.clone();
        let mut ids = harness.ids.clone();
        let mut recorder = Recorder {
            inner: &mut *harness.summarizer,
            answers: VecDeque::new(),
        };
        let value = {
            let mut h = Harness {
                summarizer: &mut recorder,
                ids: &mut *harness.ids,
                now_ms: harness.now_ms,
            };
            ours(&mut self.reference, msgs, &mut h)?
        };
        let reference_calls = recorder.answers.len() as u32;
        let mut replay = Replay {
            fork: recorder.fork(),
            answers: recorder.answers,
            calls: 0,
        };
        let mut other = before.clone();
        {
            let mut h = Harness {
                summarizer: &mut replay,
                ids: &mut ids,
                now_ms: harness.now_ms,
            };
            theirs(self.other.as_mut(), &mut other, &mut h)?;
        }
        let views = Views {
            before: &before,
            reference: msgs,
            other: &other,
            reference_calls,
            other_calls: replay.calls,
        };
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(&kind, turn, views);
        Ok(value)
    }
}

impl Compactor for Tee {
    fn name(&self) -> String {
        format!("diff:reference|{}", self.other.name())
    }

    fn micro_pass(
        &mut self,
        msgs: &mut Vec<Message>,
        turn: u32,
        harness: &mut Harness<'_>,
    ) -> Result<MicroPass, CompactorFailure> {
        self.both(
            msgs,
            harness,
            (PassKind::Micro, turn),
            |r, m, h| r.micro_pass(m, turn, h),
            |o, m, h| o.micro_pass(m, turn, h).map(|_| ()),
        )
    }

    fn batch_pass(
        &mut self,
        msgs: &mut Vec<Message>,
        request: BatchRequest,
        harness: &mut Harness<'_>,
    ) -> Result<BatchReport, CompactorFailure> {
        self.both(
            msgs,
            harness,
            (PassKind::Batch(request.trigger.label()), request.turn),
            |r, m, h| r.batch_pass(m, request, h),
            |o, m, h| o.batch_pass(m, request, h).map(|_| ()),
        )
    }

    fn restart(&mut self) {
        self.reference.restart();
        self.other.restart();
    }

    fn rewritten(&mut self) {
        self.reference.rewritten();
        self.other.rewritten();
    }

    fn cooling_down(&mut self, now_ms: u64) -> Result<bool, CompactorFailure> {
        self.reference.cooling_down(now_ms)
    }

    fn fallback_streak(&mut self) -> Result<u32, CompactorFailure> {
        self.reference.fallback_streak()
    }

    fn on_usage(&mut self, prompt_tokens: u64) -> Result<(), CompactorFailure> {
        self.reference.on_usage(prompt_tokens)?;
        self.other.on_usage(prompt_tokens)
    }
}
