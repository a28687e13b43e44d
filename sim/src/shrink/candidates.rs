//! Candidate reductions of a plan, phase by phase. Every candidate is strictly simpler
//! than its source in one direction that never reverses (fewer turns, rows, faults or
//! characters; a smaller window; a knob moved to its default), so repeating the phases
//! terminates. The agent loop's own candidates are in [`super::agent`].

use super::agent::{agent_shape, resumed};
use crate::compactor::micro::{DEFRAG_THRESHOLD_TOKENS_DEFAULT, SCAFFOLD_TOKENS_DEFAULT};
use crate::engine::plan::{
    facts_room, CasePlan, MicroOverrides, RowPlan, Script, SummarizerOverrides, TurnPlan,
};
use crate::provider::ProviderOutcome;
use crate::strategy::Strategy;
use crate::summarizer::SummaryOutcome;
use compactsim_model::Role;

/// A tail budget is not halved below this many tokens.
pub const TAIL_BUDGET_TOKENS_MIN: u32 = 16;
/// A row's text is not halved below this many characters.
pub const ROW_CHARS_MIN: u32 = 8;
/// The phases, in the order each round tries them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Summarizer outcomes back to `ok`, restarts removed.
    Faults,
    /// Whole turns removed (large chunks first, from the end); for the agent loop,
    /// leading turns loaded as a resumed session's history instead of run, and the
    /// history folded into one turn.
    Turns,
    /// A smaller tail budget, defaults for the other knobs, a reliable summarizer and
    /// provider, no system prompt, simpler agent parameters.
    Shape,
    /// Tool rounds and parallel calls removed from turns.
    Rounds,
    /// Smaller rows, shorter arguments, fewer facts.
    Sizes,
}

impl Phase {
    pub const ALL: [Phase; 5] = [
        Phase::Faults,
        Phase::Turns,
        Phase::Shape,
        Phase::Rounds,
        Phase::Sizes,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Faults => "faults",
            Phase::Turns => "turns",
            Phase::Shape => "shape",
            Phase::Rounds => "rounds",
            Phase::Sizes => "sizes",
        }
    }

    /// The candidates of this phase for `plan` of a case of `strategy`, most aggressive
    /// first. `plan` has a script (every recorded plan does).
    pub fn candidates(self, plan: &CasePlan, strategy: Strategy) -> Vec<Candidate> {
        match self {
            Phase::Faults => faults(plan),
            Phase::Turns if strategy.loop_options().is_some() => {
                let mut out = turns(plan);
                out.extend(resumed(plan));
                out
            }
            Phase::Turns => turns(plan),
            Phase::Shape if strategy.loop_options().is_some() => {
                let mut out = shape(plan);
                out.extend(agent_shape(plan));
                out
            }
            Phase::Shape => shape(plan),
            Phase::Rounds => rounds(plan),
            Phase::Sizes => sizes(plan),
        }
    }
}

/// One reduction: what it changes, and the plan after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub change: String,
    pub plan: CasePlan,
}

pub(super) fn cand(change: impl Into<String>, plan: CasePlan) -> Candidate {
    Candidate {
        change: change.into(),
        plan,
    }
}

pub(super) fn with_script(plan: &CasePlan, f: impl FnOnce(&mut Script)) -> CasePlan {
    let mut p = plan.clone();
    if let Some(s) = p.script.as_mut() {
        f(s);
    }
    p
}

/// Indexes of the non-ok entries of a schedule.
fn faulty<T: Copy>(schedule: &Option<Vec<T>>, ok: impl Fn(T) -> bool) -> Vec<usize> {
    let all = schedule.as_deref().unwrap_or_default();
    (0..all.len()).filter(|&i| !ok(all[i])).collect()
}

