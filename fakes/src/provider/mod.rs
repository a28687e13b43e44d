//! The fake main LLM. It answers with usage from the *real* token count (the one a BPE
//! tokenizer would report), so the agent's rough chars/4 estimate and the provider's
//! reading disagree as in production (hermes-domain §1.2); and it fails the way real
//! providers fail (§2.7): a request over the window gets this case's overflow shape
//! (413, a context-length phrase, a terse 400 or a dropped connection), and any request
//! may hit a transient disconnect or 5xx at the case's rates.
//!
//! CONTRACT: `call` is deterministic in (config, the Provider stream, the requests so
//! far). A request over the window never succeeds. A successful reply's usage is
//! `tokens_real_total(messages) + request_overhead_tokens`.
//!
//! Scripted mode (`with_schedule`): every call still draws from the stream exactly as an
//! unscripted call does (so the stream stays where an unscripted run would have it),
//! then the n-th call injects the n-th scheduled [`ProviderOutcome`] instead of the drawn
//! transient fault (`ok` past the end). Every provider logs the outcome each call
//! injected (`log`), so a generated case can be written down as a schedule that replays
//! it.

pub mod classify;
pub mod errors;
mod schedule;

pub use classify::{classify, ErrorClass, OverflowSignal};
pub use errors::{OverflowShape, ProviderError};
pub use schedule::ProviderOutcome;

use crate::rng::{between, chance, weighted, SimRng};
use compactsim_model::{tokens_real_total, Message};
use serde::Serialize;

/// Weights of the overflow shapes a case draws: 413, phrase, generic 400, disconnect.
pub const OVERFLOW_SHAPE_WEIGHTS: [u32; 4] = [20, 45, 15, 20];
/// A transient fault rate is switched on for a case with this chance (per mille)…
pub const FAULT_ON_PER_MILLE: u32 = 500;
/// …and then drawn up to this rate per call (per mille).
pub const FAULT_RATE_MAX_PER_MILLE: u32 = 40;

/// Per-case provider behaviour.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProviderConfig {
    pub overflow_shape: OverflowShape,
    /// Chance per call of a dropped connection on a request that fits.
    pub disconnect_per_mille: u32,
    /// Chance per call of a 5xx on a request that fits.
    pub server_error_per_mille: u32,
    /// Fixed part of a call's latency.
    pub base_latency_ms: u64,
    /// Prompt processing speed for the latency model.
    pub prefill_tokens_per_s: u32,
}

impl ProviderConfig {
    /// Draws a case's provider (swarm: each transient fault on or off).
    pub fn draw(rng: &mut SimRng) -> ProviderConfig {
        let phrase = between(rng, 0, errors::CONTEXT_TEMPLATES.len() as u32 - 1) as u8;
        let overflow_shape = match weighted(rng, &OVERFLOW_SHAPE_WEIGHTS) {
            0 => OverflowShape::PayloadTooLarge,
            1 => OverflowShape::ContextPhrase(phrase),
            2 => OverflowShape::GenericBadRequest,
            _ => OverflowShape::Disconnect,
        };
        ProviderConfig {
            overflow_shape,
            disconnect_per_mille: draw_rate(rng),
            server_error_per_mille: draw_rate(rng),
            base_latency_ms: between(rng, 200, 1_500) as u64,
            prefill_tokens_per_s: between(rng, 2_000, 20_000),
        }
    }

    /// No transient faults; overflows named by the OpenAI "maximum context" phrase.
    pub fn reliable() -> ProviderConfig {
        ProviderConfig {
            overflow_shape: OverflowShape::ContextPhrase(2),
            disconnect_per_mille: 0,
            server_error_per_mille: 0,
            base_latency_ms: 500,
            prefill_tokens_per_s: 10_000,
        }
    }
}

