//! compactsim-invariants: the oracle. Each invariant is a small struct with a stable id
//! that observes every transition of a case and returns a violation with a witness.
//! This crate depends on the model only: an invariant that shared code with the
//! compactor it judges could not catch that compactor's bugs.

use compactsim_model::{Event, Transition, Violation, Witness};

mod api_valid;
mod bounded_compaction;
mod class;
mod compaction_effective;
mod count_non_growing;
mod exchange_absorbed_once;
mod fact_lists;
pub mod fallback_text;
pub mod gateway;
mod head;
mod head_protected;
mod idset;
mod json_valid;
mod kept_rows_intact;
mod marker_contained;
mod marker_pristine;
pub mod marker_template;
mod no_infinite_loop;
mod no_silent_drop;
mod one_marker_max;
mod oracle;
pub mod policy;
mod preflight_evaluated;
mod summary_failure_safe;
mod testkit;
pub mod text;
pub mod threshold;
mod tokens_non_growing;
mod user_segments;
mod user_turns_batch;
mod user_turns_intact;

pub use api_valid::{ApiRule, ApiValid};
pub use bounded_compaction::{BoundedCompaction, NOOP_STREAK_MAX, PREFLIGHT_PASSES_MAX};
pub use compaction_effective::{
    CompactionEffective, DeclaredTrigger, TriggerPasses, EFFICACY_PASSES_MAX,
};
pub use count_non_growing::CountNonGrowing;
pub use exchange_absorbed_once::ExchangeAbsorbedOnce;
pub use head_protected::{HeadProtected, RESTART_PROBE_EXTRA_ROWS};
pub use kept_rows_intact::KeptRowsIntact;
pub use marker_contained::MarkerContained;
pub use marker_pristine::MarkerPristine;
pub use no_infinite_loop::{
    NoInfiniteLoop, COOLDOWN_MAX_MS, COOLDOWN_MIN_MS, FAILED_TURNS_IN_ROW_MAX, RECOVERY_SLACK_MS,
};
pub use no_silent_drop::NoSilentDrop;
pub use one_marker_max::OneMarkerMax;
pub use oracle::{Oracle, UnknownInvariant};
pub use policy::{FailureCooldown, HeadPolicy, InvariantClass, Policies, PolicyInfo, POLICIES};
pub use preflight_evaluated::PreflightEvaluated;
pub use summary_failure_safe::SummaryFailureSafe;
pub use tokens_non_growing::TokensNonGrowing;
pub use user_turns_intact::UserTurnsIntact;

/// Rows a witness lists at most when an invariant could name many.
pub const MAX_WITNESS_ROWS: usize = 8;

/// Id of the liveness invariant: the engine reports its violations (and an exceeded
/// step budget) as a liveness outcome.
pub const NO_INFINITE_LOOP: &str = "no-infinite-loop";

/// Invariants that judge the agent loop (preflight, provider calls, failed turns); a
/// micro-only run leaves them out.
pub const AGENT_LOOP_INVARIANTS: &[&str] = &[
    bounded_compaction::INFO.id,
    no_infinite_loop::INFO.id,
    summary_failure_safe::INFO.id,
    preflight_evaluated::INFO.id,
];

/// Contract parameters the oracle needs to know about the system under test. They are
/// statements of the specification and the case's configuration, never computed by
/// the compactor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OracleConfig {
    /// Non-system head rows protected from compaction (`protect_first_n`).
    pub protect_first_n: u32,
    /// The batch trigger in tokens (threshold derivation, hermes-domain §2.1); 0 when no
    /// agent loop runs.
    pub trigger_tokens: u32,
    /// `max_attempts`: overflow recovery rounds per turn.
    pub max_attempts: u32,
    /// Rough tokens a request adds to its messages (system prompt and tool schemas).
    pub request_overhead_tokens: u32,
    /// The anti-thrash recovery window of the configured policy (V2.2: 300 s); `None`
    /// when the policy never recovers by itself (V1, V2).
    pub recovery_window_ms: Option<u64>,
    /// The policies the compactor under test declares: a policy invariant, or a policy
    /// rule of a universal one, runs only when its policy is declared (`policy.rs`).
    pub policies: Policies,
    /// The trigger the compactor under test declared (hello `capabilities.trigger`;
    /// nothing declared: the window), judged by `compaction-effective`.
    pub declared_trigger: DeclaredTrigger,
    /// The case's model window in tokens; 0 when unknown (`compaction-effective` is then
    /// off unless the trigger is declared in tokens).
    pub window_tokens: u64,
    /// Which passes are held to the declared trigger (hello
    /// `capabilities.trigger_passes`; absent: all).
    pub trigger_passes: TriggerPasses,
    /// Passes in a row `compaction-effective` lets a compactor leave the transcript over
    /// the window: [`EFFICACY_PASSES_MAX`] where an agent loop recovers from an overflow;
    /// 1 in a micro-only case, which ends at the window after the turn's pass.
    pub window_passes_max: u32,
}

