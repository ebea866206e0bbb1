//! The anticipatory elevator against its public API, with a fake clock: time is a `u64` we
//! pass in, and the "device" is whatever each test does between `dispatch` and `complete`.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use ioslice_core::policy::anticipatory::{AnticipationState, Anticipatory};
use ioslice_core::time::{ms, us};
use ioslice_core::tunable::Tunables;
use ioslice_core::{
    build_scheduler, Completion, Direction, Dispatch, Nanos, ProcessId, Request, RequestId,
    Scheduler, SchedulerContext,
};
use proptest::prelude::*;

use common::{account, tunables};

const P: ProcessId = ProcessId(1);
const Q: ProcessId = ProcessId(2);
const W: ProcessId = ProcessId(3);
/// Far from everything else: not close, whatever the window.
const FAR: u64 = 1 << 30;

/// AS with these tunable settings.
fn scheduler(settings: &[(&str, &str)]) -> Anticipatory {
    Anticipatory::new(
        &tunables("anticipatory", Anticipatory::TUNABLES, settings),
        &SchedulerContext::default(),
    )
}

fn read(id: u64, process: ProcessId, sector: u64) -> Request {
    Request::new(RequestId(id), process, Direction::Read, sector, 8)
}

/// An O_DIRECT or O_SYNC write: sync.
fn sync_write(id: u64, process: ProcessId, sector: u64) -> Request {
    Request {
        sync: true,
        ..Request::new(RequestId(id), process, Direction::Write, sector, 8)
    }
}

/// Buffered writeback: async.
fn async_write(id: u64, process: ProcessId, sector: u64) -> Request {
    Request::new(RequestId(id), process, Direction::Write, sector, 8)
}

/// Dispatch one request, which must be there.
fn next(s: &mut Anticipatory, now: Nanos) -> Request {
    match s.dispatch(now) {
        Dispatch::Request(rq) => rq,
        other => panic!("expected a request at {now}, got {other:?}"),
    }
}

/// Dispatch, which must answer with a wait; returns its end.
fn waits_until(s: &mut Anticipatory, now: Nanos) -> Nanos {
    match s.dispatch(now) {
        Dispatch::WaitUntil(t) => t,
        other => panic!("expected a wait at {now}, got {other:?}"),
    }
}

/// The device finished `rq` at `now`.
fn done(s: &mut Anticipatory, rq: Request, now: Nanos) {
    let completion = Completion {
        request: rq,
        dispatch_time: 0,
        error: None,
    };
    s.complete(&completion, now);
}

/// Insert `rq` at `now`, dispatch it at once, and complete it at `completed`.
fn serve_alone(s: &mut Anticipatory, rq: Request, now: Nanos, completed: Nanos) {
    let id = rq.id;
    s.insert(rq, now);
    let served = next(s, now);
    assert_eq!(served.id, id);
    done(s, served, completed);
}

/// P reads sector 0 (done at 1 ms) and then sector 8, 20 µs after (done at 2 ms): a
/// sequential reader with a 20 µs think time. Then Q's read far away arrives and AS keeps
/// the disk idle for P until 8 ms.
fn anticipating_on_p() -> Anticipatory {
    let mut s = scheduler(&[]);
    serve_alone(&mut s, read(1, P, 0), 0, ms(1));
    assert_eq!(s.dispatch(ms(1)), Dispatch::Empty);
    serve_alone(&mut s, read(2, P, 8), ms(1) + us(20), ms(2));
    s.insert(read(3, Q, FAR), ms(2));
    assert_eq!(waits_until(&mut s, ms(2)), ms(8));
    assert_eq!(s.anticipation_state(), AnticipationState::WaitNext);
    assert_eq!(s.anticipated_process(), Some(P));
    s
}

#[test]
fn defaults_match_the_kernel_and_as_is_an_alias() {
    let defaults: Vec<_> = Anticipatory::TUNABLES
        .iter()
        .map(|def| (def.name, def.default, def.unit))
        .collect();
    assert_eq!(
        defaults,
        vec![
            ("read_expire", 125, "ms"),
            ("write_expire", 250, "ms"),
            ("read_batch_expire", 500, "ms"),
            ("write_batch_expire", 125, "ms"),
            ("antic_expire", 6, "ms"),
            ("version", 20632, "kernel"),
        ]
    );
    let s = scheduler(&[]);
    assert_eq!(s.name(), "anticipatory");
    assert_eq!(s.queued(), 0);
    assert_eq!(s.anticipation_state(), AnticipationState::Off);
    assert!(s.sync_batch());
    // write_batch_expire / 10 ms.
    assert_eq!(s.write_batch_count(), 12);
    let built = build_scheduler(&"as".parse().expect("spec"), &SchedulerContext::default());
    assert_eq!(built.expect("registered").name(), "anticipatory");
    let bad = Tunables::resolve(
        "anticipatory",
        Anticipatory::TUNABLES,
        &[("antic_expire".to_string(), "-1".to_string())],
    );
    assert!(bad.is_err());
}

