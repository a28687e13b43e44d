//! Scenario files carry what a recorded agent-loop plan needs: the `[agent]` and
//! `[provider]` tables (with the provider's outcome schedule) read back exactly, bad
//! values are located by line and column, and settings a strategy does not honour are
//! errors.

use compactsim::scenario::{self, Expect, Header, ScenarioError};
use compactsim_fakes::provider::{OverflowShape, ProviderOutcome};
use compactsim_harness::engine::plan::{record, AgentOverrides, CasePlan, ProviderOverrides};
use compactsim_harness::engine::{run_case, CaseSpec, Record};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::bugs::Bug;
use compactsim_hermes::strategy::Strategy;
use std::path::Path;

fn parse(source: &str) -> Result<scenario::Scenario, ScenarioError> {
    scenario::parse(Path::new("a.toml"), source)
}

fn err(source: &str) -> ScenarioError {
    parse(source).expect_err("must be rejected")
}

const BATCH: &str = "format = 1\nstrategy = \"batch\"\nexpect = \"clean\"\n";

#[test]
fn agent_and_provider_tables_read_back_exactly() {
    let source = format!(
        "{BATCH}[agent]\noverhead_per_mille = 600\noverhead_real_per_mille = 415\n\
         in_place = false\nthink_ms = [500, 2000]\nthink_seed = \"18000000000000000000\"\n\
         resume_fill_per_mille = 0\n\n[provider]\npreset = \"reliable\"\noverflow = \"generic_400\"\n\
         disconnect_per_mille = 5\nserver_error_per_mille = 0\nbase_latency_ms = 300\n\
         prefill_tokens_per_s = 4000\noutcomes = [\"ok\", \"disconnect\", \"server_error\", \"overflow\"]\n"
    );
    let s = parse(&source).unwrap();
    let plan = s.spec.plan.as_deref().unwrap();
    assert_eq!(
        plan.agent,
        AgentOverrides {
            overhead_per_mille_of_trigger: Some(600),
            overhead_real_per_mille: Some(415),
            in_place: Some(false),
            think_ms: Some((500, 2_000)),
            think_seed: Some(18_000_000_000_000_000_000),
            resume_fill_per_mille: Some(0),
        }
    );
    assert_eq!(
        plan.provider,
        ProviderOverrides {
            reliable: true,
            overflow_shape: Some(OverflowShape::GenericBadRequest),
            disconnect_per_mille: Some(5),
            server_error_per_mille: Some(0),
            base_latency_ms: Some(300),
            prefill_tokens_per_s: Some(4_000),
        }
    );
    use ProviderOutcome::*;
    assert_eq!(
        plan.provider_outcomes.as_deref(),
        Some(&[Ok, Disconnect, ServerError, Overflow][..])
    );
    // Written back, it reads as the same case.
    let text = scenario::render(&Header::default(), &s.spec, &Expect::Clean);
    assert!(
        text.contains("[agent]") && text.contains("[provider]"),
        "{text}"
    );
    assert_eq!(parse(&text).unwrap().spec, s.spec);
}

#[test]
fn a_recorded_agent_case_written_as_a_file_replays_the_same_run() {
    for (case, strategy, bugs) in [
        (4, "batch", vec![Bug::H35054]),
        (3, "both", vec![]),
        (9, "batch", vec![Bug::H29559]),
    ] {
        let original = CaseSpec {
            root_seed: 20_260_731,
            case,
            passes: 25,
            strategy: Strategy::parse(strategy).unwrap(),
            bugs: BugSet::of(&bugs),
            plan: None,
            profile: None,
            compactor: Default::default(),
        };
        let rec = record(&original);
        let planned = original.with_plan(rec.plan);
        let text = scenario::render(&Header::default(), &planned, &Expect::Clean);
        let back = parse(&text).unwrap();
        assert_eq!(back.spec, planned, "case {case}");
        let replay = run_case(
            &back.spec,
            Record {
                trace: true,
                ..Record::default()
            },
        );
        assert_eq!(replay.outcome, rec.result.outcome, "case {case}");
        assert_eq!(replay.trace, rec.result.trace, "case {case}");
    }
}

#[test]
fn bad_agent_and_provider_values_are_located() {
    let e = err(&format!(
        "{BATCH}[provider]\noutcomes = [\"ok\", \"oops\"]\n"
    ));
    assert_eq!(e.position, Some((5, 19)), "{e}");
    assert!(e.message.contains("oops") && e.message.contains("server_error"));

    let e = err(&format!("{BATCH}[provider]\noverflow = \"phrase:12\"\n"));
    assert_eq!(e.position, Some((5, 12)), "{e}");
    assert!(e.message.contains("phrase:9"), "{e}");

    let e = err(&format!("{BATCH}[provider]\npreset = \"flaky\"\n"));
    assert_eq!(e.position, Some((5, 10)), "{e}");

    let e = err(&format!("{BATCH}[provider]\ndisconnect_per_mille = 1001\n"));
    assert_eq!(e.position, Some((5, 24)), "{e}");

    let e = err(&format!("{BATCH}[agent]\nthink_ms = [5, 1]\n"));
    assert_eq!(e.position, Some((5, 12)), "{e}");

    let e = err(&format!("{BATCH}[agent]\ncolour = 1\n"));
    assert_eq!(e.position.map(|p| p.0), Some(5), "{e}");
    assert!(e.message.contains("colour"), "{e}");
}

#[test]
fn settings_the_strategy_does_not_honour_are_errors_at_the_strategy() {
    let e = err(&format!("{BATCH}[faults]\nrestarts = [3]\n"));
    assert_eq!(e.position, Some((2, 12)), "{e}");
    assert!(e.message.contains("restarts"), "{e}");
    // `both` restarts its process between turns.
    assert!(parse(
        "format = 1\nstrategy = \"both\"\nexpect = \"clean\"\n[faults]\nrestarts = [3]\n"
    )
    .is_ok());

    let e = err("format = 1\nstrategy = \"micro\"\nexpect = \"clean\"\n[agent]\nin_place = true\n");
    assert_eq!(e.position, Some((2, 12)), "{e}");

    let e = err("format = 1\nexpect = \"clean\"\n[provider]\noutcomes = [\"ok\"]\n");
    assert!(e.message.contains("agent-loop"), "{e}");

    let e = err(&format!(
        "{BATCH}[[script.turns]]\nrows = [{{ role = \"assistant\", chars = 40 }}]\n"
    ));
    assert!(e.message.contains("user row"), "{e}");

    // Micro knobs apply to `both` (its micro passes), not to `batch`.
    let both = "format = 1\nstrategy = \"both\"\nexpect = \"clean\"\n[micro]\nevery_n_turns = 2\n";
    assert!(parse(both).is_ok());
    assert!(parse(&format!("{BATCH}[micro]\nevery_n_turns = 2\n")).is_err());
    let plan = CasePlan::default();
    assert_eq!(plan.check_for(Strategy::parse("batch").unwrap()), Ok(()));
}