/// Every kind of fault at once, then each kind, then chunks of each schedule's faults
/// (halving, from the end) down to single faults: summarizer and provider outcomes back
/// to `ok`, restarts removed.
fn faults(plan: &CasePlan) -> Vec<Candidate> {
    let restarts = plan.restarts.clone().unwrap_or_default();
    let summary = faulty(&plan.summary_outcomes, SummaryOutcome::is_ok);
    let provider = faulty(&plan.provider_outcomes, ProviderOutcome::is_ok);
    let no_summary_faults = |p: &mut CasePlan| p.summary_outcomes = Some(Vec::new());
    let no_provider_faults = |p: &mut CasePlan| p.provider_outcomes = Some(Vec::new());
    let no_restarts = |p: &mut CasePlan| p.restarts = Some(Vec::new());
    let gateway = plan.gateway.schedule.clone().unwrap_or_default();
    let no_gateway_faults = |p: &mut CasePlan| p.gateway.schedule = Some(Default::default());
    type Clear<'a> = (&'a str, bool, &'a dyn Fn(&mut CasePlan));
    let kinds: [Clear; 4] = [
        ("every summary ok", !summary.is_empty(), &no_summary_faults),
        (
            "every provider call ok",
            !provider.is_empty(),
            &no_provider_faults,
        ),
        ("no restarts", !restarts.is_empty(), &no_restarts),
        ("no gateway events", !gateway.is_empty(), &no_gateway_faults),
    ];
    let present: Vec<&Clear> = kinds.iter().filter(|k| k.1).collect();
    let mut out = Vec::new();
    if present.len() > 1 {
        let mut p = plan.clone();
        present.iter().for_each(|k| (k.2)(&mut p));
        let names: Vec<&str> = present.iter().map(|k| k.0).collect();
        out.push(cand(names.join(", "), p));
    }
    for (name, _, clear) in present {
        let mut p = plan.clone();
        clear(&mut p);
        out.push(cand(*name, p));
    }
    if gateway.len() > 1 {
        for (change, schedule) in gateway.without_each() {
            let mut p = plan.clone();
            p.gateway.schedule = Some(schedule);
            out.push(cand(change, p));
        }
    }
    if restarts.len() > 1 {
        for i in 0..restarts.len() {
            let mut p = plan.clone();
            let gone = p.restarts.as_mut().expect("restarts").remove(i);
            out.push(cand(format!("no restart before turn {gone}"), p));
        }
    }
    for (start, len) in chunks(summary.len())
        .into_iter()
        .filter(|c| c.1 < summary.len())
    {
        let mut p = plan.clone();
        let o = p.summary_outcomes.as_mut().expect("outcomes");
        summary[start..start + len]
            .iter()
            .for_each(|&i| o[i] = SummaryOutcome::Ok);
        let change = calls_ok("summary", &summary[start..start + len]);
        out.push(cand(change, p));
    }
    for (start, len) in chunks(provider.len())
        .into_iter()
        .filter(|c| c.1 < provider.len())
    {
        let mut p = plan.clone();
        let o = p.provider_outcomes.as_mut().expect("outcomes");
        provider[start..start + len]
            .iter()
            .for_each(|&i| o[i] = ProviderOutcome::Ok);
        let change = calls_ok("provider", &provider[start..start + len]);
        out.push(cand(change, p));
    }
    out
}

/// "summary call 3 ok", "provider calls 4, 9, 12 ok".
fn calls_ok(what: &str, calls: &[usize]) -> String {
    match calls {
        [one] => format!("{what} call {one} ok"),
        _ => {
            let list: Vec<String> = calls.iter().map(usize::to_string).collect();
            format!("{what} calls {} ok", list.join(", "))
        }
    }
}

pub(super) fn span(what: &str, start: usize, len: usize) -> String {
    match len {
        1 => format!("{what} {start}"),
        _ => format!("{what}s {start}..{}", start + len - 1),
    }
}

/// Chunk removals over the turns, then over the history: chunk sizes n/2, n/4, ..., 1,
/// each from the end towards the front.
fn turns(plan: &CasePlan) -> Vec<Candidate> {
    let Some(script) = &plan.script else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let n = script.turns.len();
    for (start, len) in chunks(n) {
        if len == n {
            continue;
        }
        let mut p = with_script(plan, |s| {
            s.turns.drain(start..start + len);
        });
        p.restarts = plan
            .restarts
            .as_ref()
            .map(|r| shift_restarts(r, start, len));
        // A gateway's loop numbers the script's turns after its history.
        let history = script.history.len();
        shift_gateway(&mut p, history + start, len);
        out.push(cand(format!("drop {}", span("turn", start, len)), p));
    }
    for (start, len) in chunks(script.history.len()) {
        let mut p = with_script(plan, |s| {
            s.history.drain(start..start + len);
        });
        shift_gateway(&mut p, start, len);
        let change = format!("drop history {}", span("turn", start, len));
        out.push(cand(change, p));
    }
    out
}