#[test]
fn empty_queue_dispatches_nothing() {
    let mut s = scheduler(&[]);
    assert_eq!(s.dispatch(0), Dispatch::Empty);
    serve_alone(&mut s, read(1, P, 100), 0, ms(5));
    // Anticipating P with nothing queued is not a wait: there is nothing to hold back.
    assert_eq!(s.dispatch(ms(5)), Dispatch::Empty);
    assert_eq!(s.queued(), 0);
}

#[test]
fn anticipation_times_out_at_antic_expire() {
    let mut s = anticipating_on_p();
    // Woken early (some other event), it keeps waiting for the same deadline.
    assert_eq!(waits_until(&mut s, ms(5)), ms(8));
    assert_eq!(waits_until(&mut s, ms(8) - 1), ms(8));
    // An async write from another process is no reason to stop.
    s.insert(async_write(4, W, 2 * FAR), ms(6));
    assert_eq!(s.anticipation_state(), AnticipationState::WaitNext);
    let rq = next(&mut s, ms(8));
    assert_eq!(rq.id, RequestId(3));
    assert_eq!(s.anticipation_state(), AnticipationState::Off);
    assert_eq!(s.anticipated_process(), Some(Q));
    // P had a think-time history, so the timeout says nothing about exits.
    assert_eq!(s.estimates().exit_probability, 0);
}

#[test]
fn a_timeout_on_a_process_without_history_raises_the_exit_probability() {
    let mut s = scheduler(&[("antic_expire", "10")]);
    serve_alone(&mut s, read(1, P, 0), 0, ms(1));
    s.insert(read(2, Q, FAR), ms(1));
    assert_eq!(waits_until(&mut s, ms(1)), ms(11));
    assert_eq!(next(&mut s, ms(11)).id, RequestId(2));
    assert_eq!(s.estimates().exit_probability, 32);
}

#[test]
fn a_read_from_the_anticipated_process_breaks_anticipation() {
    let mut s = anticipating_on_p();
    // P's next read is even farther than Q's: it breaks the wait because it is P's.
    s.insert(read(4, P, 2 * FAR), ms(2) + us(20));
    assert_eq!(s.anticipation_state(), AnticipationState::Finished);
    // The elevator then resumes: Q's read is nearer the head.
    assert_eq!(next(&mut s, ms(2) + us(20)).id, RequestId(3));

    // The usual case: P's next sequential read goes at once.
    let mut s = anticipating_on_p();
    s.insert(read(4, P, 16), ms(2) + us(20));
    assert_eq!(next(&mut s, ms(2) + us(20)).id, RequestId(4));
}

#[test]
fn a_sync_write_from_the_anticipated_process_breaks_anticipation() {
    let mut s = anticipating_on_p();
    // An O_SYNC write (likely an fsync): no read is coming.
    s.insert(sync_write(4, P, 2 * FAR), ms(3));
    assert_eq!(s.anticipation_state(), AnticipationState::Finished);
    assert_eq!(next(&mut s, ms(3)).id, RequestId(3));

    // Its buffered writes count too.
    let mut s = anticipating_on_p();
    s.insert(async_write(4, P, 2 * FAR), ms(3));
    assert_eq!(s.anticipation_state(), AnticipationState::Finished);
}

#[test]
fn queued_requests_of_the_anticipated_process_break_anticipation() {
    let mut s = scheduler(&[]);
    // P sends two reads at once (iodepth 2); the second lies beyond Q's read.
    s.insert(read(1, P, 0), 0);
    s.insert(read(2, P, 2 * FAR), 0);
    s.insert(read(3, Q, FAR), 0);
    let first = next(&mut s, 0);
    assert_eq!(first.id, RequestId(1));
    done(&mut s, first, ms(1));
    // Q's read is next in elevator order; P still has a read queued, so waiting for P is
    // pointless.
    assert_eq!(next(&mut s, ms(1)).id, RequestId(3));
}

