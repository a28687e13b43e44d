use crate::class::{classify, EventClass};
use crate::{Invariant, InvariantInfo, OracleConfig};
use compactsim_model::{BatchTrigger, Event, PreflightDecision, Transition, Witness};

/// The agent loop keeps making progress (liveness; hermes-domain §4.1: H-2153, H-11529,
/// H-14694). The engine adds the case's step budget: exceeding it is reported under
/// this id. The invariant itself fails when
///
/// - more than [`FAILED_TURNS_IN_ROW_MAX`] consecutive turns fail (a death spiral);
/// - an automatic compaction (preflight or post-response) starts within the spec's
///   minimum cooldown ([`COOLDOWN_MIN_MS`]) after a summary call failed — the oracle
///   arms its own cooldown from the failure, never reading the compactor's; overflow
///   recovery is exempt (a provider-proven overflow gets its attempt);
/// - with a recovery window configured (V2.2), preflight still reports the compactor
///   blocked more than the window (+ [`RECOVERY_SLACK_MS`]) after its first blocked
///   decision, with no compaction attempt, no reading below the trigger and no reset
///   in between.
///
/// A session reset clears the cooldown and the blocked clock. Other events (unknown
/// kinds included) neither count nor are checked.
#[derive(Debug)]
pub struct NoInfiniteLoop {
    config: OracleConfig,
    last_failed_turn: Option<u32>,
    failed_in_row: u32,
    cooldown_until_ms: u64,
    blocked_since_ms: Option<u64>,
}

pub const INFO: InvariantInfo = InvariantInfo {
    id: crate::NO_INFINITE_LOOP,
    statement: "every case ends within its step budget; no death spiral of failed turns; \
                no automatic compaction during a summary-failure cooldown; a blocked \
                compactor recovers within its recovery window",
    catches: &["H-2153", "H-11529", "H-14694"],
};

/// Consecutive failed turns tolerated (transient faults can fail a turn or two).
pub const FAILED_TURNS_IN_ROW_MAX: u32 = 3;
/// The smallest cooldown the spec gives any modelled summary failure (60 s: the first
/// rung of the timeout ladder and "any other" failure; the 30 s JSON/stream class is
/// not modelled).
pub const COOLDOWN_MIN_MS: u64 = 60_000;
/// Tolerance on the recovery window (decisions are taken at turn starts).
pub const RECOVERY_SLACK_MS: u64 = 1_000;

impl NoInfiniteLoop {
    pub fn new(config: OracleConfig) -> Self {
        NoInfiniteLoop {
            config,
            last_failed_turn: None,
            failed_in_row: 0,
            cooldown_until_ms: 0,
            blocked_since_ms: None,
        }
    }

    fn on_failed(&mut self, turn: u32) -> Option<Witness> {
        let follows = self
            .last_failed_turn
            .is_some_and(|last| last + 1 == turn || last == turn);
        self.failed_in_row = if follows { self.failed_in_row + 1 } else { 1 };
        self.last_failed_turn = Some(turn);
        (self.failed_in_row > FAILED_TURNS_IN_ROW_MAX).then(|| {
            Witness::default().fact(format!(
                "{} consecutive failed turns up to turn {turn} (max {}): death spiral",
                self.failed_in_row, FAILED_TURNS_IN_ROW_MAX
            ))
        })
    }

    fn on_blocked(&mut self, turn: u32, now_ms: u64) -> Option<Witness> {
        let window = self.config.recovery_window_ms?;
        let since = *self.blocked_since_ms.get_or_insert(now_ms);
        (now_ms > since + window + RECOVERY_SLACK_MS).then(|| {
            Witness::default().fact(format!(
                "compactor still blocked at turn {turn} ({} ms after the first blocked \
                 decision, recovery window {window} ms) with no attempt in between",
                now_ms - since
            ))
        })
    }
}

