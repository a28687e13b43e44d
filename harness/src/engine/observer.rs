//! The observer: the one place a transition is shown to the oracle, recorded in the
//! trace and folded into the case's result — for every loop.

use super::scramble::{scramble, Labels};
use super::verdicts::{self, Verdicts};
use super::work_budget::{WorkMeter, WORK_BUDGET_REACHED};
use super::{CaseOutcome, CaseResult, Record, TraceLine};
use compactsim_hermes::agent::Sink;
use compactsim_invariants::{Oracle, NO_INFINITE_LOOP};
use compactsim_model::{
    sync_copy, tokens_rough_total, Delta, Event, Message, ServedCall, Transition, Violation,
    Witness,
};

/// Reports transitions to the oracle and records the case's result.
#[derive(Clone)]
pub(crate) struct Observer {
    pub oracle: Oracle,
    pub step: u32,
    pub step_budget: u32,
    /// Rows shown to the oracle so far, against the case's work budget.
    work: WorkMeter,
    pub record: Record,
    pub result: CaseResult,
    /// Rough tokens of the list after the last transition.
    pub tokens: u64,
    /// Summarizer calls served for the next transition.
    pub served: Vec<ServedCall>,
    /// How events' labels are shown to the oracle.
    labels: Labels,
    /// A copy of the list given back after a transition, lent again as the next
    /// transition's `before` (see [`Sink::copy_of`]).
    spare: Vec<Message>,
    /// The list `spare` is known to equal (address and length of the last `after`),
    /// kept through transitions that provably only append or change nothing; `None`
    /// when unknown (the next lend compares).
    spare_in_step: Option<ListAt>,
    /// The case has ended: a violation in [`Verdicts::First`], a liveness outcome, or a
    /// budget; the loops stop at the next transition they would report.
    halted: bool,
}

/// A list's address and length: with an observer seeing every change to the live
/// list, equal `ListAt`s between two transitions mean the same rows.
type ListAt = (usize, usize);

fn at(rows: &[Message]) -> ListAt {
    (rows.as_ptr() as usize, rows.len())
}

impl Observer {
    /// A copy to observe a forked case: the same state, but the list it lends is not
    /// known to equal the copy's (another address), so the next lend compares.
    pub fn fork(&self) -> Observer {
        Observer {
            spare_in_step: None,
            ..self.clone()
        }
    }

    /// An observer that ends the case as looping after `step_budget` transitions.
    pub fn new(oracle: Oracle, step_budget: u32, record: Record, result: CaseResult) -> Self {
        Observer {
            oracle,
            step: 0,
            step_budget,
            work: WorkMeter::default(),
            record,
            result,
            tokens: 0,
            served: Vec::new(),
            labels: Labels::AsReported,
            spare: Vec::new(),
            spare_in_step: None,
            halted: false,
        }
    }

    /// Whether the case has ended (see [`Observer::judge`]).
    pub fn halted(&self) -> bool {
        self.halted
    }

    /// Folds one transition's violations into the result and says whether the case
    /// goes on. The first failing transition sets the outcome; every invariant is
    /// noted in `result.verdicts` once (its first violation). The case ends at the first
    /// violation in [`Verdicts::First`], and at a liveness outcome in either mode.
    pub fn judge(&mut self, violations: Vec<Violation>) -> bool {
        if violations.is_empty() {
            return !self.halted;
        }
        verdicts::note(&mut self.result.verdicts, &violations);
        let liveness = violations.iter().all(|v| v.invariant == NO_INFINITE_LOOP);
        if self.result.outcome == CaseOutcome::Clean {
            self.result.outcome = outcome_of(violations);
        }
        if liveness || self.record.verdicts == Verdicts::First {
            self.halted = true;
        }
        !self.halted
    }

