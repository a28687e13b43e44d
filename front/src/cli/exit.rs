//! Exit codes, distinct per failure class (DESIGN.md).

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// Every invariant held.
    Clean = 0,
    /// An invariant was violated.
    Violation = 1,
    /// Bad input: flags, files, values.
    BadInput = 2,
    /// Liveness: a loop or an exceeded step budget.
    Liveness = 3,
    /// The harness or an adapter failed.
    Internal = 4,
}

impl Exit {
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The exit of a run whose cases ended in these ways: internal failures first,
    /// then violations, then liveness.
    pub fn worst(self, other: Exit) -> Exit {
        let rank = |e: Exit| match e {
            Exit::Clean => 0,
            Exit::Liveness => 1,
            Exit::Violation => 2,
            Exit::BadInput => 3,
            Exit::Internal => 4,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }
}

/// An error that ends a command with an exit code and a message for stderr.
#[derive(Debug, PartialEq, Eq)]
pub struct Failure {
    pub exit: Exit,
    pub message: String,
}

impl Failure {
    pub fn bad_input(message: impl Into<String>) -> Self {
        Failure {
            exit: Exit::BadInput,
            message: message.into(),
        }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Failure {
            exit: Exit::Internal,
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_worst_prefers_internal_then_violation() {
        let all = [
            Exit::Clean,
            Exit::Violation,
            Exit::BadInput,
            Exit::Liveness,
            Exit::Internal,
        ];
        let codes: std::collections::BTreeSet<i32> = all.iter().map(|e| e.code()).collect();
        assert_eq!(codes.len(), 5);
        assert_eq!(Exit::Clean.worst(Exit::Liveness), Exit::Liveness);
        assert_eq!(Exit::Liveness.worst(Exit::Violation), Exit::Violation);
        assert_eq!(Exit::Internal.worst(Exit::Violation), Exit::Internal);
    }
}
