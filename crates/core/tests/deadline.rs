//! The deadline elevator against its public API, with a fake clock: time is a `u64` we pass in.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use ioslice_core::policy::deadline::Deadline;
use ioslice_core::time::ms;
use ioslice_core::tunable::Tunables;
use ioslice_core::{
    Completion, Direction, Dispatch, Inserted, Nanos, ProcessId, Request, RequestId, Scheduler,
};
use proptest::prelude::*;

use common::{account, tunables};

/// A deadline elevator with these tunable settings.
fn deadline(settings: &[(&str, &str)]) -> Deadline {
    Deadline::new(&tunables("deadline", Deadline::TUNABLES, settings))
}

/// A request of `sectors` sectors at `sector` from process 1.
fn request(id: u64, direction: Direction, sector: u64, sectors: u32) -> Request {
    Request::new(RequestId(id), ProcessId(1), direction, sector, sectors)
}

fn read(id: u64, sector: u64) -> Request {
    request(id, Direction::Read, sector, 8)
}

fn write(id: u64, sector: u64) -> Request {
    request(id, Direction::Write, sector, 8)
}

/// Dispatch one request, which must be there.
fn next(dl: &mut Deadline, now: Nanos) -> Request {
    match dl.dispatch(now) {
        Dispatch::Request(rq) => rq,
        other => panic!("expected a request at {now}, got {other:?}"),
    }
}

/// Dispatch everything queued, in order.
fn drain(dl: &mut Deadline, now: Nanos) -> Vec<Request> {
    let mut out = Vec::new();
    while let Dispatch::Request(rq) = dl.dispatch(now) {
        out.push(rq);
    }
    out
}

fn sectors(requests: &[Request]) -> Vec<u64> {
    requests.iter().map(|rq| rq.sector).collect()
}

fn ids(rq: &Request) -> BTreeSet<u64> {
    rq.ids().map(|id| id.0).collect()
}

#[test]
fn defaults_match_the_kernel() {
    let dl = deadline(&[]);
    assert_eq!(dl.name(), "deadline");
    assert_eq!(dl.queued(), 0);
    let defaults: Vec<_> = Deadline::TUNABLES
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
        ]
    );
    let tunables = Tunables::resolve("deadline", Deadline::TUNABLES, &[]).expect("defaults");
    assert_eq!(tunables.get("read_expire"), 500);
    assert_eq!(tunables.get("fifo_batch"), 16);
    assert!(tunables.get_bool("front_merges"));
}

#[test]
fn bad_tunable_values_are_rejected() {
    let resolve = |name: &str, value: &str| {
        Tunables::resolve(
            "deadline",
            Deadline::TUNABLES,
            &[(name.to_string(), value.to_string())],
        )
    };
    for (name, value) in [
        ("read_expire", "-1"),
        ("write_expire", "-5000"),
        ("fifo_batch", "-1"),
        ("fifo_batch", "many"),
        ("front_merges", "2"),
        ("read_expire", "3000000000"),
        ("slice_idle", "8"),
    ] {
        let error = resolve(name, value).expect_err("rejected");
        assert!(error.to_string().contains(name), "{error}");
    }
    for (name, value) in [
        ("read_expire", "0"),
        ("fifo_batch", "1"),
        ("writes_starved", "0"),
        ("front_merges", "off"),
    ] {
        assert!(resolve(name, value).is_ok(), "{name}={value}");
    }
}

#[test]
fn empty_queue_dispatches_nothing_and_completions_are_accepted() {
    let mut dl = deadline(&[]);
    assert_eq!(dl.dispatch(0), Dispatch::Empty);
    dl.insert(read(1, 100), 0);
    let rq = next(&mut dl, 0);
    dl.complete(
        &Completion {
            request: rq,
            dispatch_time: 0,
            error: None,
        },
        ms(5),
    );
    assert_eq!(dl.dispatch(ms(5)), Dispatch::Empty);
    assert_eq!(dl.queued(), 0);
}