#[test]
fn requests_of_the_anticipated_process_at_the_device_break_anticipation() {
    let mut s = scheduler(&[]);
    s.insert(read(1, P, 0), 0);
    s.insert(read(2, P, 16), 0);
    let first = next(&mut s, 0);
    let second = next(&mut s, 0);
    assert_eq!((first.id, second.id), (RequestId(1), RequestId(2)));
    s.insert(read(3, Q, FAR), us(10));
    // Two of P's reads are at the device: anticipation waits for one at most.
    assert_eq!(next(&mut s, us(10)).id, RequestId(3));

    // With a single read of P at the device, Q's far read is held back: while
    // anticipating, only one read is in flight.
    let mut s = scheduler(&[]);
    s.insert(read(1, P, 0), 0);
    let first = next(&mut s, 0);
    s.insert(read(3, Q, FAR), us(10));
    let recheck = waits_until(&mut s, us(10));
    assert!(recheck > us(10));
    assert_eq!(s.anticipation_state(), AnticipationState::WaitRequest);
    // It completes: now the timer runs, for antic_expire from that completion.
    done(&mut s, first, ms(1));
    assert_eq!(s.anticipation_state(), AnticipationState::WaitNext);
    assert_eq!(waits_until(&mut s, ms(1)), ms(7));
}

#[test]
fn a_close_request_from_another_process_breaks_anticipation() {
    let mut s = anticipating_on_p();
    // The head is at 16 (the end of P's last read). 4096 sectors ahead is close.
    s.insert(read(4, Q, 16 + 4096), ms(2) + us(10));
    assert_eq!(s.anticipation_state(), AnticipationState::Finished);
    assert_eq!(next(&mut s, ms(2) + us(10)).id, RequestId(4));
    // The cooperating request stood in for P's next one in P's history.
    let p = s.process_estimate(P).expect("P has a history");
    assert_eq!(p.think_time_samples, 60);
    assert_eq!(p.seek_samples, 60);
}

#[test]
fn the_close_window_doubles_for_every_millisecond_waited() {
    // 20000 sectors ahead of the head: beyond 8192 (0 ms waited) and 16384 (1 ms), within
    // 32768 (2 ms).
    let mut s = anticipating_on_p();
    s.insert(read(4, Q, 16 + 20_000), ms(3));
    assert_eq!(s.anticipation_state(), AnticipationState::WaitNext);
    s.insert(read(5, W, 16 + 20_100), ms(4));
    assert_eq!(s.anticipation_state(), AnticipationState::Finished);
    assert_eq!(next(&mut s, ms(4)).id, RequestId(4));
    // Backward, the window is half as wide: 4096 sectors behind at 0 ms.
    let mut s = scheduler(&[]);
    serve_alone(&mut s, read(1, P, 100_000), 0, ms(1));
    serve_alone(&mut s, read(2, P, 100_008), ms(1) + us(20), ms(2));
    s.insert(read(3, Q, 100_016 - 4097), ms(2));
    assert_eq!(waits_until(&mut s, ms(2)), ms(8));
    s.insert(read(4, W, 100_016 - 4096), ms(2));
    assert_eq!(next(&mut s, ms(2)).id, RequestId(4));
}

#[test]
fn a_request_closer_than_the_mean_seek_distance_breaks_anticipation() {
    // P seeks about a million sectors between reads.
    let mut s = scheduler(&[]);
    serve_alone(&mut s, read(1, P, 0), 0, ms(1));
    serve_alone(&mut s, read(2, P, 1_000_000), ms(1) + us(20), ms(2));
    let p = s.process_estimate(P).expect("P has a history");
    assert_eq!(p.seek_distance, 1_000_000 - 8);
    // 1.5 M sectors from the head: farther than P's usual seek, so AS waits.
    s.insert(read(3, Q, 1_000_008 + 1_500_000), ms(2));
    assert_eq!(waits_until(&mut s, ms(2)), ms(8));
    // 0.5 M: better than what P would likely send.
    s.insert(read(4, W, 1_000_008 + 500_000), ms(2) + us(5));
    assert_eq!(s.anticipation_state(), AnticipationState::Finished);
    assert_eq!(next(&mut s, ms(2) + us(5)).id, RequestId(4));
}

