//! The mq-deadline elevator against its public API, with a fake clock: time is a `u64` we
//! pass in. Strict priority between RT, BE and IDLE, aging after `prio_aging_expire`, and
//! within one level the legacy deadline elevator's order exactly.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use ioslice_core::policy::deadline::Deadline;
use ioslice_core::policy::mq_deadline::MqDeadline;
use ioslice_core::time::ms;
use ioslice_core::tunable::Tunables;
use ioslice_core::{
    Completion, Direction, Dispatch, Inserted, IoPriority, Nanos, PriorityClass, ProcessId,
    Request, RequestId, Scheduler,
};
use proptest::prelude::*;

use common::{account, tunables};

const RT: PriorityClass = PriorityClass::RealTime;
const BE: PriorityClass = PriorityClass::BestEffort;
const IDLE: PriorityClass = PriorityClass::Idle;

/// An mq-deadline elevator with these tunable settings.
fn mq(settings: &[(&str, &str)]) -> MqDeadline {
    MqDeadline::new(&tunables("mq-deadline", MqDeadline::TUNABLES, settings))
}

/// A request of `sectors` sectors at `sector` of class `class` (level 4), from process 1 (so
/// only the level keeps requests of different classes from merging).
fn request(
    id: u64,
    class: PriorityClass,
    direction: Direction,
    sector: u64,
    sectors: u32,
) -> Request {
    let priority = IoPriority::new(class, 4).expect("level 4 exists");
    Request {
        priority,
        ..Request::new(RequestId(id), ProcessId(1), direction, sector, sectors)
    }
}

fn read(id: u64, class: PriorityClass, sector: u64) -> Request {
    request(id, class, Direction::Read, sector, 8)
}

/// Dispatch one request, which must be there.
fn next(policy: &mut dyn Scheduler, now: Nanos) -> Request {
    match policy.dispatch(now) {
        Dispatch::Request(rq) => rq,
        other => panic!("expected a request at {now}, got {other:?}"),
    }
}

/// Tell the policy the device finished `rq` at `now`.
fn complete(policy: &mut dyn Scheduler, rq: &Request, now: Nanos) {
    let done = Completion {
        request: rq.clone(),
        dispatch_time: now,
        error: None,
    };
    policy.complete(&done, now);
}

/// Dispatch everything queued one request at a time, each completing before the next is
/// asked for, all at `now`.
fn drain(policy: &mut dyn Scheduler, now: Nanos) -> Vec<Request> {
    let mut out = Vec::new();
    while let Dispatch::Request(rq) = policy.dispatch(now) {
        complete(policy, &rq, now);
        out.push(rq);
    }
    out
}

fn ids(requests: &[Request]) -> Vec<u64> {
    requests.iter().map(|rq| rq.id.0).collect()
}

#[test]
fn defaults_are_deadlines_plus_prio_aging_expire_and_the_zone_layout() {
    let policy = mq(&[]);
    assert_eq!(policy.name(), "mq-deadline");
    assert_eq!(policy.queued(), 0);
    let defaults: Vec<_> = MqDeadline::TUNABLES
        .iter()
        .map(|def| (def.name, def.default, def.unit))
        .collect();
    assert_eq!(
        defaults,
        vec![
            ("read_expire", 500, "ms"),
            ("write_expire", 5000, "ms"),
            ("writes_starved", 2, "count"),
            ("fifo_batch", 16, "requests"),
            ("front_merges", 1, "bool"),
            ("prio_aging_expire", 10_000, "ms"),
            ("zone_sectors", 0, "sectors"),
            ("conventional_zones", 0, "zones"),
        ]
    );
}