#[test]
fn batches_follow_sector_order_from_the_fifo_head() {
    // 100 is the FIFO head; nothing follows it in sector order, so the next batch restarts
    // from the FIFO head (10) and sweeps up to 50.
    let mut dl = deadline(&[]);
    for (id, sector) in [(1, 100), (2, 10), (3, 50)] {
        assert_eq!(dl.insert(read(id, sector), 0), Inserted::Queued);
    }
    assert_eq!(dl.queued(), 3);
    assert_eq!(sectors(&drain(&mut dl, 0)), vec![100, 10, 50]);

    // From the FIFO head (50) the batch sweeps up through 100 and 200 before wrapping to 10.
    let mut dl = deadline(&[]);
    for (id, sector) in [(1, 50), (2, 10), (3, 200), (4, 100)] {
        dl.insert(read(id, sector), 0);
    }
    assert_eq!(sectors(&drain(&mut dl, 0)), vec![50, 100, 200, 10]);
}

#[test]
fn a_batch_ends_after_fifo_batch_requests_and_the_direction_is_chosen_again() {
    let mut dl = deadline(&[("fifo_batch", "4"), ("writes_starved", "1")]);
    for i in 0..12 {
        dl.insert(read(i, 1000 + 100 * i), 0);
        dl.insert(write(100 + i, 100_000 + 100 * i), 0);
    }
    let directions: String = drain(&mut dl, 0)
        .iter()
        .map(|rq| match rq.direction {
            Direction::Read => 'R',
            Direction::Write => 'W',
            Direction::Discard => 'D',
        })
        .collect();
    assert_eq!(directions, "RRRRWWWWRRRRWWWWRRRRWWWW");
}

/// Directions of consecutive runs of dispatches, with their lengths.
fn runs(requests: &[Request]) -> Vec<(Direction, usize)> {
    let mut runs: Vec<(Direction, usize)> = Vec::new();
    for rq in requests {
        match runs.last_mut() {
            Some((direction, len)) if *direction == rq.direction => *len += 1,
            _ => runs.push((rq.direction, 1)),
        }
    }
    runs
}

#[test]
fn one_write_batch_follows_every_writes_starved_read_batches() {
    for writes_starved in [1usize, 2, 3, 5] {
        let fifo_batch = 3;
        let mut dl = deadline(&[
            ("fifo_batch", &fifo_batch.to_string()),
            ("writes_starved", &writes_starved.to_string()),
        ]);
        // Far more of each than we dispatch, at rising sectors, so both always wait and
        // every batch runs full length.
        for i in 0..1000 {
            dl.insert(read(i, 8 * 2 * i), 0);
            dl.insert(write(10_000 + i, 1 << 30 | (8 * 2 * i)), 0);
        }
        let batches = 40 * (writes_starved + 1);
        let dispatched: Vec<Request> = (0..batches * fifo_batch)
            .map(|_| next(&mut dl, 0))
            .collect();
        let runs = runs(&dispatched);
        let mut expected = Vec::new();
        for _ in 0..40 {
            expected.push((Direction::Read, writes_starved * fifo_batch));
            expected.push((Direction::Write, fifo_batch));
        }
        assert_eq!(runs, expected, "writes_starved={writes_starved}");
        let writes = dispatched
            .iter()
            .filter(|rq| rq.direction == Direction::Write)
            .count();
        assert_eq!(writes, 40 * fifo_batch);
    }
}

#[test]
fn writes_starved_zero_lets_waiting_writes_go_first() {
    let mut dl = deadline(&[("writes_starved", "0"), ("fifo_batch", "2")]);
    for i in 0..4 {
        dl.insert(read(i, 100 * i), 0);
        dl.insert(write(10 + i, 10_000 + 100 * i), 0);
    }
    let order: Vec<Direction> = drain(&mut dl, 0).iter().map(|rq| rq.direction).collect();
    assert_eq!(order[..4], [Direction::Write; 4]);
    assert_eq!(order[4..], [Direction::Read; 4]);
}

