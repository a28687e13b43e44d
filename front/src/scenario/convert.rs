//! From the file as written ([`Doc`]) to a validated scenario: every id checked against
//! its catalogue, every error located at the offending value.

use super::counters::CounterExpect;
use super::doc::{
    AgentDoc, Doc, FaultsDoc, MicroDoc, ProviderDoc, RowDoc, ScriptDoc, ShapeDoc, SummarizerDoc,
    TurnDoc,
};
use super::expect::Expect;
use super::limits::{self, value};
use super::toplevel;
use super::{Scenario, FORMAT_VERSION};
use compactsim_fakes::provider::{OverflowShape, ProviderOutcome};
use compactsim_fakes::summarizer::SummaryOutcome;
use compactsim_harness::compactor::{CompactorSpec, Pools};
use compactsim_harness::engine::plan::{facts_room, CallPlan, CasePlan, RowPlan, Script, TurnPlan};
use compactsim_harness::engine::CaseSpec;
use compactsim_harness::runner::{PASSES_DEFAULT, SEED_DEFAULT};
use compactsim_harness::shapes::Family;
use compactsim_harness::stories;
use compactsim_hermes::strategy::Strategy;
use compactsim_model::{ContentKind, Role};
use std::ops::Range;
use std::path::Path;
use toml::Spanned;

/// Turns one `repeat` may stand for.
pub const REPEAT_MAX: u32 = 10_000;
/// Arguments of a call whose size the file does not give, characters.
pub const ARGS_CHARS_DEFAULT: u32 = 20;

/// An error at a span of the file (the caller adds the path and line/column).
pub type Located = (Option<Range<usize>>, String);

fn at<T>(span: Range<usize>, message: impl Into<String>) -> Result<T, Located> {
    Err((Some(span), message.into()))
}

/// Builds the scenario of `path` from its parsed document.
pub fn convert(doc: Doc, path: &Path) -> Result<Scenario, Located> {
    if *doc.format.get_ref() != FORMAT_VERSION as i64 {
        return at(
            doc.format.span(),
            format!(
                "unsupported format {} (this compactsim reads format = {FORMAT_VERSION})",
                doc.format.get_ref()
            ),
        );
    }
    let strategy = toplevel::strategy(&doc)?;
    let bugs = toplevel::bugs(&doc.bugs, strategy)?;
    let passes = value(doc.passes).unwrap_or(PASSES_DEFAULT);
    let expect = Expect::from_toml(doc.expect.get_ref(), invariant_known)
        .or_else(|e| at(doc.expect.span(), e))?;
    let counters = expect_counters(&doc, strategy)?;
    let mut plan = plan(&doc, strategy)?;
    plan.invariants = toplevel::invariants(&doc, strategy, &expect)?;
    plan.compactor = toplevel::compactor(&doc, &doc.bugs, path)?;
    let requires = match &doc.requires {
        Some(list) => super::requires::parse(list)?,
        None => Vec::new(),
    };
    let spec = CaseSpec {
        root_seed: doc.seed.unwrap_or(SEED_DEFAULT),
        case: doc.case.unwrap_or(0),
        passes,
        strategy,
        bugs,
        plan: None,
        profile: None,
        compactor: CompactorSpec::Reference.or_declared(plan.compactor.as_ref(), &Pools::default()),
    }
    .with_plan(plan);
    let stem = path
        .file_stem()
        .map_or(String::new(), |s| s.to_string_lossy().into_owned());
    Ok(Scenario {
        path: path.to_path_buf(),
        // Printed on one line of tables and traces: control characters escaped.
        name: crate::printable::line(&doc.name.clone().unwrap_or(stem)).into_owned(),
        description: doc
            .description
            .as_deref()
            .map(|d| crate::printable::line(d).into_owned()),
        spec,
        expect,
        counters,
        requires,
    })
}

