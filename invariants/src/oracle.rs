//! The oracle: every selected invariant observing one case.

use crate::{violation, Invariant, OracleConfig, REGISTRY};
use compactsim_model::{Transition, Violation};
use std::fmt;

/// An id passed to [`Oracle::with_only`] that the catalogue does not know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownInvariant(pub String);

impl fmt::Display for UnknownInvariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<&str> = REGISTRY.iter().map(|(info, _)| info.id).collect();
        write!(
            f,
            "unknown invariant `{}` (known: {})",
            self.0,
            known.join(", ")
        )
    }
}

impl std::error::Error for UnknownInvariant {}

struct Entry {
    invariant: Box<dyn Invariant>,
    checked: u64,
}

impl Clone for Entry {
    fn clone(&self) -> Self {
        Entry {
            invariant: self.invariant.box_clone(),
            checked: self.checked,
        }
    }
}

/// The invariants of one case, in catalogue order. Build one per case: the invariants
/// keep per-case state and must see every transition of the case from the first (a
/// clone continues from the state of its original: a forked case).
#[derive(Clone)]
pub struct Oracle {
    entries: Vec<Entry>,
}

impl fmt::Debug for Oracle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Oracle")
            .field("checked", &self.checked())
            .finish()
    }
}

impl Oracle {
    /// Every invariant of the catalogue that `config.policies` judges by (a policy
    /// invariant whose policy is not declared does not run).
    pub fn new(config: OracleConfig) -> Oracle {
        Oracle::build(config, |_| true)
    }

    /// Only the invariants named in `ids` (any order, duplicates ignored), kept in
    /// catalogue order, less the policy invariants `config.policies` does not declare.
    pub fn with_only(config: OracleConfig, ids: &[&str]) -> Result<Oracle, UnknownInvariant> {
        if let Some(bad) = ids
            .iter()
            .find(|id| !REGISTRY.iter().any(|(info, _)| info.id == **id))
        {
            return Err(UnknownInvariant(bad.to_string()));
        }
        Ok(Oracle::build(config, |id| ids.contains(&id)))
    }

    fn build(config: OracleConfig, keep: impl Fn(&str) -> bool) -> Oracle {
        let entries = REGISTRY
            .iter()
            .filter(|(info, _)| keep(info.id) && config.policies.judges(info.class))
            .map(|(_, build)| Entry {
                invariant: build(config),
                checked: 0,
            })
            .collect();
        Oracle { entries }
    }

    /// Shows `t` to every invariant; returns every violation on it, in catalogue order.
    pub fn observe(&mut self, t: &Transition<'_>) -> Vec<Violation> {
        let mut found = Vec::new();
        for entry in &mut self.entries {
            if entry.invariant.checks(t.event) {
                entry.checked += 1;
            }
            if let Some(witness) = entry.invariant.observe(t) {
                let info = entry.invariant.info();
                let message = witness
                    .facts
                    .first()
                    .cloned()
                    .unwrap_or_else(|| info.statement.to_string());
                found.push(violation(info, t, message, witness));
            }
        }
        found
    }

