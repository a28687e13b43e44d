//! Candidate reductions specific to agent-loop plans (strategies `batch` and `both`):
//! leading turns loaded as a resumed session's history, the history folded, a smaller
//! window, and the agent's and provider's knobs moved to their simplest values.

use super::candidates::{cand, halve_turn, lazy, span, with_script, Lazy};
use compactsim_fakes::ids::IdAlloc;
use compactsim_harness::engine::plan::{
    build_rows, facts_room, AgentOverrides, CasePlan, ProviderOverrides, RowPlan, TurnPlan,
};
use compactsim_model::tokens::chars_for_rough_tokens;
use compactsim_model::{tokens_rough_total, ContentKind, Role};

/// A window is not halved below this many tokens.
pub const CONTEXT_LENGTH_MIN: u32 = 4_096;
/// Real tokens per rough overhead token when the provider counts the overhead as the
/// agent estimates it, per mille.
pub const OVERHEAD_REAL_NEUTRAL_PER_MILLE: u32 = 1_000;

/// Agent-loop plans: the first `k` turns become the script's history (a resumed
/// session loads them in one append instead of running them; the turns keep their
/// numbers), most turns first; then a history of several turns folded into one (the turns
/// after it are renumbered); then the history as one exchange of the same rough size.
pub(super) fn resumed(plan: &CasePlan) -> Vec<Lazy<'_>> {
    let Some(script) = &plan.script else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let n = script.turns.len();
    for k in (1..n).rev() {
        let change = format!("{} loaded as history", span("turn", 0, k));
        out.push(lazy(change, move || {
            with_script(plan, |s| {
                let moved: Vec<TurnPlan> = s.turns.drain(..k).collect();
                s.history.extend(moved);
            })
        }));
    }
    if script.history.len() > 1 {
        out.push(lazy("history folded into one turn", move || {
            with_script(plan, |s| {
                let rows = s.history.drain(..).flat_map(|t| t.rows).collect();
                s.history = vec![TurnPlan { rows }];
            })
        }));
    }
    let rows: Vec<RowPlan> = script.history.iter().flat_map(|t| t.rows.clone()).collect();
    if let Some(exchange) = (rows.len() > 2).then(|| one_exchange(&rows)).flatten() {
        out.push(lazy(
            "history as one exchange of the same rough size",
            move || with_script(plan, |s| s.history = vec![exchange]),
        ));
    }
    out
}

/// A user row and a reply with as many rough tokens together as `rows` (prose, one fact
/// each); `None` when the rows are too small to split.
fn one_exchange(rows: &[RowPlan]) -> Option<TurnPlan> {
    let built = build_rows(rows, &mut IdAlloc::default());
    let rough = u32::try_from(tokens_rough_total(&built)).ok()?;
    let user = rough / 2;
    (user > 0).then(|| {
        let row = |role, tokens| {
            let chars = chars_for_rough_tokens(tokens);
            RowPlan::new(role, ContentKind::Prose, chars, facts_room(chars).min(1))
        };
        TurnPlan {
            rows: vec![row(Role::User, user), row(Role::Assistant, rough - user)],
        }
    })
}

