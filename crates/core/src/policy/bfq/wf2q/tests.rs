//! Tests of the B-WF2Q+ engine: timestamps, eligibility, hole recovery, classes, groups.

use super::*;

fn engine_with_queues(weights: &[u64]) -> (Wf2q, EntityId, Vec<EntityId>) {
    let mut engine = Wf2q::default();
    let root = engine.add(Owner::Group(0), None, 1, 100);
    let queues = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| engine.add(Owner::Queue(i), Some(root), 1, w))
        .collect();
    (engine, root, queues)
}

/// Serve `rounds` turns of `budget` sectors each, every queue always backlogged; returns
/// the service each queue received.
fn serve(engine: &mut Wf2q, root: EntityId, queues: &[EntityId], rounds: usize) -> Vec<u64> {
    let mut served = vec![0; queues.len()];
    for _ in 0..rounds {
        let queue = engine.select(root, 0).expect("backlogged");
        let budget = engine.get(queues[queue]).budget;
        engine.charge(queues[queue], budget);
        served[queue] += budget;
        engine.expire(queues[queue], true, budget, false);
    }
    served
}

#[test]
fn delta_is_fixed_point_service_over_weight() {
    assert_eq!(delta(1, 1), 1 << 22);
    assert_eq!(delta(100, 100), 1 << 22);
    assert_eq!(delta(8, 0), 8 << 22, "a zero weight counts as 1");
}

#[test]
fn backlogged_queues_share_by_weight() {
    let (mut engine, root, queues) = engine_with_queues(&[10, 20, 40]);
    for &q in &queues {
        engine.activate(q, 1000, None);
    }
    let served = serve(&mut engine, root, &queues, 700);
    assert_eq!(served, vec![100_000, 200_000, 400_000]);
}

#[test]
fn a_queue_back_from_idle_does_not_gain_credit() {
    let (mut engine, root, queues) = engine_with_queues(&[10, 10, 10]);
    for &q in &queues {
        engine.activate(q, 1000, None);
    }
    assert_eq!(
        engine.select(root, 0),
        Some(0),
        "equal finish: the lower id first"
    );
    engine.charge(queues[0], 1000);
    engine.expire(queues[0], true, 1000, false);
    assert_eq!(engine.select(root, 0), Some(1));
    engine.charge(queues[1], 1000);
    engine.expire(queues[1], false, 1000, false);
    // V = 2000/30 per unit weight; queue 1 finished at 1000/10: ahead of V, so idle.
    assert_eq!(engine.vtime_of(queues[1]), delta(2000, 30));
    assert_eq!(engine.get(queues[1]).place, Place::Idle);
    // Back at once: it starts at its old finish, not at V.
    engine.activate(queues[1], 1000, None);
    assert_eq!(engine.get(queues[1]).start, delta(1000, 10));
    assert_eq!(
        engine.select(root, 0),
        Some(2),
        "queue 2 is the only eligible one"
    );
}

/// Two queues of weight 10: the first runs dry after 100 units, the second is served
/// 1000, so V passes the first one's finish while it is gone.
fn first_queue_left_behind() -> (Wf2q, Vec<EntityId>) {
    let (mut engine, root, queues) = engine_with_queues(&[10, 10]);
    engine.activate(queues[0], 1000, None);
    engine.activate(queues[1], 1000, None);
    assert_eq!(engine.select(root, 0), Some(0));
    engine.charge(queues[0], 100);
    engine.expire(queues[0], false, 1000, false);
    assert_eq!(engine.get(queues[0]).place, Place::Idle);
    assert_eq!(engine.select(root, 0), Some(1));
    engine.charge(queues[1], 1000);
    assert_eq!(
        engine.get(queues[0]).place,
        Place::Off,
        "V passed its finish"
    );
    (engine, queues)
}

#[test]
fn hole_recovery_shifts_a_raised_queue_only_part_of_the_way() {
    let (mut engine, queues) = first_queue_left_behind();
    let (old_finish, vtime) = (delta(100, 10), delta(1100, 20));
    assert_eq!(engine.vtime_of(queues[0]), vtime);
    // 100 service units at weight 10 behind V: the new finish is still behind V, and a
    // queue raised 30 times moves up a thirtieth of the gap.
    engine.activate(queues[0], 50, Some(30));
    let finish = old_finish + delta(50, 10);
    let push = (vtime - finish) / 30;
    assert_eq!(engine.get(queues[0]).start, old_finish + push);
    assert_eq!(engine.get(queues[0]).finish, finish + push);
}

#[test]
fn hole_recovery_brings_a_plain_queue_finish_to_v() {
    let (mut engine, queues) = first_queue_left_behind();
    let vtime = engine.vtime_of(queues[0]);
    engine.activate(queues[0], 50, Some(1));
    assert_eq!(engine.get(queues[0]).finish, vtime);
    assert_eq!(engine.get(queues[0]).start, vtime - delta(50, 10));
}

#[test]
fn idle_class_waits_for_others_but_not_forever() {
    let mut engine = Wf2q::default();
    let root = engine.add(Owner::Group(0), None, 1, 100);
    let best_effort = engine.add(Owner::Queue(0), Some(root), 1, 40);
    let idle = engine.add(Owner::Queue(1), Some(root), 2, 10);
    engine.activate(best_effort, 100, None);
    engine.activate(idle, 100, None);
    assert_eq!(engine.select(root, ms(300)), Some(1), "idle waited 300 ms");
    engine.expire(idle, true, 100, false);
    assert_eq!(engine.select(root, ms(310)), Some(0));
    engine.expire(best_effort, true, 100, false);
    assert_eq!(
        engine.select(root, ms(320)),
        Some(0),
        "idle was served 20 ms ago"
    );
}