impl Default for OracleConfig {
    fn default() -> Self {
        OracleConfig {
            protect_first_n: 3,
            trigger_tokens: 0,
            max_attempts: 3,
            request_overhead_tokens: 0,
            recovery_window_ms: None,
            policies: Policies::HERMES,
            declared_trigger: DeclaredTrigger::Window,
            window_tokens: 0,
            trigger_passes: TriggerPasses::default(),
            window_passes_max: EFFICACY_PASSES_MAX,
        }
    }
}

/// Catalogue entry of an invariant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvariantInfo {
    /// Stable id, as used on the command line, in reports and in scenario files.
    pub id: &'static str,
    /// One-line statement.
    pub statement: &'static str,
    /// Bug ids this invariant exists for.
    pub catches: &'static [&'static str],
    /// Universal, or the policy a compactor must declare to be judged by it.
    pub class: InvariantClass,
}

/// One checker. `observe` sees every transition of a case in order, from the first; one
/// instance serves one case (it keeps small per-case state).
pub trait Invariant: Send + BoxClone {
    fn info(&self) -> InvariantInfo;

    /// Whether `observe` judges a transition carrying `event` (as opposed to only
    /// updating its state). Asked before `observe`, with the state before the
    /// transition; the oracle counts these as "checked".
    fn checks(&self, _event: &Event) -> bool {
        true
    }

    /// Checks one transition; returns the evidence when the invariant fails on it.
    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness>;
}

/// A boxed copy of an invariant with its state (a forked case continues from the
/// state its fork point left). Every `Clone` invariant has it.
pub trait BoxClone {
    fn box_clone(&self) -> Box<dyn Invariant>;
}

impl<T: Invariant + Clone + 'static> BoxClone for T {
    fn box_clone(&self) -> Box<dyn Invariant> {
        Box::new(self.clone())
    }
}

/// Builds a violation of `info` on transition `t`.
pub fn violation(
    info: InvariantInfo,
    t: &Transition<'_>,
    message: impl Into<String>,
    witness: Witness,
) -> Violation {
    Violation {
        invariant: info.id.to_string(),
        turn: t.event.turn(),
        step: t.step,
        message: message.into(),
        witness,
    }
}

/// Builds one invariant of the catalogue.
type Build = fn(OracleConfig) -> Box<dyn Invariant>;

/// The catalogue in its fixed order, with a constructor per entry. When one transition
/// breaks several invariants the first in this order names the failure, so the specific
/// ones come before the general ones (a window dropped with no summary also leaves an
/// API-invalid list: summary-failure-safe names it).
const REGISTRY: &[(InvariantInfo, Build)] = &[
    (one_marker_max::INFO, |c| {
        Box::new(OneMarkerMax {
            chain: c.policies.summary_chain,
        })
    }),
    (count_non_growing::INFO, |_| {
        Box::<CountNonGrowing>::default()
    }),
    (tokens_non_growing::INFO, |_| {
        Box::<TokensNonGrowing>::default()
    }),
    (summary_failure_safe::INFO, |c| {
        Box::new(SummaryFailureSafe::new(c.policies))
    }),
    (user_turns_intact::INFO, |c| {
        Box::new(UserTurnsIntact::new(c))
    }),
    (api_valid::INFO, |_| Box::<ApiValid>::default()),
    (head_protected::INFO, |c| Box::new(HeadProtected::new(c))),
    (exchange_absorbed_once::INFO, |c| {
        Box::new(ExchangeAbsorbedOnce::new(c))
    }),
    (no_silent_drop::INFO, |c| {
        Box::new(NoSilentDrop::new(c.policies))
    }),
    (kept_rows_intact::INFO, |c| {
        Box::new(KeptRowsIntact::new(c.policies))
    }),
    (marker_contained::INFO, |_| {
        Box::<MarkerContained>::default()
    }),
    (marker_pristine::INFO, |_| Box::new(MarkerPristine)),
    (bounded_compaction::INFO, |c| {
        Box::new(BoundedCompaction::new(c))
    }),
    (compaction_effective::INFO, |c| {
        Box::new(CompactionEffective::new(c))
    }),
    (no_infinite_loop::INFO, |c| Box::new(NoInfiniteLoop::new(c))),
    (preflight_evaluated::INFO, |c| {
        Box::new(PreflightEvaluated::new(c))
    }),
];

