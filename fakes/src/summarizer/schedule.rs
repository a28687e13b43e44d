//! The outcome of one summarizer call as a value: what a scripted summarizer is told to
//! do, and what every summarizer logs, so a generated case can be written down as an
//! explicit per-call schedule and replayed.

use super::SummaryErrorClass;
use serde::Serialize;
use std::fmt;

/// What one summarizer call did (or is scheduled to do).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub enum SummaryOutcome {
    Ok,
    Error(SummaryErrorClass),
    Empty,
    /// `finish_reason = "length"`.
    Length,
    /// The output came back larger than its input.
    Expansion,
}

const ERROR_CLASSES: [(SummaryErrorClass, &str); 5] = [
    (SummaryErrorClass::Timeout, "timeout"),
    (SummaryErrorClass::RateLimited, "rate_limited"),
    (SummaryErrorClass::ServerError, "server_error"),
    (SummaryErrorClass::Auth, "auth"),
    (SummaryErrorClass::Network, "network"),
];

impl SummaryOutcome {
    pub const fn is_ok(self) -> bool {
        matches!(self, SummaryOutcome::Ok)
    }

    /// Every spelling [`SummaryOutcome::parse`] accepts, for error messages and docs.
    pub fn names() -> Vec<String> {
        let mut names = vec!["ok".to_string()];
        names.extend(ERROR_CLASSES.iter().map(|(_, n)| format!("error:{n}")));
        names.extend(["empty", "length", "expansion"].map(String::from));
        names
    }

    /// Parses `ok`, `error:<class>`, `empty`, `length` or `expansion`.
    pub fn parse(text: &str) -> Result<SummaryOutcome, String> {
        let outcome = match text {
            "ok" => Some(SummaryOutcome::Ok),
            "empty" => Some(SummaryOutcome::Empty),
            "length" => Some(SummaryOutcome::Length),
            "expansion" => Some(SummaryOutcome::Expansion),
            _ => text.strip_prefix("error:").and_then(|class| {
                ERROR_CLASSES
                    .iter()
                    .find(|(_, n)| *n == class)
                    .map(|(c, _)| SummaryOutcome::Error(*c))
            }),
        };
        outcome.ok_or_else(|| {
            format!(
                "unknown summarizer outcome `{text}` (known: {})",
                SummaryOutcome::names().join(", ")
            )
        })
    }
}

impl fmt::Display for SummaryOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SummaryOutcome::Ok => f.write_str("ok"),
            SummaryOutcome::Empty => f.write_str("empty"),
            SummaryOutcome::Length => f.write_str("length"),
            SummaryOutcome::Expansion => f.write_str("expansion"),
            SummaryOutcome::Error(class) => {
                let name = ERROR_CLASSES
                    .iter()
                    .find(|(c, _)| c == class)
                    .map_or("unknown", |(_, n)| n);
                write!(f, "error:{name}")
            }
        }
    }
}

impl From<SummaryOutcome> for String {
    fn from(o: SummaryOutcome) -> String {
        o.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_and_unknown_names_list_the_known() {
        for name in SummaryOutcome::names() {
            let o = SummaryOutcome::parse(&name).unwrap();
            assert_eq!(o.to_string(), name);
        }
        assert_eq!(SummaryOutcome::names().len(), 9);
        let e = SummaryOutcome::parse("error:teapot").unwrap_err();
        assert!(
            e.contains("error:teapot") && e.contains("error:timeout"),
            "{e}"
        );
    }
}
