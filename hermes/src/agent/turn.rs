//! One agent turn (hermes-domain §2.2, §2.7, §2.8): the user row, preflight, one provider
//! call per response of the turn script with the post-response check, overflow recovery
//! with `max_attempts`, bounded transient retries, and the failed-turn handling
//! (rollback, and the session reset after `compression_exhausted`). Strategy `both`
//! adds a micro pass and the repair after a finished turn.
//!
//! Bug switch H-2153: a dropped connection on a large session is retried as transient,
//! and the zero usage it leaves disables the post-response check.

use super::micro_step::{micro_step, MicroParts, MicroStop};
use super::{AgentLoop, Flow, Sink};
use crate::bugs::Bug;
use compactsim_fakes::provider::{classify, ErrorClass, OverflowSignal, ProviderError, ReplyCause};
use compactsim_model::{BatchTrigger, CallErrorClass, Event, Message, MsgId, ProviderCall, Role};

/// Responses (assistant rows) one turn may produce.
pub const ROUNDS_PER_TURN_MAX: u32 = 64;
/// Transient failures retried per response before the turn fails.
pub const RETRIES_PER_CALL_MAX: u32 = 3;
/// Provider calls one turn may make: every response with its retries and the overflow
/// recovery rounds (`max_attempts` is at most 10).
pub const CALLS_PER_TURN_MAX: u32 = ROUNDS_PER_TURN_MAX * (1 + RETRIES_PER_CALL_MAX) + 10;
/// Sleep before retrying after overflow recovery (≈ 2 s, test_413 fixture).
pub const OVERFLOW_RETRY_SLEEP_MS: u64 = 2_000;
/// Back-off before the n-th transient retry is n times this.
pub const TRANSIENT_BACKOFF_MS: u64 = 1_000;

/// How a turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnEnd {
    Finished,
    /// The turn failed; `exhausted` is `failed + compression_exhausted`.
    Failed {
        exhausted: bool,
    },
}

/// How one response's calls ended.
enum CallEnd {
    Answered,
    Exhausted,
    Failed,
}

impl AgentLoop {
    /// Runs turn `turn` from its script (see the module contract).
    pub fn run_turn(
        &mut self,
        sink: &mut dyn Sink,
        turn: u32,
        script: Vec<Message>,
    ) -> Flow<TurnEnd> {
        self.now_ms += self.config.think_ms(turn);
        self.turn = Default::default();
        let mut rows = script.into_iter();
        let user = rows.next().expect("a turn starts with its user row");
        debug_assert_eq!(user.role, Role::User);
        let first = user.id;
        self.append(sink, turn, vec![user])?;
        self.repair_if_dirty(sink, turn)?;
        self.preflight(sink, turn)?;
        for response in responses(rows)
            .into_iter()
            .take(ROUNDS_PER_TURN_MAX as usize)
        {
            match self.call(sink, turn, response)? {
                CallEnd::Answered => {}
                CallEnd::Exhausted => return self.fail(sink, turn, first, true),
                CallEnd::Failed => return self.fail(sink, turn, first, false),
            }
        }
        self.micro_pass(sink, turn)?;
        sink.bump("turns.finished");
        Ok(TurnEnd::Finished)
    }

