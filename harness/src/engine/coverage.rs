//! Coverage counters ("sometimes" assertions): how often each fault path and outcome
//! was reached, so a suite that never exercises a path shows it as 0.

use compactsim_hermes::strategy::Strategy;
use std::collections::BTreeMap;

/// Every counter a micro case can bump, so the report lists unreached ones as 0.
pub const COUNTERS: &[&str] = &[
    "micro.absorbed",
    "micro.cadence",
    "micro.defrag",
    "micro.defrag_failed",
    "micro.exchange_skipped",
    "micro.no_exchange",
    "micro.summarize_failed",
    "repair.merged_rows",
    "restart",
];

/// Every counter the agent loop can bump (strategies `batch` and `both`).
pub const AGENT_COUNTERS: &[&str] = &[
    "agent.repairs",
    "antithrash.blocked",
    "antithrash.recovered",
    "batch.aborted",
    "batch.compacted",
    "batch.fallback",
    "batch.noop",
    "batch.summary_expanded",
    "overflow.disconnect",
    "overflow.generic_400",
    "overflow.payload_too_large",
    "overflow.phrase",
    "overflow.recoveries",
    "postresponse.passes",
    "preflight.below_trigger",
    "preflight.blocked",
    "preflight.compress",
    "preflight.cooldown",
    "preflight.deferred",
    "preflight.gated",
    "preflight.passes",
    "provider.answered",
    "provider.client_errors",
    "provider.disconnects",
    "provider.overflow_errors",
    "provider.retries",
    "provider.server_errors",
    "provider.transient",
    "session.resets",
    "session.resumed",
    "session.rotations",
    "turns.exhausted",
    "turns.failed",
    "turns.finished",
];

/// What the `max_tokens` of summary calls did (`fakes/src/summarizer`, `CapCounts`):
/// calls that asked for it, answers written to fit it, the facts they dropped, and the
/// `length` failures (a drawn overrun, or no room for the facts the answer must keep).
/// Listed only by a case whose compactor asked for `max_tokens` (the Rust reference
/// never does; an external adapter may): a run whose calls never carry the cap cannot
/// reach these paths, and its report stays as it was.
pub const CAP_COUNTERS: &[&str] = &[
    "summarizer.max_tokens.asked",
    "summarizer.max_tokens.facts_dropped",
    "summarizer.max_tokens.fitted",
    "summarizer.max_tokens.length_no_room",
    "summarizer.max_tokens.length_overrun",
];

/// Facts lost to a static fallback: on a batch pass that wrote a summary row while no
/// summarizer call was answered, the facts spelled by the rows that left and by no row
/// after the pass (`observer.rs`). Listed only by a case where it is not 0, so a run
/// whose fallbacks lose nothing keeps its report.
pub const FACTS_LOST_STATIC_FALLBACK: &str = "batch.facts_lost_static_fallback";

/// Adds `caps` to `coverage`, every counter of [`CAP_COUNTERS`] (zeros too) when a call
/// asked for `max_tokens`, none otherwise.
pub fn add_caps(coverage: &mut Coverage, caps: compactsim_fakes::summarizer::CapCounts) {
    if caps.asked == 0 {
        return;
    }
    let values = [
        caps.asked,
        caps.facts_dropped,
        caps.fitted,
        caps.no_room,
        caps.overrun,
    ];
    for (name, n) in CAP_COUNTERS.iter().zip(values) {
        coverage.add(name, n);
    }
}

/// The counters a run of `strategy` lists: micro's list is unchanged by the agent loop;
/// `batch` lists the agent loop's; `both` adds the micro pass outcomes (the agent loop
/// reports its repairs as `agent.repairs` and has no process restarts).
pub fn counters(strategy: Strategy) -> Vec<&'static str> {
    let mut all: Vec<&'static str> = match strategy {
        Strategy::Micro => return COUNTERS.to_vec(),
        Strategy::Batch(_) => vec![],
        Strategy::Gateway(_) => crate::engine::gateway::GATEWAY_COUNTERS.to_vec(),
        Strategy::Both(_) => COUNTERS
            .iter()
            .copied()
            .filter(|c| c.starts_with("micro.") || *c == "restart")
            .collect(),
    };
    all.extend_from_slice(AGENT_COUNTERS);
    all.sort_unstable();
    all
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage(BTreeMap<&'static str, u64>);

impl Coverage {
    pub fn bump(&mut self, counter: &'static str) {
        self.add(counter, 1);
    }

    pub fn add(&mut self, counter: &'static str, n: u64) {
        debug_assert!(
            COUNTERS.contains(&counter)
                || AGENT_COUNTERS.contains(&counter)
                || CAP_COUNTERS.contains(&counter)
                || counter == FACTS_LOST_STATIC_FALLBACK
                || crate::engine::gateway::GATEWAY_COUNTERS.contains(&counter)
                || crate::engine::gateway::STORE_COUNTERS.contains(&counter)
                || counter == super::work_budget::WORK_BUDGET_REACHED,
            "uncatalogued counter {counter}"
        );
        *self.0.entry(counter).or_default() += n;
    }

    pub fn get(&self, counter: &str) -> u64 {
        self.0.get(counter).copied().unwrap_or(0)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.0.iter().map(|(k, v)| (*k, *v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_counters_are_sorted_unique_and_only_listed_for_loop_strategies() {
        let mut sorted = AGENT_COUNTERS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, AGENT_COUNTERS);
        assert!(AGENT_COUNTERS.iter().all(|c| !COUNTERS.contains(c)));
        assert_eq!(counters(Strategy::Micro), COUNTERS);
        let batch = counters(Strategy::parse("batch").unwrap());
        assert_eq!(batch, AGENT_COUNTERS);
        let both = counters(Strategy::parse("both").unwrap());
        assert!(both.contains(&"turns.exhausted") && both.contains(&"micro.absorbed"));
        // `both` restarts between turns; `batch` never does.
        assert!(both.contains(&"restart") && !batch.contains(&"restart"));
    }
}
