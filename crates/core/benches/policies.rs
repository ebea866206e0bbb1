//! Policy CPU cost per request: `insert` + `dispatch` + `complete` of each policy driven
//! directly, with no device model and no simulator around it — what a policy adds on top of
//! `sim:null`'s nothing.
//!
//!     cargo bench -p ioslice-core --bench policies
//!
//! The request stream is the same for every policy: 64 processes in 8 groups (8 per group, all
//! at the default weight; one BFQ variant keeps them all in the root group to show what the
//! groups cost), each a synchronous reader with one request outstanding, issuing
//! sequential 4 KiB reads in a 1 GiB region of its own, with a jump to a random block of that
//! region one time in 32 (a per-process LCG, so the stream is deterministic). The fake device
//! (non-rotational) takes up to 32 commands at once and completes each a fixed 100 µs after its
//! dispatch, so in FIFO order; a process issues its next read the instant its read completes. A
//! `WaitUntil` is answered by moving the clock to that time, unless a completion comes first.
//!
//! The driver state persists across criterion's iterations: each iteration completes 1 000 more
//! requests of one long run, warmed up beforehand, so what is measured is the steady state
//! rather than the start-up phase (weight raising of new queues, the peak-rate estimator).
//! Criterion reports throughput in elements per second; one element is one completed request.
//! Before a policy is timed, a checked run of the same stream asserts that every request
//! completes exactly once, that every process is served, and that the policy drains.
//!
//! The side-by-side pass also runs each policy with tracing on ([`ioslice_core::trace`]),
//! its events drained after every call and dropped, and prints what that costs against the
//! same policy untraced (which pays one branch per decision point).

use std::collections::VecDeque;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ioslice_core::time::{us, Nanos};
use ioslice_core::{
    build_scheduler, Completion, Direction, Dispatch, GroupId, GroupTree, ProcessId, Request,
    RequestId, Scheduler, SchedulerContext, TraceEvent,
};

/// Processes (one queue each under the per-process policies).
const PROCESSES: u32 = 64;
/// Groups the processes are spread over, round robin.
const GROUPS: u32 = 8;
/// Commands the fake device accepts at once.
const DEVICE_DEPTH: usize = 32;
/// Time from dispatch to completion.
const SERVICE_TIME: Nanos = us(100);
/// Request size: 4 KiB.
const SECTORS: u32 = 8;
/// Each process reads within a region of its own this large: 1 GiB.
const REGION_SECTORS: u64 = 1 << 21;
/// One read in this many jumps to a random block of the region.
const JUMP_ONE_IN: u64 = 32;
/// Requests completed per timed iteration.
const BATCH: u64 = 1_000;
/// Requests completed before timing starts.
const WARM_UP_REQUESTS: u64 = 200_000;
/// Requests of the checked run.
const CHECK_REQUESTS: u64 = 100_000;
/// Rounds of the side-by-side pass.
const SIDE_BY_SIDE_ROUNDS: usize = 41;
/// Requests each policy completes per round of the side-by-side pass.
const SIDE_BY_SIDE_REQUESTS: u64 = 10_000;

/// The policies timed, as `--sched` takes them, and whether the processes are spread over
/// the 8 groups (`true`) or all in the root group.
const CASES: &[(&str, bool)] = &[
    ("noop", true),
    ("deadline", true),
    ("anticipatory", true),
    ("cfq", true),
    ("bfq", true),
    // Variants that locate BFQ's cost: the kernel's one queue in service instead of parallel
    // service (the default on this non-rotational device), without idling or lingering, and
    // without groups.
    ("bfq:parallel=0", true),
    ("bfq:slice_idle=0", true),
    ("bfq", false),
];

/// One reading process.
struct Process {
    group: GroupId,
    region_start: u64,
    next_sector: u64,
    lcg: u64,
    /// Requests submitted and not yet completed.
    outstanding: u32,
    /// Requests completed.
    completed: u64,
}

