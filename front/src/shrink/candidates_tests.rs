use super::*;

#[test]
fn chunks_halve_from_the_end() {
    assert_eq!(chunks(1), vec![(0, 1)]);
    assert_eq!(
        chunks(4),
        vec![(2, 2), (0, 2), (3, 1), (2, 1), (1, 1), (0, 1)]
    );
    assert_eq!(chunks(5)[..2], [(2, 3), (0, 2)]);
    assert!(chunks(0).is_empty());
    for n in 1..40 {
        assert!(chunks(n).iter().all(|&(s, l)| l >= 1 && s + l <= n));
        let singles: Vec<usize> = chunks(n).iter().filter(|c| c.1 == 1).map(|c| c.0).collect();
        assert!(singles.ends_with(&(0..n).rev().collect::<Vec<_>>()), "{n}");
    }
}

fn row(role: Role) -> RowPlan {
    RowPlan::new(role, compactsim_model::ContentKind::Prose, 40, 1)
}

fn plan_of(turns: Vec<Vec<Role>>) -> CasePlan {
    CasePlan {
        script: Some(Script {
            turns: turns
                .into_iter()
                .map(|t| TurnPlan {
                    rows: t.into_iter().map(row).collect(),
                })
                .collect(),
            ..Script::default()
        }),
        restarts: Some(vec![1, 3]),
        ..CasePlan::default()
    }
}

#[test]
fn merges_keep_every_micro_row_and_one_user_row_per_agent_turn() {
    use Role::{Assistant as A, User as U};
    let p = plan_of(vec![vec![U, A], vec![U, A], vec![U, A, U, A], vec![U, A]]);
    let micro = built(merged(&p, Strategy::Micro));
    assert_eq!(micro[0].change, "merge turns 0..3 into one");
    let all = micro[0].plan.script.as_ref().unwrap();
    assert_eq!((all.turns.len(), all.rows()), (1, 10));
    assert_eq!(micro[0].plan.restarts, Some(vec![]), "restarts inside go");
    let last_two = &micro[1];
    assert_eq!(last_two.change, "merge turns 2..3 into one");
    assert_eq!(last_two.plan.restarts, Some(vec![1]));
    assert!(micro
        .iter()
        .all(|c| c.plan.script.as_ref().unwrap().rows() == 10));
    let batch = built(merged(&p, Strategy::parse("batch").unwrap()));
    let s = batch[1].plan.script.as_ref().unwrap();
    assert_eq!(s.turns.len(), 3);
    let roles: Vec<Role> = s.turns[2].rows.iter().map(|r| r.role).collect();
    assert_eq!(
        roles,
        [U, A, U, A, A],
        "the merged turn's own user rows stay"
    );
    assert!(merged(&plan_of(vec![vec![U, A]]), Strategy::Micro).is_empty());
}

#[test]
fn a_merged_micro_turn_loses_its_later_exchanges_one_by_one() {
    use Role::{Assistant as A, Tool as T, User as U};
    let mut p = plan_of(vec![vec![U, A, U, A, U, A]]);
    let turn = &mut p.script.as_mut().unwrap().turns[0];
    turn.rows[3].calls = vec![compactsim_harness::engine::plan::CallPlan {
        tool: "terminal".into(),
        args_chars: 2,
    }];
    turn.rows.insert(4, row(T));
    assert_eq!(later_exchanges(turn), vec![(2, 3), (5, 2)]);
    let drops: Vec<String> = rounds(&p).into_iter().map(|c| c.change).collect();
    assert_eq!(
        drops[..2],
        [
            "turn 0: drop the exchange at row 5",
            "turn 0: drop the exchange at row 2"
        ]
    );
}

#[test]
fn restarts_follow_their_turns() {
    assert_eq!(shift_restarts(&[1, 3, 5, 8], 2, 3), vec![1, 2, 5]);
    assert_eq!(shift_restarts(&[2, 4], 0, 2), vec![2]);
    assert_eq!(shift_restarts(&[1], 0, 1), Vec::<u32>::new());
}
