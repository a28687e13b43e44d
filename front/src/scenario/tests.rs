use super::*;
use compactsim_harness::engine::plan::record;
use compactsim_harness::engine::{run_case, CaseOutcome, Record};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::bugs::Bug;
use compactsim_hermes::strategy::Strategy;

fn parse_str(source: &str) -> Result<Scenario, ScenarioError> {
    parse(Path::new("dir/x.toml"), source)
}

fn err(source: &str) -> ScenarioError {
    parse_str(source).expect_err("must be rejected")
}

const MINIMAL: &str = "format = 1\nexpect = \"clean\"\n";

#[test]
fn a_minimal_file_is_the_drawn_case_zero_of_the_default_seed() {
    let s = parse_str(MINIMAL).unwrap();
    assert_eq!(s.name, "x");
    assert_eq!(s.expect, Expect::Clean);
    assert_eq!(s.spec.root_seed, compactsim_harness::runner::SEED_DEFAULT);
    assert_eq!((s.spec.case, s.spec.passes), (0, 25));
    assert_eq!(s.spec.strategy, Strategy::Micro);
    assert!(s.spec.plan.is_none() && s.spec.bugs.is_empty());
}

#[test]
fn errors_name_file_line_and_column_of_the_offending_value() {
    let e = err("format = 1\nexpect = \"clean\"\ncolour = 3\n");
    assert_eq!(e.position, Some((3, 1)), "{e}");
    assert!(
        e.to_string().starts_with("dir/x.toml:3:1: ") && e.message.contains("colour"),
        "{e}"
    );

    let e = err("format = 1\nexpect = { violated = \"one-marker-maks\" }\n");
    assert_eq!(e.position.map(|p| p.0), Some(2));
    assert!(
        e.message.contains("one-marker-maks") && e.message.contains("one-marker-max"),
        "{e}"
    );

    let e = err("format = 1\nbugs = [\"H-75345-B\", \"H-1\"]\nexpect = \"clean\"\n");
    assert_eq!(e.position, Some((2, 22)), "{e}");
    assert!(e.message.contains("H-1"));

    let e = err("format = 1\nexpect = \"clean\"\n[shape]\nfamily = \"chaty\"\n");
    assert_eq!(e.position, Some((4, 10)), "{e}");
    assert!(e.message.contains("chaty") && e.message.contains("chatty"));

    let e = err("format = 1\nexpect = \"clean\"\n\n[gateway]\ntopic = true\n");
    assert!(e.message.contains("strategy = \"gateway\""), "{e}");
    assert_eq!(e.position, Some((4, 1)), "{e}");

    let gw = "format = 1\nstrategy = \"gateway\"\nexpect = \"clean\"\n[gateway]\n";
    let e = err(&format!("{gw}session_key = \"a\"\n"));
    assert_eq!(e.position.map(|p| p.0), Some(5), "{e}");
    let e = err(&format!(
        "{gw}crashes = [{{ turn = 2, at = \"after-lunch\" }}]\n"
    ));
    assert!(
        e.message.contains("after-lunch") && e.message.contains("mid-turn:N"),
        "{e}"
    );
    assert_eq!(e.position, Some((5, 29)), "{e}");
    let e = err(&format!("{gw}restarts = [3, 2]\n"));
    assert!(e.message.contains("strictly ascending"), "{e}");
    assert_eq!(e.position, Some((5, 16)), "{e}");
    let e = err(&format!("{gw}duplicates = [-1]\n"));
    assert!(e.message.contains("out of range"), "{e}");
    let e = err(&format!("{gw}session_mode = \"sideways\"\n"));
    assert!(e.message.contains("rotate, in-place"), "{e}");
    assert_eq!(e.position, Some((5, 16)), "{e}");
    let e = err(&format!(
        "{gw}session_mode = \"rotate\"\n[agent]\nin_place = true\n"
    ));
    assert!(e.message.contains("contradicts"), "{e}");

    let e = err("format = 2\nexpect = \"clean\"\n");
    assert_eq!(e.position, Some((1, 10)));
    assert!(e.message.contains("format"));

    let e = err("format = 1\nexpect = \"clean\"\n[summarizer]\noutcomes = [\"ok\", \"oops\"]\n");
    assert_eq!(e.position, Some((4, 19)), "{e}");

    let e = err("format = 1\nexpect = \"clean\"\n[[script.turns]]\nrows = [{ role = \"user\", chars = 40 }, { role = \"tool\", chars = 9 }]\n");
    assert!(e.message.contains("pending call"), "{e}");
    assert_eq!(e.position.map(|p| p.0), Some(3), "{e}");

    let e = err("format = 1\nexpect = \"clean\"\nseed = -1\n");
    assert_eq!(e.position.map(|p| p.0), Some(3), "{e}");

    let e = err("format = 1\nexpect = \"clean\"\n[script]\nbuiltin = \"seed-005\"\n");
    assert!(e.message.contains("seed-004-six-turns"), "{e}");

    let e = err("format = 1\nexpect = { violated = \"api-valid\", within = 3 }\n");
    assert!(e.message.contains("within"), "{e}");

    let e = err("format = 1\n[micro]\nevery_n_turns = 2\n");
    assert!(e.message.contains("expect"), "{e}");

    let e = err("format = 1\nexpect = \"clean\"\nstrategy = \"batchy\"\n");
    assert_eq!(e.position, Some((3, 12)), "{e}");

    let e = err("format = 1\nexpect = \"clean\"\n[shape\n");
    assert_eq!(e.position.map(|p| p.0), Some(3), "{e}");
}

