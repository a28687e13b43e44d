//! Candidate reductions of a plan, phase by phase. Every candidate is strictly simpler
//! than its source in one direction that never reverses (fewer turns, rows, faults or
//! characters; a smaller window; a knob moved to its default), so repeating the phases
//! terminates. The agent loop's own candidates are in [`super::agent`].

use super::agent::{agent_shape, resumed};
use super::faults::{faults, sooner};
use compactsim_harness::engine::plan::{
    facts_room, CasePlan, MicroOverrides, RowPlan, Script, SummarizerOverrides, TurnPlan,
};
use compactsim_hermes::compactor::micro::{
    DEFRAG_THRESHOLD_TOKENS_DEFAULT, SCAFFOLD_TOKENS_DEFAULT,
};
use compactsim_hermes::strategy::Strategy;
use compactsim_model::Role;

/// A tail budget is not halved below this many tokens.
pub const TAIL_BUDGET_TOKENS_MIN: u32 = 16;
/// A defrag threshold is not halved below this many tokens.
pub const DEFRAG_THRESHOLD_TOKENS_MIN: u32 = 16;
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
    /// Ok calls removed before a fault of a schedule, so that it comes sooner and the
    /// case can end earlier: after the removals, since it keeps the faults.
    Sooner,
    /// Adjacent turns merged into one (the same rows, fewer turns and passes): last, so
    /// that a round removes what it can before it folds what is left.
    Merges,
}

impl Phase {
    /// The order a shrink's first search tries the phases in: removals before the
    /// moves of faults (a case that needs no fault loses it first).
    pub const ALL: [Phase; 7] = [
        Phase::Faults,
        Phase::Turns,
        Phase::Sooner,
        Phase::Shape,
        Phase::Rounds,
        Phase::Sizes,
        Phase::Merges,
    ];
    /// The order of the second search (run only when the first leaves more than
    /// [`super::SHRUNK_TURNS_MAX`] turns): faults moved sooner before any turn is
    /// removed, so that a case whose failure hangs on a fault's call index can end
    /// early before removals shift its calls.
    pub const SOONER_FIRST: [Phase; 7] = [
        Phase::Faults,
        Phase::Sooner,
        Phase::Turns,
        Phase::Shape,
        Phase::Rounds,
        Phase::Sizes,
        Phase::Merges,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Faults => "faults",
            Phase::Turns => "turns",
            Phase::Shape => "shape",
            Phase::Rounds => "rounds",
            Phase::Sizes => "sizes",
            Phase::Sooner => "sooner faults",
            Phase::Merges => "merges",
        }
    }

    /// The candidates of this phase for `plan` of a case of `strategy`, most aggressive
    /// first. `plan` has a script (every recorded plan does).
    pub fn candidates(self, plan: &CasePlan, strategy: Strategy) -> Vec<Candidate> {
        built(self.lazy(plan, strategy))
    }

    /// [`Phase::candidates`], each built only when asked for ([`Lazy::build`]): the
    /// search builds them one by one and stops at the first that still fails.
    pub fn lazy(self, plan: &CasePlan, strategy: Strategy) -> Vec<Lazy<'_>> {
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
            Phase::Sooner => sooner(plan),
            Phase::Merges => merged(plan, strategy),
        }
    }
}

/// One reduction: what it changes, and the plan after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub change: String,
    pub plan: CasePlan,
}

/// A candidate not built yet: what it changes, and how to build its plan from the plan
/// it reduces. A long case's phase offers hundreds of candidates, each a whole plan; the
/// search reaches few of them before one is accepted (and the list is made again for
/// the reduced plan), so each is built only when the search reaches it.
pub struct Lazy<'a> {
    pub change: String,
    build: Box<dyn FnOnce() -> CasePlan + 'a>,
}

impl Lazy<'_> {
    /// The candidate's plan.
    pub fn build(self) -> Candidate {
        Candidate {
            plan: (self.build)(),
            change: self.change,
        }
    }
}

/// Every candidate of `lazies`, built.
pub(super) fn built(lazies: Vec<Lazy<'_>>) -> Vec<Candidate> {
    lazies.into_iter().map(Lazy::build).collect()
}

/// A candidate built by `build` when the search reaches it.
pub(super) fn lazy<'a>(
    change: impl Into<String>,
    build: impl FnOnce() -> CasePlan + 'a,
) -> Lazy<'a> {
    Lazy {
        change: change.into(),
        build: Box::new(build),
    }
}

/// A candidate whose plan is already built (phases with a few candidates).
pub(super) fn cand(change: impl Into<String>, plan: CasePlan) -> Lazy<'static> {
    lazy(change, move || plan)
}

pub(super) fn with_script(plan: &CasePlan, f: impl FnOnce(&mut Script)) -> CasePlan {
    let mut p = plan.clone();
    if let Some(s) = p.script.as_mut() {
        f(s);
    }
    p
}