#[test]
fn an_expired_request_is_served_at_the_next_batch_start_and_not_before() {
    let read_expire = ms(500);
    let build = || {
        let mut dl = deadline(&[]);
        dl.insert(read(1, 100), 0);
        dl.insert(read(2, 200), 0);
        // The batch starts at 100 and continues in sector order.
        assert_eq!(next(&mut dl, 0).sector, 100);
        // The old request, behind the batch in sector order: deadline 501 ms.
        dl.insert(read(3, 50), ms(1));
        for i in 3..40 {
            dl.insert(read(100 + i, 100 * i), ms(2));
        }
        dl
    };

    // Long after every deadline: the batch in progress still runs to its end (16 in all)...
    let mut dl = build();
    let late = read_expire + ms(100);
    let batch: Vec<u64> = (0..15).map(|_| next(&mut dl, late).sector).collect();
    assert_eq!(batch, (2..17).map(|i| 100 * i).collect::<Vec<_>>());
    // ...and the next batch starts at the expired FIFO head, then sweeps up from there.
    assert_eq!(next(&mut dl, late).sector, 50);
    assert_eq!(next(&mut dl, late).sector, 1700);

    // Before the deadline, the new batch keeps sweeping up in sector order instead.
    let mut dl = build();
    let early = ms(10);
    for _ in 0..15 {
        next(&mut dl, early);
    }
    assert_eq!(next(&mut dl, early).sector, 1700);

    // Expiry is `now >= deadline`: at exactly 501 ms the head has expired.
    let mut dl = build();
    for _ in 0..15 {
        next(&mut dl, ms(501));
    }
    assert_eq!(next(&mut dl, ms(501)).sector, 50);
}

/// A tiny deterministic generator for the simulated workload.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// Sectors per streaming request: at the merge limit, so a stream stays many requests.
const STREAM_SECTORS: u32 = 1024;

/// What runs against the simulated device.
#[derive(Debug, Clone, Copy)]
struct Workload {
    /// Sequential writes kept outstanding by a writer (the flood).
    writer_depth: usize,
    /// Sequential reads kept outstanding by a streaming reader, above the random reads.
    stream_depth: usize,
    /// One read at a random sector, below everything else, this often.
    random_read_every: Nanos,
}

/// Where each kind of I/O lives on the device: random reads lowest, then the read stream,
/// then the write flood.
const STREAM_START: u64 = 1 << 33;
const FLOOD_START: u64 = 1 << 34;

/// The simulated run: one request in flight at a time, each taking `service`.
struct Run {
    dl: Deadline,
    rng: Lcg,
    now: Nanos,
    next_id: u64,
    /// Insertion time of every read not yet completed.
    reads: BTreeMap<u64, Nanos>,
    /// Stream reads among them.
    stream_outstanding: usize,
    writes_outstanding: usize,
    stream_sector: u64,
    write_sector: u64,
    in_flight: Option<(Nanos, Request)>,
    next_random_read: Nanos,
    /// Insert-to-completion times of the reads.
    read_waits: Vec<Nanos>,
    writes_done: usize,
}

impl Run {
    fn new(dl: Deadline) -> Self {
        Self {
            dl,
            rng: Lcg(7),
            now: 0,
            next_id: 0,
            reads: BTreeMap::new(),
            stream_outstanding: 0,
            writes_outstanding: 0,
            stream_sector: STREAM_START,
            write_sector: FLOOD_START,
            in_flight: None,
            next_random_read: ms(3),
            read_waits: Vec::new(),
            writes_done: 0,
        }
    }

    fn issue(&mut self, mut rq: Request, process: u32) {
        rq.process = ProcessId(process);
        if rq.direction == Direction::Read {
            self.reads.insert(rq.id.0, self.now);
        }
        self.dl.insert(rq, self.now);
        self.next_id += 1;
    }

    fn complete_due(&mut self, service: Nanos) {
        let Some((done, rq)) = self.in_flight.take_if(|(done, _)| *done <= self.now) else {
            return;
        };
        for id in rq.ids() {
            match self.reads.remove(&id.0) {
                Some(inserted) => self.read_waits.push(done - inserted),
                None => self.writes_done += 1,
            }
        }
        match (rq.direction, rq.sector >= STREAM_START) {
            (Direction::Write | Direction::Discard, _) => {
                self.writes_outstanding -= rq.ids().count()
            }
            (Direction::Read, true) => self.stream_outstanding -= rq.ids().count(),
            (Direction::Read, false) => {}
        }
        let completion = Completion {
            request: rq,
            dispatch_time: done - service,
            error: None,
        };
        self.dl.complete(&completion, self.now);
    }

