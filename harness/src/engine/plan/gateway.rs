//! The gateway part of a plan (strategy `gateway`, the `[gateway]` scenario table): the
//! chat's topic mode and an explicit fault schedule — per turn of the case's loop,
//! whether the process restarts before it, crashes (and where), the message is delivered
//! twice, a `/compress` or `/reset` comes first, or a `/stop` comes during the turn. Like every override, it replaces what
//! the gateway's stream drew after the draw, so the stream stays where an unplanned case
//! has it. A recorded gateway case carries the whole schedule it ran.

use crate::engine::gateway::faults::{
    Crash, CrashPoint, InboundFaults, CRASH_POINTS, MID_TURN_STEP_MAX,
};
use serde::Serialize;

/// The gateway's fault schedule: the turns (of the case's loop, counted from 0 like
/// traces; a redelivery after a crash is a turn of its own) at which each event happens.
/// Every list is ascending without repeats.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GatewaySchedule {
    /// A clean restart (deploy) before the turn's message.
    pub restarts: Vec<u32>,
    /// The process crashes while handling the turn's message, at this point.
    #[serde(serialize_with = "crashes_as_names")]
    pub crashes: Vec<(u32, Crash)>,
    /// The platform delivers the turn's message a second time after it is handled.
    pub duplicates: Vec<u32>,
    /// The user sends `/compress` before the turn's message.
    pub compress: Vec<u32>,
    /// The user sends `/reset` before the turn's message.
    pub reset: Vec<u32>,
    /// The user sends `/stop` while the turn runs (it interrupts the turn only after a
    /// compaction committed in it and a provider call was answered since).
    pub stops: Vec<u32>,
}

fn crashes_as_names<S: serde::Serializer>(c: &[(u32, Crash)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(c.len()))?;
    for (turn, point) in c {
        seq.serialize_element(&(turn, crash_name(*point)))?;
    }
    seq.end()
}

/// The gateway overrides of a plan.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GatewayPlan {
    /// Telegram DM topic mode (the key has a topic binding); `None`: drawn.
    pub topic: Option<bool>,
    /// The explicit fault schedule; `None`: drawn per message.
    pub schedule: Option<GatewaySchedule>,
    /// Session hygiene's hard message limit; `None`: drawn.
    pub hygiene_message_limit: Option<u32>,
}

impl GatewayPlan {
    pub fn is_empty(&self) -> bool {
        *self == GatewayPlan::default()
    }
}

/// A crash point's name as the `[gateway]` table writes it: one of [`CRASH_POINTS`], or
/// `mid-turn:N` (transition `N` of the agent turn).
pub fn crash_name(point: Crash) -> String {
    match point {
        Crash::MidTurn(n) => format!("mid-turn:{n}"),
        Crash::At(p) => p.name().to_string(),
    }
}

/// Parses [`crash_name`]'s form.
pub fn parse_crash(name: &str) -> Result<Crash, String> {
    if let Some(&p) = CRASH_POINTS.iter().find(|p| p.name() == name) {
        return Ok(Crash::At(p));
    }
    let bad = || {
        format!(
            "unknown crash point `{name}` (known: {}, mid-turn:N with N in 0..={MID_TURN_STEP_MAX})",
            CrashPoint::ALL.map(CrashPoint::name).join(", ")
        )
    };
    let n: u32 = name
        .strip_prefix("mid-turn:")
        .ok_or_else(bad)?
        .parse()
        .map_err(|_| bad())?;
    if n > MID_TURN_STEP_MAX {
        return Err(bad());
    }
    Ok(Crash::MidTurn(n))
}

impl GatewaySchedule {
    /// The events of turn `turn`.
    pub fn at(&self, turn: u32) -> InboundFaults {
        let has = |l: &[u32]| l.binary_search(&turn).is_ok();
        InboundFaults {
            duplicate: has(&self.duplicates),
            crash: self
                .crashes
                .iter()
                .find(|(t, _)| *t == turn)
                .map(|(_, c)| *c),
            restart: has(&self.restarts),
            compress: has(&self.compress),
            reset: has(&self.reset),
            stop: has(&self.stops),
        }
    }

    /// Adds turn `turn`'s events (turns added in ascending order).
    pub fn push(&mut self, turn: u32, f: InboundFaults) {
        let add = |on: bool, l: &mut Vec<u32>| {
            if on {
                l.push(turn);
            }
        };
        add(f.restart, &mut self.restarts);
        add(f.duplicate, &mut self.duplicates);
        add(f.compress, &mut self.compress);
        add(f.reset, &mut self.reset);
        add(f.stop, &mut self.stops);
        if let Some(c) = f.crash {
            self.crashes.push((turn, c));
        }
    }

