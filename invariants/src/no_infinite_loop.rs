use crate::class::{changed, classify, EventClass};
use crate::{FailureCooldown, Invariant, InvariantInfo, OracleConfig};
use compactsim_model::{
    tokens_rough_total, BatchTrigger, Event, Message, MsgId, Transition, Witness,
};

/// The agent loop keeps making progress (liveness; hermes-domain §4.1: H-2153, H-11529,
/// H-14694). The engine adds the case's step budget: exceeding it is reported under
/// this id. The invariant itself fails when
///
/// - more than [`FAILED_TURNS_IN_ROW_MAX`] consecutive turns fail for their size (a
///   death spiral): a failed turn counts only when one of its provider requests was
///   over the window (the provider's ground truth); turns failed by injected faults on
///   requests that fit (dropped connections, server errors) are the environment, not
///   a spiral, and are not counted;
/// - (the `failure_cooldown` policy's rule, only when declared) an automatic
///   compaction (preflight or post-response) starts within the declared cooldown
///   (Hermes: [`COOLDOWN_MIN_MS`], [`COOLDOWN_CONNECTION_DROPPED_MS`] after a dropped
///   connection, the declared `empty_output_ms` after empty content) after a summarizer call the harness served failed — the oracle arms its own cooldown from the failure it observed, never
///   reading the compactor's report; overflow recovery is exempt (a provider-proven
///   overflow gets its attempt);
/// - with a recovery window configured (V2.2), compaction starves: preflights keep
///   finding the messages alone at or over the trigger (counted here) with the last
///   real reading (if any) at or over it too, yet no batch pass runs, for more than the
///   window (+ [`RECOVERY_SLACK_MS`]) after the first such preflight — and more than
///   [`COOLDOWN_MAX_MS`] after the last failed summarizer call. A batch pass, a
///   preflight under the trigger, a reading below the trigger, the first reading over
///   it after a pass changed the list (an anti-thrash verdict: a block may begin
///   there) or a reset in between restarts the clock. Preflight's own decision label is never read.
///
/// A session reset clears the cooldown and the starvation clock; a process restart (the
/// cooldown is in-memory state) clears the cooldown. Other events (unknown kinds
/// included) neither count nor are checked.
#[derive(Clone, Debug)]
pub struct NoInfiniteLoop {
    config: OracleConfig,
    last_failed_turn: Option<u32>,
    failed_in_row: u32,
    /// The turn of the last provider call, and whether a request of it was over the
    /// window holding rows from before the turn.
    over_window_turn: Option<(u32, bool)>,
    /// The turn that appended its rows to an empty session, and those rows' ids.
    input_only_turn: Option<(u32, Vec<MsgId>)>,
    cooldown_until_ms: u64,
    /// Virtual time of the last failed summarizer call served to a batch pass.
    failed_call_ms: Option<u64>,
    /// The last real usage reading.
    last_reading: Option<u64>,
    /// A batch pass changed the list since the last reading.
    committed_since_reading: bool,
    blocked_since_ms: Option<u64>,
}

pub const INFO: InvariantInfo = InvariantInfo {
    id: crate::NO_INFINITE_LOOP,
    statement: "every case ends within its step budget; no death spiral of failed turns; \
                no automatic compaction during a summary-failure cooldown; a blocked \
                compactor recovers within its recovery window",
    catches: &["H-2153", "H-11529", "H-14694"],
    class: crate::InvariantClass::Universal,
};

/// Consecutive failed turns tolerated (transient faults can fail a turn or two).
pub const FAILED_TURNS_IN_ROW_MAX: u32 = 3;
/// The smallest cooldown the spec gives a summary failure other than a dropped
/// connection (60 s: the first rung of the timeout ladder and "any other" failure).
pub const COOLDOWN_MIN_MS: u64 = 60_000;
/// The cooldown of a closed stream / dropped connection (the harness's `network` fault;
/// 0.19.0 `_generate_summary`: "30 s for JSON decode and streaming-closed").
pub const COOLDOWN_CONNECTION_DROPPED_MS: u64 = 30_000;

