//! The kinds of strategy, without the agent loop's options: what a bug switch belongs to.

use serde::Serialize;
use std::fmt;

/// A strategy without its agent-loop options: what a bug switch belongs to. Its name is
/// the strategy's (`micro`, `batch`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StrategyKind {
    Micro,
    Batch,
    Both,
    Gateway,
}

impl StrategyKind {
    pub const fn name(self) -> &'static str {
        match self {
            StrategyKind::Micro => "micro",
            StrategyKind::Batch => "batch",
            StrategyKind::Both => "both",
            StrategyKind::Gateway => "gateway",
        }
    }
}

impl fmt::Display for StrategyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}