#[test]
fn a_long_think_time_breaks_anticipation() {
    let mut s = scheduler(&[]);
    // P thinks 10 ms between reads: longer than antic_expire (6 ms).
    serve_alone(&mut s, read(1, P, 0), 0, ms(1));
    serve_alone(&mut s, read(2, P, 8), ms(11), ms(12));
    assert_eq!(
        s.process_estimate(P).expect("P has a history").think_time,
        ms(10)
    );
    s.insert(read(3, Q, FAR), ms(12));
    assert_eq!(next(&mut s, ms(12)).id, RequestId(3));

    // With antic_expire above P's think time, AS waits for P.
    let mut s = scheduler(&[("antic_expire", "11")]);
    serve_alone(&mut s, read(1, P, 0), 0, ms(1));
    serve_alone(&mut s, read(2, P, 8), ms(11), ms(12));
    s.insert(read(3, Q, FAR), ms(12));
    assert_eq!(waits_until(&mut s, ms(12)), ms(23));
}

#[test]
fn an_exited_process_breaks_anticipation_once_exits_go_unrescued() {
    // Each round: P_k reads twice (a 20 µs think time), Q_k's far read arrives, P_k exits
    // while AS waits for it. At first exits are trusted to be followed by a cooperating
    // process's request, so AS waits out antic_expire; each unrescued exit raises the
    // estimate, and once it passes one half, an exit ends the wait at once.
    let mut s = scheduler(&[]);
    let mut seen = Vec::new();
    for round in 0..7u64 {
        let base = ms(100) * round;
        let (p, q) = (
            ProcessId(10 + 2 * round as u32),
            ProcessId(11 + 2 * round as u32),
        );
        let sector = round * FAR;
        serve_alone(&mut s, read(10 * round, p, sector), base, base + ms(1));
        let second = read(10 * round + 1, p, sector + 8);
        serve_alone(&mut s, second, base + ms(1) + us(20), base + ms(2));
        s.insert(read(10 * round + 2, q, sector + FAR / 2), base + ms(2));
        assert_eq!(waits_until(&mut s, base + ms(2)), base + ms(8));
        s.process_exited(p, base + ms(2) + us(20));
        let served = match s.dispatch(base + ms(2) + us(20)) {
            Dispatch::WaitUntil(t) => {
                assert_eq!(t, base + ms(8), "round {round}");
                next(&mut s, t)
            }
            Dispatch::Request(rq) => {
                assert_eq!(round, 6, "broke early in round {round}");
                rq
            }
            Dispatch::Empty => panic!("Q's read is queued"),
        };
        assert_eq!(served.process, q);
        done(&mut s, served, base + ms(10));
        s.process_exited(q, base + ms(10));
        seen.push(s.estimates().exit_without_cooperation);
    }
    assert_eq!(seen, vec![32, 60, 84, 105, 123, 139, 139]);
    // Exited processes are forgotten once nothing refers to them.
    assert!(s.process_estimate(ProcessId(10)).is_none());
}

#[test]
fn think_time_and_seek_distance_statistics_follow_the_requests() {
    let mut s = scheduler(&[]);
    serve_alone(&mut s, read(1, P, 0), 0, ms(1));
    let first = s.process_estimate(P).expect("P has a history");
    assert_eq!((first.think_time_samples, first.seek_samples), (0, 0));
    // 20 µs after the completion, sequential.
    serve_alone(&mut s, read(2, P, 8), ms(1) + us(20), ms(2));
    let p = s.process_estimate(P).expect("P has a history");
    assert_eq!((p.think_time, p.think_time_samples), (20_000, 32));
    assert_eq!((p.seek_distance, p.seek_samples), (0, 32));
    // P's first samples are the estimates for new processes, at one eighth.
    assert_eq!(s.estimates().new_think_time, 2_500);
    assert_eq!(s.estimates().new_seek_distance, 0);
    // 2 ms later, 984 sectors on: weights 60, think (7·640000 + 256·2000000)/8 / 60.
    serve_alone(&mut s, read(3, P, 1000), ms(4), ms(5));
    let p = s.process_estimate(P).expect("P has a history");
    assert_eq!((p.think_time, p.think_time_samples), (1_076_000, 60));
    assert_eq!((p.seek_distance, p.seek_samples), (525, 60));
    // 30 ms later counts as 20 ms.
    serve_alone(&mut s, read(4, P, 1008), ms(35), ms(36));
    let p = s.process_estimate(P).expect("P has a history");
    assert_eq!((p.think_time, p.think_time_samples), (8_291_548, 84));
    assert_eq!((p.seek_distance, p.seek_samples), (328, 84));
    // Only P's first sample fed the new-process estimates.
    assert_eq!(s.estimates().new_think_time, 2_500);
    // A request arriving while another is outstanding counts as no think time.
    s.insert(read(5, P, 2000), ms(40));
    s.insert(read(6, P, 3000), ms(45));
    let p = s.process_estimate(P).expect("P has a history");
    assert_eq!(p.queued, 2);
    assert_eq!(p.think_time_samples, 123);
    // Async writes do not touch the history.
    s.insert(async_write(7, P, 9000), ms(50));
    assert_eq!(
        s.process_estimate(P).expect("history").think_time_samples,
        123
    );
}

