//! Each gateway invariant fires on a violating history and stays quiet on a clean one.

use super::*;
use compactsim_model::{MsgId, StoredRow, StoredSession, TurnOutcome};

const KEY: &str = "agent:main:telegram:dm:42";

fn session(id: u32, parent: Option<u32>, rows: &[u32]) -> StoredSession {
    let rows = rows
        .iter()
        .map(|r| StoredRow {
            id: MsgId(*r),
            active: true,
            compacted: false,
        })
        .collect();
    StoredSession::new(id, parent, rows)
}

fn store(sessions: Vec<StoredSession>, route: u32, binding: Option<u32>) -> StoreSnapshot {
    StoreSnapshot {
        routes: vec![(KEY.into(), route)],
        bindings: binding.map(|b| vec![(KEY.into(), b)]).unwrap_or_default(),
        sessions,
        delivered: [1].into(),
    }
}

fn ids(v: &[u32]) -> Vec<MsgId> {
    v.iter().map(|i| MsgId(*i)).collect()
}

fn done(outcome: TurnOutcome, compacted: bool, turn_rows: &[u32], live: &[u32]) -> GatewayEvent {
    GatewayEvent::TurnDone {
        turn: 1,
        key: KEY.into(),
        inbound: 1,
        user: MsgId(turn_rows[0]),
        turn_rows: ids(turn_rows),
        outcome,
        compacted,
        overflow: outcome == TurnOutcome::Exhausted,
        live: ids(live),
    }
}

fn started() -> GatewayEvent {
    GatewayEvent::TurnStarted {
        turn: 1,
        key: KEY.into(),
        inbound: 1,
        user: MsgId(5),
    }
}

fn loaded(session: u32, rows: &[u32]) -> GatewayEvent {
    GatewayEvent::Loaded {
        turn: 2,
        key: KEY.into(),
        session,
        rows: ids(rows),
    }
}

/// The violations of invariant `only` over `history`.
pub(super) fn violations(
    only: &str,
    history: &[(GatewayEvent, StoreSnapshot)],
) -> Vec<compactsim_model::Violation> {
    let mut o = GatewayOracle::with_only(&[only]);
    let mut out = Vec::new();
    for (i, (event, store)) in history.iter().enumerate() {
        let s = GatewayStep {
            step: i as u32,
            event,
            store,
        };
        out.extend(o.observe(&s));
    }
    out
}

/// The ids of the invariants broken over `history`.
fn run(only: &str, history: &[(GatewayEvent, StoreSnapshot)]) -> Vec<String> {
    violations(only, history)
        .into_iter()
        .map(|v| v.invariant)
        .collect()
}

#[test]
fn session_id_persisted_fires_on_a_route_left_on_a_rotated_session() {
    let rotated = vec![session(0, None, &[0, 1, 2]), session(1, Some(0), &[0, 9])];
    let bad = store(rotated.clone(), 0, None);
    let good = store(rotated, 1, None);
    let ev = done(TurnOutcome::Finished, true, &[2], &[0, 9]);
    assert_eq!(
        run("session-id-persisted", &[(ev.clone(), bad.clone())]),
        ["session-id-persisted"]
    );
    assert!(run("session-id-persisted", &[(ev, good)]).is_empty());
    assert_eq!(
        run("session-id-persisted", &[(loaded(0, &[0, 1, 2]), bad)]).len(),
        1
    );
}

#[test]
fn session_id_persisted_fires_on_a_parent_cycle_and_stays_quiet_on_a_chain() {
    let ev = done(TurnOutcome::Finished, false, &[2], &[2]);
    // Sessions 5 -> 6 -> 5 (each the other's parent) with no child of 5 that is not an
    // ancestor too: the route names a session of a cycle.
    let looped = vec![session(5, Some(6), &[2]), session(6, Some(5), &[])];
    let witnessed = violations(
        "session-id-persisted",
        &[(ev.clone(), store(looped, 5, None))],
    );
    assert_eq!(witnessed.len(), 1, "{witnessed:?}");
    assert!(witnessed[0]
        .message
        .contains("session 5 is its own ancestor"));
    let chain = vec![
        session(7, None, &[]),
        session(8, Some(7), &[]),
        session(9, Some(8), &[2]),
    ];
    assert!(run("session-id-persisted", &[(ev, store(chain, 9, None))]).is_empty());
}