    /// Ends the case with a liveness violation (a budget ran out): the outcome when the
    /// case had none yet, a verdict either way.
    fn exhausted(&mut self, v: Violation) -> bool {
        verdicts::note(&mut self.result.verdicts, std::slice::from_ref(&v));
        if self.result.outcome == CaseOutcome::Clean {
            self.result.outcome = CaseOutcome::Liveness(v);
        }
        self.halted = true;
        false
    }

    /// This observer, showing the oracle the events' labels as `labels` says.
    pub fn with_labels(mut self, labels: Labels) -> Self {
        self.labels = labels;
        self
    }
}

impl Sink for Observer {
    fn observe(&mut self, event: Event, before: &[Message], after: &[Message]) -> bool {
        self.observe_with(event, (before, after), None)
    }

    fn observe_by(&mut self, event: Event, lists: (&[Message], &[Message]), delta: Delta) -> bool {
        self.observe_with(event, lists, Some(delta))
    }

    fn bump(&mut self, counter: &'static str) {
        self.result.coverage.bump(counter);
    }

    fn add(&mut self, counter: &'static str, n: u64) {
        self.result.coverage.add(counter, n);
    }

    fn served(&mut self, calls: Vec<ServedCall>) {
        self.served = calls;
    }

    fn copy_of(&mut self, live: &[Message]) -> Vec<Message> {
        let mut copy = std::mem::take(&mut self.spare);
        if self.spare_in_step.take() != Some(at(live)) {
            sync_copy(&mut copy, live);
        }
        debug_assert!(copy.as_slice() == live, "lent copy out of step");
        copy
    }

    fn give_back(&mut self, copy: Vec<Message>) {
        self.spare = copy;
        self.spare_in_step = None;
    }

    fn give_back_in_step(&mut self, copy: Vec<Message>, live: &[Message]) {
        debug_assert!(copy.as_slice() == live, "a copy given back in step differs");
        self.spare = copy;
        self.spare_in_step = Some(at(live));
    }
}

impl Observer {
    /// [`Sink::observe`], with the delta when the caller computed it.
    fn observe_with(
        &mut self,
        event: Event,
        (before, after): (&[Message], &[Message]),
        delta: Option<Delta>,
    ) -> bool {
        self.keep_spare_in_step(before, after);
        let served = std::mem::take(&mut self.served);
        let event = match self.labels {
            Labels::AsReported => event,
            Labels::Scrambled => scramble(event),
        };
        let t = match delta {
            Some(d) => Transition::with_delta(self.step, &event, (before, after), &served, d),
            None => Transition::new(self.step, &event, before, after, &served),
        };
        let violations = self.oracle.observe(&t);
        let lost = super::fallback_loss::facts_lost(&t);
        if lost > 0 {
            self.result
                .coverage
                .add(super::coverage::FACTS_LOST_STATIC_FALLBACK, lost);
        }
        if self.record.trace {
            self.result
                .trace
                .push(TraceLine::new(self.step, &event, before, after));
        }
        self.step += 1;
        self.result.transitions = self.step;
        if !std::ptr::eq(before, after) {
            let appended =
                std::ptr::eq(before.as_ptr(), after.as_ptr()) && before.len() < after.len();
            self.tokens = if appended {
                self.tokens + tokens_rough_total(&after[before.len()..])
            } else {
                tokens_rough_total(after)
            };
            self.result.tokens_max = self.result.tokens_max.max(self.tokens);
            self.result.messages_max = self.result.messages_max.max(after.len() as u32);
        }
        if !self.judge(violations) {
            return false;
        }
        if self.step >= self.step_budget {
            return self.exhausted(step_budget_violation(&t, self.step_budget));
        }
        if !self.work.charge(before.len(), after.len()) {
            // The harness's own limit: the case stops, judged so far, not failed.
            self.result.coverage.bump(WORK_BUDGET_REACHED);
            self.halted = true;
            return false;
        }
        true
    }
}

