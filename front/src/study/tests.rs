//! The study driver against the committed code-review study and small fixtures.

use super::cache::PromptCache;
use super::spec::{self, StudyStrategy};
use compactsim_harness::compactor::CompactorSpec;
use compactsim_model::{Message, Role};
use compactsim_reports::study::{render_study_md, StrategySeries, StudyReport};
use std::path::{Path, PathBuf};

fn study_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/studies/code-review-3h.toml")
}

fn code_review() -> StudyReport {
    let spec = spec::load(&study_file()).expect("the committed study parses");
    super::run(&spec, &CompactorSpec::Reference).expect("the reference never fails")
}

fn series<'a>(r: &'a StudyReport, name: &str) -> &'a compactsim_reports::study::StrategySeries {
    r.strategies.iter().find(|s| s.name == name).expect(name)
}

/// Seed 004's shape: batch climbs to the trigger and stalls; micro stays far below it
/// with no batch compaction, its first pass grows the transcript (the scaffolding) and
/// it breaks even within a few passes; the gate cuts the cache breaks.
#[test]
fn code_review_study_has_the_shape_of_seed_004() {
    let r = code_review();
    let batch = &series(&r, "batch").totals;
    assert!(batch.occupancy_pct_peak >= 100.0, "{batch:?}");
    assert!(
        batch.batch_compactions >= 1 && batch.stall_s_max >= 60.0,
        "{batch:?}"
    );
    assert_eq!(batch.cache_breaks, batch.batch_compactions);
    let micro = &series(&r, "micro").totals;
    assert_eq!(micro.batch_compactions, 0);
    assert!(micro.occupancy_pct_peak < 50.0, "{micro:?}");
    assert!(micro.micro_first_pass_delta_tokens > 0, "{micro:?}");
    assert!(
        micro.micro_break_even_pass.is_some_and(|p| p <= 3),
        "{micro:?}"
    );
    assert!(micro.cache_breaks > 10 * batch.cache_breaks);
    let gated = &series(&r, "micro-gated").totals;
    assert!(gated.cache_breaks < micro.cache_breaks);
    assert!(gated.cache_break_cost_usd < micro.cache_break_cost_usd);
    assert!(series(&r, "handoff").totals.handoffs >= 1);
}

/// Every strategy replays the same conversation: the facts introduced per turn match.
#[test]
fn strategies_share_one_conversation() {
    let r = code_review();
    let introduced = |name: &str| -> Vec<u32> {
        series(&r, name)
            .turns
            .iter()
            .map(|t| t.facts_introduced)
            .collect()
    };
    let batch = introduced("batch");
    assert_eq!(batch.len(), r.turns as usize);
    for s in ["micro", "micro-gated", "handoff"] {
        assert_eq!(introduced(s), batch, "{s}");
    }
}

#[test]
fn study_summary_md_snapshot() {
    insta::assert_snapshot!(render_study_md(&code_review()));
}

fn row(id: u32, chars: u32) -> Message {
    compactsim_fakes::test_rows::row(id, Role::User, chars)
}

#[test]
fn cache_reads_the_shared_prefix_and_a_rewrite_breaks_it() {
    let mut cache = PromptCache::default();
    let mut prompt = vec![row(0, 400), row(1, 400)];
    let first = cache.request(&prompt);
    assert_eq!(
        (first.cached_tokens, first.uncached_tokens, first.broke),
        (0, 200, false)
    );
    prompt.push(row(2, 400));
    let appended = cache.request(&prompt);
    assert_eq!(
        (appended.cached_tokens, appended.uncached_tokens),
        (200, 100)
    );
    assert!(!appended.broke);
    prompt[1] = row(3, 40); // a splice: row 1 replaced by a marker
    let broken = cache.request(&prompt);
    assert!(broken.broke);
    assert_eq!((broken.cached_tokens, broken.recached_tokens), (100, 100));
}