/// Every invariant this crate implements, in catalogue order (the order of reports and
/// of `Oracle::observe`'s violations).
pub fn catalogue() -> Vec<InvariantInfo> {
    REGISTRY.iter().map(|(info, _)| *info).collect()
}

/// The ids of `ids` that a compactor declaring `policies` is judged by (a policy
/// invariant whose policy is not declared is left out), order kept.
pub fn judged_ids(ids: Vec<&'static str>, policies: Policies) -> Vec<&'static str> {
    ids.into_iter()
        .filter(|id| {
            REGISTRY
                .iter()
                .find(|(info, _)| info.id == *id)
                .is_none_or(|(info, _)| policies.judges(info.class))
        })
        .collect()
}

/// The catalogue ids a micro-only run checks: all but [`AGENT_LOOP_INVARIANTS`].
pub fn micro_catalogue_ids() -> Vec<&'static str> {
    REGISTRY
        .iter()
        .map(|(info, _)| info.id)
        .filter(|id| !AGENT_LOOP_INVARIANTS.contains(id))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn is_kebab(id: &str) -> bool {
        !id.is_empty()
            && !id.starts_with('-')
            && !id.ends_with('-')
            && !id.contains("--")
            && id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    }

    #[test]
    fn catalogue_ids_are_unique_kebab_case_and_documented() {
        let all = catalogue();
        let ids: BTreeSet<&str> = all.iter().map(|i| i.id).collect();
        assert_eq!(ids.len(), all.len(), "duplicate id in {all:?}");
        for info in &all {
            assert!(is_kebab(info.id), "{} is not kebab-case", info.id);
            assert!(
                !info.statement.trim().is_empty(),
                "{} has no statement",
                info.id
            );
        }
        assert!(!is_kebab("Api_valid") && !is_kebab("api--valid") && !is_kebab("-x"));
    }

    #[test]
    fn catalogue_order_is_fixed_and_matches_each_invariant() {
        let ids: Vec<&str> = catalogue().iter().map(|i| i.id).collect();
        assert_eq!(
            ids,
            [
                "one-marker-max",
                "count-non-growing",
                "tokens-non-growing",
                "summary-failure-safe",
                "user-turns-intact",
                "api-valid",
                "head-protected",
                "exchange-absorbed-once",
                "no-silent-drop",
                "kept-rows-intact",
                "marker-contained",
                "marker-pristine",
                "bounded-compaction",
                "compaction-effective",
                "no-infinite-loop",
                "preflight-evaluated",
            ]
        );
        assert_eq!(
            micro_catalogue_ids().len(),
            ids.len() - AGENT_LOOP_INVARIANTS.len()
        );
        assert!(ids.contains(&NO_INFINITE_LOOP));
        for (info, build) in REGISTRY {
            assert_eq!(build(OracleConfig::default()).info(), *info);
        }
        let classes: Vec<(&str, InvariantClass)> = catalogue()
            .iter()
            .filter(|i| i.class != InvariantClass::Universal)
            .map(|i| (i.id, i.class))
            .collect();
        assert_eq!(
            classes,
            [(
                "exchange-absorbed-once",
                InvariantClass::Policy(policy::ABSORB_EXCHANGES)
            )]
        );
    }
}
