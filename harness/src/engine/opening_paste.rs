//! The opening-paste knob, drawn from its own stream (`Stream::OpeningPaste`), added after
//! every other stream was fixed: in some agent-loop cases (`batch`, `both`) the first
//! prompt of the session is a giant paste (a whole file or log) whose rough size alone
//! is just over the compaction trigger. A handful of rows then reaches the trigger, the
//! only situation where the message-count preflight gate shows (H-27404: the gate opens
//! above 24 rows, so a session that starts with a giant paste is never compacted at
//! turn start). A case without the knob draws exactly as before; with it, only turn 0's
//! prompt changes size and text (its id, kind and facts are drawn as without it).
//! Not drawn for resumed sessions (their first prompt is loaded history), micro cases
//! (no preflight) nor gateway cases (measured on the gateway's own generators).
//! Drawn in [`super::draw`] (`CaseSetup::shape.features.opening_paste`).

/// Share of agent-loop cases whose session opens with a giant paste, per mille.
pub const OPENING_PASTE_ON_PER_MILLE: u32 = 100;
/// The paste's rough size, per mille of the trigger: the drawn range.
pub const OPENING_PASTE_PER_MILLE_OF_TRIGGER: (u32, u32) = (1_020, 1_150);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::draw::draw;
    use crate::engine::CaseSpec;
    use compactsim_hermes::compactor::threshold;
    use compactsim_hermes::strategy::Strategy;

    const CASES: u64 = 2_000;

    #[test]
    fn only_some_fresh_agent_loop_cases_open_with_a_paste_over_their_trigger() {
        let spec = CaseSpec::drawn;
        let era = Strategy::parse("both").unwrap().loop_options().unwrap().era;
        let mut pastes = 0u64;
        for case in 0..CASES as u32 {
            for other in ["micro", "gateway"] {
                let c = draw(&spec(case, other));
                assert_eq!(c.setup.shape.features.opening_paste, None, "{other}");
            }
            let c = draw(&spec(case, "both"));
            let Some(p) = c.setup.shape.features.opening_paste else {
                continue;
            };
            pastes += 1;
            assert_eq!(c.agent.unwrap().params.resume_fill_per_mille, 0);
            let window = c.setup.shape.context_length;
            let trigger = threshold::derive(window, era.threshold_config()).trigger_tokens as u64;
            let tokens = p.chars as u64 / 4;
            assert!(tokens * 1000 >= trigger * 1_020 && tokens * 1000 <= trigger * 1_150);
        }
        // Drawn in 10 % of the cases, of which the fresh sessions keep it.
        let share = pastes * 1000 / CASES;
        assert!(
            (20..=OPENING_PASTE_ON_PER_MILLE as u64 + 30).contains(&share),
            "{share}"
        );
    }
}
