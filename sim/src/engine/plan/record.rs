//! Recording: writes a case down as a fully explicit plan — its script, summarizer
//! configuration and per-call outcome schedule, restart turns and micro configuration —
//! that replays to the same outcome, turn for turn.

use super::script::{RowPlan, Script, TurnPlan};
use super::{CasePlan, MicroOverrides, SummarizerOverrides};
use crate::engine::{run_case, CaseResult, CaseSetup, CaseSpec, Record};
use crate::ids::IdAlloc;
use crate::rng::{self, Stream};
use crate::shapes::Conversation;
use compactsim_model::Event;

/// A case written down, and the run it was written from (with its trace).
#[derive(Clone, Debug)]
pub struct Recording {
    pub plan: CasePlan,
    pub result: CaseResult,
}

/// Runs `spec` and writes it down as an explicit plan covering the turns it ran. Running
/// `spec` with the returned plan gives the same outcome, trace and tokens per turn.
pub fn record(spec: &CaseSpec) -> Recording {
    let setup = CaseSetup::draw(spec);
    let result = run_case(spec, Record { trace: true });
    let script = match spec.plan.as_ref().and_then(|p| p.script.clone()) {
        Some(mut script) => {
            script.turns.truncate(result.turns as usize);
            script
        }
        None => generated_script(spec, &setup, result.turns),
    };
    let mut outcomes = result.summary_calls.clone();
    while outcomes.last().is_some_and(|o| o.is_ok()) {
        outcomes.pop();
    }
    let restarts: Vec<u32> = result
        .trace
        .iter()
        .filter_map(|line| match line.event {
            Event::Restart { turn } => Some(turn),
            _ => None,
        })
        .collect();
    let plan = CasePlan {
        family: Some(setup.family()),
        context_length: Some(setup.shape.context_length),
        system_prompt: None,
        system_chars: None,
        script: Some(script),
        summarizer: SummarizerOverrides::exactly(&setup.summarizer),
        summary_outcomes: Some(outcomes),
        restarts: Some(restarts),
        micro: MicroOverrides::exactly(&setup.micro),
        turns_max: None,
        // Kept so the fault stream draws as the original did (the list decides).
        restart_per_mille: spec.plan.as_ref().and_then(|p| p.restart_per_mille),
        invariants: spec.plan.as_ref().and_then(|p| p.invariants.clone()),
    };
    Recording { plan, result }
}

/// The first `turns` turns the shape generator gives `spec` (ids do not influence what
/// the generator draws, so a fresh id allocator describes the same rows).
fn generated_script(spec: &CaseSpec, setup: &CaseSetup, turns: u32) -> Script {
    let mut conversation = Conversation::new(
        setup.shape.clone(),
        rng::stream(spec.case_seed(), Stream::Shape),
    );
    let mut ids = IdAlloc::default();
    let system = conversation
        .system_prompt(&mut ids)
        .map(|m| RowPlan::of(&m));
    let turns = (0..turns)
        .map(|t| TurnPlan::of(&conversation.next_turn(t, &mut ids)))
        .collect();
    Script {
        system,
        history: Vec::new(),
        turns,
    }
}