/// Zone write locking: with zones of 100 sectors, the first conventional, a second write to
/// a sequential zone waits until the first completes; a write to another zone and a write to
/// the conventional zone go meanwhile.
#[test]
fn one_write_per_sequential_zone_at_the_device() {
    let mut policy = mq(&[("zone_sectors", "100"), ("conventional_zones", "1")]);
    let write = |id: u64, sector: u64| {
        Request::new(RequestId(id), ProcessId(1), Direction::Write, sector, 8)
    };
    // Not contiguous, so nothing merges.
    policy.insert(write(1, 100), 0);
    policy.insert(write(2, 120), 0);
    policy.insert(write(3, 200), 0);
    policy.insert(write(4, 10), 0);
    policy.insert(write(5, 50), 0);
    let mut sent = Vec::new();
    while let Dispatch::Request(rq) = policy.dispatch(0) {
        sent.push(rq);
    }
    let ids: Vec<u64> = sent.iter().map(|rq| rq.id.0).collect();
    // The batch starts at the FIFO head (1), continues in sector order past the locked
    // zone's 2 to 3, and the next batch starts at the first write the locks admit.
    assert_eq!(ids, [1, 3, 4, 5], "request 2 waits for zone 1");
    assert_eq!(policy.queued(), 1);
    let first = sent.remove(0);
    policy.complete(
        &Completion {
            request: first,
            dispatch_time: 0,
            error: None,
        },
        1,
    );
    match policy.dispatch(1) {
        Dispatch::Request(rq) => assert_eq!(rq.id, RequestId(2)),
        other => panic!("zone 1 is unlocked: {other:?}"),
    }
}

#[test]
fn bad_tunable_values_are_rejected() {
    let resolve = |name: &str, value: &str| {
        Tunables::resolve(
            "mq-deadline",
            MqDeadline::TUNABLES,
            &[(name.to_string(), value.to_string())],
        )
    };
    for (name, value) in [
        ("prio_aging_expire", "-1"),
        ("prio_aging_expire", "soon"),
        ("prio_aging_expire", "3000000000"),
        ("fifo_batch", "-1"),
        ("slice_idle", "8"),
    ] {
        let error = resolve(name, value).expect_err("rejected");
        assert!(error.to_string().contains(name), "{error}");
    }
    for (name, value) in [("prio_aging_expire", "0"), ("prio_aging_expire", "500")] {
        assert!(resolve(name, value).is_ok(), "{name}={value}");
    }
}

#[test]
fn empty_queue_dispatches_nothing_and_completions_are_accepted() {
    let mut policy = mq(&[]);
    assert_eq!(policy.dispatch(0), Dispatch::Empty);
    policy.insert(read(1, BE, 100), 0);
    let rq = next(&mut policy, 0);
    complete(&mut policy, &rq, ms(5));
    // A completion the policy never dispatched (or a second one) changes nothing.
    complete(&mut policy, &rq, ms(6));
    assert_eq!(policy.dispatch(ms(6)), Dispatch::Empty);
    assert_eq!(policy.queued(), 0);
}

#[test]
fn an_rt_request_goes_before_earlier_queued_be_requests() {
    let mut policy = mq(&[]);
    for id in 1..=4 {
        policy.insert(read(id, BE, id * 64), ms(id));
    }
    policy.insert(read(9, RT, 1 << 20), ms(10));
    let order = drain(&mut policy, ms(11));
    assert_eq!(ids(&order), [9, 1, 2, 3, 4]);
}

#[test]
fn lower_levels_wait_until_the_higher_levels_requests_complete() {
    let mut policy = mq(&[]);
    policy.insert(read(1, RT, 0), 0);
    policy.insert(read(2, BE, 1 << 20), 0);
    let rt = next(&mut policy, 0);
    assert_eq!(rt.id, RequestId(1));
    // The RT request is at the device: the BE one waits for its completion, as the kernel's
    // mq-deadline counts a level's requests until they complete.
    assert_eq!(policy.dispatch(ms(1)), Dispatch::Empty);
    assert_eq!(policy.queued(), 1);
    complete(&mut policy, &rt, ms(2));
    assert_eq!(next(&mut policy, ms(2)).id, RequestId(2));
}

#[test]
fn idle_waits_while_be_has_requests() {
    let mut policy = mq(&[]);
    policy.insert(read(1, IDLE, 0), 0);
    for id in 2..=5 {
        policy.insert(read(id, BE, (1 << 20) + id * 64), ms(id));
    }
    // Dispatched one at a time, with time passing (but less than prio_aging_expire).
    let mut now = ms(10);
    let mut order = Vec::new();
    while let Dispatch::Request(rq) = policy.dispatch(now) {
        now += ms(100);
        // BE's next request arrives before the IDLE one may go.
        if order.len() == 1 {
            policy.insert(read(6, BE, 1 << 22), now);
        }
        complete(&mut policy, &rq, now);
        order.push(rq.id.0);
    }
    assert_eq!(order, [2, 3, 4, 5, 6, 1]);
}

