//! Built-in scripted sessions that reproduce the stories of the seed documents. Each is a
//! case plan (a script plus the settings the story needs); a scenario file names one with
//! `[script] builtin = "<name>"` and may override any of its settings.
//!
//! `seed-004-six-turns` (seeds/004): a tool-heavy conversation of about 4,100 tokens
//! gets six more short turns with a micro pass after each. With stale markers never
//! superseded (H-75345-B) the transcript grows turn after turn (the post measured
//! 4,104 → 4,797); with the supersede fix it shrinks (4,104 → 2,572).

use crate::engine::plan::{
    build_rows, CallPlan, CasePlan, MicroOverrides, RowPlan, Script, SummarizerOverrides, TurnPlan,
};
use crate::shapes::Family;
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::rng::{stream, Stream};
use compactsim_fakes::summarizer::{Summarizer, SummarizerConfig};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::compactor::micro::{MicroCompactor, MicroConfig};
use compactsim_hermes::compactor::repair::repair;
use compactsim_model::{tokens_rough_total, ContentKind, Message, Role};

/// Turns of history before the measured six.
pub const SEED_004_HISTORY_TURNS: u32 = 8;
/// The measured turns.
pub const SEED_004_MEASURED_TURNS: u32 = 6;
/// Tail budget of the story: the newest few turns stay verbatim.
pub const SEED_004_TAIL_BUDGET_TOKENS: u32 = 800;

/// A built-in story.
#[derive(Clone, Copy, Debug)]
pub struct Story {
    pub name: &'static str,
    pub summary: &'static str,
    /// The plan: script and the settings the story needs.
    pub plan: fn() -> CasePlan,
}

/// Every built-in story.
pub const STORIES: &[Story] = &[Story {
    name: "seed-004-six-turns",
    summary: "8 tool-heavy turns of history (~4,100 tokens), then 6 short turns with a micro pass after each (tail budget 800, reliable summarizer)",
    plan: seed_004_plan,
}];

/// The story called `name`.
pub fn story(name: &str) -> Result<&'static Story, String> {
    STORIES.iter().find(|s| s.name == name).ok_or_else(|| {
        let known: Vec<&str> = STORIES.iter().map(|s| s.name).collect();
        format!(
            "unknown built-in script `{name}` (known: {})",
            known.join(", ")
        )
    })
}

/// Builds the rows of story turns with fresh ids (benches and tests build transcripts
/// with it).
pub struct ScriptBuilder {
    pub ids: IdAlloc,
}

impl ScriptBuilder {
    /// A turn: user, then (if `tool_chars` > 0) one tool call and its result, then a
    /// reply; one fact per row.
    pub fn turn(&mut self, user_chars: u32, tool_chars: u32, reply_chars: u32) -> Vec<Message> {
        build_rows(
            &turn(user_chars, tool_chars, reply_chars).rows,
            &mut self.ids,
        )
    }

    /// A fresh builder and a transcript of `messages` rows rounded down to whole turns
    /// (user, tool call, 3,000-char tool result, reply: four rows each), the fixed
    /// transcript of the benches.
    pub fn transcript(messages: usize) -> (Vec<Message>, ScriptBuilder) {
        let mut b = ScriptBuilder {
            ids: IdAlloc::default(),
        };
        let mut msgs = Vec::new();
        while msgs.len() < messages {
            msgs.extend(b.turn(400, 3_000, 600));
        }
        msgs.truncate(messages - messages % 4);
        (msgs, b)
    }
}

/// A turn: user, then (if `tool_chars` > 0) one tool call and its result, then a reply;
/// one fact per row.
fn turn(user_chars: u32, tool_chars: u32, reply_chars: u32) -> TurnPlan {
    let mut rows = vec![RowPlan::new(Role::User, ContentKind::Prose, user_chars, 1)];
    if tool_chars > 0 {
        let mut call = RowPlan::new(Role::Assistant, ContentKind::Prose, 60, 1);
        call.calls = vec![CallPlan {
            tool: "read_file".into(),
            args_chars: "{\"path\":\"src/lib.rs\"}".len() as u32,
        }];
        rows.push(call);
        rows.push(RowPlan::new(Role::Tool, ContentKind::Code, tool_chars, 1));
    }
    rows.push(RowPlan::new(
        Role::Assistant,
        ContentKind::Prose,
        reply_chars,
        1,
    ));
    TurnPlan { rows }
}