impl Process {
    fn new(index: u32, group: GroupId) -> Self {
        let region_start = u64::from(index) * REGION_SECTORS;
        Self {
            group,
            region_start,
            next_sector: region_start,
            lcg: 0x9E37_79B9_7F4A_7C15 ^ u64::from(index),
            outstanding: 0,
            completed: 0,
        }
    }

    /// Knuth's MMIX LCG; the high bits are the good ones.
    fn random(&mut self) -> u64 {
        self.lcg = self
            .lcg
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.lcg >> 33
    }

    /// The first sector of the next read.
    fn next_read(&mut self) -> u64 {
        let blocks = REGION_SECTORS / u64::from(SECTORS);
        if self.random().is_multiple_of(JUMP_ONE_IN) {
            self.next_sector = self.region_start + (self.random() % blocks) * u64::from(SECTORS);
        }
        let sector = self.next_sector;
        self.next_sector += u64::from(SECTORS);
        if self.next_sector >= self.region_start + REGION_SECTORS {
            self.next_sector = self.region_start;
        }
        sector
    }
}

/// What the checked run counts on top of the plain driver.
#[derive(Default)]
struct Check {
    /// Per request id: 0 never submitted, 1 submitted, 2 completed.
    state: Vec<u8>,
    dispatch_calls: u64,
    waits: u64,
    /// Sum over dispatched requests of the commands at the device right after the dispatch.
    depth_sum: u64,
    dispatched: u64,
}

/// A policy, its processes, a FIFO fake device and a fake clock.
struct Driver {
    scheduler: Box<dyn Scheduler>,
    processes: Vec<Process>,
    /// (completion time, what completes), in dispatch order, which is completion order.
    device: VecDeque<(Nanos, Completion)>,
    now: Nanos,
    next_id: u64,
    submitted: u64,
    completed: u64,
    /// Whether processes issue a new read when one completes.
    issuing: bool,
    check: Option<Check>,
    /// With tracing on: where the policy's events are drained after each call.
    trace: Option<Vec<TraceEvent>>,
}

impl Driver {
    fn new(spec: &str, grouped: bool, checked: bool) -> Self {
        let mut groups = GroupTree::default();
        let group_ids: Vec<GroupId> = if grouped {
            (0..GROUPS)
                .map(|g| groups.ensure(&format!("g{g}")).expect("valid group name"))
                .collect()
        } else {
            vec![GroupId::ROOT]
        };
        let context = SchedulerContext {
            groups,
            rotational: false,
            queue_depth: DEVICE_DEPTH,
        };
        let scheduler =
            build_scheduler(&spec.parse().expect("valid spec"), &context).expect("policy builds");
        let processes = (0..PROCESSES)
            .map(|p| Process::new(p, group_ids[p as usize % group_ids.len()]))
            .collect();
        let mut driver = Self {
            scheduler,
            processes,
            device: VecDeque::with_capacity(DEVICE_DEPTH),
            now: 1_000_000,
            next_id: 0,
            submitted: 0,
            completed: 0,
            issuing: true,
            check: checked.then(Check::default),
            trace: None,
        };
        for p in 0..PROCESSES {
            driver.submit(p);
        }
        driver
    }

    /// Process `p` issues its next read now.
    fn submit(&mut self, p: u32) {
        let process = &mut self.processes[p as usize];
        let sector = process.next_read();
        process.outstanding += 1;
        let id = RequestId(self.next_id);
        self.next_id += 1;
        self.submitted += 1;
        if let Some(check) = &mut self.check {
            check.state.push(1);
            debug_assert_eq!(check.state.len() as u64, self.next_id);
        }
        let request = Request {
            group: process.group,
            submit_time: self.now,
            ..Request::new(id, ProcessId(p), Direction::Read, sector, SECTORS)
        };
        self.scheduler.insert(request, self.now);
        self.drain_trace();
    }

    /// Trace the policy from now on.
    fn traced(mut self) -> Self {
        self.scheduler.set_tracing(true);
        self.trace = Some(Vec::new());
        self
    }

