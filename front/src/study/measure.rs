//! Per-turn measurement of one strategy's session: the rows and the totals.

use compactsim_reports::study::{StrategyTotals, TurnRow};

/// Share of the turns, at the end, whose mean occupancy is the equilibrium (per mille).
pub const EQUILIBRIUM_TAIL_PER_MILLE: usize = 200;

/// Rounds to three decimals, so reports carry no float noise.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// What one turn did, as the session measured it.
#[derive(Clone, Copy, Debug, Default)]
pub struct TurnSample {
    pub clock_ms: u64,
    pub messages: u32,
    pub tokens: u64,
    pub trigger_tokens: u32,
    pub stall_ms: u64,
    pub finalize_ms: u64,
    pub facts_introduced: u32,
    pub facts_in_context: u32,
}

/// Accumulates rows and totals.
#[derive(Clone, Debug, Default)]
pub struct Measure {
    pub totals: StrategyTotals,
    pub rows: Vec<TurnRow>,
    pub micro_deltas: Vec<i64>,
    micro_pass_ms: Vec<u64>,
    cost_usd: f64,
    break_usd: f64,
}

impl Measure {
    /// An absorbing micro pass that changed the transcript by `delta` tokens in `ms`.
    pub fn micro_commit(&mut self, delta: i64, ms: u64) {
        self.totals.micro_commits += 1;
        self.micro_deltas.push(delta);
        self.micro_pass_ms.push(ms);
    }

    /// One provider call.
    pub fn call(&mut self, bill: &super::cache::Billing, output: u64, usd: f64, break_usd: f64) {
        let t = &mut self.totals;
        t.provider_calls += 1;
        t.cache_breaks += u32::from(bill.broke);
        t.input_tokens_cached += bill.cached_tokens;
        t.input_tokens_uncached += bill.uncached_tokens;
        t.recached_tokens += bill.recached_tokens;
        t.output_tokens += output;
        self.cost_usd += usd;
        self.break_usd += break_usd;
    }

    /// Closes a turn.
    pub fn turn(&mut self, s: TurnSample) {
        let pct = |n: f64, d: f64| if d > 0.0 { 100.0 * n / d } else { 100.0 };
        let t = &self.totals;
        self.rows.push(TurnRow {
            turn: self.rows.len() as u32 + 1,
            clock_s: round3(s.clock_ms as f64 / 1000.0),
            messages: s.messages,
            tokens: s.tokens,
            occupancy_pct: round3(pct(s.tokens as f64, s.trigger_tokens as f64)),
            compactions_total: t.micro_commits + t.micro_defrags + t.batch_compactions + t.handoffs,
            batch_compactions_total: t.batch_compactions,
            stall_s: round3(s.stall_ms as f64 / 1000.0),
            finalize_s: round3(s.finalize_ms as f64 / 1000.0),
            cache_breaks_total: t.cache_breaks,
            cost_usd_total: round3(self.cost_usd),
            facts_introduced: s.facts_introduced,
            facts_retained_pct: round3(pct(s.facts_in_context as f64, s.facts_introduced as f64)),
        });
    }

    /// The totals, with everything derived from the rows.
    pub fn finish(mut self) -> (StrategyTotals, Vec<TurnRow>, Vec<i64>) {
        let rows = &self.rows;
        let t = &mut self.totals;
        let occ = |r: &TurnRow| r.occupancy_pct;
        t.occupancy_pct_peak = rows.iter().map(occ).fold(0.0, f64::max);
        t.occupancy_pct_final = rows.last().map_or(0.0, occ);
        let tail = (rows.len() * EQUILIBRIUM_TAIL_PER_MILLE / 1000).max(1);
        let last = &rows[rows.len().saturating_sub(tail)..];
        t.occupancy_pct_equilibrium =
            round3(last.iter().map(occ).sum::<f64>() / last.len().max(1) as f64);
        t.stall_s_total = round3(rows.iter().map(|r| r.stall_s).sum());
        t.stall_s_max = rows.iter().map(|r| r.stall_s).fold(0.0, f64::max);
        t.finalize_s_total = round3(rows.iter().map(|r| r.finalize_s).sum());
        let mut ms = self.micro_pass_ms.clone();
        ms.sort_unstable();
        t.micro_pass_s_median = ms.get(ms.len() / 2).map_or(0.0, |&m| m as f64 / 1000.0);
        t.micro_first_pass_delta_tokens = self.micro_deltas.first().copied().unwrap_or(0);
        t.micro_break_even_pass = break_even(&self.micro_deltas);
        t.cost_usd_total = round3(self.cost_usd);
        t.cache_break_cost_usd = round3(self.break_usd);
        let ret = |r: &TurnRow| r.facts_retained_pct;
        t.facts_retained_pct_final = rows.last().map_or(100.0, ret);
        t.facts_retained_pct_min = rows.iter().map(ret).fold(100.0, f64::min);
        (self.totals, self.rows, self.micro_deltas)
    }
}

/// 1-based index of the first pass at which the running sum of `deltas` is ≤ 0.
pub fn break_even(deltas: &[i64]) -> Option<u32> {
    let mut sum = 0i64;
    deltas
        .iter()
        .position(|d| {
            sum += d;
            sum <= 0
        })
        .map(|i| i as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn break_even_is_where_the_running_sum_first_stops_being_positive() {
        assert_eq!(break_even(&[330, -200, -150, -900]), Some(3));
        assert_eq!(break_even(&[-5]), Some(1));
        assert_eq!(break_even(&[330, -100]), None);
        assert_eq!(break_even(&[]), None);
    }

    #[test]
    fn equilibrium_is_the_mean_of_the_last_fifth() {
        let mut m = Measure::default();
        for tokens in [10u64, 20, 30, 40, 50, 60, 70, 80, 90, 100] {
            m.turn(TurnSample {
                tokens,
                trigger_tokens: 100,
                ..TurnSample::default()
            });
        }
        let (t, rows, _) = m.finish();
        assert_eq!(rows.len(), 10);
        assert_eq!(t.occupancy_pct_equilibrium, 95.0);
        assert_eq!(t.occupancy_pct_peak, 100.0);
    }
}