#[test]
fn groups_share_by_weight_whatever_their_queue_count() {
    let mut engine = Wf2q::default();
    let root = engine.add(Owner::Group(0), None, 1, 100);
    let heavy = engine.add(Owner::Group(1), Some(root), 1, 300);
    let light = engine.add(Owner::Group(2), Some(root), 1, 100);
    let mut queues = Vec::new();
    for i in 0..4 {
        queues.push(engine.add(Owner::Queue(i), Some(light), 1, 40));
    }
    queues.push(engine.add(Owner::Queue(4), Some(heavy), 1, 40));
    for &q in &queues {
        engine.activate(q, 500, None);
    }
    let served = serve(&mut engine, root, &queues, 800);
    let light_total: u64 = served[..4].iter().sum();
    assert_eq!(served[4], 3 * light_total);
    assert!(served[..4].iter().all(|&s| s == served[0]), "{served:?}");
}

#[test]
fn a_lingering_entity_holds_later_ones_back_and_v_waits_for_it() {
    let (mut engine, root, queues) = engine_with_queues(&[10, 40]);
    engine.activate(queues[0], 100, None);
    engine.activate(queues[1], 100, None);
    assert_eq!(select(&mut engine, root), Selection::Queue(1));
    engine.charge(queues[1], 100);
    engine.expire(queues[1], false, 0, true);
    assert_eq!(engine.get(queues[1]).place, Place::Lingering);
    assert_eq!(engine.vtime_of(queues[0]), delta(100, 50));
    // The light queue is eligible (S = 0) and served; V stops at the heavy one's finish.
    assert_eq!(select(&mut engine, root), Selection::Queue(0));
    engine.charge(queues[0], 100);
    assert_eq!(engine.vtime_of(queues[0]), delta(100, 40));
    engine.expire(queues[0], true, 100, false);
    // Its next start is ahead of V and behind the lingering finish: it is held.
    assert_eq!(select(&mut engine, root), Selection::Hold);
    // The heavy queue comes back: it keeps its place in virtual time and goes first.
    engine.activate(queues[1], 100, None);
    assert_eq!(engine.get(queues[1]).start, delta(100, 40));
    assert_eq!(select(&mut engine, root), Selection::Queue(1));
    engine.charge(queues[1], 100);
    engine.expire(queues[1], false, 0, true);
    // It is no longer expected: V is free to jump to the light queue.
    engine.stop_lingering(queues[1]);
    assert_eq!(select(&mut engine, root), Selection::Queue(0));
    assert_eq!(engine.vtime_of(queues[0]), delta(100, 10));
}

/// Parallel selection at time 0, every queue allowed its lead.
fn select(engine: &mut Wf2q, root: EntityId) -> Selection {
    engine.select_parallel(root, 0, |_| true)
}

/// The chosen queue is served `sectors` and goes back on its tree with work left.
fn parallel_turn(engine: &mut Wf2q, queue: EntityId, sectors: u64) {
    engine.charge(queue, sectors);
    engine.expire(queue, true, sectors, false);
}

/// A heavy (40) and a light (10) queue with `lead`: the heavy one is served and lingers,
/// so V cannot pass its finish; then the light one is served once, on time (S = 0 ≤ V),
/// getting the lead if `may_lead`.
fn light_queue_served_while_heavy_lingers(
    lead: u32,
    may_lead: bool,
) -> (Wf2q, EntityId, Vec<EntityId>) {
    let (mut engine, root, queues) = engine_with_queues(&[10, 40]);
    engine.set_lead(lead);
    engine.activate(queues[0], 100, None);
    engine.activate(queues[1], 100, None);
    assert_eq!(
        engine.select_parallel(root, 0, |_| may_lead),
        Selection::Queue(1)
    );
    engine.charge(queues[1], 100);
    engine.expire(queues[1], false, 0, true);
    assert_eq!(
        engine.select_parallel(root, 0, |_| may_lead),
        Selection::Queue(0)
    );
    parallel_turn(&mut engine, queues[0], 100);
    (engine, root, queues)
}

#[test]
fn a_queue_served_on_time_may_take_its_lead_ahead_of_v_then_waits() {
    let (mut engine, root, queues) = light_queue_served_while_heavy_lingers(2, true);
    let v = engine.vtime_of(queues[0]);
    // Two more turns although its start is ahead of V: it is not held.
    for turn in 1..=2u64 {
        assert!(engine.get(queues[0]).start > v, "turn {turn} is ahead of V");
        assert_eq!(select(&mut engine, root), Selection::Queue(0));
        parallel_turn(&mut engine, queues[0], 100);
        assert_eq!(
            engine.vtime_of(queues[0]),
            v,
            "V waits for the lingering queue"
        );
    }
    // Its lead is spent: now it waits for the heavy queue, as without a lead.
    assert_eq!(select(&mut engine, root), Selection::Hold);
    assert_eq!(engine.get(queues[0]).start, 3 * delta(100, 10));
    // The heavy queue comes back and is served first; the light one is charged in full.
    engine.activate(queues[1], 100, None);
    assert_eq!(select(&mut engine, root), Selection::Queue(1));
}

#[test]
fn without_a_lead_a_queue_ahead_of_v_is_held_at_once() {
    let (mut engine, root, _) = light_queue_served_while_heavy_lingers(0, true);
    assert_eq!(select(&mut engine, root), Selection::Hold);
}

#[test]
fn a_queue_refused_the_lead_is_held_at_once() {
    let (mut engine, root, _) = light_queue_served_while_heavy_lingers(2, false);
    assert_eq!(select(&mut engine, root), Selection::Hold);
}
