//! BFQ's parallel service on non-rotational devices (`policy/bfq/parallel.rs`), on a fake
//! clock: closed-loop processes that keep a few requests in flight on a device that serves
//! many at once, each request taking a fixed time. Weights are kept by lingering, the heaviest
//! process is never slowed, nobody is waited for past its window, and every request completes
//! exactly once.

mod common;

use std::collections::BTreeSet;

use ioslice_core::policy::bfq::Bfq;
use ioslice_core::time::{ms, us};
use ioslice_core::{
    Completion, Direction, Dispatch, GroupId, GroupTree, Nanos, ProcessId, Request, RequestId,
    Scheduler, SchedulerContext,
};

/// One closed-loop process: its group, the requests it keeps in flight, and its think time
/// between a completion and its next request.
#[derive(Debug, Clone, Copy)]
struct Process {
    group: GroupId,
    depth: usize,
    think: Nanos,
}

/// A device that serves up to `slots` requests at once, each in `service`.
struct Harness {
    policy: Bfq,
    now: Nanos,
    slots: usize,
    service: Nanos,
    processes: Vec<Process>,
    /// Per process: requests in the policy or at the device, when its next request is due
    /// (`None`: none due), next sector, and requests completed.
    outstanding: Vec<usize>,
    next_submit: Vec<Option<Nanos>>,
    position: Vec<u64>,
    completed: Vec<u64>,
    /// Processes that stopped issuing.
    stopped: BTreeSet<usize>,
    in_flight: Vec<(Nanos, Request)>,
    next_id: u64,
    done_ids: BTreeSet<u64>,
    most_in_flight: usize,
    /// Times the policy held queued requests back while the device had room.
    holds: usize,
    /// Requests dispatched later than they were submitted.
    delayed: usize,
}

const SECTORS: u32 = 8;

impl Harness {
    fn new(settings: &[(&str, &str)], groups: GroupTree, processes: Vec<Process>) -> Self {
        let tunables = common::tunables("bfq", Bfq::TUNABLES, settings);
        let context = SchedulerContext {
            groups,
            rotational: false,
            queue_depth: 64,
        };
        let policy = Bfq::new(&tunables, &context).expect("valid configuration");
        let count = processes.len();
        Self {
            policy,
            now: 0,
            slots: 64,
            service: us(20),
            processes,
            outstanding: vec![0; count],
            next_submit: vec![Some(0); count],
            position: (0..count as u64).map(|i| i << 30).collect(),
            completed: vec![0; count],
            stopped: BTreeSet::new(),
            in_flight: Vec::new(),
            next_id: 0,
            done_ids: BTreeSet::new(),
            most_in_flight: 0,
            holds: 0,
            delayed: 0,
        }
    }

    /// Processes whose next request is due submit it, up to their depth.
    fn submit_due(&mut self) {
        for index in 0..self.processes.len() {
            let process = self.processes[index];
            while self.next_submit[index].is_some_and(|at| at <= self.now)
                && self.outstanding[index] < process.depth
                && !self.stopped.contains(&index)
            {
                let request = Request {
                    group: process.group,
                    submit_time: self.now,
                    ..Request::new(
                        RequestId(self.next_id),
                        ProcessId(index as u32 + 1),
                        Direction::Read,
                        self.position[index],
                        SECTORS,
                    )
                };
                self.next_id += 1;
                self.position[index] += u64::from(SECTORS);
                self.policy.insert(request, self.now);
                self.outstanding[index] += 1;
            }
            if self.outstanding[index] >= process.depth || self.stopped.contains(&index) {
                self.next_submit[index] = None;
            }
        }
    }

    /// Fill the device; returns the policy's "wait until", if it gave one.
    fn dispatch(&mut self) -> Option<Nanos> {
        while self.in_flight.len() < self.slots {
            match self.policy.dispatch(self.now) {
                Dispatch::Request(request) => {
                    self.delayed += usize::from(request.submit_time < self.now);
                    self.in_flight.push((self.now + self.service, request));
                    self.most_in_flight = self.most_in_flight.max(self.in_flight.len());
                }
                Dispatch::WaitUntil(at) => {
                    self.holds += usize::from(self.policy.queued() > 0);
                    // A time now or past is the next nanosecond, as the simulator takes it.
                    return Some(at.max(self.now + 1));
                }
                Dispatch::Empty => {
                    self.holds += usize::from(self.policy.queued() > 0);
                    return None;
                }
            }
        }
        None
    }