    fn issue_due(&mut self, workload: &Workload) {
        while self.writes_outstanding < workload.writer_depth {
            let rq = request(
                self.next_id,
                Direction::Write,
                self.write_sector,
                STREAM_SECTORS,
            );
            self.issue(rq, 1);
            self.write_sector += u64::from(STREAM_SECTORS);
            self.writes_outstanding += 1;
        }
        while self.stream_outstanding < workload.stream_depth {
            let rq = request(
                self.next_id,
                Direction::Read,
                self.stream_sector,
                STREAM_SECTORS,
            );
            self.issue(rq, 2);
            self.stream_sector += u64::from(STREAM_SECTORS);
            self.stream_outstanding += 1;
        }
        if workload.random_read_every > 0 && self.now >= self.next_random_read {
            let sector = self.rng.next() % (STREAM_START / 8) * 8;
            let process = 3 + (self.next_id % 4) as u32;
            self.issue(read(self.next_id, sector), process);
            self.next_random_read += workload.random_read_every;
        }
    }

    /// Run for `duration` on a device serving each request in `service`.
    fn run(mut self, workload: Workload, service: Nanos, duration: Nanos) -> Self {
        while self.now < duration {
            self.complete_due(service);
            self.issue_due(&workload);
            if self.in_flight.is_none() {
                if let Dispatch::Request(rq) = self.dl.dispatch(self.now) {
                    self.in_flight = Some((self.now + service, rq));
                }
            }
            let done = self
                .in_flight
                .as_ref()
                .map_or(Nanos::MAX, |(done, _)| *done);
            let next_read = match workload.random_read_every {
                0 => Nanos::MAX,
                _ => self.next_random_read,
            };
            self.now = done.min(next_read);
        }
        self
    }

    fn worst_read_wait(&self) -> Nanos {
        self.read_waits.iter().copied().max().unwrap_or(0)
    }
}

/// Deadline with `read_expire` (ms) and `fifo_batch`, the rest at defaults.
fn with_expire_and_batch(read_expire: u64, fifo_batch: u64) -> Deadline {
    deadline(&[
        ("read_expire", &read_expire.to_string()),
        ("fifo_batch", &fifo_batch.to_string()),
    ])
}

#[test]
fn under_a_write_flood_no_read_waits_much_past_read_expire() {
    // A writer keeps 64 sequential writes outstanding; every 10 ms a process reads one block
    // at a random sector far from the writes. The device serves one request per 5 ms.
    let service = ms(5);
    let workload = Workload {
        writer_depth: 64,
        stream_depth: 0,
        random_read_every: ms(10),
    };
    for (read_expire, fifo_batch) in [(500, 16), (250, 1), (250, 4)] {
        let dl = with_expire_and_batch(read_expire, fifo_batch);
        let run = Run::new(dl).run(workload, service, ms(30_000));
        let bound = ms(read_expire) + (fifo_batch + 1) * service;
        let context = format!("read_expire={read_expire} fifo_batch={fifo_batch}");
        assert!(run.read_waits.len() > 2900, "{context}: reads served");
        assert!(run.reads.len() < 10, "{context}: reads left waiting");
        // The flood is real: writes keep a good share of the device.
        assert!(
            run.writes_done > 2000,
            "{context}: {} writes",
            run.writes_done
        );
        let worst = run.worst_read_wait();
        assert!(
            worst <= bound,
            "{context}: worst read wait {worst} ns > {bound} ns"
        );
    }
}