/// Serve every queued request one at a time, each taking `service`, until `until`.
/// Returns each request with its dispatch time.
fn serve(
    s: &mut Anticipatory,
    start: Nanos,
    service: Nanos,
    until: Nanos,
) -> Vec<(Nanos, Request)> {
    let mut now = start;
    let mut out = Vec::new();
    while now < until {
        match s.dispatch(now) {
            Dispatch::Request(rq) => {
                out.push((now, rq.clone()));
                now += service;
                done(s, rq, now);
            }
            Dispatch::WaitUntil(t) => now = t,
            Dispatch::Empty => break,
        }
    }
    out
}

/// Consecutive runs of sync / async dispatches: (sync, length, first dispatch time).
fn batches(served: &[(Nanos, Request)]) -> Vec<(bool, usize, Nanos)> {
    let mut runs: Vec<(bool, usize, Nanos)> = Vec::new();
    for (at, rq) in served {
        match runs.last_mut() {
            Some((sync, len, _)) if *sync == rq.sync => *len += 1,
            _ => runs.push((rq.sync, 1, *at)),
        }
    }
    runs
}

#[test]
fn batches_alternate_with_read_batch_expire_and_a_tuned_write_batch_count() {
    // P has 3000 sequential reads queued, W 3000 buffered writes; each takes 1 ms.
    let mut s = scheduler(&[]);
    for i in 0..3000 {
        s.insert(read(i, P, 16 * i), 0);
        s.insert(async_write(10_000 + i, W, FAR + 16 * i), 0);
    }
    let served = serve(&mut s, 0, ms(1), ms(2200));
    let runs = batches(&served);
    // The sync batch runs while `now <= 500 ms` (its clock started at 0): 501 reads. The
    // async batch spends its budget of 12 in 12 ms, far under 125 ms / 3, so the budget
    // doubles; the next sync batch's clock starts at its first completion (514 ms).
    assert_eq!(
        runs[..8],
        [
            (true, 501, 0),
            (false, 12, ms(501)),
            (true, 502, ms(513)),
            (false, 24, ms(1015)),
            (true, 502, ms(1039)),
            (false, 48, ms(1541)),
            (true, 502, ms(1589)),
            // 48 writes took 49 ms: more than a third of 125 ms, so one more.
            (false, 49, ms(2091)),
        ]
    );
    // And after 49 in 50 ms, one more again.
    assert_eq!(runs[8].2, ms(2140));
    assert_eq!(s.write_batch_count(), 50);
    // The first write's FIFO deadline (250 ms) passed long before its batch (501 ms): the
    // async FIFO is only looked at during async batches. At 2200 ms a sync batch runs.
    assert!(s.sync_batch());
}

#[test]
fn a_slow_write_batch_ends_at_write_batch_expire_and_shrinks_the_budget() {
    // Writes take 20 ms each. The async batch starts at 11 ms with a budget of 12 and a
    // clock running to 136 ms: the 7th write starts at 131 ms, and at 151 ms time is up.
    let mut s = scheduler(&[("read_batch_expire", "10")]);
    for i in 0..100 {
        s.insert(read(i, P, 16 * i), 0);
        s.insert(async_write(1000 + i, W, FAR + 16 * i), 0);
    }
    let mut now = 0;
    let mut served = Vec::new();
    while now < ms(400) {
        match s.dispatch(now) {
            Dispatch::Request(rq) => {
                let took = if rq.sync { ms(1) } else { ms(20) };
                served.push((now, rq.clone()));
                now += took;
                done(&mut s, rq, now);
            }
            Dispatch::WaitUntil(t) => now = t,
            Dispatch::Empty => break,
        }
    }
    let runs = batches(&served);
    let expected = [
        (true, 11, 0),
        (false, 7, ms(11)),
        (true, 12, ms(151)),
        (false, 7, ms(163)),
    ];
    assert_eq!(runs[..4], expected);
    // Each took 141 ms (to the next sync batch's first completion) against 125: over, by
    // less than 3×, so one fewer each time: 12 → 11 → 10.
    assert_eq!(s.write_batch_count(), 10);
}