/// A micro script is sent as written: rows the clean model cannot hold (found by
/// `scripts/mutation_fuzz.py --clean-violates api-valid`) are refused at their turn, of
/// each kind; the agent loop (batch) answers calls and user rows itself and keeps them.
#[test]
fn a_micro_script_a_provider_would_refuse_is_refused_at_its_turn() {
    let turn = |rows: &str| format!("[[script.turns]]\nrows = [{rows}]\n");
    let user = "{ role = \"user\", chars = 8 }";
    let call = "{ role = \"assistant\", chars = 8, calls = [{ tool = \"t\" }] }";
    let reply = "{ role = \"assistant\", chars = 8 }";
    let tool = "{ role = \"tool\", chars = 5 }";
    let micro = |body: String| format!("{MINIMAL}strategy = \"micro\"\n{body}");
    let cases = [
        // An unanswered call: before the next user row, at the turn's end.
        (
            turn(&format!("{user}, {call}, {user}")),
            "row 1: 1 tool calls, 0 answered",
        ),
        (
            format!(
                "{}{}",
                turn(&format!("{user}, {reply}")),
                turn(&format!("{user}, {call}"))
            ),
            "row 1: 1 tool calls",
        ),
        // The user rows' order: consecutive (across turns too), not first, none.
        (
            format!("{}{}", turn(user), turn(user)),
            "row 0: two user rows in a row",
        ),
        (
            turn(&format!("{reply}, {user}")),
            "row 0: the conversation starts with an assistant row",
        ),
        (turn(""), "the script has no rows"),
    ];
    for (body, message) in cases {
        let text = micro(body);
        let e = err(&text);
        assert!(e.message.contains(message), "{text}\n{e}");
        assert!(e.position.is_some_and(|(line, _)| line >= 4), "{e}");
    }
    let fine = turn(&format!("{user}, {call}, {tool}, {reply}"));
    parse_str(&micro(format!("{fine}{fine}"))).expect("answered calls, alternating users");
    let batch = format!(
        "{MINIMAL}strategy = \"batch\"\n{}{}",
        turn(user),
        turn(user)
    );
    parse_str(&batch).expect("the agent loop answers each user row");
}

/// Contradictory summarizer sizes are refused at `max_tokens` (issue 30 row 14); each
/// alone, or equal, is accepted.
#[test]
fn min_tokens_over_max_tokens_is_refused_at_max_tokens() {
    let e = err(&format!(
        "{MINIMAL}[summarizer]\nmin_tokens = 500\nmax_tokens = 400\n"
    ));
    assert_eq!(e.position, Some((5, 14)), "{e}");
    assert!(
        e.message
            .contains("max_tokens = 400 is below min_tokens = 500"),
        "{e}"
    );
    for ok in [
        "min_tokens = 500",
        "max_tokens = 400",
        "min_tokens = 400\nmax_tokens = 400",
    ] {
        parse_str(&format!("{MINIMAL}[summarizer]\n{ok}\n")).expect(ok);
    }
}