impl Invariant for NoInfiniteLoop {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, event: &Event) -> bool {
        matches!(
            event,
            Event::BatchPass(_) | Event::TurnFailed { .. } | Event::Preflight(_)
        )
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        match (t.event, classify(t.event)) {
            (Event::BatchPass(p), _) => {
                self.blocked_since_ms = None;
                let automatic = matches!(
                    p.trigger,
                    BatchTrigger::Preflight | BatchTrigger::PostResponse
                );
                let found = (automatic && p.now_ms < self.cooldown_until_ms).then(|| {
                    Witness::default().fact(format!(
                        "automatic compaction at {} ms during the cooldown after a failed \
                         summary (until at least {} ms): {:?}",
                        p.now_ms, self.cooldown_until_ms, t.event
                    ))
                });
                if p.summary_call_failed {
                    self.cooldown_until_ms = self.cooldown_until_ms.max(p.now_ms + COOLDOWN_MIN_MS);
                }
                found
            }
            (Event::TurnFailed { turn, .. }, _) => self.on_failed(*turn),
            (_, EventClass::Preflight(p)) if p.decision == PreflightDecision::Blocked => {
                self.on_blocked(p.turn, p.now_ms)
            }
            (_, EventClass::ProviderCall(c)) => {
                if c.usage_tokens
                    .is_some_and(|u| u < self.config.trigger_tokens as u64)
                {
                    self.blocked_since_ms = None;
                }
                None
            }
            (_, EventClass::SessionReset) => {
                self.cooldown_until_ms = 0;
                self.blocked_since_ms = None;
                None
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;

    fn inv(window: Option<u64>) -> NoInfiniteLoop {
        NoInfiniteLoop::new(OracleConfig {
            trigger_tokens: 1_000,
            recovery_window_ms: window,
            ..OracleConfig::default()
        })
    }

    const PRE: BatchTrigger = BatchTrigger::Preflight;

    #[test]
    fn fires_on_a_death_spiral_of_failed_turns_only() {
        let spiral: Vec<_> = (1..=FAILED_TURNS_IN_ROW_MAX + 1)
            .map(|t| (failed_event(t, false, 1), None))
            .collect();
        let fired = run_same(&mut inv(None), &[user(0)], &spiral);
        assert_eq!(fired.len(), 1);
        assert_eq!(fired[0].0, FAILED_TURNS_IN_ROW_MAX);
        let gaps: Vec<_> = (1..=8)
            .map(|t| (failed_event(2 * t, false, 1), None))
            .collect();
        assert!(run_same(&mut inv(None), &[user(0)], &gaps).is_empty());
    }

    #[test]
    fn fires_on_an_automatic_pass_inside_the_cooldown_but_not_overflow() {
        let steps = vec![
            (failed_summary_at(1, PRE, 10_000), None),
            (batch_at(1, BatchTrigger::Overflow, true, 20_000), None),
            (batch_at(2, BatchTrigger::PostResponse, true, 69_999), None),
        ];
        let fired = run_same(&mut inv(None), &[user(0)], &steps);
        assert_eq!(fired.iter().map(|f| f.0).collect::<Vec<_>>(), [2]);
        let later = vec![
            (failed_summary_at(1, PRE, 10_000), None),
            (batch_at(2, PRE, true, 70_000), None),
        ];
        assert!(run_same(&mut inv(None), &[user(0)], &later).is_empty());
        let reset = vec![
            (failed_summary_at(1, PRE, 10_000), None),
            (reset_event(1), Some(vec![])),
            (batch_at(2, PRE, true, 11_000), None),
        ];
        assert!(run_same(&mut inv(None), &[user(0)], &reset).is_empty());
    }

    #[test]
    fn fires_when_blocked_past_the_recovery_window() {
        let window = 300_000;
        let blocked = |now| preflight_event(1, now, PreflightDecision::Blocked);
        let steps = vec![
            (blocked(0), None),
            (blocked(window + RECOVERY_SLACK_MS + 1), None),
        ];
        let fired = run_same(&mut inv(Some(window)), &[user(0)], &steps);
        assert_eq!(fired.len(), 1);
        assert!(
            run_same(&mut inv(None), &[user(0)], &steps).is_empty(),
            "no window: V2"
        );
        let probed = vec![
            (blocked(0), None),
            (batch_at(1, PRE, true, window), None),
            (blocked(window + 10), None),
            (blocked(2 * window), None),
        ];
        assert!(run_same(&mut inv(Some(window)), &[user(0)], &probed).is_empty());
    }
}