#[test]
fn a_new_batch_starts_at_its_fifo_head() {
    let mut s = scheduler(&[]);
    serve_alone(&mut s, read(1, P, 100), 0, ms(1));
    // Two buffered writes, the far one first: the FIFO head.
    s.insert(async_write(2, W, 5_000_000), ms(1));
    s.insert(async_write(3, W, 1_000), ms(1));
    // Only writes are queued, but AS first waits for P's next read...
    assert_eq!(waits_until(&mut s, ms(1)), ms(7));
    // ...then changes to an async batch starting at its FIFO head, not the nearest write.
    let write = next(&mut s, ms(7));
    assert_eq!(write.id, RequestId(2));
    assert!(!s.sync_batch());
    // Reads arrive during the async batch, the far one first.
    s.insert(read(4, Q, 9_000_000), ms(8));
    s.insert(read(5, Q, 200), ms(8));
    done(&mut s, write, ms(9));
    // The batch goes on with the other write (5 M sectors behind the head: it wraps, and is
    // still the only one).
    let write = next(&mut s, ms(9));
    assert_eq!(write.id, RequestId(3));
    done(&mut s, write, ms(10));
    // Nothing async is left: a sync batch starts at its FIFO head (9 M), not at sector 200.
    let read_at = next(&mut s, ms(10));
    assert_eq!(read_at.id, RequestId(4));
    assert!(s.sync_batch());
}

#[test]
fn an_expired_read_is_served_at_the_next_fifo_check_only() {
    let mut s = scheduler(&[]);
    // Q's far read arrives first: the sync FIFO head, deadline 125 ms.
    s.insert(read(1, Q, FAR), 0);
    for i in 0..1000 {
        s.insert(read(10 + i, P, 16 * i), us(1));
    }
    let served = serve(&mut s, 0, ms(1), ms(300));
    let at = |id: u64| {
        served
            .iter()
            .find(|(_, rq)| rq.id == RequestId(id))
            .map(|&(at, _)| at)
    };
    // The FIFO is checked at 125 ms, when the head is due but not yet past its deadline,
    // and not again until 250 ms: that is when Q's read goes.
    assert_eq!(at(1), Some(ms(250)));
    // P's stream ran until then, in sector order.
    assert_eq!(
        served[..250]
            .iter()
            .filter(|(_, rq)| rq.process == P)
            .count(),
        250
    );
    // After it, AS waits for Q (new processes are assumed to come back) before P resumes.
    let after = served
        .iter()
        .find(|(at, _)| *at > ms(250))
        .expect("P resumes");
    assert_eq!(after.0, ms(257));
    assert_eq!(after.1.process, P);
}

/// What a process does in a closed-loop run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Reads,
    SyncWrites,
    AsyncWrites,
}

