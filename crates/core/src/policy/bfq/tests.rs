//! Unit tests of BFQ's pieces working together; behaviour tests are in `crates/core/tests/bfq.rs`.

use super::*;
use crate::time::us;
use crate::{Direction, RequestId};

fn bfq(settings: &[(&str, &str)]) -> Bfq {
    let settings: Vec<(String, String)> = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let tunables = Tunables::resolve("bfq", Bfq::TUNABLES, &settings).expect("tunables");
    let context = SchedulerContext {
        rotational: true,
        queue_depth: 31,
        ..SchedulerContext::default()
    };
    Bfq::new(&tunables, &context).expect("bfq")
}

#[test]
fn a_lone_sequential_reader_is_served_at_once_after_each_arrival() {
    let mut policy = bfq(&[]);
    let mut now = 0;
    for i in 0..300u64 {
        let request = Request {
            submit_time: now,
            ..Request::new(RequestId(i), ProcessId(1), Direction::Read, i * 8, 8)
        };
        assert_eq!(policy.insert(request, now), Inserted::Queued);
        let Dispatch::Request(sent) = policy.dispatch(now) else {
            panic!("request {i} held back at {now}");
        };
        now += us(100);
        let completion = Completion {
            request: sent,
            dispatch_time: now - us(100),
            error: None,
        };
        policy.complete(&completion, now);
        assert!(matches!(
            policy.dispatch(now),
            Dispatch::Empty | Dispatch::WaitUntil(_)
        ));
        now += us(10);
    }
}

fn read_from(
    id: u64,
    process: u32,
    sector: u64,
    priority: crate::IoPriority,
    now: Nanos,
) -> Request {
    Request {
        submit_time: now,
        priority,
        ..Request::new(
            RequestId(id),
            ProcessId(process),
            Direction::Read,
            sector,
            8,
        )
    }
}

fn done(policy: &mut Bfq, request: Request, now: Nanos) {
    let completion = Completion {
        request,
        dispatch_time: now,
        error: None,
    };
    policy.complete(&completion, now);
}

#[test]
fn while_idling_for_a_seeky_queue_another_queue_is_injected() {
    let (mut policy, heavy_queue, now) = idling_for_a_seeky_queue(&[]);
    let injected = policy.inject(heavy_queue, now).expect("a request injected");
    assert_eq!(injected.process, ProcessId(2));
    assert!(policy.injection.injected_since_measure);
}

#[test]
fn injection_takes_the_most_recently_activated_queue() {
    // Processes 3 and then 4 become busy after process 2: the kernel walks its busy list
    // newest first, so process 4 is injected, whatever the queues' indexes.
    let (mut policy, heavy_queue, now) = idling_for_a_seeky_queue(&[3, 4]);
    let injected = policy.inject(heavy_queue, now).expect("a request injected");
    assert_eq!(injected.process, ProcessId(4));
}

/// BFQ idling for a seeky BE0 queue (process 1) whose weight differs from a backlogged BE7
/// queue's (process 2); then each of `newcomers` submits one BE7 read, in order. Returns the
/// policy, the seeky queue and the time.
fn idling_for_a_seeky_queue(newcomers: &[u32]) -> (Bfq, QueueId, Nanos) {
    use crate::{IoPriority, PriorityClass};
    let mut policy = bfq(&[("low_latency", "0")]);
    let heavy = IoPriority::new(PriorityClass::BestEffort, 0).expect("level");
    let light = IoPriority::new(PriorityClass::BestEffort, 7).expect("level");
    // The heavy queue seeks all over: idling for it does not boost throughput, but the
    // weights differ, so BFQ idles for it to keep its share — and injects meanwhile.
    let mut now = 0;
    let mut id = 0;
    for step in 0..40u64 {
        id += 1;
        policy.insert(read_from(id, 1, (step * 7919 % 97) << 20, heavy, now), now);
        id += 1;
        policy.insert(read_from(id, 2, (1 << 34) + step * 8, light, now), now);
        let Dispatch::Request(first) = policy.dispatch(now) else {
            panic!("something to send");
        };
        now += us(500);
        done(&mut policy, first, now);
        while let Dispatch::Request(request) = policy.dispatch(now) {
            now += us(500);
            done(&mut policy, request, now);
        }
    }
    let heavy_queue = policy.sync_queues[&ProcessId(1)];
    policy.in_service = Some(heavy_queue);
    assert!(policy.idle_inputs(heavy_queue).seeky);
    assert!(!policy
        .idle_inputs(heavy_queue)
        .boosts_throughput_without_issues());
    // Drain the heavy queue, then let it idle with the light queue backlogged.
    id += 1;
    policy.insert(read_from(id, 2, (1 << 34) + 10_000, light, now), now);
    for &process in newcomers {
        id += 1;
        let sector = (2 << 34) + u64::from(process) * (1 << 30);
        policy.insert(read_from(id, process, sector, light, now), now);
    }
    let idle = policy.idle_inputs(heavy_queue).idle_time();
    policy.start_idling(idle, now);
    (policy, heavy_queue, now)
}

