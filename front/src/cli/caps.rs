//! Capabilities are read: the one place a command that runs cases (`run`, `sweep`,
//! `replay`, `shrink`, `diff`) turns `--strategy` and the compactor under test into the
//! strategy it runs. An external adapter is asked for its `hello` here, before any case
//! (the child it starts stays in the pool and runs the first cases, so the start-up is
//! paid once); with no `--strategy` the strategy is the first the adapter serves (micro,
//! then batch; under `--profile` the first of the profile's), and a `--strategy` it does
//! not serve is bad input naming the capability it lacks. `scenario` reads the same
//! capabilities to skip the files an adapter cannot serve (`scenario::Scenario::needs`),
//! and `selftest --compactor external` runs every strategy they allow.

use super::exit::Failure;
use compactsim_harness::compactor::CompactorSpec;
use compactsim_harness::external::argv::quote;
use compactsim_harness::external::needs::{
    default_strategy, first_missing, strategy_needs, DEFAULT_CANDIDATES,
};
use compactsim_harness::external::wire::Capabilities;
use compactsim_hermes::profile::Profile;
use compactsim_hermes::strategy::{Strategy, StrategyKind};

/// What the compactor under test declared in its `hello`: `None` for the Rust models
/// (they serve every strategy and hook, and follow every Hermes policy, not
/// `summary_chain`: `Need::met_by_models`); an adapter that cannot start or greet is
/// an adapter failure (exit 4, naming the command and quoting its stderr).
pub fn capabilities(compactor: &CompactorSpec) -> Result<Option<Capabilities>, Failure> {
    let CompactorSpec::External(pool) = compactor else {
        return Ok(None);
    };
    let info = pool.hello().map_err(|e| Failure::internal(e.to_string()))?;
    Ok(Some(info.capabilities))
}

/// The strategy a command runs, as `--strategy` would name it: `given`, checked against
/// the capabilities of an external `compactor`, or (none given) the default they choose.
/// `None`: none given and the compactor is one of the Rust models (the command's own
/// default applies). `profile`: `--profile`, whose strategies are the candidates.
pub fn strategy(
    compactor: &CompactorSpec,
    given: Option<&str>,
    profile: Option<Profile>,
) -> Result<Option<String>, Failure> {
    let Some(caps) = capabilities(compactor)? else {
        return Ok(given.map(str::to_string));
    };
    let command = compactor
        .adapter()
        .map_or_else(String::new, |a| quote(&a.command));
    match given {
        Some(name) => {
            let kind = Strategy::parse(name).map_err(Failure::bad_input)?.kind();
            refuse_unserved(&caps, kind, &command)?;
            Ok(Some(name.to_string()))
        }
        None => {
            let candidates: Vec<StrategyKind> = match profile {
                Some(p) => p
                    .strategies()
                    .iter()
                    .filter_map(|n| Strategy::parse(n).ok())
                    .map(Strategy::kind)
                    .collect(),
                None => DEFAULT_CANDIDATES.to_vec(),
            };
            match default_strategy(&caps, &candidates) {
                Some(kind) => Ok(Some(kind.name().to_string())),
                None => Err(Failure::bad_input(serves_none(
                    &command,
                    &candidates,
                    profile,
                ))),
            }
        }
    }
}

/// Bad input when the adapter `command` with `caps` does not serve `kind`, naming the
/// first capability it lacks.
pub fn refuse_unserved(
    caps: &Capabilities,
    kind: StrategyKind,
    command: &str,
) -> Result<(), Failure> {
    let needs = strategy_needs(kind);
    match first_missing(caps, &needs) {
        None => Ok(()),
        Some(need) => Err(Failure::bad_input(format!(
            "adapter {command} does not declare {}, which --strategy {kind} needs",
            need.describe()
        ))),
    }
}

fn serves_none(command: &str, candidates: &[StrategyKind], profile: Option<Profile>) -> String {
    let names: Vec<&str> = candidates.iter().map(|k| k.name()).collect();
    match profile {
        None => format!(
            "adapter {command} declares neither micro_pass nor batch_pass in its hello: it \
             serves no strategy"
        ),
        Some(p) => format!(
            "adapter {command} serves none of the strategies of --profile {} ({}): its hello \
             lacks the passes they need",
            p.name(),
            names.join(", ")
        ),
    }
}