/// A closed-loop run: each process keeps one sequential request outstanding and sends the
/// next 20 µs after a completion, on a device taking `service` per request. The policy is
/// asked to dispatch at every completion, before the process's next request arrives.
/// Returns the processes in the order they were served, and how many waits were answered.
fn closed_loop(
    s: &mut Anticipatory,
    streams: &[(ProcessId, Stream, u64)],
    service: Nanos,
    duration: Nanos,
) -> (Vec<ProcessId>, usize) {
    let mut now: Nanos = 0;
    let mut next_id = 0;
    // Per process: next sector, and when its next request arrives.
    let mut state: Vec<(u64, Option<Nanos>)> =
        streams.iter().map(|&(_, _, at)| (at, Some(0))).collect();
    let mut busy: Option<(Nanos, Request)> = None;
    let mut wake: Option<Nanos> = None;
    let (mut served, mut waits) = (Vec::new(), 0);
    while now < duration {
        if let Some((_, rq)) = busy.take_if(|(end, _)| *end <= now) {
            let index = streams
                .iter()
                .position(|&(p, _, _)| p == rq.process)
                .expect("known");
            state[index].1 = Some(now + us(20));
            served.push(rq.process);
            done(s, rq, now);
        }
        for (&(process, stream, _), (sector, arrival)) in streams.iter().zip(state.iter_mut()) {
            if arrival.is_some_and(|at| at <= now) {
                let rq = match stream {
                    Stream::Reads => read(next_id, process, *sector),
                    Stream::SyncWrites => sync_write(next_id, process, *sector),
                    Stream::AsyncWrites => async_write(next_id, process, *sector),
                };
                next_id += 1;
                *sector += 128;
                *arrival = None;
                s.insert(rq, now);
            }
        }
        if busy.is_none() {
            wake = None;
            match s.dispatch(now) {
                Dispatch::Request(rq) => busy = Some((now + service, rq)),
                Dispatch::WaitUntil(t) => {
                    waits += 1;
                    wake = Some(t);
                }
                Dispatch::Empty => {}
            }
        }
        let arrivals = state.iter().filter_map(|&(_, at)| at);
        now = arrivals
            .chain(busy.as_ref().map(|(end, _)| *end))
            .chain(wake)
            .min()
            .expect("something is always pending");
    }
    (served, waits)
}

/// Requests served per process.
fn count(served: &[ProcessId], process: ProcessId) -> usize {
    served.iter().filter(|&&p| p == process).count()
}

#[test]
fn antic_expire_zero_behaves_like_deadline() {
    // The anticipation scenario with antic_expire=0: Q's far read goes at once.
    let mut s = scheduler(&[("antic_expire", "0")]);
    serve_alone(&mut s, read(1, P, 0), 0, ms(1));
    serve_alone(&mut s, read(2, P, 8), ms(1) + us(20), ms(2));
    s.insert(read(3, Q, FAR), ms(2));
    assert_eq!(next(&mut s, ms(2)).id, RequestId(3));

    // Two sequential readers far apart: without anticipation the disk never idles, and
    // each completion hands it to the other reader (deceptive idleness: a seek each time).
    let streams = [(P, Stream::Reads, 0), (Q, Stream::Reads, FAR)];
    let mut s = scheduler(&[("antic_expire", "0")]);
    let (served, waits) = closed_loop(&mut s, &streams, ms(1), ms(200));
    assert_eq!(waits, 0);
    assert!(served.len() >= 199);
    assert!(served.windows(2).all(|pair| pair[0] != pair[1]));
    // With anticipation each reader keeps the disk for a stretch: each read costs 1 ms plus
    // the reader's 20 µs think time, during which AS waits for it. P streams until the
    // first FIFO check after Q's read expired (125 ms): at P's 123rd completion, 125.44 ms;
    // from then on AS anticipates Q, whose stream keeps the disk for the rest of the run.
    let mut s = scheduler(&[]);
    let (served, waits) = closed_loop(&mut s, &streams, ms(1), ms(200));
    assert_eq!((served.len(), waits), (196, 195));
    assert_eq!(served.iter().position(|&p| p == Q), Some(123));
    assert_eq!(count(&served[123..], Q), 196 - 123);
}

#[test]
fn a_streaming_reader_starves_an_async_writer_with_one_write_outstanding() {
    // Seed 003's reader-versus-writer shape. When the writer's requests are async, its
    // next write has not arrived yet whenever its one-request batch would continue, so each
    // async batch is a single write, followed by a full read_batch_expire of reads.
    let streams = [(P, Stream::Reads, 0), (W, Stream::AsyncWrites, FAR)];
    let mut s = scheduler(&[]);
    let (served, _) = closed_loop(&mut s, &streams, ms(1), ms(10_000));
    let (reads, writes) = (count(&served, P), count(&served, W));
    assert!(reads > 9_500, "{reads} reads");
    assert!(writes <= 25, "{writes} writes");
    // As sync requests (O_DIRECT as later kernels flag it) the writer shares the sync FIFO
    // with the reader and takes over at every read_expire check: far from starved.
    let streams = [(P, Stream::Reads, 0), (W, Stream::SyncWrites, FAR)];
    let mut s = scheduler(&[]);
    let (served, _) = closed_loop(&mut s, &streams, ms(1), ms(10_000));
    let (reads, writes) = (count(&served, P), count(&served, W));
    assert!(
        writes > 2_500 && reads > 2_500,
        "{reads} reads, {writes} writes"
    );
}