    /// With tracing on, take what the policy recorded in its last call, and drop it.
    fn drain_trace(&mut self) {
        if let Some(events) = &mut self.trace {
            self.scheduler.drain_trace(events);
            std::hint::black_box(&events);
            events.clear();
        }
    }

    /// Run until `count` more requests have completed, or (not issuing) until all have.
    fn run(&mut self, count: u64) {
        let target = self.completed.saturating_add(count);
        let mut stalls = 0u32;
        while self.completed < target {
            // The device has free slots: ask the policy.
            let mut wake = None;
            while self.device.len() < DEVICE_DEPTH {
                if let Some(check) = &mut self.check {
                    check.dispatch_calls += 1;
                }
                let answer = self.scheduler.dispatch(self.now);
                self.drain_trace();
                match answer {
                    Dispatch::Request(request) => {
                        let completion = Completion {
                            request,
                            dispatch_time: self.now,
                            error: None,
                        };
                        self.device.push_back((self.now + SERVICE_TIME, completion));
                        if let Some(check) = &mut self.check {
                            check.dispatched += 1;
                            check.depth_sum += self.device.len() as u64;
                        }
                    }
                    Dispatch::WaitUntil(at) => {
                        // As the simulator does: a time not after now means the next nanosecond.
                        wake = Some(at.max(self.now + 1));
                        if let Some(check) = &mut self.check {
                            check.waits += 1;
                        }
                        break;
                    }
                    Dispatch::Empty => break,
                }
            }
            // The next event: a completion, or the policy's wake-up if it comes first.
            let next_completion = self.device.front().map(|&(at, _)| at);
            match (next_completion, wake) {
                (Some(done), Some(at)) if at < done => self.now = at,
                (None, Some(at)) => {
                    self.now = at;
                    stalls += 1;
                    assert!(
                        stalls < 1_000_000,
                        "{}: a million wake-ups with nothing at the device and no completion",
                        self.scheduler.name()
                    );
                }
                (Some(_), _) => {
                    stalls = 0;
                    let (at, completion) = self.device.pop_front().expect("front exists");
                    self.now = at;
                    self.complete(completion);
                }
                (None, None) => {
                    assert!(
                        !self.issuing,
                        "{}: nothing at the device, nothing to wait for, and processes waiting",
                        self.scheduler.name()
                    );
                    return;
                }
            }
        }
    }

    fn complete(&mut self, completion: Completion) {
        self.scheduler.complete(&completion, self.now);
        self.drain_trace();
        let p = completion.request.process.0;
        for id in completion.request.ids() {
            if let Some(check) = &mut self.check {
                let state = &mut check.state[id.0 as usize];
                assert_eq!(
                    *state,
                    1,
                    "{}: request {} completed {}",
                    self.scheduler.name(),
                    id.0,
                    if *state == 2 {
                        "twice"
                    } else {
                        "without being submitted"
                    }
                );
                *state = 2;
            }
            self.completed += 1;
            let process = &mut self.processes[p as usize];
            process.outstanding -= 1;
            process.completed += 1;
            if self.issuing {
                self.submit(p);
            } else if process.outstanding == 0 {
                self.scheduler.process_exited(ProcessId(p), self.now);
                self.drain_trace();
            }
        }
    }
}

/// The checked run: `CHECK_REQUESTS` requests, then a drain; every request must complete
/// exactly once, every process must be served, and the policy must end empty.
fn check(spec: &str, grouped: bool) {
    let mut driver = Driver::new(spec, grouped, true);
    driver.run(CHECK_REQUESTS);
    // Drain: processes stop issuing and exit once their last read completes.
    driver.issuing = false;
    driver.run(u64::MAX);
    let name = driver.scheduler.name();
    assert_eq!(driver.completed, driver.submitted, "{spec}: requests lost");
    assert_eq!(driver.scheduler.queued(), 0, "{spec}: requests left queued");
    assert!(driver.device.is_empty());
    let check = driver.check.as_ref().expect("checked run");
    assert!(
        check.state.iter().all(|&s| s == 2),
        "{name}: a request never completed"
    );
    let least = driver
        .processes
        .iter()
        .map(|p| p.completed)
        .min()
        .unwrap_or(0);
    assert!(least > 0, "{spec}: a process was never served");
    eprintln!(
        "{spec} (grouped: {grouped}): checked {} requests; per request {:.2} dispatch calls, {:.2} wake-ups; \
         {:.1} commands at the device on average; least-served process {least}",
        driver.completed,
        check.dispatch_calls as f64 / driver.completed as f64,
        check.waits as f64 / driver.completed as f64,
        check.depth_sum as f64 / check.dispatched.max(1) as f64,
    );
}

