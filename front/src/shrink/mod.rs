//! Shrinking: reduce a failing case to a small one that still fails the same invariant
//! (a liveness outcome: `no-infinite-loop`), and write it as a scenario file.
//!
//! A hand-written greedy delta-debugging loop over the case's recorded plan (not
//! proptest's `ValueTree`: the failing input is a case our own generator drew, not a
//! value of a proptest strategy, and the reductions are structural — drop turns, tool
//! rounds, faults — over one explicit plan). The case is first recorded into an
//! explicit plan and cut to the turns it executed; then each phase ([`Phase`]) offers
//! candidates, most aggressive first, and the first that still fails the same invariant
//! replaces the case (and is cut to its executed turns and calls again); the phase goes
//! on from that candidate's position in the reduced plan's list. Rounds over the phases
//! repeat until one accepts nothing (a fixpoint: every candidate of the final plan was
//! tried). Agent-loop plans (strategies `batch`, `both`) get their own candidates
//! as well: provider faults, leading turns loaded as a resumed session's history, a
//! smaller window, simpler agent and provider knobs.
//!
//! Bounded: by [`Budget::attempts_max`] (the result is a function of the case and this
//! bound: deterministic) and, as an extra cap, by wall time (which may stop it earlier
//! on a slower machine). [`Shrunk::stop`] says which bound ended it.

mod agent;
mod candidates;
mod faults;
mod keep;
mod queue;

pub use agent::{CONTEXT_LENGTH_MIN, OVERHEAD_REAL_NEUTRAL_PER_MILLE};
pub use candidates::{Candidate, Lazy, Phase, ROW_CHARS_MIN, TAIL_BUDGET_TOKENS_MIN};
pub use keep::Keep;
pub use queue::longest_first;

use crate::scenario::has_unmergeable_assistants;
use compactsim_harness::engine::plan::{record, run_logged, CasePlan, Logged};
use compactsim_harness::engine::{CaseOutcome, CaseResult, CaseSpec, Record};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Turns a switch's shrunk repro may have at most (issue 8: every switch's shrunk case,
/// agent-loop ones included).
pub const SHRUNK_TURNS_MAX: usize = 10;

/// Candidate runs one shrink may make (the deterministic bound).
pub const SHRINK_ATTEMPTS_MAX: u32 = 2_000;

/// How much a shrink may try.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub attempts_max: u32,
    /// Wall-time cap; `None` for attempts only.
    pub time_max: Option<Duration>,
}

impl Budget {
    /// [`SHRINK_ATTEMPTS_MAX`] attempts and at most `time` of wall time.
    pub fn timed(time: Duration) -> Budget {
        Budget {
            attempts_max: SHRINK_ATTEMPTS_MAX,
            time_max: Some(time),
        }
    }
}

/// What ended a shrink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// No candidate of any phase still fails: a local minimum.
    Fixpoint,
    /// The attempt bound.
    Attempts(u32),
    /// The wall-time cap.
    Time(Duration),
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Fixpoint => f.write_str("fixpoint (no candidate reduces it further)"),
            Stop::Attempts(n) => write!(f, "attempt bound ({n} attempts)"),
            Stop::Time(d) => write!(f, "time bound ({:.1} s)", d.as_secs_f64()),
        }
    }
}

/// The size of a case, as shrinking reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Size {
    /// Turns the case runs: the script's turns (a history is loaded, not run; its rows
    /// count in `rows` and `chars`).
    pub turns: usize,
    pub rows: usize,
    pub chars: u64,
    /// Non-ok summarizer and provider outcomes plus restarts.
    pub faults: usize,
}

impl Size {
    pub fn of(plan: &CasePlan) -> Size {
        let script = plan.script.as_ref();
        let rows = script
            .into_iter()
            .flat_map(|s| s.history.iter().chain(&s.turns));
        Size {
            turns: script.map_or(0, |s| s.turns.len()),
            rows: script.map_or(0, |s| s.rows()),
            chars: rows
                .flat_map(|t| &t.rows)
                .map(|r| r.chars as u64 + r.calls.iter().map(|c| c.args_chars as u64).sum::<u64>())
                .sum(),
            faults: plan
                .summary_outcomes
                .iter()
                .flatten()
                .filter(|o| !o.is_ok())
                .count()
                + plan
                    .provider_outcomes
                    .iter()
                    .flatten()
                    .filter(|o| !o.is_ok())
                    .count()
                + plan.restarts.as_ref().map_or(0, Vec::len)
                + plan.gateway.schedule.as_ref().map_or(0, |s| s.len()),
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} turns, {} rows, {} chars, {} faults",
            self.turns, self.rows, self.chars, self.faults
        )
    }
}