/// One step of a random workload.
#[derive(Debug, Clone)]
enum Op {
    Insert {
        kind: u8,
        slot: u64,
        sectors: u32,
        process: u32,
    },
    Dispatch,
    Complete(usize),
    Advance(u64),
    Exit(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0u8..3, 0u64..64, 1u32..24, 0u32..3).prop_map(|(kind, slot, sectors, process)| {
            Op::Insert { kind, slot, sectors, process }
        }),
        4 => Just(Op::Dispatch),
        3 => (0usize..8).prop_map(Op::Complete),
        2 => (0u64..30).prop_map(Op::Advance),
        1 => (0u32..3).prop_map(Op::Exit),
    ]
}

/// Complete everything at the device, then dispatch (completing each at once, waiting
/// when told to) until nothing is left. Returns what was dispatched.
fn drain(s: &mut Anticipatory, in_flight: Vec<Request>, mut now: Nanos) -> Vec<Request> {
    for rq in in_flight {
        done(s, rq, now);
    }
    let mut out = Vec::new();
    for _ in 0..100_000 {
        match s.dispatch(now) {
            Dispatch::Request(rq) => {
                out.push(rq.clone());
                done(s, rq, now);
            }
            Dispatch::WaitUntil(t) => {
                assert!(t > now, "a wait must end in the future");
                now = t;
            }
            Dispatch::Empty => return out,
        }
    }
    panic!("drain did not finish");
}

proptest! {
    #[test]
    fn every_inserted_request_is_dispatched_exactly_once(
        ops in proptest::collection::vec(op(), 1..300),
        antic_expire in prop::sample::select(vec![0u32, 1, 6]),
        read_expire in prop::sample::select(vec![0u32, 10, 125]),
        batch_expire in prop::sample::select(vec![0u32, 20, 500]),
    ) {
        let mut s = scheduler(&[
            ("antic_expire", &antic_expire.to_string()),
            ("read_expire", &read_expire.to_string()),
            ("write_expire", &(2 * read_expire).to_string()),
            ("read_batch_expire", &batch_expire.to_string()),
            ("write_batch_expire", &(batch_expire / 4).to_string()),
        ]);
        let mut inserted = BTreeMap::new();
        let mut dispatched = BTreeSet::new();
        let mut in_flight: Vec<Request> = Vec::new();
        let mut exited = BTreeSet::new();
        let mut now = 0;
        for (id, op) in (0u64..).zip(ops) {
            match op {
                Op::Insert { kind, slot, sectors, process } => {
                    if exited.contains(&process) {
                        continue;
                    }
                    let base = Request::new(RequestId(id), ProcessId(process), Direction::Read, slot * 8, sectors);
                    let rq = match kind {
                        0 => base,
                        1 => Request { direction: Direction::Write, ..base },
                        _ => Request { direction: Direction::Write, sync: false, ..base },
                    };
                    inserted.insert(id, rq.clone());
                    s.insert(rq, now);
                }
                Op::Dispatch => match s.dispatch(now) {
                    Dispatch::Request(rq) => {
                        account(&rq, &inserted, &mut dispatched)?;
                        in_flight.push(rq);
                    }
                    Dispatch::Empty => prop_assert_eq!(s.queued(), 0),
                    Dispatch::WaitUntil(t) => {
                        prop_assert!(t > now, "wait until {} at {}", t, now);
                        prop_assert!(s.queued() > 0);
                    }
                },
                Op::Complete(index) => {
                    if !in_flight.is_empty() {
                        let rq = in_flight.remove(index % in_flight.len());
                        done(&mut s, rq, now);
                    }
                }
                Op::Advance(step) => now += ms(step),
                Op::Exit(process) => {
                    exited.insert(process);
                    s.process_exited(ProcessId(process), now);
                }
            }
            // queued() is exact: a copy drains in exactly that many dispatches.
            let mut copy = s.clone();
            prop_assert_eq!(drain(&mut copy, in_flight.clone(), now).len(), s.queued());
        }
        for rq in drain(&mut s, in_flight, now) {
            account(&rq, &inserted, &mut dispatched)?;
        }
        prop_assert_eq!(s.queued(), 0);
        prop_assert_eq!(dispatched.len(), inserted.len());
    }
}
