//! Writing a case as a scenario file (what `compactsim shrink` leaves in `failures/`).
//! The output parses back to the same case: only what the plan fixes is written, rows
//! one per line, runs of identical turns folded into `repeat`.

use super::convert::{facts_default, ARGS_CHARS_DEFAULT};
use super::expect::Expect;
use super::FORMAT_VERSION;
use compactsim_harness::engine::plan::{crash_name, CasePlan, RowPlan, Script, TurnPlan};
use compactsim_harness::engine::CaseSpec;
use compactsim_model::ContentKind;
use std::fmt::Write;

/// What a written file says about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub name: String,
    pub description: Option<String>,
    /// `#` comment lines at the top of the file.
    pub comments: Vec<String>,
}

fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn kind_name(kind: ContentKind) -> &'static str {
    match kind {
        ContentKind::Prose => "prose",
        ContentKind::Code => "code",
        ContentKind::Json => "json",
        ContentKind::Summary => "summary",
        ContentKind::Scaffold => "scaffold",
    }
}

/// The scenario file for `spec` expecting `expect`.
pub fn render(header: &Header, spec: &CaseSpec, expect: &Expect) -> String {
    let mut out = String::new();
    for c in &header.comments {
        let _ = writeln!(out, "# {c}");
    }
    let _ = writeln!(out, "format = {FORMAT_VERSION}");
    let _ = writeln!(out, "name = {}", quoted(&header.name));
    if let Some(d) = &header.description {
        let _ = writeln!(out, "description = {}", quoted(d));
    }
    if spec.root_seed > i64::MAX as u64 {
        let _ = writeln!(out, "seed = \"{}\"", spec.root_seed);
    } else {
        let _ = writeln!(out, "seed = {}", spec.root_seed);
    }
    let _ = writeln!(out, "case = {}", spec.case);
    let _ = writeln!(out, "passes = {}", spec.passes);
    let _ = writeln!(out, "strategy = {}", quoted(spec.strategy.name()));
    if let Some(o) = spec.strategy.loop_options() {
        let _ = writeln!(out, "era = {}", quoted(o.era.name()));
        let _ = writeln!(out, "anti_thrash = {}", quoted(o.anti_thrash.name()));
    }
    let bugs: Vec<String> = spec.bugs.iter().map(|b| quoted(b.id())).collect();
    let _ = writeln!(out, "bugs = [{}]", bugs.join(", "));
    if let Some(ids) = spec.plan.as_ref().and_then(|p| p.invariants.as_ref()) {
        let ids: Vec<String> = ids.iter().map(|i| quoted(i)).collect();
        let _ = writeln!(out, "invariants = [{}]", ids.join(", "));
    }
    let _ = writeln!(out, "expect = {}", expect_value(expect));
    if let Some(plan) = &spec.plan {
        plan_tables(&mut out, plan);
    }
    out
}

fn expect_value(expect: &Expect) -> String {
    match expect {
        Expect::Clean => "\"clean\"".to_string(),
        Expect::Violated {
            invariant,
            within_turns,
        } => match within_turns {
            Some(n) => format!("{{ violated = {}, within_turns = {n} }}", quoted(invariant)),
            None => format!("{{ violated = {} }}", quoted(invariant)),
        },
        Expect::Exit(class) => format!("{{ exit = {} }}", quoted(class.name())),
    }
}

/// `key = value` lines of the set fields; the table header only if any is set.
fn table(out: &mut String, name: &str, fields: &[(&str, Option<String>)]) {
    if fields.iter().all(|(_, v)| v.is_none()) {
        return;
    }
    let _ = writeln!(out, "\n[{name}]");
    for (key, value) in fields {
        if let Some(v) = value {
            let _ = writeln!(out, "{key} = {v}");
        }
    }
}

fn num(v: Option<u32>) -> Option<String> {
    v.map(|n| n.to_string())
}