    /// Move the clock to the next event: a completion, a due submission, or the policy's
    /// timer.
    fn step(&mut self) {
        self.submit_due();
        let wait = self.dispatch();
        let next_done = self.in_flight.iter().map(|(at, _)| *at).min();
        let next_submit = self.next_submit.iter().flatten().copied().min();
        let next = [next_done, next_submit, wait].into_iter().flatten().min();
        let next = next.unwrap_or_else(|| panic!("stalled at {} ns", self.now));
        self.now = self.now.max(next);
        self.complete_due();
    }

    fn complete_due(&mut self) {
        let now = self.now;
        let mut index = 0;
        while index < self.in_flight.len() {
            if self.in_flight[index].0 > now {
                index += 1;
                continue;
            }
            let (_, request) = self.in_flight.swap_remove(index);
            for id in request.ids() {
                assert!(self.done_ids.insert(id.0), "{id:?} completed twice");
            }
            let process = request.process.0 as usize - 1;
            self.outstanding[process] -= request.ids().count();
            self.completed[process] += request.ids().count() as u64;
            if !self.stopped.contains(&process) {
                self.next_submit[process] = Some(now + self.processes[process].think);
            }
            let completion = Completion {
                request,
                dispatch_time: now - self.service,
                error: None,
            };
            self.policy.complete(&completion, now);
        }
    }

    fn run_until(&mut self, end: Nanos) {
        while self.now < end {
            self.step();
        }
    }

    fn shares(&self) -> Vec<f64> {
        let total: u64 = self.completed.iter().sum();
        self.completed
            .iter()
            .map(|&c| c as f64 / total as f64)
            .collect()
    }
}

/// Groups g1..gN weighted 100, 200, … with one process each.
fn weighted_groups(count: usize, depth: usize, think: Nanos) -> (GroupTree, Vec<Process>) {
    let mut groups = GroupTree::default();
    let mut processes = Vec::new();
    for i in 0..count {
        let id = groups.ensure(&format!("g{}", i + 1)).expect("name");
        groups.set_weight(id, 100 * (i as u32 + 1)).expect("weight");
        processes.push(Process {
            group: id,
            depth,
            think,
        });
    }
    (groups, processes)
}

fn assert_weight_shares(shares: &[f64], tolerance: f64) {
    let weights: Vec<f64> = (1..=shares.len()).map(|w| w as f64).collect();
    let sum: f64 = weights.iter().sum();
    for (share, weight) in shares.iter().zip(&weights) {
        let expected = weight / sum;
        assert!(
            (share - expected).abs() / expected <= tolerance,
            "shares {shares:?} stray more than {:.0}% from the weights",
            tolerance * 100.0
        );
    }
}

#[test]
fn one_request_readers_get_their_weight_shares_at_the_heaviest_readers_pace() {
    // Eight groups weighted 100…800, one reader each keeping one request in flight, 5 µs of
    // think time: the kernel-compare psync workload on a device answering in 20 µs.
    let (groups, processes) = weighted_groups(8, 1, us(5));
    let mut harness = Harness::new(&[], groups, processes);
    harness.run_until(ms(200));
    assert_weight_shares(&harness.shares(), 0.02);
    // The heaviest reader is never held back: one request per 25 µs round trip.
    let alone = ms(200) / us(25);
    let heaviest = harness.completed[7];
    assert!(
        heaviest * 100 >= alone * 97,
        "the heaviest reader did {heaviest} requests, {alone} alone"
    );
    assert!(
        harness.most_in_flight >= 4,
        "several readers at the device at once"
    );
}

#[test]
fn deep_readers_share_a_saturated_device_by_weight_without_idling_it() {
    // Four groups weighted 100…400, eight requests in flight each, on a device with 16 slots:
    // the device is the bottleneck and stays full.
    let (groups, processes) = weighted_groups(4, 8, 0);
    let mut harness = Harness::new(&[], groups, processes);
    harness.slots = 16;
    harness.run_until(ms(100));
    assert_weight_shares(&harness.shares(), 0.02);
    let total: u64 = harness.completed.iter().sum();
    let capacity = ms(100) / us(20) * 16;
    assert!(
        total * 100 >= capacity * 99,
        "{total} requests done, the device could do {capacity}"
    );
}

