//! The kyber elevator against its public API, with a fake clock: time is a `u64` we pass
//! in. Domain rotation with the kernel's batches, tokens bounding each domain's requests at
//! the device, the timer shrinking the write depth when reads are congested and growing it
//! back when writes run late; and, for random operation mixes, every request dispatched
//! exactly once with no domain ever past its tokens.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use ioslice_core::policy::kyber::domain::Domain;
use ioslice_core::policy::kyber::Kyber;
use ioslice_core::time::ms;
use ioslice_core::tunable::Tunables;
use ioslice_core::{
    Completion, Direction, Dispatch, Nanos, ProcessId, Request, RequestId, Scheduler, TraceEvent,
};
use proptest::prelude::*;

use common::{account, tunables};

fn kyber(settings: &[(&str, &str)]) -> Kyber {
    Kyber::new(&tunables("kyber", Kyber::TUNABLES, settings))
}

/// A 4 KiB request far from every other (no merging), submitted at `now`.
fn request(id: u64, direction: Direction, now: Nanos) -> Request {
    Request {
        submit_time: now,
        ..Request::new(RequestId(id), ProcessId(1), direction, id * 1024, 8)
    }
}

fn complete(policy: &mut Kyber, rq: &Request, dispatched: Nanos, now: Nanos) {
    let done = Completion {
        request: rq.clone(),
        dispatch_time: dispatched,
        error: None,
    };
    policy.complete(&done, now);
}

/// Dispatch at `now` until the policy answers anything but a request.
fn dispatch_all(policy: &mut Kyber, now: Nanos) -> Vec<Request> {
    let mut out = Vec::new();
    while let Dispatch::Request(rq) = policy.dispatch(now) {
        out.push(rq);
    }
    out
}

#[test]
fn tunables_are_the_kernels() {
    let policy = kyber(&[]);
    assert_eq!(policy.name(), "kyber");
    let defaults: Vec<_> = Kyber::TUNABLES
        .iter()
        .map(|def| (def.name, def.default, def.unit))
        .collect();
    assert_eq!(
        defaults[..2],
        [
            ("read_lat_nsec", 2_000_000, "ns"),
            ("write_lat_nsec", 10_000_000, "ns")
        ]
    );
    let bad = vec![("read_lat_nsec".to_string(), "-1".to_string())];
    let message = Tunables::resolve("kyber", Kyber::TUNABLES, &bad)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("read_lat_nsec") && message.contains("'-1'"),
        "{message}"
    );
    for domain in Domain::ALL {
        assert_eq!(policy.depth(domain), domain.max_depth());
    }
}

/// Reads go 16 at a time and writes 8: 16 reads, 8 writes, the last 4 reads, then the
/// writes, each completing before the next dispatch.
#[test]
fn domains_rotate_in_batches() {
    let mut policy = kyber(&[]);
    for id in 0..20 {
        policy.insert(request(id, Direction::Read, 0), 0);
        policy.insert(request(100 + id, Direction::Write, 0), 0);
    }
    let mut order = Vec::new();
    while let Dispatch::Request(rq) = policy.dispatch(0) {
        complete(&mut policy, &rq, 0, 0);
        order.push(rq.id.0);
    }
    let expected: Vec<u64> = (0..16)
        .chain(100..108)
        .chain(16..20)
        .chain(108..120)
        .collect();
    assert_eq!(order, expected);
    assert_eq!(policy.queued(), 0);
}

/// Each domain has at most its tokens at the device; a completion gives one back, and a
/// domain out of tokens does not hold back another.
#[test]
fn tokens_bound_each_domain_at_the_device() {
    let mut policy = kyber(&[]);
    for id in 0..200 {
        policy.insert(request(id, Direction::Write, 0), 0);
    }
    let sent = dispatch_all(&mut policy, 0);
    assert_eq!(sent.len(), 128);
    assert_eq!(policy.in_flight(Domain::Write), 128);
    assert_eq!(policy.queued(), 72);
    policy.insert(request(500, Direction::Read, 0), 0);
    assert_eq!(
        dispatch_all(&mut policy, 0)
            .iter()
            .map(|rq| rq.id.0)
            .collect::<Vec<_>>(),
        vec![500]
    );
    complete(&mut policy, &sent[0], 0, ms(1));
    let next = dispatch_all(&mut policy, ms(1));
    assert_eq!(next.iter().map(|rq| rq.id.0).collect::<Vec<_>>(), vec![128]);
}

