//! Compaction strategies a run can exercise.

use crate::agent::{AntiThrashPolicy, Era, LoopOptions};
pub use crate::strategy_kind::StrategyKind;
use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Per-turn micro-compaction (hermes-domain §3).
    Micro,
    /// The agent loop with batch compaction (hermes-domain §2).
    Batch(LoopOptions),
    /// The agent loop with batch compaction and a micro pass after every finished turn,
    /// as Hermes runs them together.
    Both(LoopOptions),
    /// The batch agent loop behind the faulty gateway: session store, inbound message
    /// ids with duplicates and retries, crashes and restarts, auto-reset (issue 10).
    Gateway(LoopOptions),
}

impl Strategy {
    pub const ALL: [Strategy; 4] = [
        Strategy::Micro,
        Strategy::Batch(LoopOptions {
            era: Era::DEFAULT,
            anti_thrash: AntiThrashPolicy::V2_2,
            session_mode: None,
        }),
        Strategy::Both(LoopOptions {
            era: Era::DEFAULT,
            anti_thrash: AntiThrashPolicy::V2_2,
            session_mode: None,
        }),
        Strategy::Gateway(LoopOptions {
            era: Era::DEFAULT,
            anti_thrash: AntiThrashPolicy::V2_2,
            session_mode: None,
        }),
    ];

    pub fn name(self) -> &'static str {
        self.kind().name()
    }

    /// The strategy of kind `kind`, agent-loop strategies with the default options.
    pub fn of_kind(kind: StrategyKind) -> Strategy {
        match kind {
            StrategyKind::Micro => Strategy::ALL[0],
            StrategyKind::Batch => Strategy::ALL[1],
            StrategyKind::Both => Strategy::ALL[2],
            StrategyKind::Gateway => Strategy::ALL[3],
        }
    }

    /// This strategy without its options.
    pub const fn kind(self) -> StrategyKind {
        match self {
            Strategy::Micro => StrategyKind::Micro,
            Strategy::Batch(_) => StrategyKind::Batch,
            Strategy::Both(_) => StrategyKind::Both,
            Strategy::Gateway(_) => StrategyKind::Gateway,
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Strategy::Micro => "fold the oldest unabsorbed agent turn into one rolling-summary marker after every turn",
            Strategy::Batch(_) => "agent turn loop: preflight, provider calls, post-response checks and overflow recovery around batch compaction",
            Strategy::Both(_) => "the batch agent loop plus a micro pass after every finished turn",
            Strategy::Gateway(_) => "the batch agent loop behind a gateway with a session store, crashes, restarts, duplicate deliveries and auto-reset",
        }
    }

    /// The agent-loop options, for the strategies that run the agent loop.
    pub fn loop_options(self) -> Option<LoopOptions> {
        match self {
            Strategy::Micro => None,
            Strategy::Batch(o) | Strategy::Both(o) | Strategy::Gateway(o) => Some(o),
        }
    }

    /// This strategy with the given agent-loop options (micro has none).
    pub fn with_options(self, options: LoopOptions) -> Strategy {
        match self {
            Strategy::Micro => Strategy::Micro,
            Strategy::Batch(_) => Strategy::Batch(options),
            Strategy::Both(_) => Strategy::Both(options),
            Strategy::Gateway(_) => Strategy::Gateway(options),
        }
    }

    /// Parses a strategy name; agent-loop strategies get the default options.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_options_attach_to_loop_strategies_only() {
        for s in Strategy::ALL {
            assert_eq!(Strategy::parse(s.name()), Ok(s));
            assert_eq!(Strategy::of_kind(s.kind()), s);
            assert_eq!(s.kind().to_string(), s.name());
        }
        let a = LoopOptions::of(Era::A, None);
        assert_eq!(Strategy::Micro.with_options(a), Strategy::Micro);
        assert_eq!(Strategy::Micro.loop_options(), None);
        let batch = Strategy::parse("batch").unwrap().with_options(a);
        assert_eq!(batch.loop_options(), Some(a));
        assert_eq!(batch.to_string(), "batch");
        assert!(Strategy::parse("x")
            .unwrap_err()
            .contains("micro, batch, both, gateway"));
    }
}
