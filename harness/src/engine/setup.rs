//! What a case is: its identity (root seed, case id, run parameters, optional plan) and
//! the parameters drawn for it. They are drawn in `draw.rs`, knob by knob from its table;
//! each part from its own stream, so a new knob in one subsystem does not reshuffle the
//! others; a plan's overrides are applied after the draws, so they do not reshuffle
//! anything either.

use super::plan::CasePlan;
use crate::compactor::CompactorSpec;
use crate::shapes::{Family, ShapeParams};
use compactsim_fakes::rng::{self, SimRng};
use compactsim_fakes::summarizer::{Summarizer, SummarizerConfig, SummaryOutcome};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::compactor::micro::MicroConfig;
use compactsim_hermes::compactor::threshold::Thresholds;
use compactsim_hermes::profile::Profile;
use compactsim_hermes::strategy::Strategy;
use serde::Serialize;
use std::sync::Arc;

/// Turns a case may take before its first pass finds work.
pub const WARMUP_TURNS_MAX: u32 = 160;
/// Turns a case may take per requested pass after the warm-up.
pub const TURNS_PER_PASS_MAX: u32 = 4;

/// Everything that identifies a case; equal specs replay byte-identically.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CaseSpec {
    pub root_seed: u64,
    pub case: u32,
    /// Passes that find work (absorb, defrag, or fail trying) before the case ends.
    pub passes: u32,
    pub strategy: Strategy,
    pub bugs: BugSet,
    /// What the case fixes instead of drawing it; `None` is the drawn case.
    pub plan: Option<Arc<CasePlan>>,
    /// The real release the model follows (`--profile`); `None` is the default model.
    /// It changes only what differs per release, after the draws (no stream moves).
    pub profile: Option<Profile>,
    /// The compactor under test (a value: never part of a report).
    #[serde(skip)]
    pub compactor: CompactorSpec,
}

impl CaseSpec {
    pub fn case_seed(&self) -> u64 {
        rng::case_seed(self.root_seed, self.case)
    }

    /// The turn budget: exceeding it ends the case (counted as starved, not a failure).
    pub fn turns_max(&self) -> u32 {
        let default = WARMUP_TURNS_MAX + self.passes * TURNS_PER_PASS_MAX;
        self.plan.as_ref().map_or(default, |p| p.turns_max(default))
    }

    /// The same case with `plan` (an empty plan is no plan).
    pub fn with_plan(mut self, plan: CasePlan) -> CaseSpec {
        self.plan = (!plan.is_empty()).then(|| Arc::new(plan));
        self
    }

    /// Case `case` of root seed 1 under `strategy`, drawn (no switch, plan nor profile):
    /// for the tests of the per-case knobs.
    #[cfg(test)]
    pub(crate) fn drawn(case: u32, strategy: &str) -> CaseSpec {
        CaseSpec {
            root_seed: 1,
            case,
            passes: 25,
            strategy: Strategy::parse(strategy).unwrap(),
            bugs: Default::default(),
            plan: None,
            profile: None,
            compactor: CompactorSpec::Reference,
        }
    }
}

/// Parameters drawn for one case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CaseSetup {
    pub shape: ShapeParams,
    pub thresholds: Thresholds,
    pub summarizer: SummarizerConfig,
    /// Chance, per mille, that a summary call asking for `max_tokens` whose answer must
    /// shrink to fit runs over the cap instead (knob `summarizer.overrun_per_mille`).
    pub summarizer_overrun_per_mille: u32,
    pub micro: MicroConfig,
    /// Chance per turn of a process restart (in-memory compactor state lost), per mille.
    pub restart_per_mille: u32,
}

/// The streams a case keeps drawing from after its knobs were drawn (see
/// [`super::draw`]); a stream its strategy does not use is `None`.
pub struct LiveStreams {
    pub summarizer: SummarizerStreams,
    /// The micro world's per-turn restarts.
    pub faults: SimRng,
    /// The provider's per-call draws (agent loop).
    pub provider: Option<SimRng>,
    /// The per-turn restarts of `batch` and `both` (`loop_restarts.rs`).
    pub loop_restarts: Option<SimRng>,
    /// The gateway's per-message draws (`gateway`).
    pub gateway: Option<GatewayStreams>,
}

/// The fake summarizer's streams: its calls, and the overruns of their `max_tokens`.
#[derive(Clone)]
pub struct SummarizerStreams {
    pub calls: SimRng,
    pub overrun: SimRng,
}

/// The gateway's per-message streams (`gateway/faults.rs`).
pub struct GatewayStreams {
    /// Duplicates, crashes, restarts and commands.
    pub messages: SimRng,
    /// `/stop`.
    pub stop: SimRng,
}

impl CaseSetup {
    pub fn family(&self) -> Family {
        self.shape.family
    }

    /// The case's fake summarizer on `streams`, scripted by `schedule` when set.
    pub fn summarizer(
        &self,
        streams: SummarizerStreams,
        schedule: Option<Vec<SummaryOutcome>>,
    ) -> Summarizer {
        Summarizer::new(self.summarizer.clone(), streams.calls)
            .with_overrun(self.summarizer_overrun_per_mille, streams.overrun)
            .with_schedule(schedule)
    }
}