/// One round at `now`: `reads` reads and `writes` writes inserted and dispatched, reads
/// completing `read_latency` later and writes `write_latency` later. Returns when the
/// last completes.
fn round(
    policy: &mut Kyber,
    next_id: &mut u64,
    now: Nanos,
    (reads, read_latency): (u64, Nanos),
    (writes, write_latency): (u64, Nanos),
) -> Nanos {
    for _ in 0..reads {
        policy.insert(request(*next_id, Direction::Read, now), now);
        *next_id += 1;
    }
    for _ in 0..writes {
        policy.insert(request(*next_id, Direction::Write, now), now);
        *next_id += 1;
    }
    let mut sent = dispatch_all(policy, now);
    assert_eq!(sent.len() as u64, reads + writes, "all fit in the tokens");
    let latency = |rq: &Request| match rq.direction {
        Direction::Read => read_latency,
        // This round inserts no discards; one would be served like a write.
        Direction::Write | Direction::Discard => write_latency,
    };
    sent.sort_by_key(|rq| (latency(rq), rq.id));
    for rq in &sent {
        complete(policy, rq, now, now + latency(rq));
    }
    now + read_latency.max(write_latency)
}

/// Reads at 1.5 times their 2 ms target beside writes well within their 10 ms: when the
/// timer fires, 100 ms after the first completion, the reads' I/O p90 says the device is
/// congested, so the writes, whose p99 is in the second quarter of their target, are cut
/// to half their depth (128 to 64); the reads' own depth would grow, but 256 is its most.
/// Then the writes, throttled to 64 at a time, wait in the queue: their p99 total latency
/// passes 1¾ of the target, and the next timer doubles their depth back to 128.
#[test]
fn write_depth_shrinks_under_slow_reads_and_recovers_when_writes_run_late() {
    let mut policy = kyber(&[]);
    policy.set_tracing(true);
    let mut id = 0;
    let mut now = 0;
    for _ in 0..5 {
        now = round(&mut policy, &mut id, now, (250, ms(3)), (100, ms(4)));
    }
    assert_eq!(now, ms(20));
    assert_eq!(policy.timer(), Some(ms(103)));
    assert_eq!(policy.dispatch(ms(100)), Dispatch::Empty);
    assert_eq!(policy.depth(Domain::Write), 128, "the timer has not fired");
    assert_eq!(policy.dispatch(ms(103)), Dispatch::Empty);
    assert_eq!(policy.depth(Domain::Write), 64);
    assert_eq!(policy.depth(Domain::Read), 256);
    assert_eq!(policy.timer(), None);

    // 500 writes at 200 ms: 64 at a time, each taking 3 ms at the device.
    now = ms(200);
    let writes: Vec<Request> = (0..500)
        .map(|n| request(10_000 + n, Direction::Write, now))
        .collect();
    for rq in &writes {
        policy.insert(rq.clone(), now);
    }
    let mut waves = 0;
    while policy.queued() > 0 {
        let sent = dispatch_all(&mut policy, now);
        assert!(sent.len() <= 64, "{} writes at the device", sent.len());
        assert_eq!(policy.in_flight(Domain::Write), sent.len());
        for rq in &sent {
            complete(&mut policy, rq, now, now + ms(3));
        }
        now += ms(3);
        waves += 1;
    }
    assert_eq!(waves, 8, "500 writes, 64 at a time");
    assert_eq!(policy.depth(Domain::Write), 64);
    // The last wave waited 21 ms and took 3 more: past 17.5 ms, the last bucket.
    policy.dispatch(ms(303));
    assert_eq!(policy.depth(Domain::Write), 128);
    assert_eq!(policy.depth(Domain::Read), 256);
    // The trace has both changes and nothing else (no request merged).
    let mut events = Vec::new();
    policy.drain_trace(&mut events);
    let depth = |from, depth, p99, congested| TraceEvent::DomainDepth {
        domain: "write",
        from,
        depth,
        p99,
        congested,
    };
    assert_eq!(
        events,
        vec![depth(128, 64, 1, true), depth(64, 128, 7, false)]
    );
}