    /// Events in all.
    pub fn len(&self) -> usize {
        self.restarts.len()
            + self.crashes.len()
            + self.duplicates.len()
            + self.compress.len()
            + self.reset.len()
            + self.stops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops the events of turns `turns` and later.
    pub fn truncate(&mut self, turns: u32) {
        for l in self.lists_mut() {
            l.retain(|t| *t < turns);
        }
        self.crashes.retain(|(t, _)| *t < turns);
    }

    fn lists_mut(&mut self) -> [&mut Vec<u32>; 5] {
        [
            &mut self.restarts,
            &mut self.duplicates,
            &mut self.compress,
            &mut self.reset,
            &mut self.stops,
        ]
    }

    /// Checks each list is strictly ascending.
    pub fn validate(&self) -> Result<(), String> {
        let crash_turns: Vec<u32> = self.crashes.iter().map(|(t, _)| *t).collect();
        let lists: [(&str, &[u32]); 6] = [
            ("restarts", &self.restarts),
            ("crashes", &crash_turns),
            ("duplicates", &self.duplicates),
            ("compress", &self.compress),
            ("reset", &self.reset),
            ("stops", &self.stops),
        ];
        for (name, l) in lists {
            if l.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!(
                    "[gateway] {name} lists turns in strictly ascending order"
                ));
            }
        }
        Ok(())
    }

    /// The schedule after turns `start..start + len` of the case's loop are removed:
    /// their events go, later ones move down with their turns.
    pub fn without_turns(&self, start: u32, len: u32) -> GatewaySchedule {
        let keep = |t: u32| t < start || t >= start + len;
        let moved = |t: u32| if t >= start + len { t - len } else { t };
        let shift =
            |l: &[u32]| -> Vec<u32> { l.iter().copied().filter(|&t| keep(t)).map(moved).collect() };
        GatewaySchedule {
            restarts: shift(&self.restarts),
            crashes: self
                .crashes
                .iter()
                .filter(|(t, _)| keep(*t))
                .map(|&(t, c)| (moved(t), c))
                .collect(),
            duplicates: shift(&self.duplicates),
            compress: shift(&self.compress),
            reset: shift(&self.reset),
            stops: shift(&self.stops),
        }
    }

    /// Each single event removed, one schedule per event, with a description.
    pub fn without_each(&self) -> Vec<(String, GatewaySchedule)> {
        let mut out = Vec::new();
        const NAMES: [&str; 5] = ["restart", "duplicate", "/compress", "/reset", "/stop"];
        for (k, name) in NAMES.iter().enumerate() {
            let n = self.clone().lists_mut()[k].len();
            for i in 0..n {
                let mut s = self.clone();
                let gone = s.lists_mut()[k].remove(i);
                out.push((format!("no {name} at turn {gone}"), s));
            }
        }
        for i in 0..self.crashes.len() {
            let mut s = self.clone();
            let (t, c) = s.crashes.remove(i);
            out.push((format!("no crash ({}) at turn {t}", crash_name(c)), s));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule() -> GatewaySchedule {
        GatewaySchedule {
            restarts: vec![1, 4, 9],
            crashes: vec![
                (3, Crash::At(CrashPoint::AfterWrite)),
                (8, Crash::MidTurn(2)),
            ],
            duplicates: vec![5],
            compress: vec![],
            reset: vec![7],
            stops: vec![6],
        }
    }

    #[test]
    fn removed_turns_take_their_events_and_later_events_move_down() {
        let s = schedule().without_turns(3, 2);
        assert_eq!(s.restarts, vec![1, 7]);
        assert_eq!(s.crashes, vec![(6, Crash::MidTurn(2))]);
        assert_eq!(s.duplicates, vec![3]);
        assert_eq!(s.reset, vec![5]);
        assert_eq!(s.stops, vec![4]);
        assert_eq!(schedule().without_turns(20, 3), schedule());
        let mut cut = schedule();
        cut.truncate(5);
        assert_eq!(cut.len(), 3);
        assert!(s.at(4).stop && !s.at(3).stop);
        assert_eq!(schedule().without_each().len(), schedule().len());
    }

    #[test]
    fn events_are_looked_up_by_turn_and_crash_points_parse_back() {
        let s = schedule();
        let f = s.at(8);
        assert_eq!(f.crash, Some(Crash::MidTurn(2)));
        assert!(!f.restart && !f.duplicate && s.at(9).restart && s.at(5).duplicate);
        let mut logged = GatewaySchedule::default();
        for t in 0..10 {
            logged.push(t, s.at(t));
        }
        assert_eq!(logged, s);
        let points = CRASH_POINTS.iter().map(|&p| Crash::At(p));
        for c in points.chain([Crash::MidTurn(MID_TURN_STEP_MAX)]) {
            assert_eq!(parse_crash(&crash_name(c)), Ok(c));
        }
        assert_eq!(crash_name(Crash::At(CrashPoint::AfterWrite)), "after-write");
        assert!(parse_crash("mid-turn:13").is_err() && parse_crash("after").is_err());
    }
}
