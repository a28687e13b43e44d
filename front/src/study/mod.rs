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
use compactsim_reports::study::{StudyReport, STUDY_SCHEMA_VERSION};
use spec::StudySpec;

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
        .collect::<Result<_, _>>()?;
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

#[cfg(test)]
mod tests;