fn policies(c: &mut Criterion) {
    let mut group = c.benchmark_group("policy cost per request");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(BATCH));
    for &(spec, grouped) in CASES {
        check(spec, grouped);
        let mut driver = Driver::new(spec, grouped, false);
        driver.run(WARM_UP_REQUESTS);
        let label = if grouped {
            format!("{spec}, 8 groups")
        } else {
            format!("{spec}, root group only")
        };
        group.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| driver.run(BATCH))
        });
    }
    group.finish();
    side_by_side();
}

/// Each policy's cost relative to noop's, measured side by side: every round runs each policy
/// for the same number of requests back to back, and the ratio to noop is taken within the
/// round, so a machine that slows down or speeds up between rounds (these are shared and
/// noisy) moves both sides alike. The median over the rounds is printed. Each policy also
/// runs traced in the same rounds, and its cost against itself untraced is printed beside.
fn side_by_side() {
    let warm = |driver: Driver| {
        let mut driver = driver;
        driver.run(WARM_UP_REQUESTS);
        driver
    };
    let mut drivers: Vec<(String, Driver, Driver)> = CASES
        .iter()
        .map(|&(spec, grouped)| {
            let plain = warm(Driver::new(spec, grouped, false));
            let traced = warm(Driver::new(spec, grouped, false).traced());
            let label = if grouped {
                spec.to_string()
            } else {
                format!("{spec} (root group only)")
            };
            (label, plain, traced)
        })
        .collect();
    let cases = drivers.len();
    let mut ratios = vec![Vec::with_capacity(SIDE_BY_SIDE_ROUNDS); cases];
    let mut nanos = vec![Vec::with_capacity(SIDE_BY_SIDE_ROUNDS); cases];
    let mut traced_nanos = vec![Vec::with_capacity(SIDE_BY_SIDE_ROUNDS); cases];
    let mut traced_ratios = vec![Vec::with_capacity(SIDE_BY_SIDE_ROUNDS); cases];
    let time = |driver: &mut Driver| {
        let start = std::time::Instant::now();
        driver.run(SIDE_BY_SIDE_REQUESTS);
        start.elapsed().as_nanos() as f64 / SIDE_BY_SIDE_REQUESTS as f64
    };
    for _ in 0..SIDE_BY_SIDE_ROUNDS {
        let per_request: Vec<(f64, f64)> = drivers
            .iter_mut()
            .map(|(_, plain, traced)| (time(plain), time(traced)))
            .collect();
        for (case, &(cost, traced)) in per_request.iter().enumerate() {
            ratios[case].push(cost / per_request[0].0);
            nanos[case].push(cost);
            traced_nanos[case].push(traced);
            traced_ratios[case].push(traced / cost);
        }
    }
    eprintln!(
        "side by side, median of {SIDE_BY_SIDE_ROUNDS} rounds of {SIDE_BY_SIDE_REQUESTS} requests each:"
    );
    eprintln!(
        "{:<28} {:>12} {:>10} {:>14} {:>16}",
        "policy", "ns/request", "× noop", "traced ns/req", "traced/untraced"
    );
    for (case, (label, _, _)) in drivers.iter().enumerate() {
        eprintln!(
            "{:<28} {:>12.0} {:>10.2} {:>14.0} {:>16.2}",
            label,
            median(&mut nanos[case]),
            median(&mut ratios[case]),
            median(&mut traced_nanos[case]),
            median(&mut traced_ratios[case])
        );
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

criterion_group!(benches, policies);
criterion_main!(benches);
