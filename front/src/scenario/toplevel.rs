//! Top-level keys that choose the system under test and what the oracle checks:
//! `strategy` with the agent loop's `era` and `anti_thrash`, the bug switches (each
//! must belong to a strategy the case runs), and `invariants`, the oracle's narrowing.

use super::convert::Located;
use super::doc::Doc;
use super::expect::Expect;
use compactsim_hermes::agent::{AntiThrashPolicy, Era, LoopOptions};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::bugs::Bug;
use compactsim_hermes::strategy::{Strategy, StrategyKind};
use std::ops::Range;
use std::path::Path;
use toml::Spanned;

fn at<T>(span: Range<usize>, message: impl Into<String>) -> Result<T, Located> {
    Err((Some(span), message.into()))
}

/// The strategy of the file, with its agent-loop options (`era`, `anti_thrash`; only
/// the agent-loop strategies take them; the era's policy unless `anti_thrash` is given).
pub fn strategy(doc: &Doc) -> Result<Strategy, Located> {
    let strategy = match &doc.strategy {
        None => Strategy::Micro,
        Some(s) => Strategy::parse(s.get_ref()).or_else(|e| at(s.span(), e))?,
    };
    if strategy.loop_options().is_none() {
        if let Some(key) = doc.era.as_ref().or(doc.anti_thrash.as_ref()) {
            return at(
                key.span(),
                format!(
                    "era and anti_thrash apply to the agent-loop strategies (batch, both), not {strategy}"
                ),
            );
        }
        return Ok(strategy);
    }
    let era = match &doc.era {
        None => Era::DEFAULT,
        Some(e) => Era::parse(e.get_ref()).or_else(|m| at(e.span(), m))?,
    };
    let policy = match &doc.anti_thrash {
        None => None,
        Some(p) => Some(AntiThrashPolicy::parse(p.get_ref()).or_else(|m| at(p.span(), m))?),
    };
    Ok(strategy.with_options(LoopOptions::of(era, policy)))
}

/// Whether a switch of `bug_strategy`'s reference model acts in a case of `strategy`:
/// its own strategy; `both`, which runs the batch agent loop and micro passes (not the
/// gateway); or `gateway` for a batch switch (the gateway runs the batch loop).
pub fn switch_acts_under(bug_strategy: StrategyKind, strategy: Strategy) -> bool {
    match strategy.kind() {
        StrategyKind::Micro => bug_strategy == StrategyKind::Micro,
        StrategyKind::Batch => bug_strategy == StrategyKind::Batch,
        StrategyKind::Both => bug_strategy != StrategyKind::Gateway,
        StrategyKind::Gateway => {
            matches!(bug_strategy, StrategyKind::Gateway | StrategyKind::Batch)
        }
    }
}

/// The bug switches of the file; each must act under `strategy`.
pub fn bugs(ids: &[Spanned<String>], strategy: Strategy) -> Result<BugSet, Located> {
    let mut bugs = Vec::new();
    for id in ids {
        let bug = Bug::parse(id.get_ref()).or_else(|e| at(id.span(), e))?;
        let own = bug.info().strategy;
        if !switch_acts_under(own, strategy) {
            return at(
                id.span(),
                format!(
                    "bug {} switches the {own} strategy (it runs under strategy = \"{own}\" or \"both\"), but the scenario runs {strategy}",
                    bug.id()
                ),
            );
        }
        bugs.push(bug);
    }
    Ok(BugSet::of(&bugs))
}

/// Adapter limits a file may ask for, milliseconds (the command line's bound too).
pub use compactsim_harness::external::ADAPTER_TIMEOUT_MS_MAX;

/// An adapter limit of `[compactor]`: `default` when absent, else between 1 and
/// [`ADAPTER_TIMEOUT_MS_MAX`].
fn limit_ms(key: &str, value: &Option<Spanned<u64>>, default: u64) -> Result<u64, Located> {
    match value {
        None => Ok(default),
        Some(t) if (1..=ADAPTER_TIMEOUT_MS_MAX).contains(t.get_ref()) => Ok(*t.get_ref()),
        Some(t) => at(
            t.span(),
            format!("{key} must be between 1 and {ADAPTER_TIMEOUT_MS_MAX}"),
        ),
    }
}

