//! The releases' distinguishing rules, through the policy with a fake clock: the time is a
//! number we pass in, and the "device" is whatever a test does between dispatch and
//! completion.

use super::*;
use crate::time::us;
use crate::{Direction, RequestId};

const P: ProcessId = ProcessId(1);
const Q: ProcessId = ProcessId(2);
const W: ProcessId = ProcessId(3);
/// Far from everything else.
const FAR: u64 = 1 << 30;

fn scheduler(version: &str) -> Anticipatory {
    let settings = [("version".to_string(), version.to_string())];
    let tunables = Tunables::resolve("anticipatory", Anticipatory::TUNABLES, &settings)
        .expect("a valid version");
    Anticipatory::new(&tunables, &SchedulerContext::default())
}

fn read(id: u64, process: ProcessId, sector: u64) -> Request {
    Request::new(RequestId(id), process, Direction::Read, sector, 8)
}

fn async_write(id: u64, process: ProcessId, sector: u64) -> Request {
    Request::new(RequestId(id), process, Direction::Write, sector, 8)
}

fn next(s: &mut Anticipatory, now: Nanos) -> Request {
    match s.dispatch(now) {
        Dispatch::Request(rq) => rq,
        other => panic!("expected a request at {now}, got {other:?}"),
    }
}

fn done(s: &mut Anticipatory, request: Request, now: Nanos) {
    let completion = Completion {
        request,
        dispatch_time: 0,
        error: None,
    };
    s.complete(&completion, now);
}

fn serve_alone(s: &mut Anticipatory, rq: Request, now: Nanos, completed: Nanos) {
    s.insert(rq, now);
    let served = next(s, now);
    done(s, served, completed);
}

/// P reads sector 0 (done at 1 ms), then sector `second` 20 µs later (done at 2 ms); Q's
/// far read arrives and AS waits for P until 8 ms.
fn anticipating_on_p(version: &str, second: u64) -> Anticipatory {
    let mut s = scheduler(version);
    serve_alone(&mut s, read(1, P, 0), 0, ms(1));
    serve_alone(&mut s, read(2, P, second), ms(1) + us(20), ms(2));
    s.insert(read(3, Q, FAR), ms(2));
    assert_eq!(s.dispatch(ms(2)), Dispatch::WaitUntil(ms(8)));
    assert_eq!(s.anticipation_state(), AnticipationState::WaitNext);
    s
}

#[test]
fn the_default_is_2_6_32_and_2_6_28_behaves_the_same() {
    let def = Anticipatory::TUNABLES
        .iter()
        .find(|def| def.name == "version")
        .expect("a version tunable");
    assert_eq!(
        (def.default, def.min, def.max, def.unit),
        (20632, 20610, 20632, "kernel")
    );
    assert_eq!(
        scheduler("20628").version_behaviour(),
        scheduler("20632").version_behaviour()
    );
    let bad = Tunables::resolve(
        "anticipatory",
        Anticipatory::TUNABLES,
        &[("version".to_string(), "20609".to_string())],
    );
    assert!(bad.is_err());
}

#[test]
fn in_2_6_10_a_close_request_is_within_64_sectors_and_restarts_the_think_clock() {
    // 100 sectors past the head (16): close from 2.6.18 on (8192), not in 2.6.10 (64).
    let mut new = anticipating_on_p("20632", 8);
    new.insert(read(4, W, 116), ms(2) + us(10));
    assert_eq!(new.anticipation_state(), AnticipationState::Finished);

    let mut old = anticipating_on_p("20610", 8);
    old.insert(read(4, W, 116), ms(2) + us(10));
    assert_eq!(old.anticipation_state(), AnticipationState::WaitNext);
    // 1.5 ms into the wait the window is still 64 sectors: 64 past the head is close.
    old.insert(read(5, W, 16 + 64), ms(3) + us(500));
    assert_eq!(old.anticipation_state(), AnticipationState::Finished);
    assert_eq!(next(&mut old, ms(3) + us(500)).id, RequestId(5));
    // P's think-time clock restarted at 3.5 ms: its read at 4 ms thought 0.5 ms, not 2 ms.
    // Samples: 20 µs (weight 32), then 500 µs (weight 60): (7·640000/8 + 32·500000) / 60.
    old.insert(read(6, P, 24), ms(4));
    let p = old.process_estimate(P).expect("P has a history");
    assert_eq!((p.think_time_samples, p.think_time), (60, 276_000));
}