/// The shortest cooldown the failed calls of `served` arm under the declared
/// `failure_cooldown`, if any failed.
fn cooldown_min_ms(
    cooldown: FailureCooldown,
    served: &[compactsim_model::ServedCall],
) -> Option<u64> {
    served
        .iter()
        .filter(|c| !c.ok)
        .map(|c| {
            if c.connection_dropped {
                cooldown.connection_dropped_ms
            } else if c.empty_output {
                cooldown.empty_output_ms
            } else {
                cooldown.ms
            }
        })
        .min()
}
/// Tolerance on the recovery window (decisions are taken at turn starts).
pub const RECOVERY_SLACK_MS: u64 = 1_000;
/// The longest cooldown the spec gives any summary failure (the third rung of the
/// timeout ladder, hermes-domain §2.6).
pub const COOLDOWN_MAX_MS: u64 = 900_000;

impl NoInfiniteLoop {
    pub fn new(config: OracleConfig) -> Self {
        NoInfiniteLoop {
            config,
            last_failed_turn: None,
            failed_in_row: 0,
            over_window_turn: None,
            input_only_turn: None,
            cooldown_until_ms: 0,
            failed_call_ms: None,
            last_reading: None,
            committed_since_reading: false,
            blocked_since_ms: None,
        }
    }

    /// A preflight at `now_ms` after which the list's messages weigh `rough` tokens.
    /// `rows`: the list the preflight left, summed only when the cheaper conditions hold.
    fn on_preflight(&mut self, turn: u32, now_ms: u64, rows: &[Message]) -> Option<Witness> {
        let trigger = self.config.trigger_tokens as u64;
        let starving = trigger > 0
            && self.last_reading.is_none_or(|r| r >= trigger)
            && tokens_rough_total(rows) >= trigger;
        if !starving {
            self.blocked_since_ms = None;
            return None;
        }
        self.on_blocked(turn, now_ms)
    }