fn plan_tables(out: &mut String, plan: &CasePlan) {
    if let Some(n) = plan.turns_max {
        let _ = writeln!(out, "turns_max = {n}");
    }
    if let Some(adapter) = &plan.compactor {
        use compactsim_harness::external::{DEFAULT_STARTUP_TIMEOUT_MS, DEFAULT_TIMEOUT_MS};
        let timeout =
            (adapter.timeout_ms != DEFAULT_TIMEOUT_MS).then(|| adapter.timeout_ms.to_string());
        let startup = (adapter.startup_timeout_ms != DEFAULT_STARTUP_TIMEOUT_MS)
            .then(|| adapter.startup_timeout_ms.to_string());
        table(
            out,
            "compactor",
            &[
                ("kind", Some(quoted("external"))),
                ("adapter", Some(quoted(&adapter.command))),
                ("timeout_ms", timeout),
                ("startup_timeout_ms", startup),
            ],
        );
    }
    table(
        out,
        "shape",
        &[
            ("family", plan.family.map(|f| quoted(f.name()))),
            ("context_length", num(plan.context_length)),
            ("system_prompt", plan.system_prompt.map(|b| b.to_string())),
            ("system_chars", num(plan.system_chars)),
        ],
    );
    let s = &plan.summarizer;
    let outcomes = plan.summary_outcomes.as_ref().map(|o| {
        let names: Vec<String> = o.iter().map(|x| quoted(&x.to_string())).collect();
        format!("[{}]", names.join(", "))
    });
    table(
        out,
        "summarizer",
        &[
            ("preset", s.reliable.then(|| quoted("reliable"))),
            ("ratio_per_mille", num(s.ratio_per_mille)),
            ("min_tokens", num(s.min_tokens)),
            ("max_tokens", num(s.max_tokens)),
            ("condense_per_mille", num(s.condense_per_mille)),
            ("retention_per_mille", num(s.retention_per_mille)),
            ("error_per_mille", num(s.error_per_mille)),
            ("empty_per_mille", num(s.empty_per_mille)),
            ("length_per_mille", num(s.length_per_mille)),
            ("expansion_per_mille", num(s.expansion_per_mille)),
            ("tokens_per_s", num(s.tokens_per_s)),
            ("base_latency_ms", num(s.base_latency_ms)),
            ("outcomes", outcomes),
        ],
    );
    let restarts = plan.restarts.as_ref().map(|r| {
        let turns: Vec<String> = r.iter().map(u32::to_string).collect();
        format!("[{}]", turns.join(", "))
    });
    table(
        out,
        "faults",
        &[
            ("restarts", restarts),
            ("restart_per_mille", num(plan.restart_per_mille)),
        ],
    );
    let m = &plan.micro;
    table(
        out,
        "micro",
        &[
            ("every_n_turns", num(m.every_n_turns)),
            ("defrag_threshold_tokens", num(m.defrag_threshold_tokens)),
            ("scaffold_tokens", num(m.scaffold_tokens)),
            ("tail_budget_tokens", num(m.tail_budget_tokens)),
        ],
    );
    agent_tables(out, plan);
    gateway_table(out, plan);
    if let Some(script) = &plan.script {
        script_tables(out, script);
    }
}

/// `[agent]` and `[provider]`: what an agent-loop case draws on its Provider stream.
fn agent_tables(out: &mut String, plan: &CasePlan) {
    let a = &plan.agent;
    table(
        out,
        "agent",
        &[
            ("overhead_per_mille", num(a.overhead_per_mille_of_trigger)),
            ("overhead_real_per_mille", num(a.overhead_real_per_mille)),
            ("in_place", a.in_place.map(|b| b.to_string())),
            (
                "think_ms",
                a.think_ms.map(|(lo, hi)| format!("[{lo}, {hi}]")),
            ),
            ("think_seed", a.think_seed.map(seed_value)),
            ("resume_fill_per_mille", num(a.resume_fill_per_mille)),
        ],
    );
    let p = &plan.provider;
    let outcomes = plan.provider_outcomes.as_ref().map(|o| {
        let names: Vec<String> = o.iter().map(|x| quoted(x.name())).collect();
        format!("[{}]", names.join(", "))
    });
    table(
        out,
        "provider",
        &[
            ("preset", p.reliable.then(|| quoted("reliable"))),
            ("overflow", p.overflow_shape.map(|s| quoted(&s.name()))),
            ("disconnect_per_mille", num(p.disconnect_per_mille)),
            ("server_error_per_mille", num(p.server_error_per_mille)),
            ("base_latency_ms", p.base_latency_ms.map(|n| n.to_string())),
            ("prefill_tokens_per_s", num(p.prefill_tokens_per_s)),
            ("outcomes", outcomes),
        ],
    );
}