fn expect_counters(doc: &Doc, strategy: Strategy) -> Result<Vec<CounterExpect>, Located> {
    let Some(table) = &doc.expect_counters else {
        return Ok(Vec::new());
    };
    table
        .get_ref()
        .iter()
        .map(|(name, value)| {
            CounterExpect::parse(name, value.get_ref(), strategy).or_else(|e| at(value.span(), e))
        })
        .collect()
}

fn invariant_known(id: &str) -> Result<(), String> {
    let known: Vec<&str> = compactsim_invariants::catalogue()
        .iter()
        .chain(&compactsim_invariants::gateway::gateway_catalogue())
        .map(|i| i.id)
        .collect();
    if known.contains(&id) {
        Ok(())
    } else {
        Err(format!(
            "unknown invariant `{id}` (known: {})",
            known.join(", ")
        ))
    }
}

fn plan(doc: &Doc, strategy: Strategy) -> Result<CasePlan, Located> {
    let mut plan = match &doc.script {
        Some(script) => script_plan(script, strategy)?,
        None => CasePlan::default(),
    };
    if let Some(shape) = &doc.shape {
        apply_shape(&mut plan, shape)?;
    }
    if let Some(s) = &doc.summarizer {
        apply_summarizer(&mut plan, s)?;
    }
    if let Some(f) = &doc.faults {
        apply_faults(&mut plan, f)?;
    }
    if let Some(m) = &doc.micro {
        apply_micro(&mut plan, m);
    }
    if let Some(a) = &doc.agent {
        apply_agent(&mut plan, a)?;
    }
    if let Some(p) = &doc.provider {
        apply_provider(&mut plan, p)?;
    }
    if let Some(g) = &doc.gateway {
        super::gateway::apply(&mut plan, g, strategy)?;
    }
    if let Some(t) = doc.turns_max {
        plan.turns_max = Some(t.get());
    }
    plan.validate().map_err(|e| (None, e))?;
    // What the plan sets that the strategy does not honour: located at the strategy.
    plan.check_for(strategy)
        .map_err(|e| (doc.strategy.as_ref().map(|s| s.span()), e))?;
    Ok(plan)
}

fn apply_agent(plan: &mut CasePlan, a: &AgentDoc) -> Result<(), Located> {
    let o = &mut plan.agent;
    if let Some(t) = &a.think_ms {
        match t.get_ref()[..] {
            [lo, hi] if lo <= hi && hi <= u64::from(limits::LATENCY_MS_MAX) => {
                o.think_ms = Some((lo, hi))
            }
            _ => {
                return at(
                    t.span(),
                    format!(
                        "think_ms is [min, max] with min <= max <= {}",
                        limits::LATENCY_MS_MAX
                    ),
                )
            }
        }
    }
    o.overhead_per_mille_of_trigger =
        value(a.overhead_per_mille).or(o.overhead_per_mille_of_trigger);
    o.overhead_real_per_mille = value(a.overhead_real_per_mille).or(o.overhead_real_per_mille);
    o.in_place = a.in_place.or(o.in_place);
    o.think_seed = a.think_seed.or(o.think_seed);
    o.resume_fill_per_mille = value(a.resume_fill_per_mille).or(o.resume_fill_per_mille);
    Ok(())
}

fn apply_provider(plan: &mut CasePlan, p: &ProviderDoc) -> Result<(), Located> {
    let o = &mut plan.provider;
    if let Some(preset) = &p.preset {
        o.reliable = reliable_preset(preset, "provider")?;
    }
    if let Some(shape) = &p.overflow {
        o.overflow_shape =
            Some(OverflowShape::parse(shape.get_ref()).or_else(|e| at(shape.span(), e))?);
    }
    o.disconnect_per_mille = value(p.disconnect_per_mille).or(o.disconnect_per_mille);
    o.server_error_per_mille = value(p.server_error_per_mille).or(o.server_error_per_mille);
    o.prefill_tokens_per_s = value(p.prefill_tokens_per_s).or(o.prefill_tokens_per_s);
    o.base_latency_ms = value(p.base_latency_ms)
        .map(u64::from)
        .or(o.base_latency_ms);
    if let Some(outcomes) = &p.outcomes {
        schedule_len(outcomes)?;
        let parsed = outcomes
            .iter()
            .map(|o| ProviderOutcome::parse(o.get_ref()).or_else(|e| at(o.span(), e)))
            .collect::<Result<Vec<_>, _>>()?;
        plan.provider_outcomes = Some(parsed);
    }
    Ok(())
}