#[test]
fn with_parallel_off_bfq_serves_one_queue_at_a_time() {
    let (groups, processes) = weighted_groups(4, 1, us(5));
    let mut harness = Harness::new(&[("parallel", "0")], groups, processes);
    harness.run_until(ms(100));
    // The device is held for the queue in service: requests of other queues wait while it
    // has room, and only injection (whose limit grows while it does not slow the queue in
    // service down, as it cannot on this fixed-latency device) sends some of theirs.
    assert!(
        harness.holds > 0,
        "requests held back while the device had room"
    );
    let (groups, processes) = weighted_groups(4, 1, us(5));
    let mut harness = Harness::new(&[], groups, processes);
    harness.run_until(ms(100));
    assert!(harness.most_in_flight >= 3, "{}", harness.most_in_flight);
}

#[test]
fn equal_weights_never_hold_requests_back() {
    let mut groups = GroupTree::default();
    let mut processes = Vec::new();
    for _ in 0..4 {
        processes.push(Process {
            group: GroupId::ROOT,
            depth: 1,
            think: us(5),
        });
    }
    groups.ensure("unused").expect("name");
    let mut harness = Harness::new(&[], groups, processes);
    harness.run_until(ms(50));
    assert_eq!(harness.holds, 0, "a symmetric scenario is work conserving");
    let shares = harness.shares();
    assert!(shares.iter().all(|s| (s - 0.25).abs() < 0.01), "{shares:?}");
}

#[test]
fn a_reader_that_stops_or_exits_is_waited_for_only_within_its_window() {
    for exits in [false, true] {
        let (groups, mut processes) = weighted_groups(2, 1, us(5));
        processes[0].think = 0;
        let mut harness = Harness::new(&[], groups, processes);
        harness.run_until(ms(20));
        // The heavy reader stops issuing (and, the second time, exits). The light one is
        // waited for at most the heavy one's window (twice a 5 µs think time, raised to the
        // 50 µs floor) past its last completion, then runs alone.
        harness.stopped.insert(1);
        if exits {
            harness.policy.process_exited(ProcessId(2), harness.now);
        }
        let light_before = harness.completed[0];
        harness.run_until(ms(30));
        let light_gained = harness.completed[0] - light_before;
        let alone = ms(10) / us(20);
        assert!(
            light_gained + 3 >= alone,
            "exits={exits}: the light reader did {light_gained} requests in 10 ms alone, {alone} possible"
        );
        assert_eq!(
            harness.done_ids.len() as u64,
            harness.completed.iter().sum::<u64>(),
            "every completion counted once"
        );
    }
}

#[test]
fn a_process_that_thinks_long_is_not_waited_for() {
    // The heavy reader thinks 1 ms between requests on a device answering in 20 µs: holding
    // the light reader back for it would idle the device without serving it any faster.
    let (groups, mut processes) = weighted_groups(2, 1, ms(1));
    processes[0].think = 0;
    let mut harness = Harness::new(&[], groups, processes);
    harness.run_until(ms(100));
    let heavy_alone = ms(100) / (ms(1) + us(20));
    assert!(
        harness.completed[1] + 2 >= heavy_alone,
        "{:?}",
        harness.completed
    );
    assert!(
        harness.completed[0] >= ms(90) / us(20),
        "the light reader was held back: {:?}",
        harness.completed
    );
}

/// `count` readers in groups weighted 100, 200, …, each keeping `depth` requests in flight with
/// 5 µs of think time, run for `duration` with `parallel_lead=lead`.
fn run_with_lead(count: usize, depth: usize, lead: &str, duration: Nanos) -> Harness {
    let (groups, processes) = weighted_groups(count, depth, us(5));
    let mut harness = Harness::new(&[("parallel_lead", lead)], groups, processes);
    harness.run_until(duration);
    harness
}

#[test]
fn a_lead_holds_one_request_readers_less_often_and_keeps_their_shares() {
    let delayed_with_lead = |lead: &str| {
        let harness = run_with_lead(8, 1, lead, ms(200));
        assert_weight_shares(&harness.shares(), 0.02);
        harness.delayed
    };
    let (led, unled) = (delayed_with_lead("8"), delayed_with_lead("0"));
    assert!(
        led * 3 <= unled,
        "{led} requests held with a lead of 8, {unled} without"
    );
}

#[test]
fn readers_with_several_requests_in_flight_take_no_lead() {
    let served_with_lead = |lead: &str| {
        let harness = run_with_lead(4, 8, lead, ms(50));
        (harness.completed.clone(), harness.holds)
    };
    let without = served_with_lead("0");
    assert!(without.1 > 0, "the light readers are held at all");
    // The same run is reproducible, so a difference below is the lead's.
    assert_eq!(served_with_lead("0"), without);
    assert_eq!(served_with_lead("64"), without);
}