/// Reported after every accepted reduction.
#[derive(Clone, Debug)]
pub struct Progress {
    pub attempts: u32,
    pub accepted: u32,
    pub phase: Phase,
    /// What the accepted candidate changed.
    pub change: String,
    pub size: Size,
}

/// A shrunk case.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The case as it was given.
    pub original: CaseSpec,
    /// The reduced case (the original's identity with an explicit plan).
    pub spec: CaseSpec,
    /// The invariant it fails, as the original did.
    pub invariant: String,
    /// Text its violation says, as the original's did (`shrink --witness`).
    pub witness: Option<String>,
    /// The reduced case's run.
    pub result: CaseResult,
    pub attempts: u32,
    pub accepted: u32,
    pub stop: Stop,
    pub before: Size,
    pub after: Size,
    /// The invariant was chosen (`shrink --invariant`), not the case's first.
    pub chosen: bool,
}

/// Why a case cannot be shrunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShrinkError {
    /// The case holds every invariant.
    Clean,
    /// The case ends in a harness failure.
    Internal(String),
    /// The recorded plan does not fail the way the case does (a harness bug).
    Diverged(String),
    /// The chosen invariant never fires in the case (`shrink --invariant`).
    NotFired(String),
    /// The case breaks the invariant, but its violation does not say the text
    /// (`shrink --witness`): the invariant, the text, the violation's message.
    WitnessAbsent {
        invariant: String,
        text: String,
        message: String,
    },
}

impl fmt::Display for ShrinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShrinkError::Clean => f.write_str("the case holds every invariant: nothing to shrink"),
            ShrinkError::NotFired(id) => write!(
                f,
                "the case never breaks {id} (judged by {id} alone): nothing to shrink for it"
            ),
            ShrinkError::WitnessAbsent {
                invariant,
                text,
                message,
            } => write!(
                f,
                "the case breaks {invariant}, but no violation of it says `{text}` (a \
                 case-sensitive substring of its message or witness facts): nothing to shrink \
                 for it; it says: {message}"
            ),
            ShrinkError::Internal(w) => write!(f, "the case ends in a harness failure: {w}"),
            ShrinkError::Diverged(w) => write!(f, "the recorded case does not replay: {w}"),
        }
    }
}

/// Cuts `plan` to what the run `run` of `spec` executed: its turns, restarts, summarizer
/// and provider calls.
fn cut_to_run(spec: &CaseSpec, plan: &mut CasePlan, run: &Logged) {
    let r = &run.result;
    if let Some(s) = plan.script.as_mut() {
        // The agent world counts a script's history among the case's turns.
        let history = if spec.strategy.loop_options().is_some() {
            s.history.len() as u32
        } else {
            0
        };
        s.turns.truncate(r.turns.saturating_sub(history) as usize);
    }
    if let Some(restarts) = plan.restarts.as_mut() {
        restarts.retain(|&t| t < r.turns);
    }
    if let Some(s) = plan.gateway.schedule.as_mut() {
        s.truncate(r.turns);
    }
    if let Some(o) = plan.summary_outcomes.as_mut() {
        o.truncate(r.summary_calls.len());
        while o.last().is_some_and(|x| x.is_ok()) {
            o.pop();
        }
    }
    if let Some(o) = plan.provider_outcomes.as_mut() {
        o.truncate(run.provider_calls.len());
        while o.last().is_some_and(|x| x.is_ok()) {
            o.pop();
        }
    }
}

/// The state of one shrink: the current (smallest failing) plan and the counters.
struct Search<'a> {
    spec: &'a CaseSpec,
    keep: Keep,
    budget: Budget,
    started: Instant,
    plan: CasePlan,
    result: CaseResult,
    attempts: u32,
    accepted: u32,
}

