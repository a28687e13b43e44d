//! The agent's error classifier for provider failures (hermes-domain §2.7): which
//! errors mean "the request is too big" and route to compression, with the generic-400
//! (#1630) and disconnect (#2153/#4750) heuristics for large sessions.

use super::errors::{ProviderError, DISCONNECT_EXCEPTIONS};
use serde::Serialize;

/// A generic 400 counts only if its message is shorter than this…
pub const GENERIC_400_MAX_CHARS: usize = 30;
/// …and the session is larger than this share of the window (per mille)…
pub const GENERIC_400_WINDOW_PER_MILLE: u64 = 400;
/// …or has more than this many messages.
pub const GENERIC_400_MESSAGES: usize = 80;
/// A disconnect counts if the session is larger than this share of the window…
pub const DISCONNECT_WINDOW_PER_MILLE: u64 = 600;
/// …or has more than this many messages.
pub const DISCONNECT_MESSAGES: usize = 200;

/// Texts that mean payload-too-large.
pub const PAYLOAD_PHRASES: [&str; 3] = [
    "request entity too large",
    "payload too large",
    "error code: 413",
];
/// Texts that mean context overflow.
pub const CONTEXT_PHRASES: [&str; 10] = [
    "context length",
    "context size",
    "maximum context",
    "token limit",
    "too many tokens",
    "reduce the length",
    "exceeds the limit",
    "context window",
    "request entity too large",
    "prompt is too long",
];

/// What told the agent the request was too large.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OverflowSignal {
    /// The message names the context limit.
    Phrase,
    /// A terse 400 on a large session (#1630).
    GenericBadRequest,
    /// A dropped connection on a large session (#2153).
    Disconnect,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// 413 or its texts: strip vision payloads, then compress.
    PayloadTooLarge,
    /// Context overflow: compress and retry.
    Overflow(OverflowSignal),
    /// Retry as is (5xx, 408, 429, a disconnect on a small session).
    Transient,
    /// Any other client error: not retryable.
    ClientError,
}

/// Classifies `error` for a request of about `approx_tokens` tokens and `messages`
/// messages against a window of `context_length` tokens.
pub fn classify(
    error: &ProviderError,
    approx_tokens: u64,
    messages: usize,
    context_length: u32,
) -> ErrorClass {
    let text = error.message.to_lowercase();
    let share = |per_mille: u64| approx_tokens * 1000 > context_length as u64 * per_mille;
    if error.status == Some(413) || PAYLOAD_PHRASES.iter().any(|p| text.contains(p)) {
        return ErrorClass::PayloadTooLarge;
    }
    if CONTEXT_PHRASES.iter().any(|p| text.contains(p)) {
        return ErrorClass::Overflow(OverflowSignal::Phrase);
    }
    match error.status {
        Some(400) => {
            let terse = error.message.chars().count() < GENERIC_400_MAX_CHARS;
            if terse && (share(GENERIC_400_WINDOW_PER_MILLE) || messages > GENERIC_400_MESSAGES) {
                ErrorClass::Overflow(OverflowSignal::GenericBadRequest)
            } else {
                ErrorClass::ClientError
            }
        }
        None if is_disconnect(&error.message) => {
            if share(DISCONNECT_WINDOW_PER_MILLE) || messages > DISCONNECT_MESSAGES {
                ErrorClass::Overflow(OverflowSignal::Disconnect)
            } else {
                ErrorClass::Transient
            }
        }
        None | Some(408) | Some(429) | Some(500..=599) => ErrorClass::Transient,
        Some(_) => ErrorClass::ClientError,
    }
}

fn is_disconnect(message: &str) -> bool {
    DISCONNECT_EXCEPTIONS
        .iter()
        .any(|name| message.contains(name))
}

#[cfg(test)]
mod tests {
    use super::super::errors::{OverflowShape, CONTEXT_TEMPLATES};
    use super::*;

    const WINDOW: u32 = 100_000;

    fn err(status: Option<u16>, message: &str) -> ProviderError {
        ProviderError {
            status,
            message: message.into(),
        }
    }

    #[test]
    fn every_context_template_is_an_overflow_and_413_is_payload() {
        for i in 0..CONTEXT_TEMPLATES.len() as u8 {
            let e = ProviderError::overflow(OverflowShape::ContextPhrase(i), 130_000, WINDOW, 0);
            let got = classify(&e, 1_000, 3, WINDOW);
            let want = if e
                .message
                .to_lowercase()
                .contains("request entity too large")
            {
                ErrorClass::PayloadTooLarge
            } else {
                ErrorClass::Overflow(OverflowSignal::Phrase)
            };
            assert_eq!(got, want, "{}", e.message);
            assert!(e.message.contains("130000") && e.message.contains("100000"));
        }
        let e = ProviderError::overflow(OverflowShape::PayloadTooLarge, 1, WINDOW, 0);
        assert_eq!(classify(&e, 0, 0, WINDOW), ErrorClass::PayloadTooLarge);
        assert_eq!(
            classify(&err(Some(400), "Error code: 413 - too big"), 0, 0, WINDOW),
            ErrorClass::PayloadTooLarge
        );
    }

    #[test]
    fn generic_400_counts_only_when_terse_and_the_session_is_large() {
        let bad = err(Some(400), "Bad Request");
        assert_eq!(
            classify(&bad, 40_000, 80, WINDOW),
            ErrorClass::ClientError,
            "exactly 40 % and 80"
        );
        let overflow = ErrorClass::Overflow(OverflowSignal::GenericBadRequest);
        assert_eq!(classify(&bad, 40_001, 10, WINDOW), overflow);
        assert_eq!(classify(&bad, 1_000, 81, WINDOW), overflow);
        let wordy = err(Some(400), "Invalid value for 'temperature': 3");
        assert!(wordy.message.len() >= GENERIC_400_MAX_CHARS);
        assert_eq!(
            classify(&wordy, 90_000, 500, WINDOW),
            ErrorClass::ClientError
        );
        let edge = err(Some(400), &"x".repeat(GENERIC_400_MAX_CHARS));
        assert_eq!(
            classify(&edge, 90_000, 500, WINDOW),
            ErrorClass::ClientError
        );
    }

    #[test]
    fn disconnect_counts_only_on_a_large_session() {
        for pick in 0..3 {
            let d = ProviderError::disconnect(pick);
            assert_eq!(classify(&d, 60_000, 200, WINDOW), ErrorClass::Transient);
            let overflow = ErrorClass::Overflow(OverflowSignal::Disconnect);
            assert_eq!(classify(&d, 60_001, 10, WINDOW), overflow);
            assert_eq!(classify(&d, 10, 201, WINDOW), overflow);
        }
    }

    #[test]
    fn server_errors_are_transient_and_others_are_client_errors() {
        for pick in 0..3 {
            let e = ProviderError::server_error(pick);
            assert_eq!(classify(&e, 99_000, 900, WINDOW), ErrorClass::Transient);
        }
        assert_eq!(
            classify(&err(Some(429), "Too Many Requests"), 0, 0, WINDOW),
            ErrorClass::Transient
        );
        assert_eq!(
            classify(&err(Some(401), "Unauthorized"), 99_000, 900, WINDOW),
            ErrorClass::ClientError
        );
    }
}
