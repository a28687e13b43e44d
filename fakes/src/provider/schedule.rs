//! The injected outcome of one provider call as a value: what a scripted provider is
//! told to do, and what every provider logs, so a generated case can be written down as
//! an explicit per-call schedule and replayed (the provider's counterpart of
//! [`crate::summarizer::SummaryOutcome`]).
//!
//! An outcome is what the provider does to a request that fits the window. A request
//! over the window fails with the case's overflow shape whatever the outcome says (the
//! window is a consequence of the request, not a fault), and its call logs `ok` unless
//! the schedule said otherwise.

use serde::Serialize;
use std::fmt;

/// What one provider call injects (or is scheduled to inject).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(into = "String")]
pub enum ProviderOutcome {
    /// Answer (if the request fits).
    Ok,
    /// Fail with the case's overflow shape although the request fits (a provider that
    /// counts differently, or claims overflow for another reason).
    Overflow,
    /// Drop the connection: no status, no usage.
    Disconnect,
    /// A 5xx.
    ServerError,
}

const NAMES: [(ProviderOutcome, &str); 4] = [
    (ProviderOutcome::Ok, "ok"),
    (ProviderOutcome::Overflow, "overflow"),
    (ProviderOutcome::Disconnect, "disconnect"),
    (ProviderOutcome::ServerError, "server_error"),
];

impl ProviderOutcome {
    pub const fn is_ok(self) -> bool {
        matches!(self, ProviderOutcome::Ok)
    }

    /// Every spelling [`ProviderOutcome::parse`] accepts, for error messages and docs.
    pub fn names() -> Vec<&'static str> {
        NAMES.iter().map(|(_, n)| *n).collect()
    }

    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(o, _)| *o == self)
            .map_or("ok", |(_, n)| n)
    }

    /// Parses `ok`, `overflow`, `disconnect` or `server_error`.
    pub fn parse(text: &str) -> Result<ProviderOutcome, String> {
        NAMES
            .iter()
            .find(|(_, n)| *n == text)
            .map(|(o, _)| *o)
            .ok_or_else(|| {
                format!(
                    "unknown provider outcome `{text}` (known: {})",
                    ProviderOutcome::names().join(", ")
                )
            })
    }
}

impl fmt::Display for ProviderOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<ProviderOutcome> for String {
    fn from(o: ProviderOutcome) -> String {
        o.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_and_unknown_names_list_the_known() {
        for name in ProviderOutcome::names() {
            assert_eq!(ProviderOutcome::parse(name).unwrap().to_string(), name);
        }
        assert_eq!(ProviderOutcome::names().len(), 4);
        let e = ProviderOutcome::parse("teapot").unwrap_err();
        assert!(e.contains("teapot") && e.contains("server_error"), "{e}");
    }
}
