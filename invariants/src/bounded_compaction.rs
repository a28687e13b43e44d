use crate::class::{changed, classify, pure_append, unchanged, EventClass};
use crate::{Invariant, InvariantInfo, OracleConfig};
use compactsim_model::{tokens_rough_total, BatchPass, BatchTrigger, Event, Transition, Witness};

/// Batch compaction stays bounded (hermes-domain §2.2, §2.5; H-35054, H-31509, H-57771,
/// H-40803):
///
/// (a) committed batch passes in one turn ≤ `PREFLIGHT_PASSES_MAX` + `max_attempts` +
///     the provider calls of the turn so far (at most one post-response pass per call);
/// (b) between two real usage readings at most one automatic compaction episode (a
///     preflight run of consecutive passes, or one post-response pass) commits, unless
///     in between the provider proved an overflow (the request was over the window:
///     ground truth) or a call failed with a rough request (counted here plus the
///     overhead) at or over the trigger, leaving the agent only its estimate (PR
///     #4750) — overflow-recovery passes never count;
/// (c) a rotation follows a committed pass that shrank the list (fewer rows or fewer
///     rough tokens, measured here), one rotation per pass;
/// (d) at most [`NOOP_STREAK_MAX`] consecutive automatic no-op passes within
///     [`NOOP_WINDOW_MS`] of virtual time, unless a committed pass, a real reading below
///     the trigger or a session reset comes between (a process restart does not end
///     the streak: the anti-thrash state survives restarts);
/// (e) a preflight run starts only with evidence that the prompt no longer fits
///     (#35054/#36718): there is no real reading in the session (since the process last
///     restarted: a restart forgets readings, like a session reset), or the last one was at
///     or over the trigger, or the rough request estimate (messages counted here plus
///     the configured overhead) grew by more than max(4,096, 5 % of the trigger) since
///     the baseline — the rough size at the last reading below the trigger or right
///     after the last compaction, whichever came last.
///
/// Judged from observations only: a pass "commits" when it changed the list; it is a
/// no-op when it changed nothing and the harness served it no summarizer call (a pass
/// whose summary call failed and that changed nothing is an abort, not a no-op); an
/// overflow is proven by the provider's ground truth (the request was over the
/// window), never by the agent's classification. The trigger of a pass is the
/// harness's own request, not a compactor label. Observes batch passes, provider
/// calls, rotations and resets; other events neither count nor are checked (unknown
/// kinds included: they cannot compact), but every transition keeps the rough size of
/// the list current — recounted from `before` whenever the list changed between two
/// transitions without being reported (a row the world added outside a transition).
#[derive(Clone, Debug)]
pub struct BoundedCompaction {
    config: OracleConfig,
    turn: Option<u32>,
    committed_in_turn: u32,
    calls_in_turn: u32,
    episodes_since_reading: u32,
    /// The previous compaction-related event was a preflight pass (or its rotation).
    in_preflight_run: bool,
    /// The last pass shrank the list and has not rotated yet.
    rotation_allowed: bool,
    /// Virtual times of the current run of automatic no-op passes.
    noops_ms: Vec<u64>,
    /// Rough tokens of the list after the last transition.
    rough: u64,
    /// Rows of the list after the last transition.
    len: usize,
    /// The last real reading in the session.
    last_reading: Option<u64>,
    /// (e)'s baseline: rough request size at the last fitting reading or compaction.
    baseline_rough: Option<u64>,
}

/// (e)'s tolerance: at least this many rough tokens…
pub const DEFER_TOLERANCE_MIN_TOKENS: u64 = 4_096;
/// …or this share of the trigger, per mille.
pub const DEFER_TOLERANCE_PER_MILLE: u64 = 50;

pub const INFO: InvariantInfo = InvariantInfo {
    id: "bounded-compaction",
    statement: "compactions per turn <= preflight passes + max attempts + calls; <= 1 \
                compaction episode between two real usage readings unless the provider \
                proves overflow; no rotation without progress; <= 2 no-op passes in a row; \
                preflight compacts only past the deferral tolerance of real usage",
    catches: &["H-35054", "H-57771", "H-40803"],
    class: crate::InvariantClass::Universal,
};

/// Preflight passes per turn (`range(3)`, 0.19.0 turn_context).
pub const PREFLIGHT_PASSES_MAX: u32 = 3;
/// Automatic no-op passes allowed in a row (two strikes block, V1.1).
pub const NOOP_STREAK_MAX: usize = 2;
/// The anti-thrash recovery / structural back-off window (300 s).
pub const NOOP_WINDOW_MS: u64 = 300_000;

