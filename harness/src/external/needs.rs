//! What a compactor must declare in its `hello` to serve a case, and the one rule that
//! turns capabilities into a strategy: a strategy needs the passes it calls (`micro`:
//! `micro_pass`; `batch` and `gateway`, which runs the batch loop behind the gateway:
//! `batch_pass`; `both`: both), the default strategy is the first of micro and batch the
//! adapter serves, and a scenario file may require hooks and policies too
//! (`requires = ["hook:cooling_down", "policy:protect_first_n"]`).
//!
//! The Rust models (the reference and the in-process Hermes variants) serve every pass
//! and hook, and the policies they follow (`Policies::HERMES`: every policy but
//! `summary_chain`, see [`Need::met_by_models`]); an external adapter is asked.

use super::compactor::{HOOK_COOLING_DOWN, HOOK_FALLBACK_STREAK, HOOK_USAGE};
use super::wire::Capabilities;
use compactsim_hermes::strategy::StrategyKind;
use compactsim_invariants::Policies;
use std::fmt;

/// The hooks a scenario may require: the hooks the harness sends (adapters/PROTOCOL.md).
pub const HOOKS: [&str; 3] = [HOOK_COOLING_DOWN, HOOK_FALLBACK_STREAK, HOOK_USAGE];

/// The policies a scenario may require, as a `hello` declares them under
/// `capabilities.policies`: the invariants catalogue's policies.
fn policy_names() -> impl Iterator<Item = &'static str> {
    compactsim_invariants::POLICIES.iter().map(|p| p.name)
}

/// One thing a compactor declares (or not) in its `hello`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Need {
    /// `capabilities.micro_pass`.
    MicroPass,
    /// `capabilities.batch_pass`.
    BatchPass,
    /// A hook listed in `capabilities.hooks` (one of [`HOOKS`]).
    Hook(String),
    /// A policy declared in `capabilities.policies` (one of the catalogue's policies).
    Policy(String),
}

impl Need {
    /// Parses a name as a scenario file writes it: `micro_pass`, `batch_pass`,
    /// `hook:NAME` or `policy:NAME`; anything else is an error naming what is known.
    pub fn parse(name: &str) -> Result<Need, String> {
        let known = || {
            let mut all = vec!["micro_pass".to_string(), "batch_pass".to_string()];
            all.extend(HOOKS.iter().map(|h| format!("hook:{h}")));
            all.extend(policy_names().map(|p| format!("policy:{p}")));
            all.join(", ")
        };
        match name.split_once(':') {
            None if name == "micro_pass" => Ok(Need::MicroPass),
            None if name == "batch_pass" => Ok(Need::BatchPass),
            Some(("hook", h)) if HOOKS.contains(&h) => Ok(Need::Hook(h.to_string())),
            Some(("policy", p)) if policy_names().any(|n| n == p) => {
                Ok(Need::Policy(p.to_string()))
            }
            _ => Err(format!("unknown requirement `{name}` (known: {})", known())),
        }
    }

    /// Whether an adapter that declared `caps` meets this need.
    pub fn met_by(&self, caps: &Capabilities) -> bool {
        match self {
            Need::MicroPass => caps.micro_pass,
            Need::BatchPass => caps.batch_pass,
            Need::Hook(h) => caps.hooks.iter().any(|x| x == h),
            Need::Policy(p) => caps.policies.contains_key(p),
        }
    }

    /// Whether the Rust models, which follow `follows` (the compactor's declared
    /// policies, `CompactorSpec::policies`), meet this need: every pass and hook is
    /// theirs; a policy only if they follow it (the reference keeps one rolling summary,
    /// so `summary_chain` is not its).
    pub fn met_by_models(&self, follows: &Policies) -> bool {
        match self {
            Need::MicroPass | Need::BatchPass | Need::Hook(_) => true,
            Need::Policy(p) => follows.declares(p),
        }
    }

    /// The need as messages name it: `capability batch_pass`, `hook cooling_down`,
    /// `policy protect_first_n`.
    pub fn describe(&self) -> String {
        match self {
            Need::MicroPass => "capability micro_pass".into(),
            Need::BatchPass => "capability batch_pass".into(),
            Need::Hook(h) => format!("hook {h}"),
            Need::Policy(p) => format!("policy {p}"),
        }
    }
}

impl fmt::Display for Need {
    /// The name as a scenario file writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Need::MicroPass => f.write_str("micro_pass"),
            Need::BatchPass => f.write_str("batch_pass"),
            Need::Hook(h) => write!(f, "hook:{h}"),
            Need::Policy(p) => write!(f, "policy:{p}"),
        }
    }
}

/// The passes a strategy calls.
pub fn strategy_needs(kind: StrategyKind) -> Vec<Need> {
    match kind {
        StrategyKind::Micro => vec![Need::MicroPass],
        StrategyKind::Batch | StrategyKind::Gateway => vec![Need::BatchPass],
        StrategyKind::Both => vec![Need::MicroPass, Need::BatchPass],
    }
}