/// `[compactor]`: the external adapter the file runs (`None`: the reference). Bug
/// switches belong to the reference models, so a file with both is refused.
pub fn compactor(
    doc: &Doc,
    bugs: &[Spanned<String>],
    path: &Path,
) -> Result<Option<compactsim_harness::external::AdapterSpec>, Located> {
    let Some(table) = &doc.compactor else {
        return Ok(None);
    };
    let c = table.get_ref();
    let kind = c.kind.get_ref().as_str();
    match kind {
        "reference" => {
            if let Some(key) = &c.adapter {
                return at(key.span(), "adapter applies to kind = \"external\"");
            }
            if let Some(key) = &c.timeout_ms {
                return at(key.span(), "timeout_ms applies to kind = \"external\"");
            }
            if let Some(key) = &c.startup_timeout_ms {
                return at(
                    key.span(),
                    "startup_timeout_ms applies to kind = \"external\"",
                );
            }
            Ok(None)
        }
        "external" => {
            let Some(adapter) = &c.adapter else {
                return at(
                    table.span(),
                    "kind = \"external\" needs adapter = \"CMD ARGS\"",
                );
            };
            if let Err(e) = compactsim_harness::external::argv::split(adapter.get_ref()) {
                return at(adapter.span(), e.to_string());
            }
            if let Some(bug) = bugs.first() {
                return at(
                    bug.span(),
                    "bug switches apply to the reference compactor, not to kind = \"external\"",
                );
            }
            let timeout_ms = limit_ms(
                "timeout_ms",
                &c.timeout_ms,
                compactsim_harness::external::DEFAULT_TIMEOUT_MS,
            )?;
            let startup_timeout_ms = limit_ms(
                "startup_timeout_ms",
                &c.startup_timeout_ms,
                compactsim_harness::external::DEFAULT_STARTUP_TIMEOUT_MS,
            )?;
            // Relative paths of the command are the file's (see `AdapterSpec::argv`).
            let dir = path.parent().unwrap_or(Path::new("."));
            let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
            Ok(Some(
                compactsim_harness::external::AdapterSpec::new(
                    adapter.get_ref().clone(),
                    timeout_ms,
                )
                .with_startup_timeout_ms(startup_timeout_ms)
                .written_in(dir),
            ))
        }
        other => at(
            c.kind.span(),
            format!("unknown compactor kind `{other}` (known: reference, external)"),
        ),
    }
}

/// The invariants a case of `strategy` checks when the file does not narrow them.
pub fn checked_ids(strategy: Strategy) -> Vec<&'static str> {
    match strategy {
        Strategy::Micro => compactsim_invariants::micro_catalogue_ids(),
        Strategy::Batch(_) | Strategy::Both(_) => compactsim_invariants::catalogue()
            .iter()
            .map(|i| i.id)
            .collect(),
        Strategy::Gateway(_) => compactsim_invariants::catalogue()
            .iter()
            .chain(&compactsim_invariants::gateway::gateway_catalogue())
            .map(|i| i.id)
            .collect(),
    }
}

/// `invariants = [..]`: the oracle checks only these. Each must be one `strategy`
/// checks, listed once; an expected violation must be among them.
pub fn invariants(
    doc: &Doc,
    strategy: Strategy,
    expect: &Expect,
) -> Result<Option<Vec<String>>, Located> {
    let Some(list) = &doc.invariants else {
        return Ok(None);
    };
    if list.get_ref().is_empty() {
        return at(
            list.span(),
            "invariants = [] would check nothing; leave the key out to check every invariant",
        );
    }
    let known = checked_ids(strategy);
    let mut ids: Vec<String> = Vec::new();
    for id in list.get_ref() {
        let name = id.get_ref();
        if !known.contains(&name.as_str()) {
            return at(
                id.span(),
                format!(
                    "invariant `{name}` is not checked under strategy {strategy} (known: {})",
                    known.join(", ")
                ),
            );
        }
        if ids.contains(name) {
            return at(id.span(), format!("invariant `{name}` is listed twice"));
        }
        ids.push(name.clone());
    }
    if let Expect::Violated { invariant, .. } = expect {
        if !ids.contains(invariant) {
            return at(
                doc.expect.span(),
                format!("expects {invariant} to fail, but `invariants` does not check it"),
            );
        }
    }
    Ok(Some(ids))
}