#[test]
fn in_2_6_10_the_close_window_doubles_from_the_second_millisecond() {
    let old = anticipating_on_p("20610", 8);
    let window = |now| old.anticipation.close_window(now);
    assert_eq!(window(ms(2)), Some(64));
    assert_eq!(window(ms(4) - 1), Some(64));
    assert_eq!(window(ms(4)), Some(128));
    assert_eq!(window(ms(8) - 1), Some(64 << 4));
    assert_eq!(window(ms(8)), Some(64 << 5));
    assert_eq!(window(ms(9)), None);
}

#[test]
fn in_2_6_10_any_request_nearer_than_the_mean_seek_breaks_the_wait() {
    // P seeks a million sectors between reads; an async write 0.5 M sectors from the head
    // is nearer than that. From 2.6.18 only sync requests count.
    let mut new = anticipating_on_p("20632", 1_000_000);
    new.insert(async_write(4, W, 1_000_008 + 500_000), ms(2) + us(5));
    assert_eq!(new.anticipation_state(), AnticipationState::WaitNext);

    let mut old = anticipating_on_p("20610", 1_000_000);
    old.insert(async_write(4, W, 1_000_008 + 1_500_000), ms(2) + us(5));
    assert_eq!(old.anticipation_state(), AnticipationState::WaitNext);
    old.insert(async_write(5, W, 1_000_008 + 500_000), ms(2) + us(10));
    assert_eq!(old.anticipation_state(), AnticipationState::Finished);
}

#[test]
fn in_2_6_10_an_exited_process_is_never_waited_for() {
    // From 2.6.18 an exit is trusted to be followed by a cooperating request at first.
    let mut new = anticipating_on_p("20632", 8);
    new.process_exited(P, ms(2) + us(20));
    assert_eq!(new.anticipation_state(), AnticipationState::WaitNext);

    let mut old = anticipating_on_p("20610", 8);
    old.process_exited(P, ms(2) + us(20));
    assert_eq!(old.anticipation_state(), AnticipationState::Finished);
    assert_eq!(next(&mut old, ms(2) + us(20)).id, RequestId(3));
}

#[test]
fn before_2_6_24_a_new_async_batch_goes_on_in_elevator_order() {
    for (version, first) in [("20632", 10), ("20623", 11)] {
        let mut s = scheduler(version);
        s.head[Class::Async.index()] = 4000;
        s.insert(async_write(10, W, 1000), 0);
        s.insert(async_write(11, W, 5000), us(1));
        let start = s.batch_start(Class::Async);
        assert_eq!(s.queue.get(start).id, RequestId(first), "version {version}");
    }
}

#[test]
fn before_2_6_27_an_async_batch_that_waited_for_the_device_keeps_the_old_expiry() {
    // Q reads on while writes wait. At 600 ms the sync batch (500 ms) is over with Q's read
    // at the device; the async batch waits for it, and it completes at 601 ms.
    for (version, writes) in [("20632", 12), ("20626", 0)] {
        let mut s = scheduler(version);
        s.insert(read(1, Q, FAR / 2), 0);
        let first = next(&mut s, 0);
        for id in 2..40 {
            s.insert(async_write(id, W, FAR + 16 * id), ms(1));
        }
        s.insert(read(50, Q, FAR / 2 + 8), ms(1));
        done(&mut s, first, ms(2));
        let second = next(&mut s, ms(2));
        assert_eq!(second.id, RequestId(50));
        s.insert(read(51, Q, FAR / 2 + 16), ms(2));
        assert!(matches!(s.dispatch(ms(600)), Dispatch::WaitUntil(_)));
        done(&mut s, second, ms(601));
        // Count the writes served before the next read.
        let mut served = 0;
        loop {
            let rq = next(&mut s, ms(601));
            if rq.direction == Direction::Read {
                break;
            }
            served += 1;
            done(&mut s, rq, ms(601));
        }
        assert_eq!(served, writes, "version {version}");
    }
}
