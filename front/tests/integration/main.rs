//! The integration tests of compactsim in one test binary: one link of the whole
//! workspace instead of one per file (each module is one former tests/*.rs file).

mod agent_scenarios;
mod agent_shrink;
mod architecture;
mod capabilities_cli;
mod common;
mod compactor_value;
mod default_unchanged;
mod diff_mode;
mod docs_catalogue;
mod docs_links;
mod efficacy_cli;
mod external_cli;
mod external_fixtures;
mod floor_replay;
mod fuzz_cli;
mod hardening;
mod judged_as_text;
mod labels_untrusted;
mod matrix_cli;
mod max_tokens;
mod merge_study_cli;
mod plan_props;
mod policies;
mod protocol_golden;
mod protocol_record;
mod protocol_v2;
mod run_cli;
mod scenario_cli;
mod scenario_compactor;
mod seeds;
mod selftest_external_cli;
mod shrink_cli;
mod sweep_cli;
mod verdicts_cli;
