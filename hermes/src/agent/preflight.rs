//! Turn-start preflight (hermes-domain §2.2 items 1–2, 0.19.0 `turn_context`): the gate
//! (message count, or the rough message estimate alone at the trigger), the deferral to
//! real usage, the cooldown and anti-thrash gates via `should_compress`, then up to
//! [`PREFLIGHT_PASSES_MAX`] passes while each makes progress.
//!
//! Bug switches: H-27404 (the gate is the count alone), H-35054 (the rough request
//! estimate is compared with the trigger directly: no deferral to real usage and no
//! `should_compress`, so no anti-thrash gate, and the next pass runs while the rough
//! estimate stays over; preflight's own cooldown skip, a separate check, stays).

use super::{AgentLoop, Flow, Sink};
use crate::bugs::Bug;
use compactsim_model::{BatchTrigger, Event, Preflight, PreflightDecision};

/// Preflight runs at most this many passes (`range(3)`).
pub const PREFLIGHT_PASSES_MAX: u32 = 3;
/// A pass counts as progress if it removed rows or more than this share of the rough
/// tokens, per mille (#39548).
pub const PROGRESS_TOKENS_PER_MILLE: u64 = 50;

impl AgentLoop {
    /// Evaluates preflight for `turn` and reports the decision (after its passes).
    pub(crate) fn preflight(&mut self, sink: &mut dyn Sink, turn: u32) -> Flow<()> {
        let messages = self.msgs.len();
        let messages_rough = self.messages_rough();
        let request_rough = self.request_rough();
        let trigger = self.config.trigger_tokens();
        let at = self.now_ms;
        let decision = self.decide(sink, turn, messages, messages_rough, request_rough)?;
        sink.bump(match decision {
            PreflightDecision::BelowTrigger => "preflight.below_trigger",
            PreflightDecision::Gated => "preflight.gated",
            PreflightDecision::Deferred => "preflight.deferred",
            PreflightDecision::Cooldown => "preflight.cooldown",
            PreflightDecision::Blocked => "preflight.blocked",
            PreflightDecision::Compress { .. } => "preflight.compress",
        });
        self.see(
            sink,
            Event::Preflight(Preflight {
                turn,
                now_ms: at,
                messages: messages as u32,
                messages_rough_tokens: messages_rough,
                request_rough_tokens: request_rough,
                trigger_tokens: trigger,
                decision,
            }),
        )
    }

    fn decide(
        &mut self,
        sink: &mut dyn Sink,
        turn: u32,
        messages: usize,
        messages_rough: u64,
        request_rough: u64,
    ) -> Flow<PreflightDecision> {
        let trigger = self.config.trigger_tokens();
        if request_rough < trigger as u64 {
            return Ok(PreflightDecision::BelowTrigger);
        }
        // H-27404 is asked only where it decides: few rows whose tokens reach the trigger.
        let by_tokens = || messages_rough >= trigger as u64 && !self.config.has(Bug::H27404);
        if messages <= self.config.gate_messages && !by_tokens() {
            return Ok(PreflightDecision::Gated);
        }
        // H-35054 (no deferral, no guard) is asked only where it decides: where the
        // clean path would defer, or meet a guard that is not simply open.
        if self.session.usage.would_defer(request_rough, trigger) && !rough_only(self) {
            self.session.usage.should_defer(request_rough, trigger);
            return Ok(PreflightDecision::Deferred);
        }
        if self.cooldown_holds() {
            return Ok(PreflightDecision::Cooldown);
        }
        if !self.take_gate_unless(sink, rough_only) {
            return Ok(PreflightDecision::Blocked);
        }
        self.passes(sink, turn)
    }

    /// Up to three passes; stops when a pass made no progress or compaction should no
    /// longer run.
    fn passes(&mut self, sink: &mut dyn Sink, turn: u32) -> Flow<PreflightDecision> {
        let mut passes = 0;
        while passes < PREFLIGHT_PASSES_MAX {
            let rows = self.msgs.len();
            let rough = self.messages_rough();
            self.pass(sink, turn, BatchTrigger::Preflight)?;
            passes += 1;
            let saved = rough.saturating_sub(self.messages_rough());
            let progress =
                self.msgs.len() < rows || saved * 1000 > rough * PROGRESS_TOKENS_PER_MILLE;
            if !progress || !self.again(sink) {
                break;
            }
        }
        Ok(PreflightDecision::Compress { passes })
    }

    /// Whether another preflight pass should run.
    fn again(&mut self, sink: &mut dyn Sink) -> bool {
        let request_rough = self.request_rough();
        // Under H-35054, the rough estimate at the trigger and no cooldown: the guard is
        // bypassed, and the switch asked only where the guard would not simply open.
        self.should_compress_unless(sink, request_rough, rough_only)
    }
}

/// H-35054: preflight compares the rough estimate alone (no deferral, no guard).
fn rough_only(agent: &AgentLoop) -> bool {
    agent.config.has(Bug::H35054)
}