/// `[gateway]`: the topic mode and the explicit schedule (every list, empty ones too,
/// so the file reads back as the same explicit schedule).
fn gateway_table(out: &mut String, plan: &CasePlan) {
    let g = &plan.gateway;
    let list = |l: &[u32]| {
        let turns: Vec<String> = l.iter().map(u32::to_string).collect();
        Some(format!("[{}]", turns.join(", ")))
    };
    let s = g.schedule.as_ref();
    let crashes = s.map(|s| {
        let c: Vec<String> = s
            .crashes
            .iter()
            .map(|(t, p)| format!("{{ turn = {t}, at = {} }}", quoted(&crash_name(*p))))
            .collect();
        format!("[{}]", c.join(", "))
    });
    table(
        out,
        "gateway",
        &[
            ("topic", g.topic.map(|b| b.to_string())),
            (
                "hygiene_message_limit",
                g.hygiene_message_limit.map(|n| n.to_string()),
            ),
            ("restarts", s.and_then(|s| list(&s.restarts))),
            ("crashes", crashes),
            ("duplicates", s.and_then(|s| list(&s.duplicates))),
            ("compress", s.and_then(|s| list(&s.compress))),
            ("reset", s.and_then(|s| list(&s.reset))),
            ("stops", s.and_then(|s| list(&s.stops))),
        ],
    );
}

/// A 64-bit seed as TOML: an integer, or a decimal string above TOML's i64 range.
fn seed_value(seed: u64) -> String {
    if seed > i64::MAX as u64 {
        format!("\"{seed}\"")
    } else {
        seed.to_string()
    }
}

fn script_tables(out: &mut String, script: &Script) {
    if let Some(system) = &script.system {
        let _ = writeln!(out, "\n[script]\nsystem = {}", row(system, false));
    }
    turn_tables(out, "script.history", &script.history);
    turn_tables(out, "script.turns", &script.turns);
}

fn turn_tables(out: &mut String, name: &str, turns: &[TurnPlan]) {
    let mut i = 0;
    while i < turns.len() {
        let run = turns[i..].iter().take_while(|t| **t == turns[i]).count();
        let _ = writeln!(out, "\n[[{name}]]");
        if run > 1 {
            let _ = writeln!(out, "repeat = {run}");
        }
        let _ = writeln!(out, "rows = [");
        for r in &turns[i].rows {
            let _ = writeln!(out, "  {},", row(r, true));
        }
        let _ = writeln!(out, "]");
        i += run;
    }
}

/// One row as an inline table; defaults left out.
fn row(r: &RowPlan, with_role: bool) -> String {
    let mut fields = Vec::new();
    if with_role {
        fields.push(format!("role = {}", quoted(r.role.as_str())));
    }
    if r.kind != ContentKind::Prose {
        fields.push(format!("kind = {}", quoted(kind_name(r.kind))));
    }
    fields.push(format!("chars = {}", r.chars));
    if r.facts != facts_default(r.chars) {
        fields.push(format!("facts = {}", r.facts));
    }
    if !r.calls.is_empty() {
        let calls: Vec<String> = r
            .calls
            .iter()
            .map(|c| {
                if c.args_chars == ARGS_CHARS_DEFAULT {
                    format!("{{ tool = {} }}", quoted(&c.tool))
                } else {
                    format!(
                        "{{ tool = {}, args_chars = {} }}",
                        quoted(&c.tool),
                        c.args_chars
                    )
                }
            })
            .collect();
        fields.push(format!("calls = [{}]", calls.join(", ")));
    }
    format!("{{ {} }}", fields.join(", "))
}