    /// `request` holds nothing but the rows turn `turn` appended to an empty session.
    fn input_only(&self, turn: u32, request: &[Message]) -> bool {
        self.input_only_turn
            .as_ref()
            .is_some_and(|(t, ids)| *t == turn && request.iter().all(|m| ids.contains(&m.id)))
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
        let cooled = self.failed_call_ms.map_or(0, |f| f + COOLDOWN_MAX_MS);
        (now_ms > (since + window).max(cooled) + RECOVERY_SLACK_MS).then(|| {
            Witness::default().fact(format!(
                "compaction starved at turn {turn}: messages over the trigger {} ms after \
                 the first such preflight (recovery window {window} ms) with no batch \
                 pass in between",
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
                self.committed_since_reading |= changed(t);
                if p.trigger == BatchTrigger::Manual {
                    // `/compress` clears any failure cooldown first (the gateway's
                    // command; the agent loop never runs it).
                    self.cooldown_until_ms = 0;
                }
                let automatic = matches!(
                    p.trigger,
                    BatchTrigger::Preflight | BatchTrigger::PostResponse
                );
                let found = (automatic && p.now_ms < self.cooldown_until_ms).then(|| {
                    Witness::default().fact(format!(
                        "automatic compaction at {} ms during the cooldown after a failed \
                         summary (until at least {} ms): {}",
                        p.now_ms,
                        self.cooldown_until_ms,
                        t.event.describe()
                    ))
                });
                if t.served.iter().any(|c| !c.ok) {
                    self.failed_call_ms = Some(p.now_ms);
                }
                // The cooldown rule is the `failure_cooldown` policy's: armed only when
                // the compactor declares it, for the declared time.
                let declared = self.config.policies.failure_cooldown;
                if let Some(cooldown_ms) = declared.and_then(|c| cooldown_min_ms(c, t.served)) {
                    self.cooldown_until_ms = self.cooldown_until_ms.max(p.now_ms + cooldown_ms);
                }
                found
            }
            (Event::TurnFailed { turn, .. }, _) => {
                let sized = self.over_window_turn == Some((*turn, true));
                sized.then(|| self.on_failed(*turn)).flatten()
            }
            (_, EventClass::Preflight(p)) => self.on_preflight(p.turn, p.now_ms, t.after),
            (Event::TurnAppended { turn, .. }, _) => {
                self.input_only_turn = t
                    .before
                    .is_empty()
                    .then(|| (*turn, t.after.iter().map(|m| m.id).collect()));
                None
            }
            (_, EventClass::ProviderCall(c)) => {
                let over = (c.over_window && !self.input_only(c.turn, t.before))
                    || self
                        .over_window_turn
                        .is_some_and(|(turn, o)| turn == c.turn && o);
                self.over_window_turn = Some((c.turn, over));
                if let Some(u) = c.usage_tokens {
                    self.last_reading = Some(u);
                    // Below the trigger, or the first reading over it after a change
                    // (an anti-thrash verdict: a block may begin now): the clock
                    // restarts at the next starved preflight.
                    if u < self.config.trigger_tokens as u64 || self.committed_since_reading {
                        self.blocked_since_ms = None;
                    }
                    self.committed_since_reading = false;
                }
                None
            }
            // The failure cooldown is the compactor's in-memory state (§2.3): a
            // restarted process (an injected fault) has none.
            (_, EventClass::Restart) => {
                self.cooldown_until_ms = 0;
                None
            }
            (_, EventClass::SessionReset) => {
                self.cooldown_until_ms = 0;
                self.failed_call_ms = None;
                self.last_reading = None;
                self.committed_since_reading = false;
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
    use compactsim_model::PreflightDecision;

    fn inv(window: Option<u64>) -> NoInfiniteLoop {
        NoInfiniteLoop::new(OracleConfig {
            trigger_tokens: 1_000,
            recovery_window_ms: window,
            ..OracleConfig::default()
        })
    }

    const PRE: BatchTrigger = BatchTrigger::Preflight;

    #[test]
    fn fires_on_a_death_spiral_of_turns_failed_for_their_size_only() {
        let turn = |t: u32, over: bool| {
            let call = if over {
                overflow_event(t, compactsim_model::CallErrorClass::OverflowPhrase)
            } else {
                call_event(t, None, Some(compactsim_model::CallErrorClass::Transient))
            };
            [(call, None), (failed_event(t, false, 1), None)]
        };
        let spiral: Vec<_> = (1..=FAILED_TURNS_IN_ROW_MAX + 1)
            .flat_map(|t| turn(t, true))
            .collect();
        let fired = run_same(&mut inv(None), &[user(0)], &spiral);
        assert_eq!(fired.len(), 1);
        assert_eq!(fired[0].0, 2 * FAILED_TURNS_IN_ROW_MAX + 1);
        let faults: Vec<_> = (1..=8).flat_map(|t| turn(t, false)).collect();
        assert!(
            run_same(&mut inv(None), &[user(0)], &faults).is_empty(),
            "injected faults on requests that fit are no spiral"
        );
        let gaps: Vec<_> = (1..=8).flat_map(|t| turn(2 * t, true)).collect();
        assert!(run_same(&mut inv(None), &[user(0)], &gaps).is_empty());
    }

    /// Turns that each append one over-window user row and fail; `kept` is a row from
    /// before the first turn that stays in the session (none: every turn starts empty,
    /// as after a reset).
    fn input_over_window(kept: Option<Message>) -> Vec<(Event, Vec<Message>)> {
        let start: Vec<Message> = kept.into_iter().collect();
        (1..=FAILED_TURNS_IN_ROW_MAX + 2)
            .flat_map(|t| {
                let mut with_input = start.clone();
                with_input.push(user_sized(10 + t, 400_000));
                let over = overflow_event(t, compactsim_model::CallErrorClass::OverflowPhrase);
                [
                    (append_event(t), with_input.clone()),
                    (over, with_input),
                    (failed_event(t, true, 1), start.clone()),
                ]
            })
            .collect()
    }

    #[test]
    fn a_turn_whose_own_input_alone_is_over_the_window_is_no_spiral() {
        let fired = run(&mut inv(None), &[], &input_over_window(None));
        assert!(fired.is_empty(), "{fired:?}");
        let fired = run(
            &mut inv(None),
            &[user(0)],
            &input_over_window(Some(user(0))),
        );
        // Turns 4 and 5 are past the tolerated run of failed turns.
        assert_eq!(fired.len(), 2, "an earlier row in the request: a spiral");
        assert_eq!(fired[0].0, 3 * (FAILED_TURNS_IN_ROW_MAX + 1) - 1);
    }

    #[test]
    fn fires_on_an_automatic_pass_inside_an_observed_cooldown_but_not_overflow() {
        let failed = || vec![served(false, 100, &[])];
        let steps = vec![
            (batch_at(1, PRE, true, 10_000), None, failed()),
            (
                batch_at(1, BatchTrigger::Overflow, true, 20_000),
                None,
                vec![],
            ),
            (
                batch_at(2, BatchTrigger::PostResponse, true, 69_999),
                None,
                vec![],
            ),
        ];
        let fired = run_served(&mut inv(None), &[user(0)], &steps);
        assert_eq!(fired.iter().map(|f| f.0).collect::<Vec<_>>(), [2]);
        let mut labelled_only = steps.clone();
        labelled_only[0] = (failed_summary_at(1, PRE, 10_000), None, vec![]);
        assert!(
            run_served(&mut inv(None), &[user(0)], &labelled_only).is_empty(),
            "a failure only the pass reports arms nothing"
        );
        let mut manual = steps.clone();
        manual[1].0 = batch_at(1, BatchTrigger::Manual, true, 20_000);
        assert!(
            run_served(&mut inv(None), &[user(0)], &manual).is_empty(),
            "`/compress` clears the cooldown"
        );
        let later = vec![
            (batch_at(1, PRE, true, 10_000), None, failed()),
            (batch_at(2, PRE, true, 70_000), None, vec![]),
        ];
        assert!(run_served(&mut inv(None), &[user(0)], &later).is_empty());
        let reset = vec![
            (batch_at(1, PRE, true, 10_000), None, failed()),
            (reset_event(1), Some(vec![]), vec![]),
            (batch_at(2, PRE, true, 11_000), None, vec![]),
        ];
        assert!(run_served(&mut inv(None), &[user(0)], &reset).is_empty());
        let restart = vec![
            (batch_at(1, PRE, true, 10_000), None, failed()),
            (restart_event(2), None, vec![]),
            (batch_at(2, PRE, true, 11_000), None, vec![]),
        ];
        assert!(
            run_served(&mut inv(None), &[user(0)], &restart).is_empty(),
            "a restarted process has no cooldown"
        );
    }

    #[test]
    fn a_dropped_connection_arms_the_short_stream_closed_cooldown() {
        let dropped = || {
            let mut c = served(false, 100, &[]);
            c.connection_dropped = true;
            vec![c]
        };
        // 0.19.0 pauses 30 s after a closed stream: a pass 40 s later is allowed ...
        let after_40_s = vec![
            (batch_at(1, PRE, true, 10_000), None, dropped()),
            (batch_at(2, PRE, true, 50_000), None, vec![]),
        ];
        assert!(run_served(&mut inv(None), &[user(0)], &after_40_s).is_empty());
        // ... one inside the 30 s is not ...
        let after_20_s = vec![
            (batch_at(1, PRE, true, 10_000), None, dropped()),
            (batch_at(2, PRE, true, 30_000), None, vec![]),
        ];
        let fired = run_served(&mut inv(None), &[user(0)], &after_20_s);
        assert_eq!(fired.iter().map(|f| f.0).collect::<Vec<_>>(), [1]);
        // ... and with another failure in the same pass the shortest class counts (the
        // compactor may have recorded either one last).
        let mut both = dropped();
        both.push(served(false, 100, &[]));
        let mixed = vec![
            (batch_at(1, PRE, true, 10_000), None, both),
            (batch_at(2, PRE, true, 50_000), None, vec![]),
        ];
        assert!(run_served(&mut inv(None), &[user(0)], &mixed).is_empty());
    }

    /// iot 0.22.2.post1 pauses 30 s after a summary that came back empty
    /// (agent/context_compressor.py:4263, `kind.empty_content`), 0.19.0 60 s: the
    /// declared `empty_output_ms` is the wait after the `empty` fault (iot case 65 of the
    /// gateway run: a `/compress` whose call answered empty content, then a post-response
    /// pass 39,978 ms later).
    #[test]
    fn empty_content_arms_the_declared_empty_output_cooldown() {
        let empty = || {
            let mut c = served(false, 100, &[]);
            c.empty_output = true;
            vec![c]
        };
        let at = |ms: u64| {
            vec![
                (batch_at(1, PRE, true, 10_000), None, empty()),
                (batch_at(2, PRE, true, ms), None, vec![]),
            ]
        };
        let iot = Some(FailureCooldown {
            ms: 60_000,
            connection_dropped_ms: 30_000,
            empty_output_ms: 30_000,
        });
        let quiet = run_served(&mut with_cooldown(iot), &[user(0)], &at(40_000));
        assert!(quiet.is_empty(), "past iot's 30 s: {quiet:?}");
        let fired = run_served(&mut with_cooldown(iot), &[user(0)], &at(39_999));
        assert_eq!(fired.len(), 1, "inside iot's 30 s: {fired:?}");
        assert!(fired[0].1.facts[0].contains("until at least 40000 ms"));
        // Undeclared (Hermes' declaration, 0.19.0's 60 s): the same pass fires.
        let hermes = run_served(&mut inv(None), &[user(0)], &at(40_000));
        assert_eq!(hermes.len(), 1, "inside 0.19.0's 60 s: {hermes:?}");
    }

    #[test]
    fn fires_when_starved_past_the_recovery_window_whatever_preflight_says() {
        let window = 300_000;
        let huge = vec![user_sized(0, 8_000)];
        // Whatever decision preflight reports: the messages are over the trigger and
        // no pass runs.
        let blocked = |now| preflight_event(1, now, PreflightDecision::BelowTrigger);
        let steps = vec![
            (blocked(0), None),
            (blocked(window + RECOVERY_SLACK_MS + 1), None),
        ];
        let fired = run_same(&mut inv(Some(window)), &huge, &steps);
        assert_eq!(fired.len(), 1);
        assert!(
            run_same(&mut inv(Some(window)), &[user(0)], &steps).is_empty(),
            "under the trigger"
        );
        let cooling = vec![
            (
                batch_at(1, PRE, false, 0),
                None,
                vec![served(false, 100, &[])],
            ),
            (blocked(1), None, vec![]),
            (blocked(window + RECOVERY_SLACK_MS + 2), None, vec![]),
        ];
        assert!(
            run_served(&mut inv(Some(window)), &huge, &cooling).is_empty(),
            "inside the longest cooldown after a failed call"
        );
        let reading_low = vec![
            (blocked(0), None),
            (call_event(1, Some(10), None), None),
            (blocked(window + RECOVERY_SLACK_MS + 1), None),
        ];
        assert!(run_same(&mut inv(Some(window)), &huge, &reading_low).is_empty());
        assert!(
            run_same(&mut inv(None), &huge, &steps).is_empty(),
            "no window: V2"
        );
        let probed = vec![
            (blocked(0), None),
            (batch_at(1, PRE, true, window), None),
            (blocked(window + 10), None),
            (blocked(2 * window), None),
        ];
        assert!(run_same(&mut inv(Some(window)), &huge, &probed).is_empty());
    }

    fn with_cooldown(cooldown: Option<FailureCooldown>) -> NoInfiniteLoop {
        NoInfiniteLoop::new(OracleConfig {
            trigger_tokens: 1_000,
            policies: crate::Policies {
                failure_cooldown: cooldown,
                ..crate::Policies::HERMES
            },
            ..OracleConfig::default()
        })
    }

    /// The cooldown rule is the `failure_cooldown` policy's: quiet when it is not
    /// declared, and held to the declared length when it is.
    #[test]
    fn the_cooldown_rule_runs_only_when_declared_with_its_length() {
        let steps = |at: u64| {
            vec![
                (
                    batch_at(1, PRE, true, 10_000),
                    None,
                    vec![served(false, 100, &[])],
                ),
                (batch_at(2, PRE, true, at), None, vec![]),
            ]
        };
        let quiet = run_served(&mut with_cooldown(None), &[user(0)], &steps(10_001));
        assert!(quiet.is_empty(), "no policy, no cooldown: {quiet:?}");
        let five_s = Some(FailureCooldown {
            ms: 5_000,
            connection_dropped_ms: 5_000,
            empty_output_ms: 5_000,
        });
        let fired = run_served(&mut with_cooldown(five_s), &[user(0)], &steps(14_999));
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(fired[0].1.facts[0].contains("until at least 15000 ms"));
        let after = run_served(&mut with_cooldown(five_s), &[user(0)], &steps(15_000));
        assert!(after.is_empty(), "past the declared 5 s: {after:?}");
    }
}