/// Whether an adapter that declared `caps` can run `kind`.
pub fn serves(caps: &Capabilities, kind: StrategyKind) -> bool {
    strategy_needs(kind).iter().all(|n| n.met_by(caps))
}

/// The strategy a command runs when none is given: the first of `candidates` the
/// adapter serves (`None`: it serves none of them).
pub fn default_strategy(caps: &Capabilities, candidates: &[StrategyKind]) -> Option<StrategyKind> {
    candidates.iter().copied().find(|k| serves(caps, *k))
}

/// The strategies tried, in order, when no strategy is given: micro, then batch (an
/// adapter with both passes runs micro, as the reference does).
pub const DEFAULT_CANDIDATES: [StrategyKind; 2] = [StrategyKind::Micro, StrategyKind::Batch];

/// The first of `needs` that `caps` does not meet.
pub fn first_missing<'a>(caps: &Capabilities, needs: &'a [Need]) -> Option<&'a Need> {
    needs.iter().find(|n| !n.met_by(caps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caps(micro: bool, batch: bool) -> Capabilities {
        Capabilities {
            micro_pass: micro,
            batch_pass: batch,
            ..Capabilities::default()
        }
    }

    #[test]
    fn strategies_need_their_passes_and_default_to_micro_then_batch() {
        let c = DEFAULT_CANDIDATES;
        assert_eq!(
            default_strategy(&caps(true, true), &c),
            Some(StrategyKind::Micro)
        );
        assert_eq!(
            default_strategy(&caps(false, true), &c),
            Some(StrategyKind::Batch)
        );
        assert_eq!(
            default_strategy(&caps(true, false), &c),
            Some(StrategyKind::Micro)
        );
        assert_eq!(default_strategy(&caps(false, false), &c), None);
        assert!(serves(&caps(false, true), StrategyKind::Gateway));
        assert!(!serves(&caps(true, false), StrategyKind::Gateway));
        assert!(!serves(&caps(false, true), StrategyKind::Both));
        assert!(serves(&caps(true, true), StrategyKind::Both));
        assert_eq!(
            first_missing(&caps(true, false), &strategy_needs(StrategyKind::Both)),
            Some(&Need::BatchPass)
        );
    }

    #[test]
    fn names_parse_round_trip_and_unknown_ones_are_refused() {
        for name in [
            "micro_pass",
            "batch_pass",
            "hook:cooling_down",
            "hook:usage",
            "policy:protect_first_n",
            "policy:failure_cooldown",
        ] {
            assert_eq!(Need::parse(name).unwrap().to_string(), name);
        }
        for bad in ["micro", "hook:should_compress", "policy:nope", "x:y", ""] {
            let e = Need::parse(bad).unwrap_err();
            assert!(
                e.contains(bad) && e.contains("policy:protect_first_n"),
                "{e}"
            );
        }
        let with: Capabilities = serde_json::from_value(json!({
            "micro_pass": true,
            "hooks": ["usage"],
            "policies": {"protect_first_n": {}, "failure_cooldown": {"ms": 60000}}
        }))
        .unwrap();
        assert!(Need::parse("policy:protect_first_n").unwrap().met_by(&with));
        assert!(!Need::parse("policy:newest_reply_verbatim")
            .unwrap()
            .met_by(&with));
        assert!(Need::parse("hook:usage").unwrap().met_by(&with));
        assert!(!Need::parse("hook:cooling_down").unwrap().met_by(&with));
        let without: Capabilities = serde_json::from_value(json!({"batch_pass": true})).unwrap();
        assert!(
            without.policies.is_empty(),
            "no policies field: no policies"
        );
        assert_eq!(Need::BatchPass.describe(), "capability batch_pass");
    }

    #[test]
    fn the_rust_models_serve_passes_hooks_and_hermes_policies_but_not_the_chain_or_template() {
        let hermes = Policies::HERMES;
        for name in [
            "micro_pass",
            "batch_pass",
            "hook:cooling_down",
            "hook:usage",
        ] {
            assert!(Need::parse(name).unwrap().met_by_models(&hermes), "{name}");
        }
        for p in compactsim_invariants::POLICIES.iter().map(|p| p.name) {
            let need = Need::Policy(p.to_string());
            let left_out = ["summary_chain", "marker_template"].contains(&p);
            assert_eq!(need.met_by_models(&hermes), !left_out, "{p}");
        }
        let chain = Need::parse("policy:summary_chain").unwrap();
        assert!(!chain.met_by_models(&hermes));
        let follows_chain = Policies {
            summary_chain: true,
            ..Policies::NONE
        };
        assert!(chain.met_by_models(&follows_chain));
        assert!(!Need::parse("policy:protect_first_n")
            .unwrap()
            .met_by_models(&follows_chain));
    }
}
