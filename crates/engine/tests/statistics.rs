//! The statistics are exact, whichever statistics the engine keeps: known requests from
//! several threads through the memory backend (reads and writes of several sizes, some
//! failing on an injected fault, some merged), then the counts and bytes in total, per group
//! and per process compared with what the threads did, figure by figure. The statistics are
//! folded after the engine's lock; a client that has its outcome must find it counted.

use std::collections::BTreeMap;
use std::thread;

use ioslice_engine::backend::memory::{Fault, MemoryBackend};
use ioslice_engine::{
    AlignedBuffer, Client, Engine, Figures, FinalStats, Geometry, Handle, IoFuture, IoPriority,
    PriorityClass, Statistics,
};

const CAPACITY: u64 = 16 << 20;
/// Every request covering this offset fails with `EIO`.
const FAULTY: u64 = 12 << 20;
const THREADS: u32 = 6;
const GROUPS: [&str; 3] = ["/", "a", "b/c"];

/// What one thread did: its process, group and the figures it expects.
struct Expected {
    process: u32,
    group: &'static str,
    figures: Figures,
}

fn priority() -> IoPriority {
    IoPriority::new(PriorityClass::BestEffort, 4).expect("level 4 exists")
}

fn engine(sched: &str, kept: Statistics) -> Engine {
    let backend = MemoryBackend::new(CAPACITY as usize).with_fault(FAULTY, Fault::Errno(libc::EIO));
    Engine::builder(Box::new(backend), Geometry::new(CAPACITY))
        .scheduler(sched)
        .group("a", 200)
        .group("b/c", 300)
        .statistics(kept)
        .start()
        .expect("engine starts")
}

/// Count one outcome into `figures` as the statistics should.
fn count(figures: &mut Figures, write: bool, len: u64, ok: bool) {
    figures.requests += 1;
    if write {
        figures.writes += 1;
    } else {
        figures.reads += 1;
    }
    match (ok, write) {
        (false, _) => figures.errors += 1,
        (true, true) => figures.bytes_written += len,
        (true, false) => figures.bytes_read += len,
    }
}

/// Thread `index`'s requests: sequential runs (merged where the policy merges), sizes from
/// 512 bytes to 64 KiB, reads and writes, and a few on the faulty offset.
fn requests(index: u32) -> Vec<(bool, u64, usize)> {
    let base = u64::from(index) << 20;
    let mut list = Vec::new();
    for step in 0..60u64 {
        let len = [512usize, 4096, 8192, 65536][(step % 4) as usize];
        let write = (step + u64::from(index)) % 3 == 0;
        list.push((write, base + step * 65536, len));
    }
    for step in 0..u64::from(index % 3 + 1) {
        list.push((step % 2 == 1, FAULTY - 4096 * step, 8192));
    }
    list
}

/// Run thread `index`'s requests, two in flight, checking after each outcome that the
/// engine's totals already count it (and every one this thread had before).
fn client_thread(client: Client, handle: &Handle, index: u32) -> Figures {
    let mut figures = Figures::default();
    let done = |figures: &mut Figures, write: bool, len: u64, future: IoFuture| {
        count(figures, write, len, future.wait().is_ok());
        let seen = handle.stats().totals.requests;
        assert!(seen >= figures.requests, "{seen} < {}", figures.requests);
    };
    let mut futures = Vec::new();
    for (write, offset, len) in requests(index) {
        let future = if write {
            client.write(offset, AlignedBuffer::new(len, 512))
        } else {
            client.read(offset, len)
        };
        futures.push((write, len as u64, future));
        if futures.len() == 2 {
            let (write, len, future) = futures.remove(0);
            done(&mut figures, write, len, future);
        }
    }
    for (write, len, future) in futures {
        done(&mut figures, write, len, future);
    }
    client.exit();
    figures
}

fn add(total: &mut Figures, one: &Figures) {
    total.requests += one.requests;
    total.reads += one.reads;
    total.writes += one.writes;
    total.bytes_read += one.bytes_read;
    total.bytes_written += one.bytes_written;
    total.errors += one.errors;
}

/// Everything but the latency, which only the detailed statistics keep.
fn counts(figures: &Figures) -> Figures {
    Figures {
        latency: Default::default(),
        ..figures.clone()
    }
}

fn run(sched: &str, kept: Statistics) -> (Vec<Expected>, FinalStats) {
    let engine = engine(sched, kept);
    let handle = engine.handle();
    let threads: Vec<_> = (0..THREADS)
        .map(|index| {
            let group = GROUPS[index as usize % GROUPS.len()];
            let client = handle
                .client(index + 1, group, priority())
                .expect("group declared");
            let handle = handle.clone();
            thread::spawn(move || {
                let figures = client_thread(client, &handle, index);
                Expected {
                    process: index + 1,
                    group,
                    figures,
                }
            })
        })
        .collect();
    let expected = threads
        .into_iter()
        .map(|t| t.join().expect("client thread"))
        .collect();
    (expected, engine.shutdown().expect("shuts down"))
}

fn check_detailed(expected: &[Expected], stats: &FinalStats) {
    let mut total = Figures::default();
    let mut groups: BTreeMap<String, Figures> = BTreeMap::new();
    for one in expected {
        add(&mut total, &one.figures);
        add(
            groups.entry(one.group.to_string()).or_default(),
            &one.figures,
        );
        let process = &stats.processes[&one.process];
        assert_eq!(counts(process), one.figures, "process {}", one.process);
        assert!(process.latency.max > 0 || process.requests == 0);
    }
    assert_eq!(counts(&stats.totals), total, "totals");
    let got: BTreeMap<String, Figures> = stats
        .groups
        .iter()
        .map(|(path, figures)| (path.clone(), counts(figures)))
        .collect();
    assert_eq!(got, groups, "per group");
    assert_eq!(stats.processes.len(), expected.len());
}

#[test]
fn statistics_are_exact_per_group_and_process() {
    for sched in ["noop", "mq-deadline", "kyber", "bfq"] {
        let (expected, stats) = run(sched, Statistics::Detailed);
        check_detailed(&expected, &stats);
        assert!(stats.totals.errors > 0, "{sched}: the fault was hit");
        assert_eq!(stats.submitted, stats.totals.requests, "{sched}");
        assert_eq!((stats.queued, stats.in_flight), (0, 0), "{sched}");
    }
}

#[test]
fn totals_alone_are_as_exact() {
    for sched in ["noop", "mq-deadline", "kyber", "bfq"] {
        let (expected, stats) = run(sched, Statistics::Totals);
        let mut total = Figures::default();
        for one in &expected {
            add(&mut total, &one.figures);
        }
        assert_eq!(stats.totals, total, "{sched}: totals, latency left at zero");
        assert!(
            stats.groups.is_empty() && stats.processes.is_empty(),
            "{sched}"
        );
        assert_eq!(stats.submitted, stats.totals.requests, "{sched}");
    }
}