#[test]
fn a_be_request_older_than_prio_aging_expire_goes_ahead_of_queued_rt_requests() {
    for (aging, setting) in [(10_000, None), (500, Some("500"))] {
        let settings: Vec<(&str, &str)> = setting
            .map(|value| ("prio_aging_expire", value))
            .into_iter()
            .collect();
        let mut policy = mq(&settings);
        policy.insert(read(1, BE, 0), 0);
        // An RT stream keeps RT busy: one request at the device, one queued, every 1 ms.
        let mut id = 100;
        let mut now = 0;
        policy.insert(read(id, RT, 1 << 20), now);
        let mut sent = Vec::new();
        while now <= ms(aging) {
            id += 1;
            policy.insert(read(id, RT, (1 << 20) + (id - 100) * 64), now);
            let rq = next(&mut policy, now);
            sent.push((now, rq.id.0));
            now += ms(1);
            complete(&mut policy, &rq, now);
        }
        // The BE request went at the first dispatch at or after prio_aging_expire, ahead of
        // the RT request queued then, and not before.
        let be: Vec<_> = sent.iter().filter(|&&(_, id)| id == 1).collect();
        assert_eq!(be, [&(ms(aging), 1)], "aging {aging}");
        assert!(policy.queued() >= 1, "RT requests were queued");
    }
}

#[test]
fn aging_serves_be_before_idle_and_only_with_two_levels_busy() {
    let mut policy = mq(&[("prio_aging_expire", "100")]);
    policy.insert(read(1, IDLE, 0), 0);
    policy.insert(read(2, BE, 1 << 20), ms(1));
    policy.insert(read(3, RT, 1 << 22), ms(2));
    // Both aged: BE first, then IDLE, ahead of RT.
    let order = drain(&mut policy, ms(500));
    assert_eq!(ids(&order), [2, 1, 3]);
    // A lone IDLE request goes whenever asked; no aging is involved with one busy level.
    policy.insert(read(4, IDLE, 0), ms(600));
    assert_eq!(next(&mut policy, ms(600)).id, RequestId(4));
}

#[test]
fn requests_merge_only_within_their_level() {
    let mut policy = mq(&[]);
    policy.insert(read(1, BE, 0), 0);
    // Contiguous, but RT: queued on its own.
    assert_eq!(policy.insert(read(2, RT, 8), 0), Inserted::Queued);
    assert_eq!(
        policy.insert(read(3, BE, 8), 0),
        Inserted::Merged(RequestId(1))
    );
    assert_eq!(policy.queued(), 2);
    let order = drain(&mut policy, 0);
    assert_eq!(ids(&order), [2, 1]);
    assert_eq!((order[1].sector, order[1].sectors), (0, 16));
}

/// One step of a random workload.
#[derive(Debug, Clone)]
enum Op {
    Insert {
        class: usize,
        write: bool,
        slot: u64,
        sectors: u32,
    },
    Dispatch,
    /// Complete the oldest request at the device, if any.
    Complete,
    Advance(u64),
}

fn op(classes: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..classes, any::<bool>(), 0u64..64, 1u32..24).prop_map(|(class, write, slot, sectors)| {
            Op::Insert { class, write, slot, sectors }
        }),
        3 => Just(Op::Dispatch),
        2 => Just(Op::Complete),
        1 => (0u64..700).prop_map(Op::Advance),
    ]
}