fn seed_004_script() -> Script {
    Script {
        system: None,
        history: vec![turn(120, 1_600, 200); SEED_004_HISTORY_TURNS as usize],
        turns: vec![turn(120, 0, 160); SEED_004_MEASURED_TURNS as usize],
    }
}

/// Seed 004's story as a plan: the script, tail budget 800, a pass after every turn, a
/// reliable summarizer, no restarts.
pub fn seed_004_plan() -> CasePlan {
    CasePlan {
        family: Some(Family::ToolHeavy),
        script: Some(seed_004_script()),
        summarizer: SummarizerOverrides {
            reliable: true,
            ..SummarizerOverrides::default()
        },
        summary_outcomes: Some(Vec::new()),
        restarts: Some(Vec::new()),
        micro: MicroOverrides {
            every_n_turns: Some(1),
            tail_budget_tokens: Some(SEED_004_TAIL_BUDGET_TOKENS),
            ..MicroOverrides::default()
        },
        ..CasePlan::default()
    }
}

/// Transcript tokens at the start and after each of the six measured turns, played
/// without the oracle (so the series goes on after the first violation).
pub fn seed_004_six_turns(bugs: BugSet) -> Vec<u64> {
    let script = seed_004_script();
    let mut ids = IdAlloc::default();
    let mut msgs: Vec<Message> = script
        .history
        .iter()
        .flat_map(|t| build_rows(&t.rows, &mut ids))
        .collect();
    let mut micro = MicroCompactor::new(
        MicroConfig::with_tail_budget(SEED_004_TAIL_BUDGET_TOKENS),
        bugs,
    );
    let mut summarizer =
        Summarizer::new(SummarizerConfig::reliable(), stream(4, Stream::Summarizer));
    let mut series = vec![tokens_rough_total(&msgs)];
    for (turn, rows) in (0..).zip(&script.turns) {
        msgs.extend(build_rows(&rows.rows, &mut ids));
        micro.pass(&mut msgs, turn, &mut summarizer, &mut ids);
        repair(&mut msgs);
        series.push(tokens_rough_total(&msgs));
    }
    series
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{run_case, CaseOutcome, CaseSpec, Record};
    use compactsim_hermes::bugs::Bug;
    use compactsim_hermes::strategy::Strategy;

    #[test]
    fn seed_004_grows_with_stale_markers_and_shrinks_with_supersede() {
        let buggy = seed_004_six_turns(BugSet::of(&[Bug::H75345B]));
        let fixed = seed_004_six_turns(BugSet::none());
        println!("H-75345-B on : {buggy:?}");
        println!("H-75345-B off: {fixed:?}");
        assert_eq!(buggy[0], fixed[0]);
        assert_eq!(buggy.len(), 7);
        assert!(
            buggy[6] > buggy[0],
            "stale markers must grow the transcript: {buggy:?}"
        );
        assert!(fixed[6] < fixed[0], "supersede must shrink it: {fixed:?}");
        assert!(
            fixed.windows(2).skip(1).all(|w| w[1] <= w[0] + 200),
            "{fixed:?}"
        );
    }

    fn engine_run(bugs: &[Bug]) -> crate::engine::CaseResult {
        let spec = CaseSpec {
            root_seed: 4,
            case: 0,
            passes: 25,
            strategy: Strategy::Micro,
            bugs: BugSet::of(bugs),
            plan: None,
            profile: None,
            compactor: Default::default(),
        }
        .with_plan(seed_004_plan());
        run_case(&spec, Record::default())
    }

    /// The engine plays the same story: same tokens after every turn, and the oracle
    /// stops the buggy run at the second marker.
    #[test]
    fn the_engine_plays_the_story_turn_for_turn() {
        let fixed = engine_run(&[]);
        assert_eq!(fixed.outcome, CaseOutcome::Clean);
        assert_eq!(fixed.turns, SEED_004_MEASURED_TURNS);
        assert_eq!(
            fixed.tokens_per_turn,
            seed_004_six_turns(BugSet::none())[1..]
        );
        let buggy = engine_run(&[Bug::H75345B]);
        let CaseOutcome::Violation(v) = &buggy.outcome else {
            panic!("{:?}", buggy.outcome)
        };
        assert_eq!(v[0].invariant, "one-marker-max");
        let series = seed_004_six_turns(BugSet::of(&[Bug::H75345B]));
        let n = buggy.tokens_per_turn.len();
        assert_eq!(buggy.tokens_per_turn, series[1..=n]);
        assert!(story("seed-004-six-turns").is_ok());
        assert!(story("nope").unwrap_err().contains("seed-004-six-turns"));
    }
}
