//! A release profile seen through the case drawing: it changes only what its release
//! sets, and a scenario's plan still wins.

use compactsim_hermes::compactor::batch::scaffold::SYSTEM_NOTE_CHARS_RELEASED;
use compactsim_hermes::compactor::batch::BatchConfig;
use compactsim_hermes::profile::*;

#[test]
fn a_profile_changes_only_what_its_release_sets_and_a_plan_still_wins() {
    use crate::engine::draw::draw;
    use crate::engine::plan::CasePlan;
    use crate::engine::CaseSpec;
    use compactsim_hermes::bug_set::BugSet;
    use compactsim_hermes::compactor::micro::SCAFFOLD_TOKENS_DEFAULT;
    use compactsim_hermes::strategy::Strategy;
    let spec = |case, profile| CaseSpec {
        root_seed: 7,
        case,
        passes: 5,
        strategy: Strategy::Micro,
        bugs: BugSet::none(),
        plan: None,
        profile,
        compactor: Default::default(),
    };
    for case in 0..8 {
        let plain = draw(&spec(case, None)).setup;
        let iot = draw(&spec(case, Some(Profile::HermesIot0_22_2))).setup;
        assert_eq!(plain.micro.scaffold_tokens, SCAFFOLD_TOKENS_DEFAULT);
        assert_eq!(iot.micro.scaffold_tokens, IOT_0_22_2_SCAFFOLD_TOKENS);
        let mut back = iot.clone();
        assert!(iot.micro.tail_floor_when_fits && !plain.micro.tail_floor_when_fits);
        back.micro.scaffold_tokens = SCAFFOLD_TOKENS_DEFAULT;
        back.micro.tail_floor_when_fits = false;
        back.micro.defrag_needs_exchange = false;
        back.micro.tail_budget_tokens = plain.micro.tail_budget_tokens;
        back.micro.iot_tail_window_tokens = None;
        back.micro.summary_tokens_max = None;
        back.micro.cadence_runs_last = false;
        assert_eq!(
            back, plain,
            "case {case}: only the scaffold, the tail and the defrag order move"
        );
        let batch = draw(&spec(case, Some(Profile::Hermes0_19_0))).setup;
        assert_eq!(batch, plain, "case {case}: 0.19.0 has no micro");
    }
    let mut plan = CasePlan::default();
    plan.micro.scaffold_tokens = Some(300);
    let planned = spec(0, Some(Profile::HermesIot0_22_2)).with_plan(plan);
    assert_eq!(draw(&planned).setup.micro.scaffold_tokens, 300);
    let release = Profile::Hermes0_19_0;
    let batch_strategy = Strategy::ALL[1];
    assert_eq!(release.bugs(batch_strategy), HERMES_0_19_0_BUGS);
    assert!(Profile::HermesIot0_22_2.bugs(batch_strategy).is_empty());
    let mut batch = BatchConfig::default();
    assert_ne!(batch.system_note_chars, SYSTEM_NOTE_CHARS_RELEASED);
    Profile::Hermes0_19_0.tune_batch(&mut batch);
    assert_eq!(batch.system_note_chars, SYSTEM_NOTE_CHARS_RELEASED);
}