impl BoundedCompaction {
    pub fn new(config: OracleConfig) -> Self {
        BoundedCompaction {
            config,
            turn: None,
            committed_in_turn: 0,
            calls_in_turn: 0,
            episodes_since_reading: 0,
            in_preflight_run: false,
            rotation_allowed: false,
            noops_ms: Vec::new(),
            rough: 0,
            len: 0,
            last_reading: None,
            baseline_rough: None,
        }
    }

    fn over_trigger(&self, tokens: u64) -> bool {
        self.config.trigger_tokens > 0 && tokens >= self.config.trigger_tokens as u64
    }

    /// Rough request size of a list of `rough` message tokens.
    fn request(&self, rough: u64) -> u64 {
        rough + self.config.request_overhead_tokens as u64
    }

    /// Keeps `self.rough` equal to the rough size of `t.after` (incrementally when the
    /// transition provably only appended). Returns the size of `t.before`.
    fn track_size(&mut self, t: &Transition<'_>) -> u64 {
        if t.before.len() != self.len {
            self.rough = tokens_rough_total(t.before);
        }
        self.len = t.after.len();
        let before = self.rough;
        if unchanged(t) {
            return before;
        }
        self.rough = match pure_append(t) {
            Some(from) => before + tokens_rough_total(&t.after[from..]),
            None => tokens_rough_total(t.after),
        };
        before
    }

    /// (e) for a preflight run starting on a list of `rough_before` message tokens.
    fn check_evidence(&self, p: &BatchPass, rough_before: u64) -> Option<Witness> {
        let trigger = self.config.trigger_tokens as u64;
        let reading = self.last_reading?;
        if reading >= trigger {
            return None;
        }
        let baseline = self.baseline_rough?;
        let request = self.request(rough_before);
        let tolerance = DEFER_TOLERANCE_MIN_TOKENS.max(trigger * DEFER_TOLERANCE_PER_MILLE / 1000);
        (request.saturating_sub(baseline) <= tolerance).then(|| {
            Witness::default().fact(format!(
                "(e) preflight compaction at turn {} without evidence: last real reading \
                 {reading} < trigger {trigger}, rough request {request} grew {} <= {tolerance} \
                 since the baseline {baseline}",
                p.turn,
                request.saturating_sub(baseline)
            ))
        })
    }

    /// The readings (and what depends on them) are gone: a new session or process.
    fn forget_readings(&mut self) {
        self.in_preflight_run = false;
        self.last_reading = None;
        self.baseline_rough = None;
    }

    fn enter_turn(&mut self, turn: u32) {
        if self.turn != Some(turn) {
            self.turn = Some(turn);
            self.committed_in_turn = 0;
            self.calls_in_turn = 0;
        }
    }

    fn on_pass(&mut self, t: &Transition<'_>, p: &BatchPass, rough_before: u64) -> Option<Witness> {
        let committed = changed(t);
        let automatic = matches!(
            p.trigger,
            BatchTrigger::Preflight | BatchTrigger::PostResponse
        );
        let new_episode = !(p.trigger == BatchTrigger::Preflight && self.in_preflight_run);
        let evidence = (p.trigger == BatchTrigger::Preflight && new_episode)
            .then(|| self.check_evidence(p, rough_before))
            .flatten()
            .map(|w| w.fact(format!("the pass: {}", t.event.describe())));
        if committed {
            self.baseline_rough = Some(self.request(self.rough));
        }
        self.in_preflight_run = p.trigger == BatchTrigger::Preflight;
        self.rotation_allowed =
            committed && (t.after.len() < t.before.len() || self.rough < rough_before);
        let mut found = evidence;
        if committed {
            self.committed_in_turn += 1;
            self.noops_ms.clear();
            let bound = PREFLIGHT_PASSES_MAX + self.config.max_attempts + self.calls_in_turn;
            if self.committed_in_turn > bound && found.is_none() {
                found = Some(Witness::default().fact(format!(
                    "(a) {} committed passes in turn {} (bound {} = {} preflight + {} \
                     attempts + {} calls) on {}",
                    self.committed_in_turn,
                    p.turn,
                    bound,
                    PREFLIGHT_PASSES_MAX,
                    self.config.max_attempts,
                    self.calls_in_turn,
                    t.event.describe()
                )));
            }
            if automatic && new_episode {
                self.episodes_since_reading += 1;
                if self.episodes_since_reading > 1 && found.is_none() {
                    found = Some(Witness::default().fact(format!(
                        "(b) compaction episode {} since the last real usage reading, no \
                         overflow proven in between: {}",
                        self.episodes_since_reading,
                        t.event.describe()
                    )));
                }
            }
        } else if automatic && t.served.is_empty() {
            self.noops_ms.push(p.now_ms);
            let n = self.noops_ms.len();
            if n > NOOP_STREAK_MAX {
                let first = self.noops_ms[n - 1 - NOOP_STREAK_MAX];
                if p.now_ms.saturating_sub(first) < NOOP_WINDOW_MS && found.is_none() {
                    found = Some(Witness::default().fact(format!(
                        "(d) {} automatic no-op passes in a row within {} ms (max {}): {}",
                        NOOP_STREAK_MAX + 1,
                        p.now_ms - first,
                        NOOP_STREAK_MAX,
                        t.event.describe()
                    )));
                }
            }
        }
        found
    }
}

