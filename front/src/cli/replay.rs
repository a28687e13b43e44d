//! `compactsim replay`: rerun one case and print its event log and the witness, then
//! every other invariant the case breaks when judged past its first violation.

use super::args::CaseParams;
use super::exit::Exit;
use compactsim_harness::engine::verdicts::Verdicts;
use compactsim_harness::engine::{
    describe, draw, run_case, CaseOutcome, CaseResult, CaseSpec, Record,
};
use std::fmt::Write;

/// The replay output and its exit code.
pub fn replay(params: &CaseParams, case: u32) -> (String, Exit) {
    let suite = params.suite(case, 1);
    let spec = suite.spec(case);
    let r = run_case(
        &spec,
        Record {
            trace: true,
            ..Record::default()
        },
    );
    let mut out = String::new();
    let _ = writeln!(
        out,
        "SEED={} case={case} case_seed={} {}",
        params.seed,
        r.case_seed,
        params.flags()
    );
    let exit = render_case(&mut out, &spec, &r);
    (out, exit)
}

/// Appends the setup line, the event log and the outcome (with its witness) of `r`, the
/// result of running `spec`, and for a failing case every other invariant it breaks
/// (see [`also_fired`]); returns the exit code of the outcome.
pub fn render_case(out: &mut String, spec: &CaseSpec, r: &CaseResult) -> Exit {
    let exit = render_outcome(out, spec, r);
    if matches!(
        r.outcome,
        CaseOutcome::Violation(_) | CaseOutcome::Liveness(_)
    ) {
        also_fired(out, spec, r);
    }
    exit
}

/// `ALSO FIRED <id> at turn T step S: <message>` for each invariant the case breaks
/// after its first failing transition: the case run again judged past its first
/// violation (`run --verdicts all`), without a trace; the event log above ends at the
/// first. Nothing when no other invariant fires.
fn also_fired(out: &mut String, spec: &CaseSpec, first: &CaseResult) {
    let all = run_case(
        spec,
        Record {
            verdicts: Verdicts::All,
            ..Record::default()
        },
    );
    let shown = first.outcome.violations();
    for v in all
        .verdicts
        .iter()
        .filter(|v| !shown.iter().any(|s| s.invariant == v.invariant))
    {
        let _ = writeln!(
            out,
            "ALSO FIRED {} at turn {} step {}: {}",
            v.invariant, v.turn, v.step, v.message
        );
    }
}

fn render_outcome(out: &mut String, spec: &CaseSpec, r: &CaseResult) -> Exit {
    let setup = draw::draw(spec).setup;
    let _ = writeln!(
        out,
        "family={} context_length={} trigger={} tail_budget={} restart_per_mille={} every_n_turns={}",
        setup.family().name(),
        setup.shape.context_length,
        setup.thresholds.trigger_tokens,
        setup.micro.tail_budget_tokens,
        setup.restart_per_mille,
        setup.micro.every_n_turns
    );
    if let Some(agent) = describe(spec) {
        let _ = writeln!(out, "{agent}");
    }
    let mut gateway = r.gateway_trace.iter().peekable();
    for line in &r.trace {
        while let Some((_, g)) = gateway.next_if(|(step, _)| *step <= line.step) {
            let _ = writeln!(out, "{g}");
        }
        let _ = writeln!(out, "{line}");
    }
    for (_, g) in gateway {
        let _ = writeln!(out, "{g}");
    }
    match &r.outcome {
        CaseOutcome::Clean => {
            let _ = writeln!(out, "CLEAN after {} turns, {} passes", r.turns, r.passes);
            Exit::Clean
        }
        CaseOutcome::Violation(vs) => {
            for v in vs {
                let _ = writeln!(
                    out,
                    "VIOLATION {} at turn {} step {}: {}",
                    v.invariant, v.turn, v.step, v.message
                );
                for fact in &v.witness.facts {
                    let _ = writeln!(out, "  witness: {fact}");
                }
                for row in &v.witness.rows {
                    let _ = writeln!(out, "  witness row {}", row.describe());
                }
            }
            Exit::Violation
        }
        CaseOutcome::Liveness(v) => {
            let _ = writeln!(
                out,
                "LIVENESS {} at turn {} step {}: {}",
                v.invariant, v.turn, v.step, v.message
            );
            for fact in &v.witness.facts {
                let _ = writeln!(out, "  witness: {fact}");
            }
            Exit::Liveness
        }
        CaseOutcome::Internal(what) => {
            let _ = writeln!(out, "INTERNAL FAILURE: {what}");
            Exit::Internal
        }
    }
}