#[test]
fn exhausted_resets_clean_fires_on_a_binding_left_on_the_exhausted_session() {
    let sessions = vec![session(0, None, &[0, 1, 2]), session(1, None, &[0])];
    let ev = done(TurnOutcome::Exhausted, false, &[3], &[0]);
    let before = store(sessions[..1].to_vec(), 0, Some(0));
    let bad = store(sessions.clone(), 1, Some(0));
    let good = store(sessions, 1, Some(1));
    let id = "exhausted-resets-clean";
    assert_eq!(
        run(id, &[(started(), before.clone()), (ev.clone(), bad)]),
        [id]
    );
    assert!(run(
        id,
        &[(started(), before.clone()), (ev.clone(), good.clone())]
    )
    .is_empty());
    // The next load must read the reset session.
    assert_eq!(
        run(
            id,
            &[
                (started(), before),
                (ev, good.clone()),
                (loaded(0, &[0, 1, 2]), good)
            ]
        ),
        [id]
    );
}

#[test]
fn failed_turn_not_persisted_fires_when_the_failed_turns_rows_are_stored() {
    let id = "failed-turn-not-persisted";
    let bad = store(vec![session(0, None, &[0, 1, 2, 3])], 0, None);
    let good = store(vec![session(0, None, &[0, 1, 2])], 0, None);
    let ev = done(TurnOutcome::Exhausted, false, &[3, 4], &[0]);
    assert_eq!(run(id, &[(ev.clone(), bad.clone())]), [id]);
    assert!(run(id, &[(ev, good)]).is_empty());
    // A compaction during the turn persisted it: not judged.
    assert!(run(
        id,
        &[(done(TurnOutcome::Failed, true, &[3], &[0, 3]), bad.clone())]
    )
    .is_empty());
    // A transient failure keeps its user row (#7100), but nothing after it.
    let transient = done(TurnOutcome::Failed, false, &[3, 4], &[0, 1, 2, 3]);
    assert!(run(id, &[(transient.clone(), bad)]).is_empty());
    let more = store(vec![session(0, None, &[0, 1, 2, 3, 4])], 0, None);
    assert_eq!(run(id, &[(transient, more)]), [id]);
    // An overflow failure (the failing call was over the window) keeps nothing.
    let mut overflow = done(TurnOutcome::Failed, false, &[3, 4], &[0, 1, 2]);
    if let GatewayEvent::TurnDone { overflow: o, .. } = &mut overflow {
        *o = true;
    }
    let user_kept = store(vec![session(0, None, &[0, 1, 2, 3])], 0, None);
    assert_eq!(run(id, &[(overflow, user_kept)]), [id]);
    // Rows left in a session the key no longer names (the exhausted one) are not judged.
    let reset = store(
        vec![session(0, None, &[0, 1, 2, 3]), session(1, None, &[0])],
        1,
        None,
    );
    assert!(run(
        id,
        &[(done(TurnOutcome::Exhausted, false, &[3], &[0]), reset)]
    )
    .is_empty());
}

#[test]
fn loaded_is_compacted_fires_when_a_load_returns_rows_a_compaction_removed() {
    let id = "loaded-is-compacted";
    let s = store(vec![session(0, None, &[0, 1, 2])], 0, None);
    let first = done(TurnOutcome::Finished, false, &[1], &[0, 1, 2]);
    let compacted = done(TurnOutcome::Finished, true, &[3], &[0, 9, 3]);
    let history = |rows: &[u32]| {
        vec![
            (first.clone(), s.clone()),
            (compacted.clone(), s.clone()),
            (loaded(0, rows), s.clone()),
        ]
    };
    assert_eq!(run(id, &history(&[0, 1, 2])), [id]);
    assert!(run(id, &history(&[0, 9, 3])).is_empty());
}