    /// Calls the provider until it answers with `response`, recovering from overflow
    /// and retrying transient failures.
    fn call(&mut self, sink: &mut dyn Sink, turn: u32, response: Vec<Message>) -> Flow<CallEnd> {
        let mut retries = 0;
        loop {
            if self.turn.calls >= CALLS_PER_TURN_MAX {
                return Ok(CallEnd::Failed);
            }
            if self.stop.armed && self.turn.compacted && self.turn.answered_since_compaction {
                self.stop.fired = true;
                return Ok(CallEnd::Failed);
            }
            self.repair_if_dirty(sink, turn)?;
            let request_rough = self.request_rough();
            let messages_real = self.totals().1;
            let reply = self.provider.call_counted(
                messages_real,
                self.config.overhead_real_tokens,
                self.config.thresholds.context_length,
            );
            self.turn.calls += 1;
            let at = self.now_ms;
            self.now_ms += reply.latency_ms;
            let over_window = reply.cause == ReplyCause::Overflow;
            let error = match reply.result {
                Ok(usage) => {
                    self.answered(sink, turn, at, request_rough, usage.prompt_tokens, response)?;
                    return Ok(CallEnd::Answered);
                }
                Err(e) => e,
            };
            let class = self.classify(&error, request_rough);
            count_error(sink, reply.cause, class);
            let call = ProviderCall {
                turn,
                now_ms: at,
                request_rough_tokens: request_rough,
                usage_tokens: None,
                error: Some(class),
                over_window,
                appended: 0,
            };
            self.see(sink, Event::ProviderCall(call))?;
            if error.status.is_none() {
                self.session.usage.on_no_usage();
            }
            match class {
                CallErrorClass::PayloadTooLarge
                | CallErrorClass::OverflowPhrase
                | CallErrorClass::OverflowGenericBadRequest
                | CallErrorClass::OverflowDisconnect => {
                    if self.turn.attempts >= self.config.max_attempts {
                        return Ok(CallEnd::Exhausted);
                    }
                    self.turn.attempts += 1;
                    if !self.pass(sink, turn, BatchTrigger::Overflow)?.shrank {
                        return Ok(CallEnd::Exhausted);
                    }
                    self.now_ms += OVERFLOW_RETRY_SLEEP_MS;
                }
                CallErrorClass::Transient => {
                    retries += 1;
                    if retries > RETRIES_PER_CALL_MAX {
                        return Ok(CallEnd::Failed);
                    }
                    sink.bump("provider.retries");
                    self.check_after_call(sink, turn)?;
                    self.now_ms += TRANSIENT_BACKOFF_MS * retries as u64;
                }
                CallErrorClass::ClientError => return Ok(CallEnd::Failed),
            }
        }
    }

    /// A successful call: the response rows are appended in the same transition, the
    /// reading feeds usage and anti-thrash, then the post-response check.
    fn answered(
        &mut self,
        sink: &mut dyn Sink,
        turn: u32,
        at: u64,
        request_rough: u64,
        usage_tokens: u64,
        response: Vec<Message>,
    ) -> Flow<()> {
        let n = self.msgs.len();
        let appended = response.len() as u32;
        self.extend(response);
        sink.bump("provider.answered");
        self.turn.answered_since_compaction = true;
        let call = ProviderCall {
            turn,
            now_ms: at,
            request_rough_tokens: request_rough,
            usage_tokens: Some(usage_tokens),
            error: None,
            over_window: false,
            appended,
        };
        if !sink.observe(Event::ProviderCall(call), &self.msgs[..n], &self.msgs) {
            return Err(super::Stop);
        }
        let trigger = self.config.trigger_tokens();
        self.session
            .usage
            .on_reading(usage_tokens, request_rough, trigger);
        self.hook(|c| c.on_usage(usage_tokens));
        let streak = self.hook(|c| c.fallback_streak());
        let blocked = self
            .session
            .guard
            .on_reading(usage_tokens, trigger, streak, self.now_ms);
        if blocked {
            sink.bump("antithrash.blocked");
        }
        self.check_after_call(sink, turn)
    }

    /// The post-response / in-loop check: `should_compress` on the judged usage.
    fn check_after_call(&mut self, sink: &mut dyn Sink, turn: u32) -> Flow<()> {
        let rough = self.request_rough();
        // H-2153 and H-35054 are asked only where they decide: below the trigger, the
        // rough estimate, the stand-in and 0 all leave `should_compress` false.
        let trigger = self.config.trigger_tokens() as u64;
        let tokens = self.session.usage.judged_tokens(
            rough,
            || rough >= trigger && self.config.has(Bug::H2153),
            |after| after >= trigger && self.config.has(Bug::H35054),
        );
        if self.should_compress(sink, tokens) {
            self.pass(sink, turn, BatchTrigger::PostResponse)?;
        }
        Ok(())
    }