impl Observer {
    /// Keeps `spare` equal to the live list through a transition that provably only
    /// appended (`before` a shorter view of `after`'s memory: the appended rows are
    /// copied) or changed nothing (the same slice); forgets it after any other.
    fn keep_spare_in_step(&mut self, before: &[Message], after: &[Message]) {
        if self.spare_in_step != Some(at(before)) {
            self.spare_in_step = None;
            return;
        }
        if std::ptr::eq(before, after) {
            return;
        }
        let appended = std::ptr::eq(before.as_ptr(), after.as_ptr()) && before.len() < after.len();
        self.spare_in_step = if appended {
            self.spare.extend_from_slice(&after[before.len()..]);
            Some(at(after))
        } else {
            None
        };
    }
}

/// Violations of the liveness invariant alone are a liveness outcome (exit 3); any
/// other violation on the same transition makes it a violation (exit 1).
fn outcome_of(violations: Vec<Violation>) -> CaseOutcome {
    if violations.iter().all(|v| v.invariant == NO_INFINITE_LOOP) {
        CaseOutcome::Liveness(violations.into_iter().next().expect("non-empty"))
    } else {
        CaseOutcome::Violation(violations)
    }
}

fn step_budget_violation(t: &Transition<'_>, budget: u32) -> Violation {
    let message = format!("step budget of {budget} transitions exceeded");
    Violation {
        invariant: NO_INFINITE_LOOP.to_string(),
        turn: t.event.turn(),
        step: t.step,
        message: message.clone(),
        witness: Witness::default()
            .fact(message)
            .fact(format!("last event: {}", t.event.describe())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{empty_result, CaseSpec};
    use crate::shapes::Family;
    use compactsim_hermes::bug_set::BugSet;
    use compactsim_hermes::strategy::Strategy;
    use compactsim_invariants::OracleConfig;
    use compactsim_model::{MsgId, Role};

    fn observer(step_budget: u32) -> Observer {
        let spec = CaseSpec {
            root_seed: 1,
            case: 0,
            passes: 1,
            strategy: Strategy::parse("batch").unwrap(),
            bugs: BugSet::none(),
            plan: None,
            profile: None,
            compactor: Default::default(),
        };
        Observer::new(
            Oracle::new(OracleConfig::default()),
            step_budget,
            Record::default(),
            empty_result(&spec, Family::Chatty),
        )
    }

    #[test]
    fn exceeding_the_step_budget_is_a_liveness_outcome_naming_no_infinite_loop() {
        let rows = vec![Message::new(
            MsgId(0),
            Role::User,
            compactsim_model::Content::empty(),
        )];
        let mut o = observer(3);
        let ev = Event::Preflight(compactsim_model::Preflight {
            turn: 0,
            now_ms: 0,
            messages: 1,
            messages_rough_tokens: 0,
            request_rough_tokens: 0,
            trigger_tokens: 1_000,
            decision: compactsim_model::PreflightDecision::BelowTrigger,
        });
        assert!(o.observe(ev.clone(), &rows, &rows));
        assert!(o.observe(ev.clone(), &rows, &rows));
        assert!(!o.observe(ev, &rows, &rows));
        let CaseOutcome::Liveness(v) = &o.result.outcome else {
            panic!("{:?}", o.result.outcome)
        };
        assert_eq!(v.invariant, NO_INFINITE_LOOP);
        assert_eq!(
            v.witness.facts[1],
            "last event: turn 0: preflight at 0.000s: 1 messages, 0 tokens (request 0) \
             vs trigger 1000 -> below the trigger"
        );
        assert_eq!(o.result.transitions, 3);
    }

    #[test]
    fn only_liveness_violations_alone_make_a_liveness_outcome() {
        let v = |id: &str| Violation {
            invariant: id.to_string(),
            turn: 1,
            step: 2,
            message: String::new(),
            witness: Witness::default(),
        };
        assert!(matches!(
            outcome_of(vec![v(NO_INFINITE_LOOP)]),
            CaseOutcome::Liveness(_)
        ));
        assert!(matches!(
            outcome_of(vec![v("api-valid"), v(NO_INFINITE_LOOP)]),
            CaseOutcome::Violation(_)
        ));
    }
}