#[test]
fn persisted_equals_live_fires_on_duplicates_a_mismatch_and_a_deleted_row() {
    let id = "persisted-equals-live";
    let ev = done(TurnOutcome::Finished, false, &[2], &[0, 1, 2]);
    let good = store(vec![session(0, None, &[0, 1, 2])], 0, None);
    assert!(run(id, &[(ev.clone(), good.clone())]).is_empty());
    let dup = store(vec![session(0, None, &[0, 1, 2, 1, 2])], 0, None);
    assert_eq!(run(id, &[(ev.clone(), dup)]), [id]);
    let short = store(vec![session(0, None, &[0, 1])], 0, None);
    assert_eq!(run(id, &[(ev.clone(), short.clone())]), [id]);
    let shorter = store(vec![session(0, None, &[0])], 0, None);
    let ev_short = done(TurnOutcome::Finished, false, &[2], &[0]);
    assert_eq!(
        run(id, &[(ev.clone(), good.clone()), (ev_short, shorter)]),
        [id]
    );
    // A finished turn's row summarized away before it was ever stored (H-48584).
    let summarized = done(TurnOutcome::Finished, true, &[2, 3], &[0, 1, 2]);
    assert_eq!(run(id, &[(summarized, good.clone())]), [id]);
    let stored = done(TurnOutcome::Finished, true, &[2], &[0, 1, 2]);
    assert!(run(id, &[(stored, good)]).is_empty());
}

#[test]
fn recall_once_fires_on_a_row_both_active_and_archived() {
    let id = "recall-once";
    let ev = done(TurnOutcome::Finished, true, &[2], &[0, 9, 2]);
    let row = |r: u32, active: bool, compacted: bool| StoredRow {
        id: MsgId(r),
        active,
        compacted,
    };
    let mut good = store(vec![session(0, None, &[])], 0, None);
    // 1 archived; 0 and 2 superseded and carried into the new active set.
    good.sessions[0].replace(vec![
        row(0, false, false),
        row(1, false, true),
        row(2, false, false),
        row(0, true, false),
        row(9, true, false),
        row(2, true, false),
    ]);
    assert!(run(id, &[(ev.clone(), good.clone())]).is_empty());
    let mut bad = good;
    let mut at = 0;
    bad.sessions[0].restate_from(2, |r| {
        at += 1;
        (at == 1).then_some((r.active, true)) // the carried tail archived too
    });
    assert_eq!(run(id, &[(ev, bad)]), [id]);
}

#[test]
fn delivery_invariants_fire_on_a_rerun_and_an_early_ack() {
    let s = store(vec![session(0, None, &[0])], 0, None);
    assert_eq!(
        run("idempotent-delivery", &[(started(), s.clone())]),
        ["idempotent-delivery"]
    );
    let mut fresh = s.clone();
    fresh.delivered.clear();
    assert!(run("idempotent-delivery", &[(started(), fresh.clone())]).is_empty());
    let ack = GatewayEvent::Acked {
        turn: 1,
        inbound: 1,
    };
    assert_eq!(
        run("persist-before-ack", &[(ack.clone(), fresh)]),
        ["persist-before-ack"]
    );
    assert!(run("persist-before-ack", &[(ack, s)]).is_empty());
}

#[test]
fn the_gateway_catalogue_has_unique_ids_and_a_cycle_is_no_tip() {
    let all = gateway_catalogue();
    let mut ids: Vec<&str> = all.iter().map(|i| i.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 8);
    let looped = store(
        vec![session(0, Some(1), &[]), session(1, Some(0), &[])],
        0,
        None,
    );
    assert_eq!(compression_tip(&looped, 0), None);
}
