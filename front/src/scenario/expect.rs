//! What a scenario expects, and whether a case's outcome meets it.

use compactsim_harness::engine::{CaseOutcome, CaseResult};
use std::fmt;

/// The class of a case's ending, as `expect = { exit = "..." }` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutcomeClass {
    Clean,
    Violation,
    /// A loop or an exceeded step budget.
    Liveness,
}

impl OutcomeClass {
    pub const ALL: [OutcomeClass; 3] = [
        OutcomeClass::Clean,
        OutcomeClass::Violation,
        OutcomeClass::Liveness,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OutcomeClass::Clean => "clean",
            OutcomeClass::Violation => "violation",
            OutcomeClass::Liveness => "liveness",
        }
    }

    pub fn parse(name: &str) -> Result<OutcomeClass, String> {
        OutcomeClass::ALL
            .into_iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = OutcomeClass::ALL.iter().map(|c| c.name()).collect();
                format!("unknown exit class `{name}` (known: {})", known.join(", "))
            })
    }
}

/// The expectation of a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Every invariant holds until the case ends.
    Clean,
    /// `invariant` fails; when `within_turns` is given, in one of the first that many
    /// turns (turn index < within_turns; traces number turns from 0).
    Violated {
        invariant: String,
        within_turns: Option<u32>,
    },
    /// The case ends in this class, whatever the detail.
    Exit(OutcomeClass),
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expect::Clean => f.write_str("clean"),
            Expect::Violated {
                invariant,
                within_turns: Some(n),
            } => write!(f, "violated {invariant} within {n} turns"),
            Expect::Violated { invariant, .. } => write!(f, "violated {invariant}"),
            Expect::Exit(class) => write!(f, "exit {}", class.name()),
        }
    }
}

impl Expect {
    /// Parses the `expect` value; `invariant_known` checks an invariant id.
    pub fn from_toml(
        value: &toml::Value,
        invariant_known: impl Fn(&str) -> Result<(), String>,
    ) -> Result<Expect, String> {
        const FORMS: &str = "expect = \"clean\", expect = { violated = \"<invariant id>\", within_turns = N } or expect = { exit = \"liveness\" }";
        let table = match value {
            toml::Value::String(s) if s == "clean" => return Ok(Expect::Clean),
            toml::Value::Table(t) => t,
            other => return Err(format!("expect must be one of {FORMS}; got `{other}`")),
        };
        if let Some(key) = table
            .keys()
            .find(|k| !["violated", "within_turns", "exit"].contains(&k.as_str()))
        {
            return Err(format!(
                "unknown key `{key}` in expect (known: violated, within_turns, exit)"
            ));
        }
        let text = |key: &str| -> Result<Option<&str>, String> {
            match table.get(key) {
                None => Ok(None),
                Some(toml::Value::String(s)) => Ok(Some(s)),
                Some(v) => Err(format!("expect.{key} must be a string, got `{v}`")),
            }
        };
        let within_turns = match table.get("within_turns") {
            None => None,
            Some(toml::Value::Integer(n)) if *n >= 1 && *n <= u32::MAX as i64 => Some(*n as u32),
            Some(v) => {
                return Err(format!(
                    "expect.within_turns must be a positive integer, got `{v}`"
                ))
            }
        };
        match (text("violated")?, text("exit")?) {
            (Some(invariant), None) => {
                invariant_known(invariant)?;
                Ok(Expect::Violated {
                    invariant: invariant.to_string(),
                    within_turns,
                })
            }
            (None, Some(exit)) if within_turns.is_none() => {
                Ok(Expect::Exit(OutcomeClass::parse(exit)?))
            }
            (None, Some(_)) => Err("expect.within_turns goes with `violated`, not `exit`".into()),
            _ => Err(format!("expect must be one of {FORMS}")),
        }
    }

    /// Whether `result` meets the expectation.
    pub fn holds(&self, result: &CaseResult) -> bool {
        match (self, &result.outcome) {
            (Expect::Clean, CaseOutcome::Clean) => true,
            (
                Expect::Violated {
                    invariant,
                    within_turns,
                },
                outcome,
            ) => outcome
                .violations()
                .iter()
                .any(|v| &v.invariant == invariant && within_turns.is_none_or(|n| v.turn < n)),
            (Expect::Exit(class), outcome) => class_of(outcome) == Some(*class),
            (
                Expect::Clean,
                CaseOutcome::Violation(_) | CaseOutcome::Liveness(_) | CaseOutcome::Internal(_),
            ) => false,
        }
    }
}

/// The class of an outcome (none for a harness failure, which no scenario expects).
pub fn class_of(outcome: &CaseOutcome) -> Option<OutcomeClass> {
    match outcome {
        CaseOutcome::Clean => Some(OutcomeClass::Clean),
        CaseOutcome::Violation(_) => Some(OutcomeClass::Violation),
        CaseOutcome::Liveness(_) => Some(OutcomeClass::Liveness),
        CaseOutcome::Internal(_) => None,
    }
}

/// One short line describing an outcome: `clean`, `violated <id> at turn <n>` (0-based,
/// as traces number turns), ...
pub fn describe(result: &CaseResult) -> String {
    match &result.outcome {
        CaseOutcome::Clean => "clean".to_string(),
        CaseOutcome::Violation(vs) => {
            let ids: Vec<&str> = vs.iter().map(|v| v.invariant.as_str()).collect();
            format!("violated {} at turn {}", ids.join("+"), vs[0].turn)
        }
        CaseOutcome::Liveness(v) => format!("liveness {} at turn {}", v.invariant, v.turn),
        CaseOutcome::Internal(what) => format!("internal failure: {what}"),
    }
}