#[cfg(test)]
mod tests {
    use crate::scenario::{parse, render, Expect, Header, ScenarioError};
    use compactsim_hermes::bug_set::BugSet;
    use compactsim_hermes::bugs::Bug;
    use compactsim_hermes::strategy::Strategy;
    use std::path::Path;

    fn parse_str(source: &str) -> Result<crate::scenario::Scenario, ScenarioError> {
        parse(Path::new("t.toml"), source)
    }

    #[test]
    fn loop_strategies_take_era_and_policy_and_carry_batch_and_micro_switches() {
        let s = parse_str(
            "format = 1\nstrategy = \"batch\"\nera = \"a\"\nanti_thrash = \"v2\"\nbugs = [\"H-2153\"]\nexpect = \"clean\"\n",
        )
        .unwrap();
        let o = s.spec.strategy.loop_options().unwrap();
        assert_eq!((o.era.name(), o.anti_thrash.name()), ("a", "v2"));
        assert_eq!(s.spec.bugs, BugSet::of(&[Bug::H2153]));
        let s = parse_str("format = 1\nstrategy = \"batch\"\nera = \"a\"\nexpect = \"clean\"\n")
            .unwrap();
        assert_eq!(
            s.spec.strategy.loop_options().unwrap().anti_thrash.name(),
            "v1"
        );
        let s = parse_str(
            "format = 1\nstrategy = \"both\"\nbugs = [\"H-10896\", \"H-75345-B\"]\nexpect = \"clean\"\n",
        )
        .unwrap();
        assert!(matches!(s.spec.strategy, Strategy::Both(_)));
        assert_eq!(s.spec.bugs.iter().count(), 2);
    }

    #[test]
    fn misplaced_loop_keys_and_switches_are_located_errors() {
        let e = parse_str("format = 1\nera = \"b\"\nexpect = \"clean\"\n").unwrap_err();
        assert_eq!(e.position, Some((2, 7)), "{e}");
        assert!(e.message.contains("agent-loop"), "{e}");
        let e = parse_str(
            "format = 1\nstrategy = \"batch\"\nanti_thrash = \"v3\"\nexpect = \"clean\"\n",
        )
        .unwrap_err();
        assert_eq!(e.position, Some((3, 15)), "{e}");
        assert!(e.message.contains("v2.2"), "{e}");
        let e = parse_str("format = 1\nbugs = [\"H-2153\"]\nexpect = \"clean\"\n").unwrap_err();
        assert_eq!(e.position, Some((2, 9)), "{e}");
        assert!(
            e.message.contains("\"both\"") && e.message.contains("micro"),
            "{e}"
        );
        let e = parse_str(
            "format = 1\nstrategy = \"batch\"\nbugs = [\"H-M-cursor\"]\nexpect = \"clean\"\n",
        )
        .unwrap_err();
        assert!(e.message.contains("runs batch"), "{e}");
    }

    #[test]
    fn invariants_narrow_the_plan_and_are_checked_against_the_strategy_and_expectation() {
        let s = parse_str(
            "format = 1\nstrategy = \"batch\"\ninvariants = [\"api-valid\", \"no-infinite-loop\"]\nexpect = { violated = \"api-valid\" }\n",
        )
        .unwrap();
        let plan = s.spec.plan.as_ref().unwrap();
        assert_eq!(
            plan.invariants.as_deref(),
            Some(&["api-valid".to_string(), "no-infinite-loop".to_string()][..])
        );
        for (source, position, needle) in [
            ("invariants = []\n", (2, 14), "nothing"),
            (
                "invariants = [\"bounded-compaction\"]\n",
                (2, 15),
                "not checked under strategy micro",
            ),
            (
                "invariants = [\"api-valid\", \"api-valid\"]\n",
                (2, 28),
                "twice",
            ),
            ("invariants = [\"api-valit\"]\n", (2, 15), "api-valid"),
        ] {
            let e = parse_str(&format!("format = 1\n{source}expect = \"clean\"\n")).unwrap_err();
            assert_eq!(e.position, Some(position), "{e}");
            assert!(e.message.contains(needle), "{e}");
        }
        let e = parse_str(
            "format = 1\ninvariants = [\"api-valid\"]\nexpect = { violated = \"one-marker-max\" }\n",
        )
        .unwrap_err();
        assert_eq!(e.position, Some((3, 10)), "{e}");
    }

