//! Where a case's conversation comes from: the shape generator, or a plan's script.

use super::script::build_rows;
use super::CasePlan;
use crate::engine::CaseSpec;
use crate::shapes::{Conversation, ShapeParams};
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::rng::{self, Stream};
use compactsim_model::Message;
use std::sync::Arc;

/// The conversation of one case.
#[derive(Clone)]
pub enum Source {
    /// Drawn turn by turn from the case's Shape stream.
    Generated(Box<Conversation>),
    /// Played from the plan's script.
    Scripted(Arc<CasePlan>),
}

impl Source {
    /// The script of `spec`'s plan if it has one, else the generator for `shape`.
    pub fn new(spec: &CaseSpec, shape: &ShapeParams) -> Source {
        match &spec.plan {
            Some(plan) if plan.script.is_some() => Source::Scripted(Arc::clone(plan)),
            _ => Source::Generated(Box::new(Conversation::new(
                shape.clone(),
                rng::stream(spec.case_seed(), Stream::Shape),
            ))),
        }
    }

    /// The system row, if any; called once, first.
    pub fn system_prompt(&mut self, ids: &mut IdAlloc) -> Option<Message> {
        match self {
            Source::Generated(c) => c.system_prompt(ids),
            Source::Scripted(plan) => {
                let row = plan.script.as_ref()?.system.as_ref()?;
                build_rows(std::slice::from_ref(row), ids).pop()
            }
        }
    }

    /// Rows present before turn 0 (a script's history); called once, after the system row.
    pub fn history(&mut self, ids: &mut IdAlloc) -> Vec<Message> {
        match self {
            Source::Generated(_) => Vec::new(),
            Source::Scripted(plan) => plan.script.as_ref().map_or_else(Vec::new, |s| {
                s.history
                    .iter()
                    .flat_map(|t| build_rows(&t.rows, ids))
                    .collect()
            }),
        }
    }

    /// Turns of a script's history (0 for a generated conversation).
    pub fn history_turns(&self) -> u32 {
        match self {
            Source::Generated(_) => 0,
            Source::Scripted(plan) => plan.script.as_ref().map_or(0, |s| s.history.len() as u32),
        }
    }

    /// The rows of turn `turn` (none past the end of a script).
    pub fn next_turn(&mut self, turn: u32, ids: &mut IdAlloc) -> Vec<Message> {
        match self {
            Source::Generated(c) => c.next_turn(turn, ids),
            Source::Scripted(plan) => plan
                .script
                .as_ref()
                .and_then(|s| s.turns.get(turn as usize))
                .map_or_else(Vec::new, |t| build_rows(&t.rows, ids)),
        }
    }
}