#[test]
fn max_budget_follows_the_measured_peak_rate_in_auto_mode() {
    let mut policy = bfq(&[("low_latency", "0")]);
    let mut now = 0;
    for i in 0..4000u64 {
        let request = Request {
            submit_time: now,
            ..Request::new(RequestId(i), ProcessId(1), Direction::Read, i * 256, 256)
        };
        policy.insert(request, now);
        let Dispatch::Request(sent) = policy.dispatch(now) else {
            panic!("held back");
        };
        // 256 sectors per ms: 0.256 sectors/µs, well above the initial estimate.
        now += us(1000);
        done(&mut policy, sent, now);
    }
    assert!(policy.budgets.assigned >= budget::MIN_BUDGETS_FOR_AUTO);
    let expected = policy.peak.max_budget(ms(125));
    assert_eq!(policy.budgets.max, expected);
    assert!(
        policy.budgets.max > budget::DEFAULT_MAX_BUDGET,
        "{}",
        policy.budgets.max
    );

    let fixed = bfq(&[("max_budget", "4096")]);
    assert_eq!(fixed.budgets.max, 4096);
}

#[test]
fn a_released_waker_leaves_the_queues_it_woke_without_a_waker() {
    let mut policy = bfq(&[]);
    let now = 0;
    let priority = crate::IoPriority::default();
    // Two processes, one request each, served and completed: both queues idle.
    for (id, process) in [(1, 1), (2, 2)] {
        policy.insert(read_from(id, process, id << 20, priority, now), now);
    }
    while let Dispatch::Request(request) = policy.dispatch(now) {
        done(&mut policy, request, now);
    }
    let waker = policy.sync_queues[&ProcessId(1)];
    let woken = policy.sync_queues[&ProcessId(2)];
    policy.queue_mut(woken).waker = Some(waker);
    policy.change_waker(None, waker);
    assert_eq!(policy.queue(waker).woken, 1);
    policy.process_exited(ProcessId(1), now);
    assert!(
        policy.queues[waker].is_none(),
        "the exited process's queue is released"
    );
    assert_eq!(policy.queue(woken).waker, None);
}

/// Two processes each issue one read at a time, and the policy serves them to completion;
/// `sector_of(process, round)` says where each read is.
fn two_readers(
    policy: &mut Bfq,
    rounds: std::ops::Range<u64>,
    now: &mut Nanos,
    sector_of: impl Fn(u32, u64) -> u64,
) {
    let priority = crate::IoPriority::default();
    for round in rounds {
        for process in [1, 2] {
            let id = round * 2 + u64::from(process);
            let request = read_from(id, process, sector_of(process, round), priority, *now);
            policy.insert(request, *now);
        }
        // Served one at a time; the two reads may have been merged into one.
        let mut completed = 0;
        while completed < 2 {
            match policy.dispatch(*now) {
                Dispatch::Request(request) => {
                    *now += us(500);
                    completed += request.ids().count();
                    done(policy, request, *now);
                }
                Dispatch::WaitUntil(at) => *now = at,
                Dispatch::Empty => panic!("a queued read was not dispatched"),
            }
        }
    }
}

#[test]
fn interleaved_readers_share_a_queue_until_it_turns_seeky() {
    let mut policy = bfq(&[]);
    let mut now = us(10);
    // Each reads its own 8-sector chunk of one stream: process 1 the even chunks, 2 the odd.
    let interleaved = |process: u32, round: u64| (round * 2 + u64::from(process) - 1) * 8;
    two_readers(&mut policy, 0..4, &mut now, interleaved);
    let first = policy.sync_queues[&ProcessId(1)];
    assert_eq!(
        policy.sync_queues[&ProcessId(2)],
        first,
        "the second process was merged into the first one's queue"
    );
    assert!(policy.queue(first).coop);
    assert_eq!(policy.queue(first).processes, 2);
    // Then both jump around the disk: once the shared queue is seeky, each process gets a
    // queue of its own at its next request.
    let random = |process: u32, round: u64| (round * 7919 + u64::from(process) * 104_729) << 12;
    two_readers(&mut policy, 4..80, &mut now, random);
    let (one, two) = (
        policy.sync_queues[&ProcessId(1)],
        policy.sync_queues[&ProcessId(2)],
    );
    assert_ne!(one, two, "split again");
    assert!(!policy.queue(one).coop && !policy.queue(two).coop);
    assert_eq!(
        (policy.queue(one).processes, policy.queue(two).processes),
        (1, 1)
    );
}
