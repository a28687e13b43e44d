use crate::class::{changed, classify, EventClass};
use crate::{Invariant, InvariantInfo, OracleConfig};
use compactsim_model::{tokens_rough_total, Event, Transition, Witness};

/// Preflight evaluates every turn whose rough message estimate alone is at or over the
/// trigger (H-27404: a count-only gate let a few huge messages through).
///
/// Judged from observations only, never from preflight's decision label. Fails when
/// (a) a preflight leaves the messages at or over the configured trigger (counted here)
///     without a batch pass during it, while nothing observed could justify waiting:
///     - no deferral to real usage: the last reading (if any) is at or over the trigger
///       and no batch pass changed the list since it;
///     - no summary-failure cooldown: no summarizer call failed within
///       [`COOLDOWN_MAX_MS`](crate::COOLDOWN_MAX_MS);
///     - no anti-thrash block: an upper bound of every policy's strikes, counted from
///       observations, is below [`STRIKES_TO_BLOCK`] — V2: +1 per no-op pass (no change,
///       no summarizer call) and per first reading at or over the trigger after a pass
///       that changed the list, 0 at a reading below it; V1: +1 per no-op pass or pass
///       saving under 10 % of the rough tokens, 0 after a pass saving more, latched at
///       the bound; and fewer than [`STRIKES_TO_BLOCK`] passes in a row that changed
///       the list with no summarizer call answering (fallback summaries);
/// (b) a turn's first provider call goes out with no preflight for that turn while the
///     request's messages are at or over the trigger.
/// Inactive without a trigger (no agent loop). A session reset starts a new session.
/// Other events are not checked.
#[derive(Clone, Debug)]
pub struct PreflightEvaluated {
    trigger_tokens: u32,
    evaluated_turn: Option<u32>,
    /// Batch passes seen since the last preflight or provider call.
    passes_since_mark: u32,
    last_reading: Option<u64>,
    /// A pass changed the list since the last reading.
    committed_since_reading: bool,
    /// Virtual time of the last failed summarizer call.
    failed_call_ms: Option<u64>,
    strikes_v2: u32,
    strikes_v1: u32,
    latched_v1: bool,
    fallback_streak: u32,
}

/// Strikes (or fallback passes in a row) that block automatic compaction under any
/// anti-thrash policy (hermes-domain §2.5).
pub const STRIKES_TO_BLOCK: u32 = 2;
/// V1's savings floor, per mille of the rough tokens before a pass.
pub const V1_SAVINGS_MIN_PER_MILLE: u64 = 100;

pub const INFO: InvariantInfo = InvariantInfo {
    id: "preflight-evaluated",
    statement: "a turn whose rough message estimate is at or over the trigger gets a \
                preflight evaluation (never gated away)",
    catches: &["H-27404"],
    class: crate::InvariantClass::Universal,
};

impl PreflightEvaluated {
    pub fn new(config: OracleConfig) -> Self {
        PreflightEvaluated {
            trigger_tokens: config.trigger_tokens,
            evaluated_turn: None,
            passes_since_mark: 0,
            last_reading: None,
            committed_since_reading: false,
            failed_call_ms: None,
            strikes_v2: 0,
            strikes_v1: 0,
            latched_v1: false,
            fallback_streak: 0,
        }
    }

    fn on_pass(&mut self, t: &Transition<'_>, now_ms: u64) {
        self.passes_since_mark += 1;
        if t.served.iter().any(|c| !c.ok) {
            self.failed_call_ms = Some(now_ms);
        }
        let answered = t.served.iter().any(|c| c.ok);
        if !changed(t) {
            if t.served.is_empty() {
                self.strikes_v2 += 1;
                self.strikes_v1 += 1;
            }
        } else {
            self.committed_since_reading = true;
            let before = tokens_rough_total(t.before);
            let saved = before.saturating_sub(tokens_rough_total(t.after));
            let low = saved * 1000 < before * V1_SAVINGS_MIN_PER_MILLE;
            self.strikes_v1 = if low { self.strikes_v1 + 1 } else { 0 };
            self.fallback_streak = if answered {
                0
            } else {
                self.fallback_streak + 1
            };
        }
        self.latched_v1 |= self.strikes_v1 >= STRIKES_TO_BLOCK;
    }

    fn on_reading(&mut self, usage: u64) {
        if self.over(usage) {
            if self.committed_since_reading {
                self.strikes_v2 += 1;
            }
        } else {
            self.strikes_v2 = 0;
        }
        self.committed_since_reading = false;
        self.last_reading = Some(usage);
    }

    fn over(&self, tokens: u64) -> bool {
        self.trigger_tokens > 0 && tokens >= self.trigger_tokens as u64
    }

    /// (a): nothing observed justifies a preflight at `now_ms` that compacted nothing.
    fn unjustified(&self, now_ms: u64) -> bool {
        let deferral =
            self.committed_since_reading || self.last_reading.is_some_and(|r| !self.over(r));
        let cooldown = self
            .failed_call_ms
            .is_some_and(|f| now_ms < f + crate::COOLDOWN_MAX_MS);
        let blocked = self.strikes_v2 >= STRIKES_TO_BLOCK
            || self.latched_v1
            || self.fallback_streak >= STRIKES_TO_BLOCK;
        self.passes_since_mark == 0 && !deferral && !cooldown && !blocked
    }
}