    /// Transitions each invariant judged so far (see `Invariant::checks`), catalogue order.
    pub fn checked(&self) -> Vec<(&'static str, u64)> {
        self.entries
            .iter()
            .map(|e| (e.invariant.info().id, e.checked))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue;
    use crate::testkit::*;
    use compactsim_model::{Event, Message, Transition};

    fn step<'a>(
        n: u32,
        event: &'a Event,
        before: &'a [Message],
        after: &'a [Message],
    ) -> Transition<'a> {
        Transition::new(n, event, before, after, &[])
    }

    #[test]
    fn oracle_can_move_to_a_worker_thread() {
        fn assert_send<T: Send>(_: &T) {}
        assert_send(&Oracle::new(OracleConfig::default()));
    }

    #[test]
    fn new_holds_the_whole_catalogue_in_order() {
        let oracle = Oracle::new(OracleConfig::default());
        let ids: Vec<&str> = oracle.checked().iter().map(|(id, _)| *id).collect();
        let expected: Vec<&str> = catalogue().iter().map(|i| i.id).collect();
        assert_eq!(ids, expected);
    }

    #[test]
    fn with_only_keeps_catalogue_order_and_rejects_unknown_ids() {
        let oracle = Oracle::with_only(
            OracleConfig::default(),
            &["marker-contained", "api-valid", "api-valid"],
        )
        .unwrap();
        let ids: Vec<&str> = oracle.checked().iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, ["api-valid", "marker-contained"]);
        let err =
            Oracle::with_only(OracleConfig::default(), &["api-valid", "no-such"]).unwrap_err();
        assert_eq!(err, UnknownInvariant("no-such".into()));
        assert!(err.to_string().contains("one-marker-max"));
    }

    #[test]
    fn observe_reports_every_violation_in_catalogue_order_and_counts_checks() {
        let mut oracle = Oracle::new(OracleConfig {
            protect_first_n: 1,
            ..OracleConfig::default()
        });
        let start = vec![
            user(0),
            calling(1, &[1]),
            tool(2, 1),
            reply(3),
            user(4),
            reply(5),
            user(6),
        ];
        let ev = append_event(1);
        assert!(oracle.observe(&step(0, &ev, &[], &start)).is_empty());
        // A pass that leaves two markers and moves user 4 behind user 6.
        let after = vec![
            user(0),
            micro_marker(7, &[1]),
            micro_marker(8, &[2]),
            user(6),
            user(4),
        ];
        let ev = absorbed(1, &[1, 2, 3]);
        let found = oracle.observe(&step(1, &ev, &start, &after));
        found.iter().for_each(|v| drop(readable(v.witness.clone())));
        let ids: Vec<&str> = found.iter().map(|v| v.invariant.as_str()).collect();
        // Reply 5 went too, past kept user 4: two exchanges in one pass.
        assert_eq!(
            ids,
            [
                "one-marker-max",
                "user-turns-intact",
                "api-valid",
                "exchange-absorbed-once",
                "no-silent-drop"
            ]
        );
        assert!(found.iter().all(|v| v.step == 1 && v.turn == 1));
        assert_eq!(found[2].message, found[2].witness.facts[0]);
        let checked: Vec<u64> = oracle.checked().iter().map(|(_, n)| *n).collect();
        // one-marker-max, count, tokens (exempt first pass), summary-failure-safe (batch
        // passes only), user, api (not the append), head, exchange (only the pass),
        // no-silent-drop (only the pass), kept-rows-intact (only the pass),
        // marker-contained, marker-pristine (only the pass), bounded-compaction (no batch pass), compaction-effective (no window
        // known: off), then the other agent-loop invariants (no agent events).
        assert_eq!(checked, [2, 1, 0, 0, 2, 1, 2, 1, 1, 1, 2, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn a_policy_invariant_runs_only_when_its_policy_is_declared() {
        let ids = |policies| {
            let config = OracleConfig {
                policies,
                ..OracleConfig::default()
            };
            let all: Vec<&str> = Oracle::new(config)
                .checked()
                .iter()
                .map(|(id, _)| *id)
                .collect();
            let only: Vec<&str> = Oracle::with_only(config, &["exchange-absorbed-once"])
                .unwrap()
                .checked()
                .iter()
                .map(|(id, _)| *id)
                .collect();
            (all, only)
        };
        let (all, only) = ids(crate::Policies::NONE);
        assert!(!all.contains(&"exchange-absorbed-once"));
        assert!(
            all.contains(&"head-protected"),
            "universal, its head rule off"
        );
        assert_eq!(all.len(), catalogue().len() - 1);
        assert!(only.is_empty());
        let (all, only) = ids(crate::Policies::HERMES);
        assert_eq!(all.len(), catalogue().len());
        assert_eq!(only, ["exchange-absorbed-once"]);
        let judged = crate::judged_ids(
            vec!["api-valid", "exchange-absorbed-once"],
            crate::Policies::NONE,
        );
        assert_eq!(judged, ["api-valid"]);
    }
}