impl Provider {
    /// The outcome of the next call: the transient faults drawn (always, so the stream
    /// stays in step), replaced by the schedule if scripted; logged.
    fn next_outcome(&mut self, over_window: bool) -> ProviderOutcome {
        let disconnect = chance(&mut self.rng, self.config.disconnect_per_mille);
        let server_error = chance(&mut self.rng, self.config.server_error_per_mille);
        let outcome = match &self.schedule {
            Some(schedule) => schedule
                .get(self.log.len())
                .copied()
                .unwrap_or(ProviderOutcome::Ok),
            None if over_window => ProviderOutcome::Ok,
            None if disconnect => ProviderOutcome::Disconnect,
            None if server_error => ProviderOutcome::ServerError,
            None => ProviderOutcome::Ok,
        };
        self.log.push(outcome);
        outcome
    }
}

/// A transient fault rate: off for about half the cases (swarm), else 1..=max ‰.
fn draw_rate(rng: &mut SimRng) -> u32 {
    if chance(rng, FAULT_ON_PER_MILLE) {
        between(rng, 1, FAULT_RATE_MAX_PER_MILLE)
    } else {
        0
    }
}

/// Provider-reported usage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub prompt_tokens: u64,
}

/// Why a reply is what it is: ground truth for coverage counters, never for the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyCause {
    Answered,
    /// The request was over the window.
    Overflow,
    /// The request fit, but a scheduled `overflow` outcome made the provider report an
    /// overflow.
    ClaimedOverflow,
    Disconnect,
    ServerError,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProviderReply {
    pub result: Result<Usage, ProviderError>,
    pub cause: ReplyCause,
    pub latency_ms: u64,
}

#[derive(Clone)]
pub struct Provider {
    pub config: ProviderConfig,
    rng: SimRng,
    /// Scripted mode: the outcome of each call, in call order.
    schedule: Option<Vec<ProviderOutcome>>,
    /// The outcome every call so far injected, in call order.
    log: Vec<ProviderOutcome>,
}

impl Provider {
    pub fn new(config: ProviderConfig, rng: SimRng) -> Self {
        Provider {
            config,
            rng,
            schedule: None,
            log: Vec::new(),
        }
    }

    /// Scripted mode when `schedule` is set: the n-th call injects the n-th outcome,
    /// `ok` past the end, whatever the fault rates draw.
    pub fn with_schedule(mut self, schedule: Option<Vec<ProviderOutcome>>) -> Self {
        self.schedule = schedule;
        self
    }

    /// The outcome each call so far injected, in call order (`ok` for an unscripted call
    /// over the window: the window, not a fault, decided it).
    pub fn log(&self) -> &[ProviderOutcome] {
        &self.log
    }

    /// Sends `messages` plus `request_overhead_tokens` (system prompt and tool schemas,
    /// in real tokens) to a model whose window is `context_length` tokens.
    pub fn call(
        &mut self,
        messages: &[Message],
        request_overhead_tokens: u32,
        context_length: u32,
    ) -> ProviderReply {
        self.call_counted(
            tokens_real_total(messages),
            request_overhead_tokens,
            context_length,
        )
    }

