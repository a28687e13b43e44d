//! Persistent compressor state (hermes-domain §2.3 step 1, §2.5, §2.6): what survives
//! from one `compress()` call to the next inside one agent process.

use compactsim_fakes::summarizer::{RollingSummary, SummaryErrorClass, SummaryFailure};
use serde::Serialize;

/// Cooldown after the first timeout-class summary failure (408/429/5xx, timeouts).
pub const COOLDOWN_TIMEOUT_FIRST_MS: u64 = 60_000;
/// Cooldown after the second consecutive timeout-class failure.
pub const COOLDOWN_TIMEOUT_SECOND_MS: u64 = 300_000;
/// Cooldown after the third and later consecutive timeout-class failures.
pub const COOLDOWN_TIMEOUT_MAX_MS: u64 = 900_000;
/// Cooldown after any other summary failure.
pub const COOLDOWN_OTHER_MS: u64 = 60_000;
/// 0.19.0's cooldown after a closed stream or invalid JSON (`_transient_cooldown = 30`).
pub const COOLDOWN_STREAM_CLOSED_MS: u64 = 30_000;

/// A summary failure class that aborts the compaction and persists until a summary
/// succeeds (#29559): a cooldown early-return still aborts while it is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortFlag {
    Auth,
    Network,
}

impl AbortFlag {
    /// The flag a failure sets, if it is an aborting one.
    pub fn of(failure: SummaryFailure) -> Option<AbortFlag> {
        match failure {
            SummaryFailure::Error(SummaryErrorClass::Auth) => Some(AbortFlag::Auth),
            SummaryFailure::Error(SummaryErrorClass::Network) => Some(AbortFlag::Network),
            SummaryFailure::Error(
                SummaryErrorClass::Timeout
                | SummaryErrorClass::RateLimited
                | SummaryErrorClass::ServerError,
            )
            | SummaryFailure::Empty
            | SummaryFailure::Length => None,
        }
    }

    /// [`Self::of`] as `hermes-agent==0.19.0` classes a failure: a timeout ("Request
    /// timed out") matches `_is_connection_error` ("timed out"), so it sets the network
    /// flag too.
    pub fn of_0_19_0(failure: SummaryFailure) -> Option<AbortFlag> {
        match failure {
            SummaryFailure::Error(SummaryErrorClass::Timeout) => Some(AbortFlag::Network),
            other => AbortFlag::of(other),
        }
    }
}

/// State the batch compressor keeps between calls. In-memory only (0.19.0): the engine
/// resets it on a process restart.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BatchState {
    /// Completed compactions (`compression_count`).
    pub compression_count: u32,
    /// The live cumulative summary (`_previous_summary`); `None` before the first one.
    pub previous_summary: Option<RollingSummary>,
    /// Anti-thrash strikes recorded by this compressor (no-op exits, V1.1). The
    /// anti-thrash policy reads and resets them.
    pub ineffective_strikes: u32,
    /// Consecutive compactions that used the deterministic fallback summary.
    pub fallback_streak: u32,
    /// Consecutive timeout-class summary failures (the cooldown ladder's rung).
    pub timeout_streak: u32,
    /// No summary call before this virtual time (0: no cooldown).
    pub cooldown_until_ms: u64,
    /// Set by an auth/network failure; cleared by the next successful summary.
    pub abort_flag: Option<AbortFlag>,
}

impl BatchState {
    /// A failure cooldown is in force at `now_ms`.
    pub fn cooling_down(&self, now_ms: u64) -> bool {
        now_ms < self.cooldown_until_ms
    }

    /// Records a no-op exit (too few messages, nothing to compress): one strike.
    pub fn record_noop(&mut self) {
        self.ineffective_strikes += 1;
    }

    /// Records a successful LLM summary: it becomes the previous summary, and every
    /// failure streak and the abort flag are cleared.
    pub fn record_summary(&mut self, summary: RollingSummary) {
        self.previous_summary = Some(summary);
        self.abort_flag = None;
        self.timeout_streak = 0;
        self.fallback_streak = 0;
    }

    /// Records a failed summary call at `now_ms`: arms the cooldown ladder and the abort
    /// flag. `persist_abort_flag` is false only under the H-29559 switch.
    pub fn record_failure(
        &mut self,
        failure: SummaryFailure,
        now_ms: u64,
        persist_abort_flag: bool,
    ) {
        let cooldown_ms = if is_timeout_class(failure) {
            self.climb_timeout_ladder()
        } else {
            COOLDOWN_OTHER_MS
        };
        self.cooldown_until_ms = now_ms + cooldown_ms;
        self.set_abort_flag(AbortFlag::of(failure), persist_abort_flag);
    }

    /// [`Self::record_failure`] as `hermes-agent==0.19.0`'s `_generate_summary` classifies
    /// the failures the harness serves (`--profile hermes-0.19.0`):
    /// - only 408/429 (and 502/504) climb the timeout ladder: a 500 waits 60 s;
    /// - a closed stream (network) waits 30 s;
    /// - a timeout sets the network flag ([`AbortFlag::of_0_19_0`]): the pass aborts
    ///   instead of writing the fallback.
    pub fn record_failure_0_19_0(
        &mut self,
        failure: SummaryFailure,
        now_ms: u64,
        persist_abort_flag: bool,
    ) {
        use SummaryErrorClass::{Auth, Network, RateLimited, ServerError, Timeout};
        let cooldown_ms = match failure {
            SummaryFailure::Error(Timeout | RateLimited) => self.climb_timeout_ladder(),
            SummaryFailure::Error(Network) => COOLDOWN_STREAM_CLOSED_MS,
            SummaryFailure::Error(ServerError | Auth)
            | SummaryFailure::Empty
            | SummaryFailure::Length => COOLDOWN_OTHER_MS,
        };
        self.cooldown_until_ms = now_ms + cooldown_ms;
        self.set_abort_flag(AbortFlag::of_0_19_0(failure), persist_abort_flag);
    }