#[test]
fn expectations_parse_in_every_form() {
    let s = parse_str("format = 1\nexpect = { violated = \"api-valid\", within_turns = 12 }\n")
        .unwrap();
    assert_eq!(
        s.expect,
        Expect::Violated {
            invariant: "api-valid".into(),
            within_turns: Some(12)
        }
    );
    let s = parse_str("format = 1\nexpect = { exit = \"liveness\" }\n").unwrap();
    assert_eq!(s.expect, Expect::Exit(OutcomeClass::Liveness));
    assert!(parse_str("format = 1\nexpect = \"dirty\"\n").is_err());
    assert!(parse_str("format = 1\nexpect = { exit = \"liveness\", within_turns = 3 }\n").is_err());
}

#[test]
fn a_builtin_story_takes_overrides_and_repeat_expands() {
    let s = parse_str(
        "format = 1\nexpect = \"clean\"\n[script]\nbuiltin = \"seed-004-six-turns\"\n[micro]\ntail_budget_tokens = 900\n",
    )
    .unwrap();
    let plan = s.spec.plan.as_ref().unwrap();
    assert_eq!(plan.micro.tail_budget_tokens, Some(900));
    assert_eq!(plan.script.as_ref().unwrap().history.len(), 8);
    assert!(plan.summarizer.reliable);

    let s = parse_str(
        "format = 1\nexpect = \"clean\"\n[[script.turns]]\nrepeat = 3\nrows = [{ role = \"user\", chars = 40 }, { role = \"assistant\", chars = 0, calls = [{ tool = \"terminal\" }] }, { role = \"tool\", kind = \"json\", chars = 90, facts = 4 }]\n",
    )
    .unwrap();
    let script = s.spec.plan.as_ref().unwrap().script.clone().unwrap();
    assert_eq!(script.turns.len(), 3);
    let rows = &script.turns[2].rows;
    assert_eq!((rows[0].facts, rows[1].facts, rows[2].facts), (1, 0, 4));
    assert_eq!(rows[1].calls[0].args_chars, ARGS_CHARS_DEFAULT);
    assert_eq!(rows[2].kind, compactsim_model::ContentKind::Json);
}

/// A recorded failing case, written and read back, is the same case with the same outcome.
#[test]
fn a_written_case_reads_back_as_the_same_case() {
    for (case, bug) in [(1, Bug::H75345B), (4, Bug::HMResume), (2, Bug::HMCursor)] {
        let spec = compactsim_harness::engine::CaseSpec {
            root_seed: u64::MAX - case as u64,
            case,
            passes: 25,
            strategy: Strategy::Micro,
            bugs: BugSet::of(&[bug]),
            plan: None,
            profile: None,
            compactor: Default::default(),
        };
        let rec = record(&spec);
        let spec = spec.with_plan(rec.plan);
        let expect = match &rec.result.outcome {
            CaseOutcome::Violation(v) => Expect::Violated {
                invariant: v[0].invariant.clone(),
                within_turns: Some(v[0].turn + 1),
            },
            CaseOutcome::Clean | CaseOutcome::Liveness(_) | CaseOutcome::Internal(_) => {
                Expect::Clean
            }
        };
        let header = Header {
            name: format!("case-{case}"),
            description: Some("a \"quoted\" description".into()),
            comments: vec!["written by a test".into()],
        };
        let text = render(&header, &spec, &expect);
        let back = parse_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back.spec, spec, "{text}");
        assert_eq!(back.expect, expect);
        assert_eq!(back.name, header.name);
        assert_eq!(back.description, header.description);
        let replay = run_case(&back.spec, Record::default());
        assert!(expect.holds(&replay), "{:?}", replay.outcome);
        assert_eq!(replay.outcome, rec.result.outcome);
    }
}

#[test]
fn the_built_in_model_skips_a_file_needing_a_policy_it_does_not_follow() {
    let chain = "format = 1\nstrategy = \"batch\"\nrequires = [\"policy:summary_chain\"]\nexpect = \"clean\"\n";
    let s = parse_str(chain).unwrap();
    assert_eq!(
        s.skip_reason(None).as_deref(),
        Some("the built-in model does not follow policy summary_chain, needed by requires")
    );
    for served in [
        "format = 1\nstrategy = \"batch\"\nrequires = [\"policy:protect_first_n\", \"hook:usage\"]\nexpect = \"clean\"\n",
        "format = 1\nstrategy = \"both\"\ninvariants = [\"head-protected\"]\nexpect = \"clean\"\n",
        MINIMAL,
    ] {
        assert_eq!(parse_str(served).unwrap().skip_reason(None), None, "{served}");
    }
}