fn apply_shape(plan: &mut CasePlan, shape: &ShapeDoc) -> Result<(), Located> {
    if let Some(f) = &shape.family {
        let family = Family::parse(f.get_ref()).ok_or_else(|| {
            let known: Vec<&str> = Family::ALL.iter().map(|f| f.name()).collect();
            (
                Some(f.span()),
                format!(
                    "unknown shape family `{}` (known: {})",
                    f.get_ref(),
                    known.join(", ")
                ),
            )
        })?;
        plan.family = Some(family);
    }
    plan.context_length = value(shape.context_length).or(plan.context_length);
    plan.system_prompt = shape.system_prompt.or(plan.system_prompt);
    plan.system_chars = value(shape.system_chars).or(plan.system_chars);
    Ok(())
}

/// `preset = "reliable" | "drawn"` of a `what` table: true for reliable.
fn reliable_preset(preset: &Spanned<String>, what: &str) -> Result<bool, Located> {
    match preset.get_ref().as_str() {
        "reliable" => Ok(true),
        "drawn" => Ok(false),
        other => at(
            preset.span(),
            format!("unknown {what} preset `{other}` (known: drawn, reliable)"),
        ),
    }
}

fn apply_summarizer(plan: &mut CasePlan, s: &SummarizerDoc) -> Result<(), Located> {
    if let (Some(min), Some(max)) = (value(s.min_tokens), &s.max_tokens) {
        if max.get_ref().get() < min {
            return at(
                max.span(),
                format!(
                    "max_tokens = {} is below min_tokens = {min}: no summary size satisfies both",
                    max.get_ref().get()
                ),
            );
        }
    }
    let o = &mut plan.summarizer;
    if let Some(preset) = &s.preset {
        o.reliable = reliable_preset(preset, "summarizer")?;
    }
    let pairs = [
        (&mut o.ratio_per_mille, value(s.ratio_per_mille)),
        (&mut o.min_tokens, value(s.min_tokens)),
        (
            &mut o.max_tokens,
            value(s.max_tokens.as_ref().map(|v| *v.get_ref())),
        ),
        (&mut o.condense_per_mille, value(s.condense_per_mille)),
        (&mut o.retention_per_mille, value(s.retention_per_mille)),
        (&mut o.error_per_mille, value(s.error_per_mille)),
        (&mut o.empty_per_mille, value(s.empty_per_mille)),
        (&mut o.length_per_mille, value(s.length_per_mille)),
        (&mut o.expansion_per_mille, value(s.expansion_per_mille)),
        (&mut o.tokens_per_s, value(s.tokens_per_s)),
        (&mut o.base_latency_ms, value(s.base_latency_ms)),
    ];
    for (slot, value) in pairs {
        if value.is_some() {
            *slot = value;
        }
    }
    if let Some(outcomes) = &s.outcomes {
        schedule_len(outcomes)?;
        let parsed = outcomes
            .iter()
            .map(|o| SummaryOutcome::parse(o.get_ref()).or_else(|e| at(o.span(), e)))
            .collect::<Result<Vec<_>, _>>()?;
        plan.summary_outcomes = Some(parsed);
    }
    Ok(())
}

