//! Compaction strategies a run can exercise.

use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Per-turn micro-compaction (hermes-domain §3).
    Micro,
}

impl Strategy {
    pub const ALL: [Strategy; 1] = [Strategy::Micro];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Micro => "micro",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Strategy::Micro => "fold the oldest unabsorbed agent turn into one rolling-summary marker after every turn",
        }
    }

    pub fn parse(name: &str) -> Result<Strategy, String> {
        Strategy::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
                format!("unknown strategy `{name}` (known: {})", known.join(", "))
            })
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