#[test]
fn bad_study_values_name_file_line_and_column() {
    let text = std::fs::read_to_string(study_file()).unwrap();
    let bad = text.replace("turns = 140", "turns = 0");
    let e = spec::parse(Path::new("s.toml"), &bad)
        .unwrap_err()
        .to_string();
    let line = bad.lines().position(|l| l.starts_with("turns =")).unwrap() + 1;
    assert!(e.starts_with(&format!("s.toml:{line}:1: turns = 0")), "{e}");
    let unknown = text.replace("[pricing]", "[pricing]\nbogus = 1");
    let e = spec::parse(Path::new("s.toml"), &unknown)
        .unwrap_err()
        .to_string();
    assert!(e.contains("bogus") && e.starts_with("s.toml:"), "{e}");
    let family = text.replace("\"code-review\"", "\"chatty\"");
    assert!(spec::parse(Path::new("s.toml"), &family).is_err());
    assert_eq!(
        spec::parse(Path::new("s.toml"), &text).unwrap().strategies[3],
        StudyStrategy::Handoff
    );
}

/// Contradictory settings are refused where they are written (issue 30 row 14).
#[test]
fn a_strategy_twice_or_min_tokens_over_max_tokens_is_refused_at_its_line() {
    let text = std::fs::read_to_string(study_file()).unwrap();
    let line_of = |t: &str, key: &str| t.lines().position(|l| l.starts_with(key)).unwrap() + 1;
    let twice = text.replace(
        "strategies = [\"batch\",",
        "strategies = [\"batch\", \"batch\",",
    );
    let e = spec::parse(Path::new("s.toml"), &twice)
        .unwrap_err()
        .to_string();
    let line = line_of(&twice, "strategies =");
    assert!(
        e.starts_with(&format!(
            "s.toml:{line}:1: strategy `batch` is listed twice"
        )),
        "{e}"
    );
    let inverted = text.replace("max_tokens = 4000", "max_tokens = 63");
    let e = spec::parse(Path::new("s.toml"), &inverted)
        .unwrap_err()
        .to_string();
    let line = line_of(&inverted, "max_tokens =");
    assert!(
        e.starts_with(&format!(
            "s.toml:{line}:1: max_tokens = 63 is outside 64..="
        )),
        "{e}"
    );
}

/// Pins `study.json`'s schema version and every strategy's totals (field names and
/// values): a change to the model or the format shows here.
#[test]
fn study_json_totals_snapshot() {
    let r = code_review();
    let totals: Vec<_> = r.strategies.iter().map(|s| (&s.name, &s.totals)).collect();
    insta::assert_json_snapshot!((r.schema_version, totals));
}

/// micro-gated's description says the gate was not measured exactly when its series is
/// micro's (an adapter that ignores `reclaim_gate_tokens`), and only then.
#[test]
fn a_gated_series_equal_to_micro_is_described_as_not_gated() {
    let r = code_review();
    let gated = series(&r, "micro-gated").clone();
    let kept = super::note_gate_not_applied(r.strategies.clone());
    assert_eq!(series_named(&kept, "micro-gated"), &gated);
    assert!(!gated.description.contains(super::GATE_NOT_APPLIED));
    let mut twice_micro = r.strategies.clone();
    let at = twice_micro
        .iter()
        .position(|s| s.name == "micro-gated")
        .unwrap();
    twice_micro[at] = StrategySeries {
        name: "micro-gated".into(),
        description: gated.description.clone(),
        ..series(&r, "micro").clone()
    };
    let noted = super::note_gate_not_applied(twice_micro);
    let d = &series_named(&noted, "micro-gated").description;
    assert!(
        d.starts_with(&gated.description) && d.ends_with(super::GATE_NOT_APPLIED),
        "{d}"
    );
    assert!(!series_named(&noted, "micro")
        .description
        .contains(super::GATE_NOT_APPLIED));
}

fn series_named<'a>(all: &'a [StrategySeries], name: &str) -> &'a StrategySeries {
    all.iter().find(|s| s.name == name).expect(name)
}