/// A gateway schedule after loop turns `start..start + len` are removed (exact while no
/// redelivery comes before them; a redelivery takes a loop turn but no script turn).
fn shift_gateway(plan: &mut CasePlan, start: usize, len: usize) {
    if let Some(s) = plan.gateway.schedule.as_mut() {
        *s = s.without_turns(start as u32, len as u32);
    }
}

/// (start, len) of every chunk: sizes halving from n (n/2 first unless n == 1), each
/// size's chunks from the end of the list towards the front.
fn chunks(n: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    let mut size = n.div_ceil(2);
    loop {
        let mut end = n;
        while end > 0 {
            let start = end.saturating_sub(size);
            out.push((start, end - start));
            end = start;
        }
        if size == 1 {
            return out;
        }
        size /= 2;
    }
}

/// Restart turns after removing turns `start..start + len`: restarts before a removed
/// turn go, later ones move down with their turns.
fn shift_restarts(restarts: &[u32], start: usize, len: usize) -> Vec<u32> {
    let (start, len) = (start as u32, len as u32);
    restarts
        .iter()
        .filter(|&&r| r < start || r >= start + len)
        .map(|&r| if r >= start + len { r - len } else { r })
        .filter(|&r| r > 0)
        .collect()
}

/// Sets one micro knob of a plan.
type SetKnob = fn(&mut MicroOverrides, u32);

fn shape(plan: &CasePlan) -> Vec<Candidate> {
    let mut out = Vec::new();
    if let Some(tail) = plan.micro.tail_budget_tokens {
        if tail / 2 >= TAIL_BUDGET_TOKENS_MIN {
            let mut p = plan.clone();
            p.micro.tail_budget_tokens = Some(tail / 2);
            let change = format!("tail budget {tail} -> {} tokens", tail / 2);
            out.push(cand(change, p));
        }
    }
    if plan.script.as_ref().is_some_and(|s| s.system.is_some()) {
        let p = with_script(plan, |s| s.system = None);
        out.push(cand("no system prompt", p));
    }
    let reliable = SummarizerOverrides {
        reliable: true,
        ..SummarizerOverrides::default()
    };
    if plan.summarizer != reliable {
        let mut p = plan.clone();
        p.summarizer = reliable;
        out.push(cand("reliable summarizer configuration", p));
    }
    let m = plan.micro;
    let defaults: [(&str, Option<u32>, u32, SetKnob); 3] = [
        ("every_n_turns", m.every_n_turns, 1, |o, v| {
            o.every_n_turns = Some(v)
        }),
        (
            "defrag_threshold_tokens",
            m.defrag_threshold_tokens,
            DEFRAG_THRESHOLD_TOKENS_DEFAULT,
            |o, v| o.defrag_threshold_tokens = Some(v),
        ),
        (
            "scaffold_tokens",
            m.scaffold_tokens,
            SCAFFOLD_TOKENS_DEFAULT,
            |o, v| o.scaffold_tokens = Some(v),
        ),
    ];
    for (name, value, default, set) in defaults {
        if value.is_some_and(|v| v != default) {
            let mut p = plan.clone();
            set(&mut p.micro, default);
            out.push(cand(format!("{name} = {default} (default)"), p));
        }
    }
    out
}

/// The tool rounds of a turn: (index of the calling row, rows in the round).
fn tool_rounds(turn: &TurnPlan) -> Vec<(usize, usize)> {
    let rows = &turn.rows;
    (0..rows.len())
        .filter(|&i| !rows[i].calls.is_empty())
        .map(|i| {
            let answers = rows[i + 1..]
                .iter()
                .take(rows[i].calls.len())
                .take_while(|r| r.role == Role::Tool)
                .count();
            (i, 1 + answers)
        })
        .collect()
}

