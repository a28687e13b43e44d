//! The work budget of a case: a deterministic bound on what one case may cost, whatever
//! `--passes`, `turns_max` or a summarizer that expands its input ask for. Each
//! transition the oracle observes is charged the rows it shows (before and after); a case
//! that exceeds the budget stops there instead of running for minutes. The budget is a
//! limit of the harness, not a verdict on the compactor: the case keeps the outcome it
//! had (judged up to that transition, like a case that reaches its turn budget) and
//! bumps [`WORK_BUDGET_REACHED`], which the report lists and `run` names.

/// The coverage counter of a case its work budget stopped (listed only when reached).
pub const WORK_BUDGET_REACHED: &str = "harness.work_budget_reached";

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
    }
}