fn apply_faults(plan: &mut CasePlan, f: &FaultsDoc) -> Result<(), Located> {
    if let Some(r) = &f.restarts {
        let turns: Vec<u32> = r.get_ref().iter().map(|t| t.get()).collect();
        if turns.windows(2).any(|w| w[0] >= w[1]) {
            return at(
                r.span(),
                "restarts lists turns >= 1 in strictly ascending order",
            );
        }
        plan.restarts = Some(turns);
    }
    plan.restart_per_mille = value(f.restart_per_mille).or(plan.restart_per_mille);
    Ok(())
}

fn apply_micro(plan: &mut CasePlan, m: &MicroDoc) {
    let o = &mut plan.micro;
    o.every_n_turns = value(m.every_n_turns).or(o.every_n_turns);
    o.defrag_threshold_tokens = value(m.defrag_threshold_tokens).or(o.defrag_threshold_tokens);
    o.scaffold_tokens = value(m.scaffold_tokens).or(o.scaffold_tokens);
    o.tail_budget_tokens = value(m.tail_budget_tokens).or(o.tail_budget_tokens);
}

/// A built-in story's plan, or a plan holding the inline script.
fn script_plan(doc: &Spanned<ScriptDoc>, strategy: Strategy) -> Result<CasePlan, Located> {
    let s = doc.get_ref();
    if let Some(name) = &s.builtin {
        if s.system.is_some() || !s.history.is_empty() || !s.turns.is_empty() {
            return at(
                doc.span(),
                "a script is either `builtin = \"<name>\"` or inline (system, history, turns), not both",
            );
        }
        let story = stories::story(name.get_ref()).or_else(|e| at(name.span(), e))?;
        return Ok((story.plan)());
    }
    let system = match &s.system {
        None => None,
        Some(row) => {
            let r = row.get_ref();
            if r.role.is_some_and(|role| role != Role::System) || !r.calls.is_empty() {
                return at(row.span(), "the system row has role system and no calls");
            }
            let plan = row_plan(r, Role::System);
            if plan.facts > facts_room(plan.chars) {
                return at(row.span(), FACTS_ROOM);
            }
            Some(plan)
        }
    };
    let mut previous = None;
    let script = Script {
        system,
        history: turns(&s.history, "history", &mut previous)?,
        turns: turns(&s.turns, "turn", &mut previous)?,
    };
    if script.turns.is_empty() {
        return at(
            doc.span(),
            "an inline script needs at least one [[script.turns]]",
        );
    }
    check_script_size(&script).or_else(|e| at(doc.span(), e))?;
    if strategy.loop_options().is_none() {
        super::verbatim::check(s, doc.span())?;
    }
    Ok(CasePlan {
        script: Some(script),
        ..CasePlan::default()
    })
}

/// What a row with more facts than its text has room for is told.
const FACTS_ROOM: &str = "more facts than the text has room for (one per 12 characters)";

/// The turns of `docs`; `previous` is the last row before them (checked against their
/// first row) and becomes their last row.
fn turns(
    docs: &[Spanned<TurnDoc>],
    what: &str,
    previous: &mut Option<RowPlan>,
) -> Result<Vec<TurnPlan>, Located> {
    let mut out = Vec::new();
    for doc in docs {
        let t = doc.get_ref();
        let repeat = value(t.repeat).unwrap_or(1);
        if t.rows.len() > limits::ROWS_PER_TURN_MAX {
            return at(
                doc.span(),
                format!("a {what} has at most {} rows", limits::ROWS_PER_TURN_MAX),
            );
        }
        let mut rows = Vec::new();
        for row in &t.rows {
            let Some(role) = row.role else {
                return at(doc.span(), format!("every {what} row needs a role"));
            };
            if row.calls.len() > limits::CALLS_PER_ROW_MAX {
                return at(
                    doc.span(),
                    format!("a row makes at most {} calls", limits::CALLS_PER_ROW_MAX),
                );
            }
            rows.push(row_plan(row, role));
        }
        let mut pairs: Vec<(&RowPlan, &RowPlan)> =
            rows.windows(2).map(|w| (&w[0], &w[1])).collect();
        if let (Some(last), Some(first)) = (previous.as_ref(), rows.first()) {
            pairs.push((last, first));
        }
        if let (true, Some(last), Some(first)) = (repeat > 1, rows.last(), rows.first()) {
            pairs.push((last, first));
        }
        if pairs.iter().any(|(a, b)| assistants_unmergeable(a, b)) {
            return at(
                doc.span(),
                "two assistant rows in a row where one makes tool calls: Hermes' repair \
                 cannot merge them (answer the calls with tool rows, or put a user row \
                 between them)",
            );
        }
        if let Some(last) = rows.last() {
            *previous = Some(last.clone());
        }
        let turn = TurnPlan { rows };
        let one = Script {
            turns: vec![turn.clone()],
            ..Script::default()
        };
        one.validate()
            .or_else(|e| at(doc.span(), e.replacen("turn 0: ", "", 1)))?;
        out.extend(std::iter::repeat_n(turn, repeat as usize));
    }
    Ok(out)
}