    /// The agent's error classifier, with the H-2153 switch.
    fn classify(&self, error: &ProviderError, request_rough: u64) -> CallErrorClass {
        let class = classify(
            error,
            request_rough,
            self.msgs.len(),
            self.config.thresholds.context_length,
        );
        match class {
            ErrorClass::PayloadTooLarge => CallErrorClass::PayloadTooLarge,
            ErrorClass::Overflow(OverflowSignal::Phrase) => CallErrorClass::OverflowPhrase,
            // H-1630: the terse generic 400 is a non-retryable client error.
            ErrorClass::Overflow(OverflowSignal::GenericBadRequest)
                if self.config.has(Bug::H1630) =>
            {
                CallErrorClass::ClientError
            }
            ErrorClass::Overflow(OverflowSignal::GenericBadRequest) => {
                CallErrorClass::OverflowGenericBadRequest
            }
            ErrorClass::Overflow(OverflowSignal::Disconnect) if self.config.has(Bug::H2153) => {
                CallErrorClass::Transient
            }
            ErrorClass::Overflow(OverflowSignal::Disconnect) => CallErrorClass::OverflowDisconnect,
            ErrorClass::Transient => CallErrorClass::Transient,
            ErrorClass::ClientError => CallErrorClass::ClientError,
        }
    }

    /// Ends a failed turn: rolls back its rows unless a compaction committed during it,
    /// and resets the session after exhaustion.
    fn fail(
        &mut self,
        sink: &mut dyn Sink,
        turn: u32,
        first: MsgId,
        exhausted: bool,
    ) -> Flow<TurnEnd> {
        sink.bump(if exhausted {
            "turns.exhausted"
        } else {
            "turns.failed"
        });
        let before = sink.copy_of(&self.msgs);
        if !self.turn.compacted {
            // The turn's rows are its user row and what followed it (by position: a
            // gateway's `/compress` may mint rows with later ids before the turn).
            let start = self.msgs.iter().position(|m| m.id == first);
            self.msgs.truncate(start.unwrap_or(self.msgs.len()));
            self.changed();
        }
        let removed = (before.len() - self.msgs.len()) as u32;
        let now_ms = self.now_ms;
        let event = Event::TurnFailed {
            turn,
            now_ms,
            exhausted,
            removed,
        };
        let seen = self.see_change(sink, event, &before);
        sink.give_back(before);
        seen?;
        if exhausted {
            self.reset_session(sink, turn)?;
        }
        Ok(TurnEnd::Failed { exhausted })
    }

    /// Strategy `both`: a micro pass and the repair after a finished turn.
    fn micro_pass(&mut self, sink: &mut dyn Sink, turn: u32) -> Flow<()> {
        if !self.micro {
            return Ok(());
        }
        let parts = MicroParts {
            compactor: self.compactor.as_mut(),
            msgs: &mut self.msgs,
            summarizer: &mut self.summarizer,
            ids: &mut self.ids,
            now_ms: self.now_ms,
        };
        let end = match micro_step(parts, turn, sink) {
            Ok(end) => end,
            Err(MicroStop::Sink) => return Err(super::Stop),
            Err(MicroStop::Failure(f)) => {
                self.failure = Some(f);
                return Err(super::Stop);
            }
        };
        self.now_ms += end.latency_ms;
        if end.found_work {
            self.passes += 1;
        }
        self.dirty = super::Dirty::Clean;
        if end.changed {
            self.totals = None;
        }
        Ok(())
    }
}

/// Splits the rows after the user row into responses: each assistant row with the tool
/// rows that follow it.
fn responses(rows: impl Iterator<Item = Message>) -> Vec<Vec<Message>> {
    let mut out: Vec<Vec<Message>> = Vec::new();
    for row in rows {
        match out.last_mut() {
            Some(last) if row.role == Role::Tool => last.push(row),
            _ => out.push(vec![row]),
        }
    }
    out
}

fn count_error(sink: &mut dyn Sink, cause: ReplyCause, class: CallErrorClass) {
    sink.bump(match cause {
        ReplyCause::Overflow | ReplyCause::ClaimedOverflow => "provider.overflow_errors",
        ReplyCause::Disconnect => "provider.disconnects",
        ReplyCause::ServerError => "provider.server_errors",
        ReplyCause::Answered => "provider.answered",
    });
    sink.bump(match class {
        CallErrorClass::PayloadTooLarge => "overflow.payload_too_large",
        CallErrorClass::OverflowPhrase => "overflow.phrase",
        CallErrorClass::OverflowGenericBadRequest => "overflow.generic_400",
        CallErrorClass::OverflowDisconnect => "overflow.disconnect",
        CallErrorClass::Transient => "provider.transient",
        CallErrorClass::ClientError => "provider.client_errors",
    });
}