pub(super) fn span(what: &str, start: usize, len: usize) -> String {
    match len {
        1 => format!("{what} {start}"),
        _ => format!("{what}s {start}..{}", start + len - 1),
    }
}

/// Chunk removals over the turns, then over the history: chunk sizes n/2, n/4, ..., 1,
/// each from the end towards the front.
fn turns(plan: &CasePlan) -> Vec<Lazy<'_>> {
    let Some(script) = &plan.script else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let n = script.turns.len();
    // A gateway's loop numbers the script's turns after its history.
    let history = script.history.len();
    for (start, len) in chunks(n) {
        if len == n {
            continue;
        }
        out.push(lazy(
            format!("drop {}", span("turn", start, len)),
            move || {
                let mut p = with_script(plan, |s| {
                    s.turns.drain(start..start + len);
                });
                p.restarts = plan
                    .restarts
                    .as_ref()
                    .map(|r| shift_restarts(r, start, len));
                shift_gateway(&mut p, history + start, len);
                p
            },
        ));
    }
    for (start, len) in chunks(history) {
        let change = format!("drop history {}", span("turn", start, len));
        out.push(lazy(change, move || {
            let mut p = with_script(plan, |s| {
                s.history.drain(start..start + len);
            });
            shift_gateway(&mut p, start, len);
            p
        }));
    }
    out
}