impl Invariant for BoundedCompaction {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, event: &Event) -> bool {
        matches!(event, Event::BatchPass(_) | Event::Rotation { .. })
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        let rough_before = self.track_size(t);
        let class = classify(t.event);
        match (t.event, class) {
            (Event::BatchPass(p), _) => {
                self.enter_turn(p.turn);
                self.on_pass(t, p, rough_before)
            }
            (Event::Rotation { old, new, .. }, _) => {
                self.in_preflight_run = self.in_preflight_run && self.rotation_allowed;
                let allowed = std::mem::replace(&mut self.rotation_allowed, false);
                (!allowed).then(|| {
                    Witness::default().fact(format!(
                        "(c) rotation {old} -> {new} without a committed pass that shrank \
                         the list"
                    ))
                })
            }
            (_, EventClass::ProviderCall(c)) => {
                self.enter_turn(c.turn);
                self.calls_in_turn += 1;
                self.in_preflight_run = false;
                if let Some(usage) = c.usage_tokens {
                    self.episodes_since_reading = 0;
                    self.last_reading = Some(usage);
                    if usage < self.config.trigger_tokens as u64 {
                        self.noops_ms.clear();
                        self.baseline_rough = Some(self.request(rough_before));
                    }
                } else if c.over_window || self.over_trigger(self.request(rough_before)) {
                    // Overflow proven by the provider, or a failed call that left the
                    // agent only its rough estimate, at or over the trigger (PR #4750).
                    self.episodes_since_reading = 0;
                }
                None
            }
            (_, EventClass::SessionReset) => {
                self.episodes_since_reading = 0;
                self.noops_ms.clear();
                self.forget_readings();
                None
            }
            // A restarted process (an injected fault) knows no reading (the anti-thrash
            // state survives a restart, §2.5: the no-op streak goes on).
            (_, EventClass::Restart) => {
                self.episodes_since_reading = 0;
                self.forget_readings();
                None
            }
            (_, EventClass::Preflight(_)) => {
                self.in_preflight_run = false;
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
    use compactsim_model::{CallErrorClass, Message};

    fn inv() -> BoundedCompaction {
        BoundedCompaction::new(OracleConfig {
            trigger_tokens: 1_000,
            ..OracleConfig::default()
        })
    }

    fn long() -> Vec<Message> {
        vec![user(0), reply(1), user(2), reply(3), user(4)]
    }

    fn short() -> Vec<Message> {
        vec![batch_summary(5, &[1]), user(4)]
    }

    const PRE: BatchTrigger = BatchTrigger::Preflight;
    const POST: BatchTrigger = BatchTrigger::PostResponse;

    #[test]
    fn b_fires_on_a_second_episode_before_any_reading() {
        let steps = vec![
            (batch_event(1, POST, true), Some(short())),
            (append_event(2), Some(long())),
            (batch_event(2, PRE, true), Some(short())),
        ];
        let fired = run_same(&mut inv(), &long(), &steps);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert_eq!(fired[0].0, 2);
        assert!(fired[0].1.facts[0].starts_with("(b)"));
    }

    #[test]
    fn b_quiet_with_a_reading_an_overflow_or_within_one_preflight_run() {
        for between in [
            call_event(2, Some(1_500), None),
            overflow_event(2, CallErrorClass::OverflowPhrase),
        ] {
            let steps = vec![
                (batch_event(1, POST, true), Some(short())),
                (between, None),
                (append_event(2), Some(long())),
                (batch_event(2, PRE, true), Some(short())),
                (batch_event(2, PRE, true), Some(vec![user(4)])),
                (rotation_event(2, 0), None),
            ];
            let fired = run_same(&mut inv(), &long(), &steps);
            assert!(fired.is_empty(), "{fired:?}");
        }
        let overflow_passes = vec![
            (batch_event(1, BatchTrigger::Overflow, true), Some(short())),
            (append_event(1), Some(long())),
            (batch_event(1, BatchTrigger::Overflow, true), Some(short())),
            (append_event(1), Some(long())),
            (batch_event(1, POST, true), Some(short())),
        ];
        assert!(run_same(&mut inv(), &long(), &overflow_passes).is_empty());
    }

    #[test]
    fn b_an_overflow_only_the_agent_claims_proves_nothing() {
        let claimed = call_event(2, None, Some(CallErrorClass::OverflowGenericBadRequest));
        let steps = vec![
            (batch_event(1, POST, true), Some(short())),
            (claimed, None),
            (append_event(2), Some(long())),
            (batch_event(2, PRE, true), Some(short())),
        ];
        assert_eq!(run_same(&mut inv(), &long(), &steps).len(), 1);
    }

    #[test]
    fn a_committed_label_on_an_unchanged_list_commits_nothing() {
        let steps = vec![
            (batch_event(1, POST, true), None),
            (append_event(2), Some(long())),
            (batch_event(2, PRE, true), Some(short())),
        ];
        assert!(run_same(&mut inv(), &long(), &steps).is_empty());
    }

    #[test]
    fn c_fires_on_a_rotation_without_progress() {
        let steps = vec![
            (batch_event(1, PRE, false), None),
            (rotation_event(1, 0), None),
        ];
        let fired = run_same(&mut inv(), &long(), &steps);
        assert_eq!(fired.len(), 1);
        assert!(fired[0].1.facts[0].starts_with("(c)"));
        let twice = vec![
            (batch_event(1, PRE, true), Some(short())),
            (rotation_event(1, 0), None),
            (rotation_event(1, 1), None),
        ];
        let fired = run_same(&mut inv(), &long(), &twice);
        assert_eq!(fired.iter().map(|f| f.0).collect::<Vec<_>>(), [2]);
    }

    #[test]
    fn d_fires_on_a_third_noop_in_the_window_only() {
        let noops = |gap_ms: u64| -> Vec<(Event, Option<Vec<Message>>)> {
            (0..3)
                .map(|k| (batch_at(k, POST, false, k as u64 * gap_ms), None))
                .collect()
        };
        let fired = run_same(&mut inv(), &long(), &noops(1_000));
        assert_eq!(fired.len(), 1);
        assert!(fired[0].1.facts[0].starts_with("(d)"));
        assert!(run_same(&mut inv(), &long(), &noops(NOOP_WINDOW_MS / 2)).is_empty());
        let mut reset = noops(1_000);
        reset.insert(2, (call_event(1, Some(10), None), None));
        assert!(
            run_same(&mut inv(), &long(), &reset).is_empty(),
            "reading below trigger"
        );
        let mut restarted = noops(1_000);
        restarted.insert(2, (restart_event(1), None));
        assert_eq!(
            run_same(&mut inv(), &long(), &restarted).len(),
            1,
            "a restart does not end the streak"
        );
    }

    #[test]
    fn a_fires_past_the_per_turn_bound() {
        let mut steps = vec![];
        for _ in 0..PREFLIGHT_PASSES_MAX + 3 {
            steps.push((batch_event(1, BatchTrigger::Overflow, true), Some(short())));
            steps.push((append_event(1), Some(long())));
        }
        steps.push((batch_event(1, BatchTrigger::Overflow, true), Some(short())));
        let fired = run_same(&mut inv(), &long(), &steps);
        assert_eq!(fired.len(), 1);
        assert!(fired[0].1.facts[0].starts_with("(a)"));
    }

    #[test]
    fn e_fires_on_a_preflight_run_without_evidence() {
        let grown = |chars| {
            let mut l = long();
            l.push(user_sized(9, chars));
            l
        };
        for (chars, fires) in [(400, true), (20_000, false)] {
            let steps = vec![
                (call_event(1, Some(500), None), None),
                (append_event(2), Some(grown(chars))),
                (batch_event(2, PRE, true), Some(short())),
            ];
            let fired = run_same(&mut inv(), &long(), &steps);
            assert_eq!(fired.len(), usize::from(fires), "{chars}: {fired:?}");
            if fires {
                assert!(fired[0].1.facts[0].starts_with("(e)"));
                let pass = &fired[0].1.facts[1];
                assert!(
                    pass.starts_with("the pass: turn 2: batch pass (preflight)"),
                    "{pass}"
                );
            }
        }
        let restarted = vec![
            (call_event(1, Some(500), None), None),
            (restart_event(2), None),
            (append_event(2), Some(grown(400))),
            (batch_event(2, PRE, true), Some(short())),
        ];
        assert!(
            run_same(&mut inv(), &long(), &restarted).is_empty(),
            "a restarted process has no reading"
        );
        let over = vec![
            (call_event(1, Some(5_000), None), None),
            (append_event(2), Some(grown(400))),
            (batch_event(2, PRE, true), Some(short())),
        ];
        assert!(
            run_same(&mut inv(), &long(), &over).is_empty(),
            "reading over the trigger"
        );
    }
}