#[test]
fn a_read_behind_the_sweep_is_rescued_by_its_deadline() {
    // A streaming reader keeps the sector sweep going upwards forever; random reads below it
    // are reached only once their deadline has passed and a new batch starts. One expires
    // per 100 ms, less often than a batch ends, so each waits at most read_expire, the batch
    // in progress and its own service: the bound is tight here.
    let service = ms(5);
    let workload = Workload {
        writer_depth: 0,
        stream_depth: 8,
        random_read_every: ms(100),
    };
    for (read_expire, fifo_batch) in [(500, 16), (250, 1), (250, 4)] {
        let dl = with_expire_and_batch(read_expire, fifo_batch);
        let run = Run::new(dl).run(workload, service, ms(20_000));
        let worst = run.worst_read_wait();
        let bound = ms(read_expire) + (fifo_batch + 1) * service;
        let context = format!("read_expire={read_expire} fifo_batch={fifo_batch}");
        assert!(worst <= bound, "{context}: {worst} > {bound}");
        // The deadline is what bounds it: the sweep alone leaves them waiting to expiry.
        assert!(worst >= ms(read_expire), "{context}: {worst}");
    }
    // Without a usable deadline the random reads wait for the whole run.
    let dl = with_expire_and_batch(i32::MAX as u64, 16);
    let run = Run::new(dl).run(workload, service, ms(20_000));
    assert!(
        run.reads.len() > 150,
        "{} reads still waiting",
        run.reads.len()
    );
}

#[test]
fn writes_starved_is_checked_before_read_expiry() {
    // As in the kernel, a read that expires during the second read batch still waits for
    // the write batch that writes_starved forces: soft deadlines can cost a read one write
    // batch more than the batch in progress.
    let mut dl = deadline(&[("fifo_batch", "2")]);
    for i in 0..8 {
        dl.insert(write(100 + i, 1_000_000 + 100 * i), 0);
    }
    dl.insert(read(1, 1000), 0);
    dl.insert(read(2, 1100), 0);
    dl.insert(read(3, 1200), 0);
    dl.insert(read(4, 1300), 0);
    dl.insert(read(9, 10), ms(1)); // behind the sweep; deadline 501 ms
    let order = |dl: &mut Deadline, now| (next(dl, now).id.0, next(dl, now).id.0);
    assert_eq!(order(&mut dl, ms(2)), (1, 2)); // first read batch (FIFO head)
    assert_eq!(order(&mut dl, ms(3)), (3, 4)); // second read batch, continuing
    let late = ms(600);
    assert_eq!(order(&mut dl, late), (100, 101)); // forced write batch
    assert_eq!(next(&mut dl, late).id, RequestId(9)); // then the expired read
}

#[test]
fn back_merge_carries_both_ids() {
    let mut dl = deadline(&[]);
    assert_eq!(dl.insert(read(1, 0), 0), Inserted::Queued);
    assert_eq!(dl.insert(read(2, 8), 0), Inserted::Merged(RequestId(1)));
    assert_eq!(dl.queued(), 1);
    let rq = next(&mut dl, 0);
    assert_eq!((rq.sector, rq.sectors), (0, 16));
    assert_eq!(ids(&rq), BTreeSet::from([1, 2]));
    assert_eq!(dl.dispatch(0), Dispatch::Empty);
}

#[test]
fn front_merge_only_with_front_merges_on() {
    let mut dl = deadline(&[]);
    dl.insert(read(1, 8), 0);
    assert_eq!(dl.insert(read(2, 0), 0), Inserted::Merged(RequestId(1)));
    let rq = next(&mut dl, 0);
    assert_eq!((rq.sector, rq.sectors), (0, 16));
    assert_eq!(ids(&rq), BTreeSet::from([1, 2]));

    let mut dl = deadline(&[("front_merges", "0")]);
    dl.insert(read(1, 8), 0);
    assert_eq!(dl.insert(read(2, 0), 0), Inserted::Queued);
    // Back merges still happen.
    assert_eq!(dl.insert(read(3, 16), 0), Inserted::Merged(RequestId(1)));
    assert_eq!(dl.queued(), 2);
    let all = drain(&mut dl, 0);
    assert_eq!(all.len(), 2);
}

#[test]
fn only_compatible_requests_merge() {
    let mut dl = deadline(&[]);
    dl.insert(read(1, 0), 0);
    assert_eq!(dl.insert(write(2, 8), 0), Inserted::Queued);
    let mut other_process = read(3, 8);
    other_process.process = ProcessId(9);
    assert_eq!(dl.insert(other_process, 0), Inserted::Queued);
    assert_eq!(dl.queued(), 3);
}

