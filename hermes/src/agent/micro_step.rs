//! The micro driver — the one place a micro pass and the pre-send repair after it run,
//! for every loop (`--strategy micro`, and `both` after each finished turn).

use super::Sink;
use crate::compactor::repair;
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::seam::{Compactor, CompactorFailure, Harness};
use compactsim_fakes::summarizer::served::{self, Serving};
use compactsim_fakes::summarizer::Summarizer;
use compactsim_model::{sync_copy_by, Delta, Event, Message, MicroOutcome};

/// What the driver borrows from its loop.
pub struct MicroParts<'a> {
    pub compactor: &'a mut dyn Compactor,
    pub msgs: &'a mut Vec<Message>,
    pub summarizer: &'a mut Summarizer,
    pub ids: &'a mut IdAlloc,
    pub now_ms: u64,
}

/// What one micro step did, as its loop needs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MicroStepEnd {
    /// Virtual milliseconds the summarizer calls took.
    pub latency_ms: u64,
    /// The pass found work (any outcome but cadence and no-exchange): it counts as a
    /// pass.
    pub found_work: bool,
    /// The list changed (the pass or the repair rewrote it).
    pub changed: bool,
}

/// Why a micro step stopped the case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MicroStop {
    /// The sink said stop (a violation).
    Sink,
    /// The compactor failed as a component.
    Failure(CompactorFailure),
}

/// A micro pass after `turn`, reported, then the pre-send repair, reported when it
/// changed something. Coverage counters: the pass's outcome, `repair.merged_rows`.
pub fn micro_step(
    parts: MicroParts<'_>,
    turn: u32,
    sink: &mut dyn Sink,
) -> Result<MicroStepEnd, MicroStop> {
    let MicroParts {
        compactor,
        msgs,
        summarizer,
        ids,
        now_ms,
    } = parts;
    let mut before = sink.copy_of(msgs);
    let mut serving = Serving::new(summarizer);
    let mut harness = Harness {
        summarizer: &mut serving,
        ids,
        now_ms,
    };
    let pass = compactor
        .micro_pass(msgs, turn, &mut harness)
        .map_err(MicroStop::Failure)?;
    let calls = serving.into_calls();
    // The rows are compared once: the window serves `changed`, the oracle and the sync.
    let delta = Delta::between(&before, msgs);
    let mut end = MicroStepEnd {
        latency_ms: served::latency_ms(&calls),
        found_work: !matches!(
            pass.outcome,
            MicroOutcome::Cadence | MicroOutcome::NoExchange
        ),
        changed: !delta.is_empty(),
    };
    sink.bump(outcome_counter(pass.outcome));
    sink.served(calls);
    // A pass observed to change nothing (an empty window: the lists are equal) is
    // shown as the same slice on both sides, so the oracle's unchanged shortcuts apply.
    let seen = if end.changed {
        sink.observe_by(
            Event::MicroPass(pass),
            (before.as_slice(), msgs.as_slice()),
            delta,
        )
    } else {
        sink.observe(Event::MicroPass(pass), msgs, msgs)
    };
    if !seen {
        return Err(MicroStop::Sink);
    }
    // The repair's `before`: the pass's copy, brought in step with the rows it changed.
    if end.changed {
        sync_copy_by(&mut before, msgs, &delta);
    }
    let stats = repair::repair(msgs);
    if stats == repair::RepairStats::default() {
        sink.give_back_in_step(before, msgs);
        return Ok(end);
    }
    end.changed = true;
    sink.add("repair.merged_rows", stats.merged_rows as u64);
    let event = Event::Repair {
        turn,
        merged_rows: stats.merged_rows,
        dropped_rows: stats.dropped_rows,
        pruned_calls: stats.pruned_calls,
    };
    if !sink.observe(event, &before, msgs) {
        return Err(MicroStop::Sink);
    }
    sink.give_back(before);
    Ok(end)
}

fn outcome_counter(outcome: MicroOutcome) -> &'static str {
    match outcome {
        MicroOutcome::Cadence => "micro.cadence",
        MicroOutcome::NoExchange => "micro.no_exchange",
        MicroOutcome::Absorbed => "micro.absorbed",
        MicroOutcome::Defrag => "micro.defrag",
        MicroOutcome::DefragFailed => "micro.defrag_failed",
        MicroOutcome::SummarizeFailed => "micro.summarize_failed",
        MicroOutcome::ExchangeSkipped => "micro.exchange_skipped",
    }
}
