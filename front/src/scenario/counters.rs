//! `expect_counters`: an expectation on the case's coverage counters, next to `expect`.
//! A fault path a story must reach (an exhausted turn, a session reset) is checked by
//! its counter: `expect_counters = { "turns.exhausted" = ">=1", "session.resets" = 1 }`.

use compactsim_harness::engine::{counters, Coverage};
use compactsim_hermes::strategy::Strategy;
use std::fmt;

/// How a counter compares with the expected value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ge,
    Le,
    Gt,
    Lt,
}

impl Cmp {
    /// Longest operators first, so `>=` is not read as `>`.
    const ALL: [(Cmp, &'static str); 5] = [
        (Cmp::Ge, ">="),
        (Cmp::Le, "<="),
        (Cmp::Eq, "=="),
        (Cmp::Gt, ">"),
        (Cmp::Lt, "<"),
    ];

    fn symbol(self) -> &'static str {
        Cmp::ALL
            .iter()
            .find(|(c, _)| *c == self)
            .map_or("==", |(_, s)| s)
    }

    fn holds(self, actual: u64, value: u64) -> bool {
        match self {
            Cmp::Eq => actual == value,
            Cmp::Ge => actual >= value,
            Cmp::Le => actual <= value,
            Cmp::Gt => actual > value,
            Cmp::Lt => actual < value,
        }
    }
}

/// One counter expectation: `counter cmp value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterExpect {
    pub counter: &'static str,
    pub cmp: Cmp,
    pub value: u64,
}

impl fmt::Display for CounterExpect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.counter, self.cmp.symbol(), self.value)
    }
}

const FORMS: &str = "an integer (exactly) or a string \">=N\", \"<=N\", \"==N\", \">N\" or \"<N\"";

impl CounterExpect {
    /// Parses `counter = value`; the counter must be one a case of `strategy` counts.
    pub fn parse(
        counter: &str,
        value: &toml::Value,
        strategy: Strategy,
    ) -> Result<CounterExpect, String> {
        // The strategy's counters and the harness's own (listed only when reached).
        let mut known = counters(strategy).to_vec();
        known.push(compactsim_harness::engine::WORK_BUDGET_REACHED);
        let Some(&name) = known.iter().find(|c| **c == counter) else {
            return Err(format!(
                "unknown counter `{counter}` for strategy {strategy} (known: {})",
                known.join(", ")
            ));
        };
        let (cmp, value) = match value {
            toml::Value::Integer(n) if *n >= 0 => (Cmp::Eq, *n as u64),
            toml::Value::String(s) => parse_comparison(s.trim())
                .ok_or_else(|| format!("expect_counters.{counter}: `{s}` is not {FORMS}"))?,
            other => {
                return Err(format!(
                    "expect_counters.{counter} must be {FORMS}; got `{other}`"
                ))
            }
        };
        Ok(CounterExpect {
            counter: name,
            cmp,
            value,
        })
    }

    /// Whether the case's counters meet the expectation (an unreached counter is 0).
    pub fn holds(&self, coverage: &Coverage) -> bool {
        self.cmp.holds(coverage.get(self.counter), self.value)
    }

    /// `counter = actual (expected cmp value)`, for a report.
    pub fn describe_miss(&self, coverage: &Coverage) -> String {
        format!(
            "{} = {} (expected {} {})",
            self.counter,
            coverage.get(self.counter),
            self.cmp.symbol(),
            self.value
        )
    }
}

fn parse_comparison(text: &str) -> Option<(Cmp, u64)> {
    let (cmp, rest) = Cmp::ALL
        .iter()
        .find_map(|(c, s)| text.strip_prefix(s).map(|rest| (*c, rest)))
        .unwrap_or((Cmp::Eq, text));
    rest.trim().parse().ok().map(|n| (cmp, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse;
    use std::path::Path;

    #[test]
    fn comparisons_parse_and_hold_as_written() {
        let batch = Strategy::parse("batch").unwrap();
        let mut cov = Coverage::default();
        cov.add("turns.exhausted", 2);
        for (value, holds) in [
            (toml::Value::Integer(2), true),
            (toml::Value::Integer(1), false),
            (">=2".into(), true),
            (">= 3".into(), false),
            ("<=2".into(), true),
            ("<2".into(), false),
            (">1".into(), true),
            ("==2".into(), true),
            ("2".into(), true),
        ] {
            let c = CounterExpect::parse("turns.exhausted", &value, batch).unwrap();
            assert_eq!(c.holds(&cov), holds, "{value}");
        }
        let unreached = CounterExpect::parse("session.resets", &"0".into(), batch).unwrap();
        assert!(unreached.holds(&cov));
        assert_eq!(unreached.to_string(), "session.resets == 0");
        let ge = CounterExpect::parse("session.resets", &">=1".into(), batch).unwrap();
        assert_eq!(ge.describe_miss(&cov), "session.resets = 0 (expected >= 1)");
        for bad in ["=>1", ">=", "many", "-1"] {
            let e = CounterExpect::parse("turns.exhausted", &bad.into(), batch).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
        assert!(CounterExpect::parse("turns.exhausted", &toml::Value::Integer(-1), batch).is_err());
    }

    #[test]
    fn counters_are_checked_against_the_strategys_catalogue_at_their_position() {
        let e = parse(
            Path::new("c.toml"),
            "format = 1\nexpect = \"clean\"\nexpect_counters = { \"turns.exhausted\" = \">=1\" }\n",
        )
        .unwrap_err();
        assert_eq!(e.position, Some((3, 41)), "{e}");
        assert!(
            e.message.contains("strategy micro") && e.message.contains("micro.absorbed"),
            "{e}"
        );
        let e = parse(
            Path::new("c.toml"),
            "format = 1\nstrategy = \"batch\"\nexpect = \"clean\"\nexpect_counters = { \"turns.exhausted\" = true }\n",
        )
        .unwrap_err();
        assert!(e.message.contains("must be"), "{e}");
        let s = parse(
            Path::new("c.toml"),
            "format = 1\nstrategy = \"batch\"\nexpect = \"clean\"\nexpect_counters = { \"turns.exhausted\" = \">=1\", \"session.resets\" = 1 }\n",
        )
        .unwrap();
        let shown: Vec<String> = s.counters.iter().map(|c| c.to_string()).collect();
        assert_eq!(shown, ["session.resets == 1", "turns.exhausted >= 1"]);
    }
}