    /// Sets the abort flag a failure raised (`flag`), unless `persist` is false (the
    /// H-29559 switch); no flag leaves the one set earlier in force.
    fn set_abort_flag(&mut self, flag: Option<AbortFlag>, persist: bool) {
        if let Some(flag) = flag.filter(|_| persist) {
            self.abort_flag = Some(flag);
        }
    }

    /// One more consecutive timeout-class failure: its rung's cooldown.
    fn climb_timeout_ladder(&mut self) -> u64 {
        self.timeout_streak += 1;
        match self.timeout_streak {
            1 => COOLDOWN_TIMEOUT_FIRST_MS,
            2 => COOLDOWN_TIMEOUT_SECOND_MS,
            _ => COOLDOWN_TIMEOUT_MAX_MS,
        }
    }

    /// Records a compaction committed with the deterministic fallback summary.
    pub fn record_fallback(&mut self, summary: RollingSummary) {
        self.previous_summary = Some(summary);
        self.fallback_streak += 1;
    }

    /// `/compress` clears the failure cooldown.
    pub fn clear_cooldown(&mut self) {
        self.cooldown_until_ms = 0;
    }
}

/// Timeout-class failures (408/429/502/504, "timeout") climb the 60/300/900 s ladder.
fn is_timeout_class(failure: SummaryFailure) -> bool {
    matches!(
        failure,
        SummaryFailure::Error(
            SummaryErrorClass::Timeout
                | SummaryErrorClass::RateLimited
                | SummaryErrorClass::ServerError
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT: SummaryFailure = SummaryFailure::Error(SummaryErrorClass::Timeout);

    #[test]
    fn the_0_19_0_classes_a_timeout_as_network_and_a_500_off_the_ladder() {
        let error = SummaryFailure::Error;
        let mut s = BatchState::default();
        s.record_failure_0_19_0(error(SummaryErrorClass::ServerError), 0, true);
        assert_eq!(
            (s.cooldown_until_ms, s.timeout_streak),
            (COOLDOWN_OTHER_MS, 0)
        );
        assert_eq!(s.abort_flag, None);
        s.record_failure_0_19_0(error(SummaryErrorClass::Network), 0, true);
        assert_eq!(s.cooldown_until_ms, COOLDOWN_STREAM_CLOSED_MS);
        assert_eq!(s.abort_flag, Some(AbortFlag::Network));
        let mut s = BatchState::default();
        s.record_failure_0_19_0(TIMEOUT, 0, true);
        assert_eq!(s.cooldown_until_ms, COOLDOWN_TIMEOUT_FIRST_MS);
        assert_eq!(s.abort_flag, Some(AbortFlag::Network));
        s.record_failure_0_19_0(error(SummaryErrorClass::RateLimited), 0, true);
        assert_eq!(s.cooldown_until_ms, COOLDOWN_TIMEOUT_SECOND_MS);
        // Under H-29559 no flag persists, whatever the class.
        let mut s = BatchState::default();
        s.record_failure_0_19_0(TIMEOUT, 0, false);
        assert_eq!(s.abort_flag, None);
        // The default model: a timeout writes the fallback, a 500 climbs the ladder.
        let mut s = BatchState::default();
        s.record_failure(TIMEOUT, 0, true);
        s.record_failure(error(SummaryErrorClass::ServerError), 0, true);
        assert_eq!((s.abort_flag, s.timeout_streak), (None, 2));
    }

    #[test]
    fn timeout_ladder_climbs_and_success_resets_it() {
        let mut s = BatchState::default();
        let mut seen = vec![];
        for _ in 0..4 {
            s.record_failure(TIMEOUT, 1_000, true);
            seen.push(s.cooldown_until_ms - 1_000);
        }
        assert_eq!(seen, vec![60_000, 300_000, 900_000, 900_000]);
        assert!(s.cooling_down(1_000) && !s.cooling_down(901_000));
        s.record_summary(RollingSummary::default());
        s.record_failure(TIMEOUT, 0, true);
        assert_eq!(s.cooldown_until_ms, 60_000);
        s.record_failure(SummaryFailure::Empty, 0, true);
        assert_eq!(s.cooldown_until_ms, COOLDOWN_OTHER_MS);
    }

    #[test]
    fn abort_flag_persists_until_a_summary_succeeds() {
        let mut s = BatchState::default();
        let network = SummaryFailure::Error(SummaryErrorClass::Network);
        s.record_failure(network, 0, true);
        assert_eq!(s.abort_flag, Some(AbortFlag::Network));
        s.record_failure(SummaryFailure::Empty, 0, true);
        assert_eq!(
            s.abort_flag,
            Some(AbortFlag::Network),
            "other failures keep it"
        );
        s.record_summary(RollingSummary::default());
        assert_eq!(s.abort_flag, None);
        s.record_failure(network, 0, false);
        assert_eq!(s.abort_flag, None, "H-29559 does not persist it");
    }
}
