//! persisted-equals-live's kept state and fast path judge every history as the plain
//! checker of session 7 did (kept here as the reference): the same verdicts, the same
//! messages, on random violating and clean histories.

use super::ids::Lcg;
use super::persisted::PersistedEqualsLive;
use super::{compression_tip, GatewayInvariant, GatewayStep};
use compactsim_model::{
    GatewayEvent, MsgId, StoreSnapshot, StoredRow, StoredSession, TurnOutcome, Witness,
};
use std::collections::{BTreeMap, BTreeSet};

/// The plain checker: every session's ids compared by index, a set of every id ever
/// stored, the active rows collected and sorted every turn.
#[derive(Default)]
struct Plain {
    stored: BTreeMap<u32, Vec<MsgId>>,
    ever: BTreeSet<MsgId>,
}

impl Plain {
    fn observe(&mut self, s: &GatewayStep<'_>) -> Option<(String, Witness)> {
        let GatewayEvent::TurnDone {
            key,
            live,
            outcome,
            turn_rows,
            ..
        } = s.event
        else {
            return None;
        };
        for session in &s.store.sessions {
            let seen = self.stored.entry(session.id).or_default();
            let lost = seen
                .iter()
                .enumerate()
                .find(|(i, id)| session.rows().get(*i).map(|r| r.id) != Some(**id));
            if let Some((_, id)) = lost {
                return Some((
                    format!("row {} was deleted from session {}", id.0, session.id),
                    Witness::default(),
                ));
            }
            let new = &session.rows()[seen.len()..];
            seen.extend(new.iter().map(|r| r.id));
            self.ever.extend(new.iter().map(|r| r.id));
        }
        if *outcome == TurnOutcome::Finished {
            let lost: Vec<u32> = turn_rows
                .iter()
                .filter(|r| !self.ever.contains(r))
                .map(|r| r.0)
                .collect();
            if !lost.is_empty() {
                return Some((
                    format!("{} rows of the finished turn were never stored", lost.len()),
                    Witness::default().fact(format!("rows {:?}", &lost[..lost.len().min(8)])),
                ));
            }
        }
        let mapped = s.store.binding(key).or(s.store.route(key))?;
        let tip = compression_tip(s.store, mapped)?;
        let active = s.store.session(tip)?.active_ids();
        let mut sorted = active.clone();
        sorted.sort();
        let duplicates = sorted.windows(2).filter(|w| w[0] == w[1]).count();
        if duplicates > 0 {
            return Some((
                format!("session {tip} holds {duplicates} duplicate active rows"),
                Witness::default(),
            ));
        }
        (active != *live).then(|| {
            let missing = live
                .iter()
                .filter(|r| sorted.binary_search(r).is_err())
                .count();
            let extra = active.iter().filter(|r| !live.contains(r)).count();
            (
                format!(
                    "session {tip} stores {} active rows, the live list has {} ({missing} missing, {extra} extra)",
                    active.len(),
                    live.len()
                ),
                Witness::default(),
            )
        })
    }
}

const KEY: &str = "k";
const HISTORY_STEPS: u32 = 3_000;

fn row(id: u32) -> StoredRow {
    StoredRow {
        id: MsgId(id),
        active: true,
        compacted: false,
    }
}

/// One random change to `store` as a gateway (or a bug of it) makes them.
fn mutate(g: &mut Lcg, store: &mut StoreSnapshot, next_id: &mut u32) {
    let n = store.sessions.len();
    let s = &mut store.sessions[n - 1];
    match g.below(10) {
        0..=3 => {
            for _ in 0..=g.below(3) {
                s.append([row(*next_id)]);
                *next_id += 1;
            }
        }
        4 => {
            s.restate_from(0, |r| r.active.then_some((false, true)));
            s.append([row(*next_id - 1)]);
        }
        5 if !s.rows().is_empty() => {
            let at = g.below(s.rows().len() as u64) as usize;
            s.append([s.rows()[at]]); // a duplicate (active or not)
        }
        6 if g.below(6) == 0 && !s.rows().is_empty() => {
            let at = g.below(s.rows().len() as u64) as usize;
            let mut rows = s.rows().to_vec();
            rows.remove(at); // a deleted row
            s.replace(rows);
        }
        8 if g.below(3) == 0 && !s.rows().is_empty() => {
            // A row's flags flipped (no row deleted): only a tail is re-read.
            let at = g.below(s.rows().len() as u64) as usize;
            let mut first = true;
            s.restate_from(at, |r| {
                std::mem::take(&mut first).then_some((!r.active, r.compacted))
            });
        }
        7 if g.below(4) == 0 => {
            let carried: Vec<StoredRow> = s.rows().iter().filter(|r| r.active).copied().collect();
            s.ended = true;
            let id = n as u32;
            store
                .sessions
                .push(StoredSession::new(id, Some(id - 1), carried));
        }
        _ => {}
    }
}

/// The live list: the tip's active ids, sometimes off by one row.
fn live_of(g: &mut Lcg, store: &StoreSnapshot, next_id: u32) -> Vec<MsgId> {
    let mut live = store.sessions.last().expect("a session").active_ids();
    match g.below(12) {
        0 if !live.is_empty() => {
            live.pop();
        }
        1 => live.push(MsgId(next_id + 5)),
        2 if live.len() > 1 => live.swap(0, 1),
        3 if !live.is_empty() => live.push(live[0]),
        _ => {}
    }
    live
}

#[test]
fn kept_state_and_the_fast_path_judge_as_the_plain_checker() {
    let mut g = Lcg(11);
    let (mut fast, mut plain) = (PersistedEqualsLive::default(), Plain::default());
    let mut store = StoreSnapshot {
        routes: vec![(KEY.into(), 0)],
        sessions: vec![StoredSession::new(0, None, vec![row(0)])],
        ..StoreSnapshot::default()
    };
    let mut next_id = 1;
    let (mut kinds, mut clean) = (BTreeSet::new(), 0);
    for step in 0..HISTORY_STEPS {
        mutate(&mut g, &mut store, &mut next_id);
        let mut turn_rows = vec![MsgId(next_id - 1)];
        if g.below(10) == 0 {
            turn_rows.push(MsgId(next_id + 9)); // never stored
        }
        let outcome = match g.below(3) {
            0 => TurnOutcome::Failed,
            _ => TurnOutcome::Finished,
        };
        let event = GatewayEvent::TurnDone {
            turn: step,
            key: KEY.into(),
            inbound: 1,
            user: turn_rows[0],
            turn_rows,
            outcome,
            compacted: false,
            overflow: false,
            live: live_of(&mut g, &store, next_id),
        };
        let s = GatewayStep {
            step,
            event: &event,
            store: &store,
        };
        let (a, b) = (fast.observe(&s), plain.observe(&s));
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "step {step}");
        if let Some((message, _)) = a {
            let kind = ["deleted", "never stored", "duplicate", "live list"]
                .into_iter()
                .find(|k| message.contains(k));
            kinds.insert(kind.expect("a known message"));
            // A violation ends a case: the next history starts over (on this store).
            (fast, plain) = (PersistedEqualsLive::default(), Plain::default());
        } else {
            clean += 1;
        }
    }
    assert_eq!(kinds.len(), 4, "every kind of violation: {kinds:?}");
    assert!(clean > 200, "{clean} clean steps");
}