/// Merges of adjacent turns into one (every turn, then chunks of n/2, n/4, ..., 2
/// turns, from the end towards the front): the same rows in fewer turns, so fewer passes run between them.
/// A micro turn keeps every row; an agent-loop turn has one user row, so the merged
/// turns' later user rows go (their replies stay). Restarts and gateway events inside a
/// merged span go; later ones move down with their turns.
fn merged(plan: &CasePlan, strategy: Strategy) -> Vec<Lazy<'_>> {
    let Some(script) = &plan.script else {
        return Vec::new();
    };
    let one_user_row = strategy.loop_options().is_some();
    let mut out = Vec::new();
    let n = script.turns.len();
    let history = script.history.len();
    let all = (n > 2).then_some((0, n));
    for (start, len) in all.into_iter().chain(chunks(n)).filter(|c| c.1 > 1) {
        let change = format!("merge turns {start}..{} into one", start + len - 1);
        out.push(lazy(change, move || {
            let mut p = with_script(plan, |s| {
                let later: Vec<TurnPlan> = s.turns.drain(start + 1..start + len).collect();
                let rows = later.into_iter().flat_map(|t| {
                    t.rows
                        .into_iter()
                        .enumerate()
                        .filter(move |(i, r)| !(one_user_row && *i == 0 && r.role == Role::User))
                        .map(|(_, r)| r)
                });
                s.turns[start].rows.extend(rows);
            });
            p.restarts = plan
                .restarts
                .as_ref()
                .map(|r| shift_restarts(r, start + 1, len - 1));
            shift_gateway(&mut p, history + start + 1, len - 1);
            p
        }));
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
pub(super) fn chunks(n: usize) -> Vec<(usize, usize)> {
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

fn shape(plan: &CasePlan) -> Vec<Lazy<'static>> {
    let mut out = Vec::new();
    if let Some(tail) = plan.micro.tail_budget_tokens {
        if tail / 2 >= TAIL_BUDGET_TOKENS_MIN {
            let mut p = plan.clone();
            p.micro.tail_budget_tokens = Some(tail / 2);
            let change = format!("tail budget {tail} -> {} tokens", tail / 2);
            out.push(cand(change, p));
        }
    }
    // A lower defrag threshold: defrag fires on a smaller compressible window, after
    // fewer turns.
    let defrag = plan
        .micro
        .defrag_threshold_tokens
        .unwrap_or(DEFRAG_THRESHOLD_TOKENS_DEFAULT);
    if plan.micro.every_n_turns.is_some() && defrag / 2 >= DEFRAG_THRESHOLD_TOKENS_MIN {
        let mut p = plan.clone();
        p.micro.defrag_threshold_tokens = Some(defrag / 2);
        let change = format!("defrag threshold {defrag} -> {} tokens", defrag / 2);
        out.push(cand(change, p));
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
        // A defrag threshold below its default got there by halving: not raised back.
        let lowered = name == "defrag_threshold_tokens" && value.is_some_and(|v| v < default);
        if value.is_some_and(|v| v != default) && !lowered {
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

/// The exchanges of a turn after its first: (index of the user row, rows up to the
/// next user row). Only a micro turn has more than one (a merged turn).
fn later_exchanges(turn: &TurnPlan) -> Vec<(usize, usize)> {
    let users: Vec<usize> = (0..turn.rows.len())
        .filter(|&i| turn.rows[i].role == Role::User)
        .collect();
    users
        .iter()
        .enumerate()
        .skip(1)
        .map(|(k, &i)| (i, users.get(k + 1).unwrap_or(&turn.rows.len()) - i))
        .collect()
}

/// Per turn, from the last: each exchange after the turn's first removed (a merged
/// turn's), all tool rounds at once, then each round, then each parallel round cut to
/// one call.
fn rounds(plan: &CasePlan) -> Vec<Lazy<'_>> {
    let Some(script) = &plan.script else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // Rows `start..start + len` of turn `t` removed.
    let without = move |t: usize, start: usize, len: usize| {
        move || {
            with_script(plan, |s| {
                s.turns[t].rows.drain(start..start + len);
            })
        }
    };
    for (t, turn) in script.turns.iter().enumerate().rev() {
        for &(start, len) in later_exchanges(turn).iter().rev() {
            out.push(lazy(
                format!("turn {t}: drop the exchange at row {start}"),
                without(t, start, len),
            ));
        }
        let rounds = tool_rounds(turn);
        if rounds.len() > 1 {
            let every = rounds.clone();
            out.push(lazy(
                format!("turn {t}: drop every tool round"),
                move || {
                    with_script(plan, |s| {
                        for &(start, len) in every.iter().rev() {
                            s.turns[t].rows.drain(start..start + len);
                        }
                    })
                },
            ));
        }
        for &(start, len) in rounds.iter().rev() {
            out.push(lazy(
                format!("turn {t}: drop the tool round at row {start}"),
                without(t, start, len),
            ));
            let calls = turn.rows[start].calls.len();
            if calls > 1 && len == calls + 1 {
                out.push(lazy(
                    format!("turn {t}: one call in the round at row {start}"),
                    move || {
                        with_script(plan, |s| {
                            let rows = &mut s.turns[t].rows;
                            rows[start].calls.truncate(1);
                            rows.drain(start + 2..start + len);
                        })
                    },
                ));
            }
        }
    }
    out
}

/// `row` with its text halved (not below [`ROW_CHARS_MIN`]); None if it cannot shrink.
fn halved(row: &RowPlan) -> Option<RowPlan> {
    let chars = halved_chars(row)?;
    Some(RowPlan {
        chars,
        facts: row.facts.min(facts_room(chars)),
        ..row.clone()
    })
}

/// The characters of `row` halved (not below [`ROW_CHARS_MIN`]); None if it cannot shrink.
fn halved_chars(row: &RowPlan) -> Option<u32> {
    let chars = (row.chars / 2).max(ROW_CHARS_MIN.min(row.chars));
    (chars < row.chars).then_some(chars)
}

/// Whether [`halve_turn`] would change `turn`.
fn halvable(turn: &TurnPlan) -> bool {
    turn.rows.iter().any(|r| halved_chars(r).is_some())
}

/// The facts a row keeps under "fewest facts".
fn fewest_facts(row: &RowPlan) -> u32 {
    u32::from(row.role == Role::User && row.chars > 0)
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

fn sizes(plan: &CasePlan) -> Vec<Lazy<'_>> {
    let Some(script) = &plan.script else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut turns = script.history.iter().chain(&script.turns);
    if turns.any(halvable) {
        out.push(lazy("every row halved", move || {
            with_script(plan, |s| {
                for turn in s.history.iter_mut().chain(s.turns.iter_mut()) {
                    halve_turn(turn);
                }
            })
        }));
    }
    if !script.turns.is_empty() && script.history.iter().any(halvable) {
        out.push(lazy("history rows halved", move || {
            with_script(plan, |s| {
                for turn in &mut s.history {
                    halve_turn(turn);
                }
            })
        }));
    }
    for t in (0..script.turns.len()).rev() {
        if halvable(&script.turns[t]) {
            out.push(lazy(format!("turn {t}: rows halved"), move || {
                with_script(plan, |s| {
                    halve_turn(&mut s.turns[t]);
                })
            }));
        }
    }
    let rows = || {
        script
            .history
            .iter()
            .chain(&script.turns)
            .flat_map(|t| &t.rows)
    };
    if rows().flat_map(|r| &r.calls).any(|c| c.args_chars != 0) {
        out.push(lazy("shortest call arguments", move || {
            with_script(plan, |s| {
                all_rows(s)
                    .flat_map(|r| &mut r.calls)
                    .for_each(|c| c.args_chars = 0)
            })
        }));
    }
    if rows().any(|r| r.facts != fewest_facts(r)) {
        out.push(lazy("fewest facts", move || {
            with_script(plan, |s| {
                all_rows(s).for_each(|r| r.facts = fewest_facts(r))
            })
        }));
    }
    out
}

#[cfg(test)]
#[path = "candidates_tests.rs"]
mod tests;
