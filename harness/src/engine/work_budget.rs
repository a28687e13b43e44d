//! The work budget of a case: a deterministic bound on what one case may cost, whatever
//! `--passes`, `turns_max` or a summarizer that expands its input ask for. Each
//! transition the oracle observes is charged the rows it shows (before and after); a case
//! that exceeds the budget ends as a liveness outcome naming `no-infinite-loop`, with its
//! repro line, instead of running for minutes.

use compactsim_invariants::NO_INFINITE_LOOP;
use compactsim_model::{Violation, Witness};

/// Rows a case may show the oracle, summed over its transitions (a few seconds of work).
/// The default suites stay far below it; cases with `--passes` in the hundreds on a
/// transcript that keeps thousands of rows, or a summarizer that always expands, reach
/// it.
pub const CASE_WORK_ROWS_MAX: u64 = 50_000_000;

/// Rows charged so far.
#[derive(Clone, Copy, Debug, Default)]
pub struct WorkMeter {
    rows: u64,
}

impl WorkMeter {
    /// Charges one transition; false once the case is over its budget.
    pub fn charge(&mut self, before_rows: usize, after_rows: usize) -> bool {
        self.rows = self
            .rows
            .saturating_add(before_rows as u64)
            .saturating_add(after_rows as u64);
        self.rows <= CASE_WORK_ROWS_MAX
    }
}

/// The liveness violation of a case over its work budget.
pub fn work_budget_violation(turn: u32, step: u32) -> Violation {
    let message = format!(
        "work budget of {CASE_WORK_ROWS_MAX} rows observed exceeded (a limit of the \
         harness, not a loop of the model: the case ran long on a large transcript; lower \
         --passes or turns_max)"
    );
    Violation {
        invariant: NO_INFINITE_LOOP.to_string(),
        turn,
        step,
        message: message.clone(),
        witness: Witness::default().fact(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_meter_trips_just_past_the_budget_and_never_wraps() {
        let mut m = WorkMeter::default();
        assert!(m.charge(
            CASE_WORK_ROWS_MAX as usize / 2,
            CASE_WORK_ROWS_MAX as usize / 2
        ));
        assert!(!m.charge(0, 1));
        assert!(!m.charge(usize::MAX, usize::MAX));
        let v = work_budget_violation(7, 99);
        assert_eq!(
            (v.invariant.as_str(), v.turn, v.step),
            (NO_INFINITE_LOOP, 7, 99)
        );
    }
}