#[test]
fn coalescing_keeps_the_earlier_deadline_and_every_id() {
    let mut dl = deadline(&[]);
    // The high half arrives first (deadline 500 ms), the low half later (600 ms).
    dl.insert(read(1, 16), 0);
    dl.insert(read(9, 1000), ms(50)); // deadline 550 ms
    dl.insert(read(2, 0), ms(100));
    // The middle joins the low half, which then touches and absorbs the high half.
    assert_eq!(
        dl.insert(read(3, 8), ms(200)),
        Inserted::Merged(RequestId(2))
    );
    assert_eq!(dl.queued(), 2);
    // At 560 ms, the FIFO head is the coalesced request with the inherited 500 ms deadline,
    // ahead of request 9 (550 ms); without the inheritance it would be 600 ms and come second.
    let rq = next(&mut dl, ms(560));
    assert_eq!((rq.sector, rq.sectors), (0, 24));
    assert_eq!(ids(&rq), BTreeSet::from([1, 2, 3]));
    assert_eq!(next(&mut dl, ms(560)).id, RequestId(9));
}

#[test]
fn coalescing_keeps_the_survivors_deadline_when_it_is_earlier() {
    let mut dl = deadline(&[]);
    dl.insert(read(1, 0), 0); // deadline 500 ms
    dl.insert(read(9, 1000), ms(50)); // 550 ms
    dl.insert(read(2, 16), ms(100)); // 600 ms
    assert_eq!(
        dl.insert(read(3, 8), ms(200)),
        Inserted::Merged(RequestId(1))
    );
    let rq = next(&mut dl, ms(560));
    assert_eq!(ids(&rq), BTreeSet::from([1, 2, 3]));
    assert_eq!(next(&mut dl, ms(560)).id, RequestId(9));
}

/// One step of a random workload.
#[derive(Debug, Clone)]
enum Op {
    Insert {
        write: bool,
        slot: u64,
        sectors: u32,
        process: u32,
    },
    Dispatch,
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<bool>(), 0u64..64, 1u32..24, 0u32..2).prop_map(|(write, slot, sectors, process)| {
            Op::Insert { write, slot, sectors, process }
        }),
        3 => Just(Op::Dispatch),
        1 => (0u64..700).prop_map(Op::Advance),
    ]
}

proptest! {
    #[test]
    fn every_inserted_request_is_dispatched_exactly_once(
        ops in proptest::collection::vec(op(), 1..300),
        fifo_batch in 0u32..6,
        writes_starved in -1i32..4,
        front_merges in any::<bool>(),
    ) {
        let (batch, starved) = (fifo_batch.to_string(), writes_starved.to_string());
        let mut dl = deadline(&[
            ("fifo_batch", &batch),
            ("writes_starved", &starved),
            ("front_merges", if front_merges { "1" } else { "0" }),
        ]);
        let mut inserted = BTreeMap::new();
        let mut dispatched = BTreeSet::new();
        let mut now = 0;
        for (id, op) in (0u64..).zip(ops) {
            match op {
                Op::Insert { write, slot, sectors, process } => {
                    let direction = if write { Direction::Write } else { Direction::Read };
                    let mut rq = request(id, direction, slot * 8, sectors);
                    rq.process = ProcessId(process);
                    inserted.insert(id, rq.clone());
                    dl.insert(rq, now);
                }
                Op::Dispatch => {
                    let outstanding = inserted.len() - dispatched.len();
                    match dl.dispatch(now) {
                        Dispatch::Request(rq) => account(&rq, &inserted, &mut dispatched)?,
                        Dispatch::Empty => prop_assert_eq!(outstanding, 0),
                        Dispatch::WaitUntil(t) => prop_assert!(false, "deadline never idles ({})", t),
                    }
                }
                Op::Advance(step) => now += ms(step),
            }
            // queued() is exact: a copy drains in exactly that many dispatches.
            let mut copy = dl.clone();
            prop_assert_eq!(drain(&mut copy, now).len(), dl.queued());
        }
        for rq in drain(&mut dl, now) {
            account(&rq, &inserted, &mut dispatched)?;
        }
        prop_assert_eq!(dl.queued(), 0);
        prop_assert_eq!(dispatched.len(), inserted.len());
    }
}
