//! What a shrink keeps: the invariant of the failure and, when asked (`shrink
//! --witness TEXT`), the kind of its witness, told by a plain substring of what the
//! violation says ([`Violation::says`]).

use compactsim_harness::engine::CaseResult;
use compactsim_model::verdict::Violation;

/// A candidate is kept when its run breaks `invariant` with a violation that says
/// `witness` (when set).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keep {
    pub invariant: String,
    /// Text the violation must say: a plain, case-sensitive substring of its message or
    /// of one of its witness facts.
    pub witness: Option<String>,
}

impl Keep {
    /// Whether `v` is a violation this shrink keeps.
    pub fn matches(&self, v: &Violation) -> bool {
        v.invariant == self.invariant && self.witness.as_deref().is_none_or(|t| v.says(t))
    }

    /// Whether the run `r` breaks the kept invariant the kept way.
    pub fn kept_by(&self, r: &CaseResult) -> bool {
        r.outcome.violations().iter().any(|v| self.matches(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_model::verdict::Witness;

    fn violation(invariant: &str, message: &str, fact: &str) -> Violation {
        Violation {
            invariant: invariant.into(),
            turn: 1,
            step: 2,
            message: message.into(),
            witness: Witness::default().fact(fact),
        }
    }

    #[test]
    fn a_witness_is_kept_by_its_invariant_and_a_case_sensitive_substring_of_what_it_says() {
        let v = violation(
            "user-turns-intact",
            "newest visible reply m86 left the verbatim tail",
            "before: row 23",
        );
        let keep = |witness: Option<&str>| Keep {
            invariant: "user-turns-intact".into(),
            witness: witness.map(str::to_string),
        };
        assert!(keep(None).matches(&v));
        assert!(
            keep(Some("newest visible reply")).matches(&v),
            "in the message"
        );
        assert!(keep(Some("row 23")).matches(&v), "in a fact");
        assert!(
            !keep(Some("Newest visible reply")).matches(&v),
            "case-sensitive"
        );
        assert!(!keep(Some("newest user text")).matches(&v));
        let other = Keep {
            invariant: "api-valid".into(),
            witness: Some("newest visible reply".into()),
        };
        assert!(!other.matches(&v), "another invariant saying the text");
    }
}
