use crate::class::{classify, EventClass};
use crate::{Invariant, InvariantInfo, OracleConfig};
use compactsim_model::{tokens_rough_total, Event, PreflightDecision, Transition, Witness};

/// Preflight evaluates every turn whose rough message estimate alone is at or over the
/// trigger (H-27404: a count-only gate let a few huge messages through).
///
/// Fails when a preflight decision is `gated` while the rough estimate of the messages
/// (counted here from the transcript, which a gated preflight left untouched) is at or
/// over the configured trigger; and when a turn's first provider call goes out with no
/// preflight decision for that turn while the request's messages are at or over it.
/// Inactive without a trigger (no agent loop). Other events are not checked.
#[derive(Debug)]
pub struct PreflightEvaluated {
    trigger_tokens: u32,
    evaluated_turn: Option<u32>,
}

pub const INFO: InvariantInfo = InvariantInfo {
    id: "preflight-evaluated",
    statement: "a turn whose rough message estimate is at or over the trigger gets a \
                preflight evaluation (never gated away)",
    catches: &["H-27404"],
};

impl PreflightEvaluated {
    pub fn new(config: OracleConfig) -> Self {
        PreflightEvaluated {
            trigger_tokens: config.trigger_tokens,
            evaluated_turn: None,
        }
    }

    fn over(&self, tokens: u64) -> bool {
        self.trigger_tokens > 0 && tokens >= self.trigger_tokens as u64
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
            EventClass::Preflight(p) => {
                self.evaluated_turn = Some(p.turn);
                if p.decision != PreflightDecision::Gated {
                    return None;
                }
                let rough = tokens_rough_total(t.after);
                self.over(rough).then(|| {
                    Witness::default().fact(format!(
                        "preflight of turn {} gated with {} messages of {rough} rough tokens \
                         >= trigger {}",
                        p.turn,
                        t.after.len(),
                        self.trigger_tokens
                    ))
                })
            }
            EventClass::ProviderCall(c) if self.evaluated_turn != Some(c.turn) => {
                self.evaluated_turn = Some(c.turn);
                let rough = tokens_rough_total(t.before);
                self.over(rough).then(|| {
                    Witness::default().fact(format!(
                        "turn {} called the provider with {rough} rough tokens >= trigger {} \
                         and no preflight evaluation",
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
    use compactsim_model::Message;

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
    fn quiet_when_evaluated_small_or_inactive() {
        let deferred = preflight_event(1, 0, PreflightDecision::Deferred);
        let steps = [(deferred, None), (call_event(1, Some(2_000), None), None)];
        assert!(run_same(&mut inv(1_000), &huge(), &steps).is_empty());
        let gated = || preflight_event(1, 0, PreflightDecision::Gated);
        assert!(run_same(&mut inv(10_000), &huge(), &[(gated(), None)]).is_empty());
        assert!(run_same(&mut inv(0), &huge(), &[(gated(), None)]).is_empty());
    }
}