/// Per turn, from the last: all tool rounds at once, then each round, then each
/// parallel round cut to one call.
fn rounds(plan: &CasePlan) -> Vec<Candidate> {
    let Some(script) = &plan.script else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (t, turn) in script.turns.iter().enumerate().rev() {
        let rounds = tool_rounds(turn);
        if rounds.len() > 1 {
            let p = with_script(plan, |s| {
                for &(start, len) in rounds.iter().rev() {
                    s.turns[t].rows.drain(start..start + len);
                }
            });
            out.push(cand(format!("turn {t}: drop every tool round"), p));
        }
        for &(start, len) in rounds.iter().rev() {
            let p = with_script(plan, |s| {
                s.turns[t].rows.drain(start..start + len);
            });
            out.push(cand(
                format!("turn {t}: drop the tool round at row {start}"),
                p,
            ));
            let calls = turn.rows[start].calls.len();
            if calls > 1 && len == calls + 1 {
                let p = with_script(plan, |s| {
                    let rows = &mut s.turns[t].rows;
                    rows[start].calls.truncate(1);
                    rows.drain(start + 2..start + len);
                });
                out.push(cand(
                    format!("turn {t}: one call in the round at row {start}"),
                    p,
                ));
            }
        }
    }
    out
}

/// `row` with its text halved (not below [`ROW_CHARS_MIN`]); None if it cannot shrink.
fn halved(row: &RowPlan) -> Option<RowPlan> {
    let chars = (row.chars / 2).max(ROW_CHARS_MIN.min(row.chars));
    (chars < row.chars).then(|| RowPlan {
        chars,
        facts: row.facts.min(facts_room(chars)),
        ..row.clone()
    })
}

pub(super) fn halve_turn(turn: &mut TurnPlan) -> bool {
    let mut changed = false;
    for row in &mut turn.rows {
        if let Some(h) = halved(row) {
            *row = h;
            changed = true;
        }
    }
    changed
}

fn all_rows(s: &mut Script) -> impl Iterator<Item = &mut RowPlan> {
    s.history
        .iter_mut()
        .chain(s.turns.iter_mut())
        .flat_map(|t| &mut t.rows)
}

fn sizes(plan: &CasePlan) -> Vec<Candidate> {
    let Some(script) = &plan.script else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut all = script.clone();
    let mut changed = false;
    for turn in all.history.iter_mut().chain(all.turns.iter_mut()) {
        changed |= halve_turn(turn);
    }
    if changed {
        out.push(cand("every row halved", with_script(plan, |s| *s = all)));
    }
    let mut history = script.history.clone();
    if !script.turns.is_empty() && history.iter_mut().fold(false, |c, t| halve_turn(t) | c) {
        out.push(cand(
            "history rows halved",
            with_script(plan, |s| s.history = history),
        ));
    }
    for t in (0..script.turns.len()).rev() {
        let mut turn = script.turns[t].clone();
        if halve_turn(&mut turn) {
            let p = with_script(plan, |s| s.turns[t] = turn);
            out.push(cand(format!("turn {t}: rows halved"), p));
        }
    }
    let p = with_script(plan, |s| {
        all_rows(s)
            .flat_map(|r| &mut r.calls)
            .for_each(|c| c.args_chars = 0)
    });
    if p != *plan {
        out.push(cand("shortest call arguments", p));
    }
    let p = with_script(plan, |s| {
        all_rows(s).for_each(|r| r.facts = u32::from(r.role == Role::User && r.chars > 0))
    });
    if p != *plan {
        out.push(cand("fewest facts", p));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_halve_from_the_end() {
        assert_eq!(chunks(1), vec![(0, 1)]);
        assert_eq!(
            chunks(4),
            vec![(2, 2), (0, 2), (3, 1), (2, 1), (1, 1), (0, 1)]
        );
        assert_eq!(chunks(5)[..2], [(2, 3), (0, 2)]);
        assert!(chunks(0).is_empty());
        for n in 1..40 {
            assert!(chunks(n).iter().all(|&(s, l)| l >= 1 && s + l <= n));
            let singles: Vec<usize> = chunks(n).iter().filter(|c| c.1 == 1).map(|c| c.0).collect();
            assert!(singles.ends_with(&(0..n).rev().collect::<Vec<_>>()), "{n}");
        }
    }

    #[test]
    fn restarts_follow_their_turns() {
        assert_eq!(shift_restarts(&[1, 3, 5, 8], 2, 3), vec![1, 2, 5]);
        assert_eq!(shift_restarts(&[2, 4], 0, 2), vec![2]);
        assert_eq!(shift_restarts(&[1], 0, 1), Vec::<u32>::new());
    }
}