/// Whether `script` has, anywhere in its history and turns, two assistant rows in a row
/// that a scenario file may not hold (see [`assistants_unmergeable`]).
pub fn has_unmergeable_assistants(script: &Script) -> bool {
    let rows: Vec<&RowPlan> = script
        .history
        .iter()
        .chain(&script.turns)
        .flat_map(|t| &t.rows)
        .collect();
    rows.windows(2).any(|w| assistants_unmergeable(w[0], w[1]))
}

/// Whether `b` directly after `a` is a pair of assistant rows that repair cannot merge
/// (it merges consecutive assistant rows only when neither makes calls).
fn assistants_unmergeable(a: &RowPlan, b: &RowPlan) -> bool {
    a.role == Role::Assistant
        && b.role == Role::Assistant
        && (!a.calls.is_empty() || !b.calls.is_empty())
}

/// The whole script within [`limits::SCRIPT_ROWS_MAX`] and [`limits::SCRIPT_CHARS_MAX`].
fn check_script_size(script: &Script) -> Result<(), String> {
    let rows = script.system.iter().chain(
        script
            .history
            .iter()
            .chain(&script.turns)
            .flat_map(|t| &t.rows),
    );
    let (mut count, mut chars) = (0u64, 0u64);
    for row in rows {
        count += 1;
        chars += u64::from(row.chars)
            + row
                .calls
                .iter()
                .map(|c| u64::from(c.args_chars))
                .sum::<u64>();
    }
    if count > limits::SCRIPT_ROWS_MAX || chars > limits::SCRIPT_CHARS_MAX {
        return Err(format!(
            "the script has {count} rows and {chars} characters, repeats counted (at most \
             {} rows and {} characters)",
            limits::SCRIPT_ROWS_MAX,
            limits::SCRIPT_CHARS_MAX
        ));
    }
    Ok(())
}

/// An outcome schedule within [`limits::SCHEDULE_LEN_MAX`] entries.
fn schedule_len(outcomes: &[Spanned<String>]) -> Result<(), Located> {
    match outcomes.get(limits::SCHEDULE_LEN_MAX) {
        Some(extra) => at(
            extra.span(),
            format!(
                "an outcome schedule has at most {} entries",
                limits::SCHEDULE_LEN_MAX
            ),
        ),
        None => Ok(()),
    }
}

/// Facts a row has when the file does not say: one if it has text.
pub fn facts_default(chars: u32) -> u32 {
    facts_room(chars).min(1)
}

fn row_plan(row: &RowDoc, role: Role) -> RowPlan {
    RowPlan {
        role,
        kind: row.kind.unwrap_or(ContentKind::Prose),
        chars: row.chars.get(),
        facts: row.facts.unwrap_or(facts_default(row.chars.get())),
        calls: row
            .calls
            .iter()
            .map(|c| CallPlan {
                tool: c.tool.clone(),
                args_chars: value(c.args_chars).unwrap_or(ARGS_CHARS_DEFAULT),
            })
            .collect(),
    }
}