    /// [`Provider::call`] for messages whose real token total the caller already knows.
    pub fn call_counted(
        &mut self,
        messages_real_tokens: u64,
        request_overhead_tokens: u32,
        context_length: u32,
    ) -> ProviderReply {
        let usage = messages_real_tokens + request_overhead_tokens as u64;
        let pick = between(&mut self.rng, 0, 2) as usize;
        let over_window = usage > context_length as u64;
        let outcome = self.next_outcome(over_window);
        let latency_ms = self.config.base_latency_ms
            + usage * 1_000 / self.config.prefill_tokens_per_s.max(1) as u64;
        let overflow = |cause| {
            let e =
                ProviderError::overflow(self.config.overflow_shape, usage, context_length, pick);
            (Err(e), cause)
        };
        let (result, cause) = match outcome {
            _ if over_window => overflow(ReplyCause::Overflow),
            ProviderOutcome::Overflow => overflow(ReplyCause::ClaimedOverflow),
            ProviderOutcome::Disconnect => {
                (Err(ProviderError::disconnect(pick)), ReplyCause::Disconnect)
            }
            ProviderOutcome::ServerError => (
                Err(ProviderError::server_error(pick)),
                ReplyCause::ServerError,
            ),
            ProviderOutcome::Ok => (
                Ok(Usage {
                    prompt_tokens: usage,
                }),
                ReplyCause::Answered,
            ),
        };
        ProviderReply {
            result,
            cause,
            latency_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Stream};
    use compactsim_model::{tokens_rough_total, Content, ContentKind, MsgId, Role, Segment};

    fn json_rows(n: u32, chars: u32) -> Vec<Message> {
        (0..n)
            .map(|i| {
                let seg = Segment {
                    kind: ContentKind::Json,
                    chars,
                    seed: i as u64,
                    origin: MsgId(i),
                    facts: vec![],
                };
                Message::new(MsgId(i), Role::Tool, Content::single(seg))
            })
            .collect()
    }

    fn provider(config: ProviderConfig, seed: u64) -> Provider {
        Provider::new(config, stream(seed, Stream::Provider))
    }

    #[test]
    fn usage_is_the_real_count_plus_overhead_and_exceeds_the_rough_estimate() {
        let m = json_rows(10, 4_000);
        let mut p = provider(ProviderConfig::reliable(), 1);
        let reply = p.call(&m, 2_500, 128_000);
        let usage = reply.result.expect("fits").prompt_tokens;
        assert_eq!(usage, tokens_real_total(&m) + 2_500);
        assert!(
            tokens_real_total(&m) > tokens_rough_total(&m) * 13 / 10,
            "rough undercounts JSON"
        );
        assert_eq!(reply.cause, ReplyCause::Answered);
        assert!(reply.latency_ms > p.config.base_latency_ms);
    }

    #[test]
    fn over_the_window_fails_with_the_case_shape_and_no_usage() {
        let m = json_rows(10, 4_000);
        let real = tokens_real_total(&m);
        let shapes = [
            (OverflowShape::PayloadTooLarge, ErrorClass::PayloadTooLarge),
            (
                OverflowShape::ContextPhrase(4),
                ErrorClass::Overflow(OverflowSignal::Phrase),
            ),
            (
                OverflowShape::GenericBadRequest,
                ErrorClass::Overflow(OverflowSignal::GenericBadRequest),
            ),
            (
                OverflowShape::Disconnect,
                ErrorClass::Overflow(OverflowSignal::Disconnect),
            ),
        ];
        for (shape, class) in shapes {
            let cfg = ProviderConfig {
                overflow_shape: shape,
                ..ProviderConfig::reliable()
            };
            let limit = (real - 1) as u32;
            let reply = provider(cfg, 2).call(&m, 0, limit);
            assert_eq!(reply.cause, ReplyCause::Overflow);
            let err = reply.result.expect_err("over the window");
            assert_eq!(classify(&err, real, m.len(), limit), class, "{shape:?}");
            let fits = provider(
                ProviderConfig {
                    overflow_shape: shape,
                    ..ProviderConfig::reliable()
                },
                2,
            )
            .call(&m, 0, real as u32);
            assert!(fits.result.is_ok(), "exactly the window fits");
        }
    }

    #[test]
    fn transient_faults_follow_the_rates_and_replay_identically() {
        let m = json_rows(2, 400);
        let cfg = ProviderConfig {
            disconnect_per_mille: 1_000,
            ..ProviderConfig::reliable()
        };
        let mut p = provider(cfg, 3);
        for _ in 0..20 {
            assert_eq!(p.call(&m, 0, 100_000).cause, ReplyCause::Disconnect);
        }
        let cfg = ProviderConfig {
            disconnect_per_mille: 300,
            server_error_per_mille: 300,
            ..ProviderConfig::reliable()
        };
        let run = |seed| {
            let mut p = provider(cfg.clone(), seed);
            (0..200).map(|_| p.call(&m, 0, 100_000)).collect::<Vec<_>>()
        };
        let a = run(4);
        assert_eq!(a, run(4));
        assert_ne!(a, run(5));
        let count = |c| a.iter().filter(|r| r.cause == c).count();
        assert!(count(ReplyCause::Disconnect) > 30 && count(ReplyCause::ServerError) > 20);
        assert!(count(ReplyCause::Answered) > 60);
        let mut quiet = provider(ProviderConfig::reliable(), 6);
        assert!((0..200).all(|_| quiet.call(&m, 0, 100_000).result.is_ok()));
    }

    #[test]
    fn a_schedule_replaces_the_drawn_faults_and_keeps_the_stream_in_step() {
        let m = json_rows(2, 400);
        let cfg = ProviderConfig {
            disconnect_per_mille: 300,
            server_error_per_mille: 300,
            ..ProviderConfig::reliable()
        };
        let calls = |p: &mut Provider, window: u32| {
            (0..60).map(|_| p.call(&m, 0, window)).collect::<Vec<_>>()
        };
        // Unscripted: the log is what each call injected; over the window it is `ok`.
        let mut drawn = provider(cfg.clone(), 7);
        let replies = calls(&mut drawn, 100_000);
        let log = drawn.log().to_vec();
        assert!(log.contains(&ProviderOutcome::Disconnect));
        assert!(log.contains(&ProviderOutcome::ServerError));
        // Replaying the log as a schedule gives the same replies.
        let mut replay = provider(cfg.clone(), 7).with_schedule(Some(log.clone()));
        assert_eq!(calls(&mut replay, 100_000), replies);
        assert_eq!(replay.log(), &log[..]);
        // A schedule decides whatever the rates draw; `ok` past its end.
        let schedule = vec![
            ProviderOutcome::Overflow,
            ProviderOutcome::Ok,
            ProviderOutcome::ServerError,
        ];
        let mut scripted = provider(cfg.clone(), 7).with_schedule(Some(schedule.clone()));
        let got = calls(&mut scripted, 100_000);
        assert_eq!(got[0].cause, ReplyCause::ClaimedOverflow);
        let err = got[0].result.as_ref().expect_err("claimed overflow");
        assert_eq!(
            classify(err, 0, m.len(), 100_000),
            ErrorClass::Overflow(OverflowSignal::Phrase)
        );
        assert_eq!(got[1].cause, ReplyCause::Answered);
        assert_eq!(got[2].cause, ReplyCause::ServerError);
        assert!(got[3..].iter().all(|r| r.cause == ReplyCause::Answered));
        assert_eq!(&scripted.log()[..3], &schedule[..]);
        // Over the window a request fails whatever the schedule says, and an unscripted
        // call logs `ok` there.
        let mut over = provider(cfg.clone(), 7).with_schedule(Some(vec![ProviderOutcome::Ok]));
        assert_eq!(over.call(&m, 0, 1).cause, ReplyCause::Overflow);
        let mut unscripted = provider(cfg, 7);
        let _ = calls(&mut unscripted, 1);
        assert!(unscripted.log().iter().all(|o| o.is_ok()));
    }

    #[test]
    fn draw_covers_every_shape_and_switches_faults_off() {
        let configs: Vec<ProviderConfig> = (0..200)
            .map(|s| ProviderConfig::draw(&mut stream(s, Stream::Params)))
            .collect();
        let has = |f: &dyn Fn(&ProviderConfig) -> bool| configs.iter().any(f);
        assert!(has(&|c| c.overflow_shape == OverflowShape::PayloadTooLarge));
        assert!(has(&|c| matches!(
            c.overflow_shape,
            OverflowShape::ContextPhrase(_)
        )));
        assert!(has(
            &|c| c.overflow_shape == OverflowShape::GenericBadRequest
        ));
        assert!(has(&|c| c.overflow_shape == OverflowShape::Disconnect));
        assert!(has(&|c| c.disconnect_per_mille == 0) && has(&|c| c.disconnect_per_mille > 0));
        assert!(configs
            .iter()
            .all(|c| c.server_error_per_mille <= FAULT_RATE_MAX_PER_MILLE));
        assert_eq!(
            ProviderConfig::draw(&mut stream(9, Stream::Params)),
            configs[9]
        );
    }
}
