//! Size calibration: compaction gets work early, and no single row (but a huge prompt)
//! takes more than a quarter of the tail budget.

use super::*;
use compactsim_hermes::compactor::threshold::{derive, ThresholdConfig};
use compactsim_model::{tokens_rough_total, Role};

/// Cases drawn per family.
const CASES: u32 = 200;
/// The transcript must outgrow the tail budget within this many turns on average.
const FILL_TURNS_MEAN_MAX: f64 = 50.0;
/// ... but not on average within the very first turns (the tail walk needs turns).
const FILL_TURNS_MEAN_MIN: f64 = 3.0;
/// A case that has not filled after this many turns counts with this many.
const TURNS_MAX: u32 = 300;
/// Turns checked for the per-row cap.
const CAP_TURNS: u32 = 60;

fn tail_budget_tokens(params: &ShapeParams) -> u64 {
    derive(params.context_length, ThresholdConfig::V0_19_0).tail_budget_tokens as u64
}

/// Turns until the transcript's rough tokens exceed the tail budget.
fn fill_turns(family: Family, c: u32) -> u32 {
    let (params, mut conversation) = case(family, c);
    let tail = tail_budget_tokens(&params);
    let mut ids = IdAlloc::default();
    let system = conversation.system_prompt(&mut ids);
    let mut total = system.map_or(0, |s| s.tokens().rough as u64);
    let mut turns = 0;
    while total <= tail && turns < TURNS_MAX {
        total += tokens_rough_total(&conversation.next_turn(turns, &mut ids));
        turns += 1;
    }
    turns
}

#[test]
fn every_family_outgrows_the_tail_budget_within_about_50_turns() {
    let mut report = Vec::new();
    for family in Family::ALL {
        let mut fills: Vec<u32> = (0..CASES).map(|c| fill_turns(family, c)).collect();
        fills.sort_unstable();
        let mean = fills.iter().map(|&f| f as f64).sum::<f64>() / CASES as f64;
        let line = format!(
            "{:<18} mean {mean:5.1}  median {:3}  p90 {:3}  max {:3}",
            family.name(),
            fills[fills.len() / 2],
            fills[fills.len() * 9 / 10],
            fills[fills.len() - 1]
        );
        report.push((line, mean));
    }
    let text: Vec<&str> = report.iter().map(|(l, _)| l.as_str()).collect();
    eprintln!("{}", text.join("\n"));
    for (line, mean) in &report {
        assert!(
            (FILL_TURNS_MEAN_MIN..=FILL_TURNS_MEAN_MAX).contains(mean),
            "{line}"
        );
    }
}

#[test]
fn no_row_but_a_huge_prompt_exceeds_a_quarter_of_the_tail_budget() {
    for family in Family::ALL {
        for c in 0..CASES {
            let r = run(family, c, CAP_TURNS);
            let cap = tail_budget_tokens(&r.params) / 4;
            let rows = r.system.iter().chain(r.turns.iter().flatten());
            for m in rows {
                let exempt = family == Family::HugePrompts && m.role == Role::User;
                let tokens = m.tokens().tail_walk() as u64;
                assert!(
                    exempt || tokens <= cap,
                    "{} case {c}: {} {:?} has {tokens} tokens, cap {cap}",
                    family.name(),
                    m.id,
                    m.role
                );
            }
        }
    }
}
