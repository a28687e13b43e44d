//! Studies: one seed, several compaction strategies side by side, measured per turn on
//! a virtual clock — occupancy, stalls, prompt-cache breaks and their price, facts
//! retained. `compactsim study FILE` runs one and writes the files of
//! `compactsim_reports::study`.
//!
//! Determinism: every strategy replays the same conversation (the study's Params and
//! Shape streams), and the summarizer of each strategy starts from the same Summarizer
//! stream; nothing depends on time or thread count.

pub mod cache;
pub mod handoff;
pub mod measure;
pub mod pricing;
pub mod session;
pub mod spec;

use compactsim_fakes::seam::CompactorFailure;
use compactsim_harness::compactor::CompactorSpec;
use compactsim_reports::study::{StrategySeries, StudyReport, STUDY_SCHEMA_VERSION};
use spec::{StudySpec, StudyStrategy};

/// Runs every strategy of `spec`, in the order the file lists them, each with the
/// compactor `compactor` makes of the reference the strategy describes
/// ([`session::reference`]). An `Err` is the compactor failing as a component.
pub fn run(spec: &StudySpec, compactor: &CompactorSpec) -> Result<StudyReport, CompactorFailure> {
    let t = session::thresholds(spec);
    let strategies = spec
        .strategies
        .iter()
        .map(|&s| {
            session::run(spec, s, compactor).map_err(|e| CompactorFailure {
                what: format!("strategy {}: {}", s.name(), e.what),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let strategies = note_gate_not_applied(strategies);
    Ok(StudyReport {
        schema_version: STUDY_SCHEMA_VERSION,
        name: spec.name.clone(),
        seed: spec.seed,
        family: spec.family.name().to_string(),
        context_length: spec.context_length,
        trigger_tokens: t.trigger_tokens,
        tail_budget_tokens: t.tail_budget_tokens,
        turns: spec.turns,
        session_s: spec.session_s,
        summarizer_tokens_per_s: spec.summarizer.tokens_per_s,
        pricing: spec.pricing.0.clone(),
        adapter: compactor.adapter().map(|a| a.command.clone()),
        strategies,
    })
}

/// What micro-gated's description says when its series is micro's.
pub const GATE_NOT_APPLIED: &str = "measured the same as micro: the compactor did not apply \
     the gate (`reclaim_gate_tokens` of the micro_pass config), so the gate is not measured";

/// micro-gated differs from micro only by the gate its micro passes are configured with
/// (`reclaim_gate_tokens`), which the compactor applies: an external adapter that ignores
/// it runs micro twice. When the two series are the same turn for turn, micro-gated's
/// description says so (study.json, summary.md, index.html).
fn note_gate_not_applied(mut strategies: Vec<StrategySeries>) -> Vec<StrategySeries> {
    let same_as = |a: &StrategySeries, b: &StrategySeries| {
        a.totals == b.totals
            && a.turns == b.turns
            && a.micro_pass_deltas_tokens == b.micro_pass_deltas_tokens
    };
    let micro = StudyStrategy::Micro.name();
    let gated = StudyStrategy::MicroGated.name();
    let Some(m) = strategies.iter().position(|s| s.name == micro) else {
        return strategies;
    };
    if let Some(g) = strategies.iter().position(|s| s.name == gated) {
        if same_as(&strategies[m], &strategies[g]) {
            let d = &mut strategies[g].description;
            *d = format!("{d}; {GATE_NOT_APPLIED}");
        }
    }
    strategies
}

#[cfg(test)]
mod tests;