proptest! {
    /// With every request of one class, mq-deadline is the legacy deadline elevator: the
    /// same requests in the same order, whatever the class.
    #[test]
    fn one_level_dispatches_as_deadline_does(
        ops in proptest::collection::vec(op(1), 1..300),
        class in 0usize..3,
        fifo_batch in 0u32..6,
        writes_starved in -1i32..4,
        front_merges in any::<bool>(),
    ) {
        let class = PriorityClass::ALL[class];
        let (batch, starved) = (fifo_batch.to_string(), writes_starved.to_string());
        let settings = [
            ("fifo_batch", batch.as_str()),
            ("writes_starved", starved.as_str()),
            ("front_merges", if front_merges { "1" } else { "0" }),
            ("prio_aging_expire", "0"),
        ];
        let mut policy = mq(&settings);
        let mut legacy = Deadline::new(&tunables("deadline", Deadline::TUNABLES, &settings[..3]));
        let mut in_flight = Vec::new();
        let mut now = 0;
        for (id, op) in (0u64..).zip(ops) {
            match op {
                Op::Insert { write, slot, sectors, .. } => {
                    let direction = if write { Direction::Write } else { Direction::Read };
                    let rq = request(id, class, direction, slot * 8, sectors);
                    prop_assert_eq!(policy.insert(rq.clone(), now), legacy.insert(rq, now));
                }
                Op::Dispatch => {
                    let answer = policy.dispatch(now);
                    prop_assert_eq!(&answer, &legacy.dispatch(now));
                    if let Dispatch::Request(rq) = answer {
                        in_flight.push(rq);
                    }
                }
                Op::Complete => {
                    if !in_flight.is_empty() {
                        let rq = in_flight.remove(0);
                        complete(&mut policy, &rq, now);
                    }
                }
                Op::Advance(step) => now += ms(step),
            }
            prop_assert_eq!(policy.queued(), legacy.queued());
        }
    }

    /// Every inserted request leaves exactly once, in one dispatched request, whatever the
    /// mix of classes, completions and time; the policy answers `Empty` with requests queued
    /// only while some are at the device, and `queued()` is exact.
    #[test]
    fn every_inserted_request_is_dispatched_exactly_once(
        ops in proptest::collection::vec(op(3), 1..300),
        fifo_batch in 0u32..6,
        writes_starved in -1i32..4,
        front_merges in any::<bool>(),
        prio_aging_expire in 0u32..2000,
    ) {
        let (batch, starved) = (fifo_batch.to_string(), writes_starved.to_string());
        let aging = prio_aging_expire.to_string();
        let mut policy = mq(&[
            ("fifo_batch", &batch),
            ("writes_starved", &starved),
            ("front_merges", if front_merges { "1" } else { "0" }),
            ("prio_aging_expire", &aging),
        ]);
        let mut inserted = BTreeMap::new();
        let mut dispatched = BTreeSet::new();
        let mut in_flight: Vec<Request> = Vec::new();
        let mut now = 0;
        for (id, op) in (0u64..).zip(ops) {
            match op {
                Op::Insert { class, write, slot, sectors } => {
                    let direction = if write { Direction::Write } else { Direction::Read };
                    let rq = request(id, PriorityClass::ALL[class], direction, slot * 8, sectors);
                    inserted.insert(id, rq.clone());
                    policy.insert(rq, now);
                }
                Op::Dispatch => match policy.dispatch(now) {
                    Dispatch::Request(rq) => {
                        account(&rq, &inserted, &mut dispatched)?;
                        in_flight.push(rq);
                    }
                    Dispatch::Empty => prop_assert!(
                        policy.queued() == 0 || !in_flight.is_empty(),
                        "{} queued, none at the device", policy.queued()
                    ),
                    Dispatch::WaitUntil(t) => prop_assert!(false, "mq-deadline never idles ({})", t),
                },
                Op::Complete => {
                    if !in_flight.is_empty() {
                        let rq = in_flight.remove(0);
                        complete(&mut policy, &rq, now);
                    }
                }
                Op::Advance(step) => now += ms(step),
            }
            // queued() is exact: a copy, with what is at the device completed, drains in
            // exactly that many dispatches.
            let mut copy = policy.clone();
            for rq in &in_flight {
                complete(&mut copy, rq, now);
            }
            prop_assert_eq!(drain(&mut copy, now).len(), policy.queued());
        }
        for rq in in_flight.drain(..) {
            complete(&mut policy, &rq, now);
        }
        for rq in drain(&mut policy, now) {
            account(&rq, &inserted, &mut dispatched)?;
        }
        prop_assert_eq!(policy.queued(), 0);
        prop_assert_eq!(dispatched.len(), inserted.len());
    }
}
