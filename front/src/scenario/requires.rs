//! What a scenario needs from the compactor under test, and why an adapter that lacks it
//! is skipped (reported with the reason, never failed).
//!
//! A scenario needs:
//! - the passes its strategy calls (`strategy = "batch"`: `batch_pass`; see
//!   `compactsim_harness::external::needs::strategy_needs`);
//! - what its `requires = [...]` lists: `micro_pass`, `batch_pass`, `hook:NAME`,
//!   `policy:NAME`;
//! - the policy of every invariant it names (the expected violation and the `invariants`
//!   narrowing) that holds only for a compactor declaring that policy: see
//!   [`invariant_policy`], the one mapping from invariants to policies.
//!
//! Bug switches act in the Rust reference models only: a file with `bugs` is skipped by
//! an external adapter. The Rust models serve every pass and hook and the policies they
//! follow (every Hermes policy, not `summary_chain`): a file needing another policy is
//! skipped by them too (`Need::met_by_models`).

use super::convert::Located;
use super::expect::Expect;
use super::Scenario;
use compactsim_harness::compactor::CompactorSpec;
use compactsim_harness::external::argv::{self, quote};
use compactsim_harness::external::needs::{strategy_needs, Need};
use compactsim_harness::external::session::AdapterSpec;
use compactsim_harness::external::wire::Capabilities;
use std::ops::Range;
use std::path::Path;
use toml::Spanned;

/// The policy a file that names invariant `id` (its expected violation, its `invariants`
/// narrowing) needs the compactor to declare, if any: a policy invariant
/// (`InvariantClass::Policy(p)`) judges only a compactor declaring `p`; `head-protected`
/// is the one universal invariant whose expected violations come from a policy rule
/// (`protect_first_n`): everything it judges past the system prompt is that rule, so
/// without the policy the file would judge nothing it was written for. `None`: the
/// invariant holds for every compactor.
pub fn invariant_policy(id: &str) -> Option<&'static str> {
    use compactsim_invariants::{catalogue, InvariantClass};
    if id == "head-protected" {
        return Some(compactsim_invariants::policy::PROTECT_FIRST_N);
    }
    match catalogue().into_iter().find(|info| info.id == id)?.class {
        InvariantClass::Policy(p) => Some(p),
        InvariantClass::Universal => None,
    }
}

/// `requires = [...]`: each name parsed (an unknown name is an error at its own span;
/// so is a name listed twice).
pub fn parse(list: &Spanned<Vec<Spanned<String>>>) -> Result<Vec<Need>, Located> {
    let err = |span: Range<usize>, message: String| Err((Some(span), message));
    let mut needs = Vec::new();
    for name in list.get_ref() {
        let need = match Need::parse(name.get_ref()) {
            Ok(n) => n,
            Err(e) => return err(name.span(), e),
        };
        if needs.contains(&need) {
            return err(name.span(), format!("requirement `{need}` is listed twice"));
        }
        needs.push(need);
    }
    Ok(needs)
}

/// The pinned venvs of the real packages, relative to the repository, each with the
/// command that makes it: (the venv directory an adapter command's interpreter starts
/// with, the setup command). A fresh clone has none of them.
pub const PINNED_VENVS: [(&str, &str); 3] = [
    ("target/hermes-venvs", "bash adapters/hermes/setup-venv.sh"),
    (
        "target/framework-venvs/langchain-1.5.0",
        "bash adapters/langchain/setup-venv.sh",
    ),
    (
        "target/framework-venvs/adk-2.13.0",
        "bash adapters/adk/setup-venv.sh",
    ),
];

/// The skip reason of a file whose adapter needs pinned venv `dir`, which `setup` makes
/// (the console gathers every such file into one line).
pub fn venv_missing_reason(dir: &str, setup: &str) -> String {
    format!("venv not installed: {dir} ({setup})")
}

/// Why `spec` cannot run on this machine yet: its program is an interpreter under one of
/// [`PINNED_VENVS`] (as the command writes it) and that file does not exist, found
/// neither beside the scenario file nor from the working directory. `None` for any other
/// adapter, installed or not: a missing program elsewhere is the adapter's failure (exit
/// 4), never a skip.
pub fn missing_venv(spec: &AdapterSpec) -> Option<String> {
    let written = argv::split(&spec.command).ok()?.into_iter().next()?;
    let (dir, setup) = PINNED_VENVS
        .iter()
        .find(|(dir, _)| written.starts_with(&format!("{dir}/")))?;
    let program = spec.argv().ok()?.into_iter().next()?;
    (!Path::new(&program).exists()).then(|| venv_missing_reason(dir, setup))
}

/// One thing a scenario needs, and where the need comes from (for the skip reason).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Needed {
    pub need: Need,
    /// `strategy batch`, `requires`, `invariant head-protected`.
    pub why: String,
}

impl Scenario {
    /// Everything the compactor under test must declare to serve this scenario, each
    /// once, with the first reason found: the strategy's passes, `requires`, the policies
    /// of the invariants the file names.
    pub fn needs(&self) -> Vec<Needed> {
        let mut out: Vec<Needed> = Vec::new();
        let mut add = |need: Need, why: String| {
            if !out.iter().any(|n| n.need == need) {
                out.push(Needed { need, why });
            }
        };
        let kind = self.spec.strategy.kind();
        for need in strategy_needs(kind) {
            add(need, format!("strategy {kind}"));
        }
        for need in &self.requires {
            add(need.clone(), "requires".to_string());
        }
        let expected = match &self.expect {
            Expect::Violated { invariant, .. } => Some(invariant.as_str()),
            Expect::Clean | Expect::Exit(_) => None,
        };
        let narrowed = self.spec.plan.as_ref().and_then(|p| p.invariants.as_ref());
        let named = expected
            .into_iter()
            .chain(narrowed.into_iter().flatten().map(String::as_str));
        for id in named {
            if let Some(policy) = invariant_policy(id) {
                add(Need::Policy(policy.to_string()), format!("invariant {id}"));
            }
        }
        out
    }

    /// Why the compactor this scenario runs cannot serve it (`None`: it can). `caps`:
    /// what its adapter declared (`None`: unknown, e.g. the adapter could not start; the
    /// case runs and reports that failure). The Rust models are judged by the policies
    /// they follow.
    pub fn skip_reason(&self, caps: Option<&Capabilities>) -> Option<String> {
        let CompactorSpec::External(pool) = &self.spec.compactor else {
            let follows = self.spec.compactor.policies();
            return self
                .needs()
                .into_iter()
                .find(|n| !n.need.met_by_models(&follows))
                .map(|n| {
                    format!(
                        "the built-in model does not follow {}, needed by {}",
                        n.need.describe(),
                        n.why
                    )
                });
        };
        let command = quote(&pool.spec().command);
        if let Some(reason) = missing_venv(pool.spec()) {
            return Some(reason);
        }
        if !self.spec.bugs.is_empty() {
            return Some(format!(
                "bug switches ({}) act in the built-in model only, not in adapter {command}",
                self.spec.bugs.ids().join(", ")
            ));
        }
        let caps = caps?;
        self.needs()
            .into_iter()
            .find(|n| !n.need.met_by(caps))
            .map(|n| {
                format!(
                    "adapter {command} does not declare {}, needed by {}",
                    n.need.describe(),
                    n.why
                )
            })
    }
}