/// A lower read target makes the same reads late: with `read_lat_nsec` at 1 ms, reads of
/// 0.9 ms are within it and nothing is throttled; at 0.5 ms they are past it and the writes
/// are cut.
#[test]
fn the_read_target_is_tunable() {
    for (target, write_depth) in [("1000000", 128), ("500000", 64)] {
        let mut policy = kyber(&[("read_lat_nsec", target)]);
        let mut id = 0;
        let mut now = 0;
        for _ in 0..5 {
            now = round(&mut policy, &mut id, now, (250, 900_000), (100, ms(4)));
        }
        policy.dispatch(now + ms(200));
        assert_eq!(policy.depth(Domain::Write), write_depth, "target {target}");
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert {
        write: bool,
        process: u32,
        slot: u64,
        sectors: u32,
    },
    Dispatch,
    /// Complete the oldest request at the device, if any.
    Complete,
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (any::<bool>(), 1u32..3, 0u64..64, 1u32..24).prop_map(|(write, process, slot, sectors)| {
            Op::Insert { write, process, slot, sectors }
        }),
        3 => Just(Op::Dispatch),
        2 => Just(Op::Complete),
        1 => (0u64..300).prop_map(Op::Advance),
    ]
}

proptest! {
    /// Every inserted request leaves exactly once, in one dispatched request; no domain
    /// ever has more at the device than its tokens, which stay within 1 and the domain's
    /// most; `Empty` comes with requests queued only while some are at the device; and
    /// `queued()` is exact. Tight targets make the timer resize depths often.
    #[test]
    fn every_request_once_and_no_domain_past_its_tokens(
        ops in proptest::collection::vec(op(), 1..600),
        read_us in 1u64..3000,
        write_us in 1u64..3000,
    ) {
        let (read, write) = ((read_us * 1000).to_string(), (write_us * 1000).to_string());
        let mut policy = kyber(&[("read_lat_nsec", &read), ("write_lat_nsec", &write)]);
        let mut inserted = BTreeMap::new();
        let mut dispatched = BTreeSet::new();
        let mut in_flight: Vec<(Request, Nanos)> = Vec::new();
        let mut now = 0;
        for (id, op) in (0u64..).zip(ops) {
            match op {
                Op::Insert { write, process, slot, sectors } => {
                    let direction = if write { Direction::Write } else { Direction::Read };
                    let rq = Request {
                        submit_time: now,
                        ..Request::new(RequestId(id), ProcessId(process), direction, slot * 8, sectors)
                    };
                    inserted.insert(id, rq.clone());
                    policy.insert(rq, now);
                }
                Op::Dispatch => match policy.dispatch(now) {
                    Dispatch::Request(rq) => {
                        account(&rq, &inserted, &mut dispatched)?;
                        // It took a token: its domain is now at most at its depth.
                        let domain = Domain::of(&rq);
                        prop_assert!(policy.in_flight(domain) <= policy.depth(domain));
                        in_flight.push((rq, now));
                    }
                    Dispatch::Empty => prop_assert!(
                        policy.queued() == 0 || !in_flight.is_empty(),
                        "{} queued, none at the device", policy.queued()
                    ),
                    Dispatch::WaitUntil(t) => prop_assert!(false, "kyber never idles ({})", t),
                },
                Op::Complete => {
                    if !in_flight.is_empty() {
                        let (rq, at) = in_flight.remove(0);
                        complete(&mut policy, &rq, at, now);
                    }
                }
                Op::Advance(step) => now += step * 100_000,
            }
            for domain in Domain::ALL {
                let out = in_flight.iter().filter(|(rq, _)| Domain::of(rq) == domain).count();
                prop_assert_eq!(policy.in_flight(domain), out);
                prop_assert!((1..=domain.max_depth()).contains(&policy.depth(domain)));
            }
        }
        for (rq, at) in in_flight.drain(..) {
            complete(&mut policy, &rq, at, now);
        }
        while let Dispatch::Request(rq) = policy.dispatch(now) {
            account(&rq, &inserted, &mut dispatched)?;
            complete(&mut policy, &rq, now, now);
        }
        prop_assert_eq!(policy.queued(), 0);
        prop_assert_eq!(dispatched.len(), inserted.len());
    }
}