impl Search<'_> {
    /// Tries the candidates of `phase` in order. After an accepted one the candidates of
    /// the reduced plan are tried from the same position on (the ones before it were
    /// tried on a larger plan; the next round tries them again), until the list is
    /// exhausted. Err when a bound stops the search.
    fn phase(&mut self, phase: Phase, progress: &mut dyn FnMut(&Progress)) -> Result<bool, Stop> {
        let mut reduced = false;
        let mut next = 0;
        while let Some((i, candidate, run)) = self.first_failing(phase, next)? {
            self.plan = candidate.plan;
            cut_to_run(self.spec, &mut self.plan, &run);
            self.result = run.result;
            self.accepted += 1;
            reduced = true;
            progress(&Progress {
                attempts: self.attempts,
                accepted: self.accepted,
                phase,
                change: candidate.change,
                size: Size::of(&self.plan),
            });
            next = i;
        }
        Ok(reduced)
    }

    /// The first candidate of `phase` for the current plan, from position `next` on,
    /// that still fails the invariant: its position, the candidate and its run. Each
    /// candidate is built only when reached. Err when a bound stops the search.
    fn first_failing(
        &mut self,
        phase: Phase,
        next: usize,
    ) -> Result<Option<(usize, Candidate, Logged)>, Stop> {
        let plan = &self.plan;
        let writable = plan
            .script
            .as_ref()
            .is_none_or(|s| !has_unmergeable_assistants(s));
        let candidates = phase.lazy(plan, self.spec.strategy);
        for (i, lazy) in candidates.into_iter().enumerate().skip(next) {
            let candidate = lazy.build();
            // A candidate its scenario file could not hold is not tried (a merge or a
            // dropped row can put two assistant rows in a row).
            if writable
                && candidate
                    .plan
                    .script
                    .as_ref()
                    .is_some_and(has_unmergeable_assistants)
            {
                continue;
            }
            if self.attempts >= self.budget.attempts_max {
                return Err(Stop::Attempts(self.attempts));
            }
            if let Some(t) = self
                .budget
                .time_max
                .filter(|&t| self.started.elapsed() >= t)
            {
                return Err(Stop::Time(t));
            }
            self.attempts += 1;
            let Candidate { change, plan } = candidate;
            let spec = self.spec.clone().with_plan(plan);
            let run = run_logged(&spec, Record::default());
            if self.keep.kept_by(&run.result) {
                let plan = spec.plan.map(Arc::unwrap_or_clone).unwrap_or_default();
                return Ok(Some((i, Candidate { change, plan }, run)));
            }
        }
        Ok(None)
    }

    /// Rounds over every phase of `order` until one round reduces nothing, or a bound
    /// stops it.
    fn run(&mut self, order: &[Phase], progress: &mut dyn FnMut(&Progress)) -> Stop {
        loop {
            let mut reduced = false;
            for &phase in order {
                match self.phase(phase, progress) {
                    Ok(r) => reduced |= r,
                    Err(stop) => return stop,
                }
            }
            if !reduced {
                return Stop::Fixpoint;
            }
        }
    }
}

