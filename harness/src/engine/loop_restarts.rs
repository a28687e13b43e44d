//! Process restarts between the turns of a `both` case (a batch case never restarts):
//!
//! - a chance per turn drawn from the case's restart rate on its own stream
//!   (`Stream::LoopRestarts`, added after the other streams were fixed);
//! - the marker-restart knob (`Stream::MarkerRestart`, added after every other stream
//!   was fixed): in some cases the process restarts right after the first micro marker
//!   appears. A young marker still lies in the verbatim tail, the one place a restarted
//!   micro-compaction may not find it (IOT-0.22.2-M2 rehydrates only from a summary
//!   inside the compressible window); per-turn restarts rarely land that early.
//!
//! A plan that lists restart turns overrides both (the draws happen either way, so the
//! streams stay in step); a recorded case lists every restart it saw.

use super::CaseSpec;
use compactsim_fakes::rng::{chance, SimRng};
use compactsim_hermes::strategy::Strategy;
use compactsim_model::Message;

/// Share of `both` cases that restart right after their first micro marker, per mille.
pub const MARKER_RESTART_ON_PER_MILLE: u32 = 150;

#[derive(Clone)]
pub(crate) struct LoopRestarts {
    rng: SimRng,
    per_mille: u32,
    /// The marker-restart knob is on and has not fired yet.
    after_first_marker: bool,
}

impl LoopRestarts {
    /// The restarts of `spec`'s drawn case (`batch` or `both`): `restart_per_mille` per
    /// turn (`both` only), its `marker_restart` knob and its loop-restart stream `rng`
    /// (see [`super::draw::draw`]).
    pub(crate) fn of(
        spec: &CaseSpec,
        restart_per_mille: u32,
        marker_restart: bool,
        rng: SimRng,
    ) -> Self {
        let both = matches!(spec.strategy, Strategy::Both(_));
        LoopRestarts {
            rng,
            per_mille: if both { restart_per_mille } else { 0 },
            after_first_marker: marker_restart,
        }
    }

    /// Whether the process restarts before `turn` (`possible`: not the session's first),
    /// `msgs` being the list the previous turn left.
    pub(crate) fn due(
        &mut self,
        spec: &CaseSpec,
        turn: u32,
        possible: bool,
        msgs: &[Message],
    ) -> bool {
        let mut drawn = possible && chance(&mut self.rng, self.per_mille);
        if self.after_first_marker && possible && msgs.iter().any(Message::is_micro_marker) {
            self.after_first_marker = false;
            drawn = true;
        }
        spec.plan
            .as_deref()
            .map_or(drawn, |p| possible && p.restart(turn, drawn))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::draw::draw;
    use compactsim_fakes::test_rows::row;
    use compactsim_model::Role;

    const CASES: u32 = 2_000;

    fn spec(case: u32, strategy: &str) -> CaseSpec {
        CaseSpec::drawn(case, strategy)
    }

    /// The restarts of `s`'s drawn case at `per_mille` per turn.
    fn drawn(s: &CaseSpec, per_mille: u32) -> LoopRestarts {
        let c = draw(s);
        LoopRestarts::of(
            s,
            per_mille,
            c.marker_restart,
            c.streams.loop_restarts.unwrap(),
        )
    }

    fn with_marker() -> Vec<Message> {
        let mut marker = row(3, Role::Assistant, 400);
        marker.flags.summary_marker = true;
        marker.flags.micro_marker = true;
        vec![row(1, Role::User, 40), marker, row(4, Role::User, 40)]
    }

    /// The turns before which a case with no per-turn restarts restarts, the list
    /// showing a micro marker from `marker_from` on.
    fn restarts(s: &CaseSpec, marker_from: u32) -> Vec<u32> {
        let (plain, marked) = (vec![row(1, Role::User, 40)], with_marker());
        let mut r = drawn(s, 0);
        (0..12)
            .filter(|&t| r.due(s, t, t > 0, if t >= marker_from { &marked } else { &plain }))
            .collect()
    }

    #[test]
    fn some_both_cases_restart_once_right_after_their_first_marker() {
        let mut knob = 0;
        for case in 0..CASES {
            // A micro case draws no loop-restart stream (its world restarts on its own).
            assert!(draw(&spec(case, "micro")).streams.loop_restarts.is_none());
            assert_eq!(restarts(&spec(case, "batch"), 4), Vec::<u32>::new());
            let s = spec(case, "both");
            let got = restarts(&s, 4);
            if got.is_empty() {
                assert_eq!(restarts(&s, 0), Vec::<u32>::new());
                continue;
            }
            knob += 1;
            assert_eq!(
                got,
                vec![4],
                "once, before the first turn that sees a marker"
            );
            // Never before the session's first turn: the first possible turn instead.
            assert_eq!(restarts(&s, 0), vec![1]);
        }
        let share = knob * 1000 / CASES;
        assert!(
            share.abs_diff(MARKER_RESTART_ON_PER_MILLE) < 40,
            "{share} per mille"
        );
    }

    #[test]
    fn the_knob_leaves_the_per_turn_draws_in_step() {
        let s = (0..CASES)
            .map(|c| spec(c, "both"))
            .find(|s| !restarts(s, 4).is_empty())
            .expect("a case with the knob");
        let per_turn = |marker_from| {
            let mut r = drawn(&s, 300);
            let marked = with_marker();
            let plain = vec![row(1, Role::User, 40)];
            (0..40)
                .filter(|&t| {
                    r.due(
                        &s,
                        t,
                        t > 0,
                        if t >= marker_from { &marked } else { &plain },
                    )
                })
                .collect::<Vec<u32>>()
        };
        let (without, with) = (per_turn(u32::MAX), per_turn(4));
        let mut expected = without.clone();
        if !expected.contains(&4) {
            expected.push(4);
            expected.sort_unstable();
        }
        assert_eq!(with, expected);
    }
}