    #[test]
    fn loop_options_and_invariants_are_written_back() {
        let s = parse_str(
            "format = 1\nstrategy = \"both\"\nera = \"b\"\nanti_thrash = \"v1\"\ncase = 3\nbugs = [\"H-58753\", \"H-10896\"]\ninvariants = [\"api-valid\"]\nexpect = { violated = \"api-valid\", within_turns = 9 }\n",
        )
        .unwrap();
        let text = render(&Header::default(), &s.spec, &s.expect);
        assert!(text.contains("era = \"b\"\nanti_thrash = \"v1\""), "{text}");
        let back = parse_str(&text).unwrap();
        assert_eq!(back.spec, s.spec, "{text}");
        assert_eq!(back.expect, s.expect);
        let micro = parse_str("format = 1\nexpect = \"clean\"\n").unwrap();
        let text = render(&Header::default(), &micro.spec, &Expect::Clean);
        assert!(
            !text.contains("era") && !text.contains("invariants"),
            "{text}"
        );
    }

    #[test]
    fn the_compactor_table_declares_an_external_adapter_and_is_written_back() {
        let s = parse_str(
            "format = 1\nexpect = \"clean\"\n[compactor]\nkind = \"external\"\nadapter = \"python3 a.py --x 'y z'\"\ntimeout_ms = 1500\nstartup_timeout_ms = 90000\n",
        )
        .unwrap();
        let adapter = s.spec.plan.as_ref().unwrap().compactor.clone().unwrap();
        assert_eq!(adapter.command, "python3 a.py --x 'y z'");
        assert_eq!(adapter.timeout_ms, 1500);
        assert_eq!(adapter.startup_timeout_ms, 90_000);
        let text = render(&Header::default(), &s.spec, &s.expect);
        assert!(text.contains("[compactor]\nkind = \"external\""), "{text}");
        let back = parse_str(&text).unwrap();
        assert_eq!(back.spec, s.spec, "{text}");
        let plain =
            parse_str("format = 1\nexpect = \"clean\"\n[compactor]\nkind = \"reference\"\n")
                .unwrap();
        assert!(plain.spec.plan.is_none(), "the reference is no plan");
    }

    #[test]
    fn a_bad_compactor_table_is_a_located_error() {
        for (table, position, needle) in [
            ("kind = \"python\"\n", (4, 8), "known: reference, external"),
            ("kind = \"external\"\n", (3, 1), "needs adapter"),
            (
                "kind = \"external\"\nadapter = \"a 'b\"\n",
                (5, 11),
                "unclosed",
            ),
            ("kind = \"external\"\nadapter = \"\"\n", (5, 11), "empty"),
            (
                "kind = \"external\"\nadapter = \"a\"\ntimeout_ms = 0\n",
                (6, 14),
                "between 1",
            ),
            (
                "kind = \"external\"\nadapter = \"a\"\nstartup_timeout_ms = 3600001\n",
                (6, 22),
                "startup_timeout_ms must be between 1",
            ),
            (
                "kind = \"reference\"\nadapter = \"a\"\n",
                (5, 11),
                "kind = \"external\"",
            ),
        ] {
            let e = parse_str(&format!(
                "format = 1\nexpect = \"clean\"\n[compactor]\n{table}"
            ))
            .unwrap_err();
            assert_eq!(e.position, Some(position), "{table}: {e}");
            assert!(e.message.contains(needle), "{table}: {e}");
        }
        let e = parse_str(
            "format = 1\nbugs = [\"H-M-cursor\"]\nexpect = \"clean\"\n[compactor]\nkind = \"external\"\nadapter = \"a\"\n",
        )
        .unwrap_err();
        assert_eq!(e.position, Some((2, 9)), "{e}");
        assert!(e.message.contains("reference compactor"), "{e}");
    }
}