/// The agent loop's knobs: a halved window (a lower trigger: the same story with fewer
/// tokens), and of the knobs the plan sets: a reliable provider configuration, no
/// resumed-session fill, in-place compaction, a fixed think time, the overhead counted
/// as estimated, no request overhead.
pub(super) fn agent_shape(plan: &CasePlan) -> Vec<Lazy<'static>> {
    let mut out = Vec::new();
    if let Some(window) = plan.context_length.filter(|&w| w / 2 >= CONTEXT_LENGTH_MIN) {
        let mut p = plan.clone();
        p.context_length = Some(window / 2);
        let mut scaled = with_script(&p, |s| {
            s.history.iter_mut().chain(&mut s.turns).for_each(|t| {
                halve_turn(t);
            })
        });
        scaled.context_length = Some(window / 2);
        let half = window / 2;
        out.push(cand(
            format!("window {window} -> {half} tokens, rows halved"),
            scaled,
        ));
        out.push(cand(format!("window {window} -> {half} tokens"), p));
    }
    let reliable = ProviderOverrides {
        reliable: true,
        ..ProviderOverrides::default()
    };
    if !plan.provider.is_empty() && plan.provider != reliable {
        let mut p = plan.clone();
        p.provider = reliable;
        out.push(cand("reliable provider configuration", p));
    }
    let a = plan.agent;
    let mut knob = |change: String, edit: &dyn Fn(&mut AgentOverrides)| {
        let mut p = plan.clone();
        edit(&mut p.agent);
        out.push(cand(change, p));
    };
    if a.resume_fill_per_mille.is_some_and(|f| f > 0) {
        knob("no resumed-session fill".into(), &|o| {
            o.resume_fill_per_mille = Some(0)
        });
    }
    if a.in_place == Some(false) {
        knob("in-place compaction".into(), &|o| o.in_place = Some(true));
    }
    if let Some((lo, hi)) = a.think_ms.filter(|(lo, hi)| lo < hi) {
        knob(
            format!("think time fixed at {lo} ms (was {lo}..{hi})"),
            &|o| o.think_ms = Some((lo, lo)),
        );
    }
    if a.overhead_real_per_mille
        .is_some_and(|r| r != OVERHEAD_REAL_NEUTRAL_PER_MILLE)
    {
        knob("overhead counted as estimated".into(), &|o| {
            o.overhead_real_per_mille = Some(OVERHEAD_REAL_NEUTRAL_PER_MILLE)
        });
    }
    if a.overhead_per_mille_of_trigger.is_some_and(|o| o > 0) {
        knob("no request overhead".into(), &|o| {
            o.overhead_per_mille_of_trigger = Some(0)
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shrink::candidates::built;
    use crate::shrink::Phase;
    use compactsim_harness::engine::plan::{CallPlan, Script};
    use compactsim_hermes::strategy::Strategy;

    fn turn(tool_chars: u32) -> TurnPlan {
        let mut call = RowPlan::new(Role::Assistant, ContentKind::Prose, 40, 1);
        call.calls = vec![CallPlan {
            tool: "terminal".into(),
            args_chars: 60,
        }];
        TurnPlan {
            rows: vec![
                RowPlan::new(Role::User, ContentKind::Prose, 400, 2),
                call,
                RowPlan::new(Role::Tool, ContentKind::Json, tool_chars, 3),
                RowPlan::new(Role::Assistant, ContentKind::Prose, 300, 1),
            ],
        }
    }

    fn plan(turns: usize) -> CasePlan {
        CasePlan {
            context_length: Some(128_000),
            script: Some(Script {
                turns: (0..turns).map(|t| turn(1_000 + t as u32)).collect(),
                ..Script::default()
            }),
            agent: AgentOverrides {
                in_place: Some(false),
                think_ms: Some((10, 20)),
                resume_fill_per_mille: Some(0),
                overhead_per_mille_of_trigger: Some(100),
                overhead_real_per_mille: Some(500),
                think_seed: Some(1),
            },
            provider: ProviderOverrides {
                base_latency_ms: Some(9),
                ..ProviderOverrides::default()
            },
            ..CasePlan::default()
        }
    }

    fn rough(rows: &[RowPlan]) -> u64 {
        tokens_rough_total(&build_rows(rows, &mut IdAlloc::default()))
    }

    #[test]
    fn history_candidates_keep_every_row_and_the_exchange_keeps_the_rough_size() {
        let p = plan(4);
        let c = built(resumed(&p));
        assert_eq!(c.len(), 3, "k = 3, 2, 1 (no history to fold yet)");
        for (cand, k) in c.iter().zip([3, 2, 1]) {
            let s = cand.plan.script.as_ref().unwrap();
            assert_eq!((s.history.len(), s.turns.len()), (k, 4 - k));
            assert_eq!(s.rows(), p.script.as_ref().unwrap().rows());
        }
        let folded = built(resumed(&c[0].plan));
        let names: Vec<&str> = folded.iter().map(|c| c.change.as_str()).collect();
        assert!(names.ends_with(&[
            "history folded into one turn",
            "history as one exchange of the same rough size"
        ]));
        let history = &c[0].plan.script.as_ref().unwrap().history;
        let exchange = &folded.last().unwrap().plan.script.as_ref().unwrap().history;
        let all: Vec<RowPlan> = history.iter().flat_map(|t| t.rows.clone()).collect();
        assert_eq!(exchange.len(), 1);
        assert_eq!(exchange[0].rows.len(), 2);
        assert_eq!(rough(&exchange[0].rows), rough(&all));
        assert_eq!(one_exchange(&all[..0]), None);
    }

    #[test]
    fn agent_knobs_move_to_their_simplest_values_and_only_for_agent_strategies() {
        let p = plan(2);
        let changes: Vec<String> = agent_shape(&p).into_iter().map(|c| c.change).collect();
        assert_eq!(
            changes,
            [
                "window 128000 -> 64000 tokens, rows halved",
                "window 128000 -> 64000 tokens",
                "reliable provider configuration",
                "in-place compaction",
                "think time fixed at 10 ms (was 10..20)",
                "overhead counted as estimated",
                "no request overhead",
            ]
        );
        let mut simple = p.clone();
        simple.context_length = Some(CONTEXT_LENGTH_MIN);
        simple.provider = ProviderOverrides {
            reliable: true,
            ..ProviderOverrides::default()
        };
        simple.agent = AgentOverrides {
            in_place: Some(true),
            think_ms: Some((10, 10)),
            overhead_real_per_mille: Some(OVERHEAD_REAL_NEUTRAL_PER_MILLE),
            overhead_per_mille_of_trigger: Some(0),
            ..p.agent
        };
        assert!(agent_shape(&simple).is_empty());
        let micro = Phase::Shape.candidates(&p, Strategy::Micro);
        assert!(micro.iter().all(|c| !c.change.contains("window")));
        let turns = Phase::Turns.candidates(&p, Strategy::Micro);
        assert!(turns.iter().all(|c| !c.change.contains("history")));
        let batch = Phase::Turns.candidates(&p, Strategy::parse("batch").unwrap());
        assert!(batch.iter().any(|c| c.change == "turn 0 loaded as history"));
    }
}