impl Invariant for PreflightEvaluated {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, event: &Event) -> bool {
        matches!(event, Event::Preflight(_) | Event::ProviderCall(_)) && self.trigger_tokens > 0
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        match classify(t.event) {
            EventClass::OtherCompaction => {
                let now_ms = match t.event {
                    Event::BatchPass(p) => p.now_ms,
                    _ => 0,
                };
                self.on_pass(t, now_ms);
                None
            }
            EventClass::SessionReset => {
                *self = PreflightEvaluated::new(OracleConfig {
                    trigger_tokens: self.trigger_tokens,
                    ..OracleConfig::default()
                });
                None
            }
            EventClass::Preflight(p) => {
                self.evaluated_turn = Some(p.turn);
                // The list is summed only when nothing else justifies the preflight
                // (the sum is the dearest part of the rule).
                let over = || {
                    let rough = tokens_rough_total(t.after);
                    self.over(rough).then_some(rough)
                };
                let found = self
                    .unjustified(p.now_ms)
                    .then(over)
                    .flatten()
                    .map(|rough| {
                        Witness::default().fact(format!(
                            "(a) preflight of turn {} left {} messages of {rough} rough tokens \
                         >= trigger {} with no pass and nothing to wait for (it reported \
                         {})",
                            p.turn,
                            t.after.len(),
                            self.trigger_tokens,
                            p.decision.label()
                        ))
                    });
                self.passes_since_mark = 0;
                found
            }
            EventClass::ProviderCall(c) => {
                self.passes_since_mark = 0;
                if let Some(usage) = c.usage_tokens {
                    self.on_reading(usage);
                }
                if self.evaluated_turn == Some(c.turn) {
                    return None;
                }
                self.evaluated_turn = Some(c.turn);
                let rough = tokens_rough_total(t.before);
                self.over(rough).then(|| {
                    Witness::default().fact(format!(
                        "(b) turn {} called the provider with {rough} rough tokens >= \
                         trigger {} and no preflight evaluation",
                        c.turn, self.trigger_tokens
                    ))
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use compactsim_model::{Message, PreflightDecision};

    fn inv(trigger: u32) -> PreflightEvaluated {
        PreflightEvaluated::new(OracleConfig {
            trigger_tokens: trigger,
            ..OracleConfig::default()
        })
    }

    fn huge() -> Vec<Message> {
        vec![user_sized(0, 4_000), reply(1), user_sized(2, 4_000)]
    }

    #[test]
    fn fires_when_a_huge_transcript_is_gated_or_skipped() {
        let gated = preflight_event(1, 0, PreflightDecision::Gated);
        let fired = run_same(&mut inv(1_000), &huge(), &[(gated, None)]);
        assert_eq!(fired.len(), 1);
        let skipped = call_event(1, Some(2_000), None);
        let fired = run_same(&mut inv(1_000), &huge(), &[(skipped, None)]);
        assert_eq!(fired.len(), 1);
    }

    #[test]
    fn a_gated_preflight_relabelled_below_trigger_still_fires() {
        let relabelled = preflight_event(1, 0, PreflightDecision::BelowTrigger);
        let fired = run_same(&mut inv(1_000), &huge(), &[(relabelled, None)]);
        assert_eq!(fired.len(), 1);
    }

    #[test]
    fn quiet_when_evaluated_justified_small_or_inactive() {
        let deferred = preflight_event(2, 0, PreflightDecision::Deferred);
        let below = preflight_event(1, 0, PreflightDecision::BelowTrigger);
        let low = call_event(1, Some(500), None);
        let steps = [
            (below, None),
            (low, None),
            (append_event(2), Some(huge())),
            (deferred, None),
        ];
        assert!(
            run_same(&mut inv(1_000), &[user(0)], &steps).is_empty(),
            "the last reading is under the trigger: deferral"
        );
        let gated = || preflight_event(2, 0, PreflightDecision::Gated);
        let noop = || batch_event(1, compactsim_model::BatchTrigger::Preflight, false);
        let steps = [(noop(), None), (noop(), None), (gated(), None)];
        assert!(
            run_same(&mut inv(1_000), &huge(), &steps).is_empty(),
            "two no-op passes: anti-thrash may block"
        );
        let ran = preflight_event(1, 0, PreflightDecision::Compress { passes: 1 });
        let steps = [
            (noop(), None),
            (ran, None),
            (call_event(1, Some(2_000), None), None),
            (gated(), None),
        ];
        assert_eq!(
            run_same(&mut inv(1_000), &huge(), &steps).len(),
            1,
            "one strike blocks nothing"
        );
        let failed = vec![served(false, 10, &[])];
        let steps = [(noop(), None, failed), (gated(), None, vec![])];
        assert!(
            run_served(&mut inv(1_000), &huge(), &steps).is_empty(),
            "a failed summary call: cooldown"
        );
        let compacted = preflight_event(1, 0, PreflightDecision::Compress { passes: 1 });
        let pass = batch_event(1, compactsim_model::BatchTrigger::Preflight, true);
        let steps = [(pass, None), (compacted, None)];
        assert!(run_same(&mut inv(1_000), &huge(), &steps).is_empty());
        let gated = || preflight_event(1, 0, PreflightDecision::Gated);
        assert!(run_same(&mut inv(10_000), &huge(), &[(gated(), None)]).is_empty());
        assert!(run_same(&mut inv(0), &huge(), &[(gated(), None)]).is_empty());
    }
}