/// Shrinks the failing case `spec` within `budget`, calling `progress` after every
/// accepted reduction.
pub fn shrink(
    spec: &CaseSpec,
    budget: Budget,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Shrunk, ShrinkError> {
    shrink_to(spec, &[], budget, progress)
}

/// [`shrink`], keeping the first of the invariants broken at the failing transition that
/// is among `targets` (the first broken one when `targets` is empty or none is among
/// them).
pub fn shrink_to(
    spec: &CaseSpec,
    targets: &[&str],
    budget: Budget,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Shrunk, ShrinkError> {
    shrink_kept(spec, targets, None, budget, progress)
}

/// [`shrink_to`]; with `witness`, a candidate is kept only when the kept invariant's
/// violation also says `witness` ([`compactsim_model::Violation::says`]), and the case
/// must break it so.
fn shrink_kept(
    spec: &CaseSpec,
    targets: &[&str],
    witness: Option<&str>,
    budget: Budget,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Shrunk, ShrinkError> {
    let started = Instant::now();
    let rec = record(spec);
    let broken = match &rec.result.outcome {
        CaseOutcome::Clean => return Err(ShrinkError::Clean),
        CaseOutcome::Internal(w) => return Err(ShrinkError::Internal(w.clone())),
        CaseOutcome::Violation(_) | CaseOutcome::Liveness(_) => rec.result.outcome.violations(),
    };
    let first = broken
        .iter()
        .find(|v| targets.contains(&v.invariant.as_str()))
        .unwrap_or(&broken[0]);
    let keep = Keep {
        invariant: first.invariant.clone(),
        witness: witness.map(str::to_string),
    };
    if !broken.iter().any(|v| keep.matches(v)) {
        return Err(ShrinkError::WitnessAbsent {
            invariant: keep.invariant,
            text: witness.unwrap_or_default().to_string(),
            message: first.message.clone(),
        });
    }
    let mut plan = rec.plan;
    let run = run_logged(&spec.clone().with_plan(plan.clone()), Record::default());
    if !keep.kept_by(&run.result) {
        return Err(ShrinkError::Diverged(format!(
            "expected {}, got {:?}",
            keep.invariant, run.result.outcome
        )));
    }
    cut_to_run(spec, &mut plan, &run);
    let result = run.result;
    let before = Size::of(&plan);
    let mut search = Search {
        spec,
        keep,
        budget,
        started,
        plan: plan.clone(),
        result: result.clone(),
        attempts: 0,
        accepted: 0,
    };
    let mut stop = search.run(&Phase::ALL, progress);
    if stop == Stop::Fixpoint && Size::of(&search.plan).turns > SHRUNK_TURNS_MAX {
        // A second search from the start, in the other order, within what is left of
        // the same bounds; the smaller of the two results is kept.
        let mut second = Search {
            keep: search.keep.clone(),
            plan,
            result,
            accepted: 0,
            ..search
        };
        stop = second.run(&Phase::SOONER_FIRST, progress);
        search.attempts = second.attempts;
        search.accepted += second.accepted;
        if smaller(&second.plan, &search.plan) {
            search.plan = second.plan;
            search.result = second.result;
        }
    }
    Ok(Shrunk {
        original: spec.clone(),
        spec: spec.clone().with_plan(search.plan.clone()),
        after: Size::of(&search.plan),
        invariant: search.keep.invariant,
        witness: search.keep.witness,
        result: search.result,
        attempts: search.attempts,
        accepted: search.accepted,
        stop,
        before,
        chosen: false,
    })
}

/// [`shrink`] of the first violation of `invariant`, wherever it fires in the case, not
/// only when it is the case's first: the case is judged by that invariant alone (its
/// plan's `invariants = [ID]`, written into the scenario file too), so an invariant that
/// fires before it does not end the case. The run is the same (the harness never reacts
/// to a verdict), so its first violation of `invariant` is the one `run --verdicts all`
/// reports. With `witness`, that violation must say `witness`
/// ([`compactsim_model::Violation::says`]) in the case and
/// in every kept candidate: the shrink keeps the kind of the witness, not only its
/// invariant.
pub fn shrink_invariant(
    spec: &CaseSpec,
    invariant: &str,
    witness: Option<&str>,
    budget: Budget,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Shrunk, ShrinkError> {
    let mut plan = spec.plan.as_deref().cloned().unwrap_or_default();
    plan.invariants = Some(vec![invariant.to_string()]);
    let narrowed = spec.clone().with_plan(plan);
    let mut s = match shrink_kept(&narrowed, &[invariant], witness, budget, progress) {
        Err(ShrinkError::Clean) => return Err(ShrinkError::NotFired(invariant.to_string())),
        other => other?,
    };
    s.original = spec.clone();
    s.chosen = true;
    Ok(s)
}

/// Whether `a` is smaller than `b`: fewer turns, then fewer rows, then fewer characters.
fn smaller(a: &CasePlan, b: &CasePlan) -> bool {
    let (a, b) = (Size::of(a), Size::of(b));
    (a.turns, a.rows, a.chars) < (b.turns, b.rows, b.chars)
}

#[cfg(test)]
mod tests;
