//! The dispatcher against the in-memory backend: exactly-once completion under concurrency,
//! merged requests, injected errors, push-back, shutdown draining, priorities and weights,
//! and policy waits honoured without busy-looping.

mod common;

use common::{
    be, bfq_tenants, engine_on, filled, probed_engine, served_once_backlogged, slow_group_engine,
    spaced_reads, upper_share, wait_until, BACKLOG, MIB,
};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use ioslice_core::{Direction, IoPriority, PriorityClass};
use ioslice_engine::backend::memory::{Fault, MemoryBackend};
use ioslice_engine::{Engine, Geometry, IoErrorKind, IoFuture};

fn rt() -> IoPriority {
    IoPriority::new(PriorityClass::RealTime, 0).expect("level 0 exists")
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Many threads, random sizes and offsets, several policies: every request completes once,
/// with the data the thread wrote.
#[test]
fn every_request_completes_exactly_once_under_concurrency() {
    const THREADS: u64 = 8;
    const ROUNDS: u64 = 40;
    const SLOTS: u64 = 4;
    const SLOT: u64 = 32 * 1024;
    for spec in [
        "noop",
        "deadline",
        "bfq:slice_idle=0",
        "cfq:slice_idle=0",
        "as:antic_expire=0",
    ] {
        let capacity = THREADS * SLOTS * SLOT;
        let engine = engine_on(MemoryBackend::new(capacity as usize), capacity, 4)
            .scheduler(spec)
            .group("a", 200)
            .group("b/c", 100)
            .submission_queue(8)
            .start()
            .expect("engine starts");
        let handle = engine.handle();
        let mut threads = Vec::new();
        for t in 0..THREADS {
            let handle = handle.clone();
            threads.push(thread::spawn(move || {
                let group = ["a", "b/c", "/"][t as usize % 3];
                let client = handle.client(t as u32, group, be()).expect("group exists");
                let base = t * SLOTS * SLOT;
                let mut shadow = vec![0u8; (SLOTS * SLOT) as usize];
                let mut rng = Rng(0x9e37_79b9 + t);
                let mut completed = 0u64;
                for round in 0..ROUNDS {
                    let mut writes: Vec<(u64, usize, IoFuture)> = Vec::new();
                    for slot in 0..SLOTS {
                        let sectors = 1 + rng.below(SLOT / 512 - 1);
                        let start = rng.below(SLOT / 512 - sectors + 1);
                        let offset = slot * SLOT + start * 512;
                        let len = (sectors * 512) as usize;
                        let byte = (round * 7 + slot + t * 31) as u8 | 1;
                        shadow[offset as usize..offset as usize + len].fill(byte);
                        let future = client.write(base + offset, filled(len, byte));
                        writes.push((offset, len, future));
                    }
                    for (_, len, future) in writes {
                        let result = future.wait().expect("write succeeds");
                        assert_eq!(result.bytes, len);
                        completed += 1;
                    }
                    let reads: Vec<_> = (0..SLOTS)
                        .map(|slot| {
                            let offset = slot * SLOT + rng.below(SLOT / 1024) * 512;
                            let len = 512 * (1 + rng.below(SLOT / 1024)) as usize;
                            (offset, len, client.read(base + offset, len))
                        })
                        .collect();
                    for (offset, len, future) in reads {
                        let result = future.wait().expect("read succeeds");
                        assert_eq!(
                            result.buffer.as_slice(),
                            &shadow[offset as usize..offset as usize + len]
                        );
                        completed += 1;
                    }
                }
                client.exit();
                completed
            }));
        }
        let completed: u64 = threads
            .into_iter()
            .map(|t| t.join().expect("client thread"))
            .sum();
        let stats = engine.shutdown().expect("clean shutdown");
        assert_eq!(completed, THREADS * ROUNDS * SLOTS * 2, "{spec}");
        assert_eq!(stats.totals.requests, completed, "{spec}");
        assert_eq!(stats.submitted, completed, "{spec}");
        assert_eq!(stats.totals.errors, 0, "{spec}");
        assert_eq!(stats.double_completions, 0, "{spec}");
        assert_eq!(stats.cancelled, 0, "{spec}");
        assert_eq!((stats.in_flight, stats.queued), (0, 0), "{spec}");
        assert_eq!(
            stats.groups.keys().collect::<Vec<_>>(),
            vec!["/", "a", "b/c"],
            "{spec}"
        );
        let per_process: u64 = stats.processes.values().map(|f| f.requests).sum();
        assert_eq!(per_process, completed, "{spec}");
    }
}

/// Sequential small writes and reads merge under noop into one vectored operation, and each
/// client still gets exactly its own bytes.
#[test]
fn merged_requests_carry_each_clients_bytes() {
    let (builder, probe) = probed_engine(1);
    let engine = builder.scheduler("noop").start().expect("engine starts");
    let handle = engine.handle();
    let client = handle.client(1, "/", be()).expect("root");
    probe.hold();
    // The first write goes to the (stalled) device; the next ones wait and merge.
    let blocker = client.write(512 * 1024, filled(512, 0xee));
    let writes: Vec<_> = (0..8u8)
        .map(|i| client.write(u64::from(i) * 512, filled(512, i + 1)))
        .collect();
    wait_until(|| handle.stats().submitted == 9);
    probe.release();
    blocker.wait().expect("blocker");
    for future in writes {
        future.wait().expect("merged write");
    }
    for i in 0..8u8 {
        assert_eq!(probe.read(u64::from(i) * 512, 512), vec![i + 1; 512]);
    }
    probe.hold();
    let blocker = client.read(512 * 1024, 512);
    let reads: Vec<_> = (0..8u64).map(|i| client.read(i * 512, 512)).collect();
    wait_until(|| handle.stats().submitted == 18);
    probe.release();
    blocker.wait().expect("blocker");
    for (i, future) in reads.into_iter().enumerate() {
        let result = future.wait().expect("merged read");
        assert_eq!(result.offset, i as u64 * 512);
        assert_eq!(result.buffer.as_slice(), &[i as u8 + 1; 512][..]);
    }
    let log = probe.log();
    let merged: Vec<_> = log.iter().filter(|op| op.buffers > 1).collect();
    assert_eq!(merged.len(), 2, "{log:?}");
    assert!(merged
        .iter()
        .all(|op| op.offset == 0 && op.len == 8 * 512 && op.buffers == 8));
    assert_eq!(merged[0].direction, Direction::Write);
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!(stats.totals.requests, 18);
    assert_eq!(stats.totals.bytes_written, 9 * 512);
}

/// An injected EIO fails that request alone, named in the error; the rest succeed, even
/// those merged with it into one operation.
#[test]
fn an_io_error_fails_only_its_request() {
    let backend = MemoryBackend::new(MIB as usize)
        .with_fault(8192, Fault::Errno(libc::EIO))
        .with_fault(512 * 1024, Fault::Errno(libc::ENOSPC));
    let probe = backend.probe();
    let engine = engine_on(backend, MIB, 1)
        .scheduler("deadline")
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    let client = handle.client(3, "", be()).expect("root");
    // A stalled device, so the sequential reads queue and merge.
    probe.hold();
    let blocker = client.read(768 * 1024, 4096);
    wait_until(|| handle.stats().in_flight == 1);
    let reads: Vec<_> = (0..32u64)
        .map(|i| (i, client.read(i * 4096, 4096)))
        .collect();
    let write = client.write(512 * 1024, filled(4096, 1));
    wait_until(|| handle.stats().submitted == 34);
    probe.release();
    blocker.wait().expect("blocker");
    for (i, future) in reads {
        let outcome = future.wait();
        if i == 2 {
            let error = outcome.expect_err("the faulty offset fails");
            assert_eq!(error.kind, IoErrorKind::Os(libc::EIO));
            assert_eq!(error.errno(), libc::EIO);
            assert_eq!((error.offset, error.len), (8192, 4096));
            let message = error.to_string();
            assert!(message.contains("EIO (Input/output error)"), "{message}");
            assert!(message.contains("offset 8192"), "{message}");
        } else {
            outcome.expect("other reads succeed");
        }
    }
    let error = write.wait().expect_err("ENOSPC");
    assert!(error.to_string().contains("ENOSPC"), "{error}");
    // The engine keeps serving afterwards.
    client.read(0, 512).wait().expect("still serving");
    let log = probe.log();
    assert!(
        log.iter()
            .any(|op| op.buffers > 1 && op.offset <= 8192 && op.offset + op.len as u64 > 8192),
        "the faulty read was merged with others: {log:?}"
    );
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!(stats.totals.errors, 2);
    assert_eq!(stats.processes[&3].errors, 2);
    assert_eq!(stats.totals.requests, 35);
}

/// A short transfer of a merged operation completes the parts it covers and fails the rest.
#[test]
fn a_short_transfer_completes_the_parts_it_covers() {
    let backend = MemoryBackend::new(MIB as usize).with_fault(0, Fault::Short(1536));
    let probe = backend.probe();
    let engine = engine_on(backend, MIB, 1)
        .scheduler("noop")
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    let client = handle.client(1, "/", be()).expect("root");
    probe.hold();
    let blocker = client.read(MIB / 2, 512);
    let writes: Vec<_> = (0..4u8)
        .map(|i| client.write(u64::from(i) * 1024, filled(1024, 9)))
        .collect();
    wait_until(|| handle.stats().submitted == 5);
    probe.release();
    blocker.wait().expect("blocker");
    let kinds: Vec<_> = writes
        .into_iter()
        .map(|f| f.wait().err().map(|e| e.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            None,
            Some(IoErrorKind::ShortTransfer { transferred: 512 }),
            Some(IoErrorKind::ShortTransfer { transferred: 0 }),
            Some(IoErrorKind::ShortTransfer { transferred: 0 }),
        ]
    );
    engine.shutdown().expect("clean shutdown");
}

/// Requests the device would refuse are refused at submission.
#[test]
fn misaligned_and_out_of_range_requests_are_refused_up_front() {
    let backend = MemoryBackend::new(MIB as usize);
    let probe = backend.probe();
    let target = Geometry {
        logical_block_size: 4096,
        ..Geometry::new(MIB)
    };
    let engine = Engine::builder(Box::new(backend), target)
        .start()
        .expect("engine starts");
    let client = engine.handle().client(1, "/", be()).expect("root");
    let kind = |f: IoFuture| f.wait().err().map(|e| e.kind);
    assert_eq!(
        kind(client.read(512, 4096)),
        Some(IoErrorKind::Misaligned {
            what: "offset",
            alignment: 4096
        })
    );
    assert_eq!(
        kind(client.read(0, 512)),
        Some(IoErrorKind::Misaligned {
            what: "length",
            alignment: 4096
        })
    );
    assert_eq!(kind(client.read(0, 0)), Some(IoErrorKind::BadLength));
    assert_eq!(
        kind(client.read(MIB, 4096)),
        Some(IoErrorKind::OutOfRange { capacity: MIB })
    );
    let error = client
        .write(4096, filled(100, 0))
        .wait()
        .expect_err("refused");
    assert!(
        error.to_string().contains("EINVAL (Invalid argument)"),
        "{error}"
    );
    assert!(probe.log().is_empty(), "the device saw nothing");
    assert!(engine.handle().client(1, "nope", be()).is_err());
    engine.shutdown().expect("clean shutdown");
}

/// Bad configurations are refused with an error naming what is wrong.
#[test]
fn bad_specs_and_groups_are_named() {
    let start = |spec: &str, group: &str, weight: u32| {
        engine_on(MemoryBackend::new(4096), 4096, 1)
            .scheduler(spec)
            .group(group, weight)
            .start()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert!(start("fastest", "a", 100).contains("'fastest'"));
    assert!(start("bfq:slice_idle=x", "a", 100).contains("slice_idle"));
    assert!(start("noop", "a//b", 100).contains("a//b"));
    assert!(start("noop", "a", 0).contains("weight"));
}

/// With a queue of one and a stalled device, a submitting thread blocks; it goes on once
/// the device drains.
#[test]
fn a_full_submission_queue_pushes_back() {
    let (builder, probe) = probed_engine(1);
    let engine = builder
        .scheduler("noop:nomerges=2")
        .submission_queue(1)
        .start()
        .expect("engine starts");
    let client = engine.handle().client(1, "/", be()).expect("root");
    probe.hold();
    let submitted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&submitted);
    let submitter = thread::spawn(move || {
        let futures: Vec<_> = (0..10u64)
            .map(|i| {
                let future = client.read(i * 8192, 512);
                counter.fetch_add(1, Ordering::SeqCst);
                future
            })
            .collect();
        futures
            .into_iter()
            .map(|f| f.wait().is_ok())
            .filter(|&ok| ok)
            .count()
    });
    thread::sleep(Duration::from_millis(200));
    let blocked_at = submitted.load(Ordering::SeqCst);
    // One at the device, one in the policy, one in the channel; the fourth blocks.
    assert!(blocked_at <= 4, "{blocked_at} submitted past a full queue");
    assert!(!submitter.is_finished());
    probe.release();
    let ok = submitter.join().expect("submitter");
    assert_eq!(ok, 10);
    engine.shutdown().expect("clean shutdown");
}

/// Shutdown completes every request queued and in flight; afterwards requests fail with a
/// shutdown error instead of hanging.
#[test]
fn shutdown_drains_everything() {
    let (builder, probe) = probed_engine(2);
    let engine = builder.scheduler("bfq").start().expect("engine starts");
    let handle = engine.handle();
    probe.hold();
    let mut futures = Vec::new();
    for process in 0..4u32 {
        let client = handle.client(process, "/", be()).expect("root");
        for i in 0..10u64 {
            futures.push(client.read((u64::from(process) * 10 + i) * 8192, 4096));
        }
    }
    wait_until(|| handle.stats().submitted == 40);
    let snapshot = handle.stats();
    assert_eq!(snapshot.in_flight, 2);
    assert_eq!(snapshot.queued, 38);
    let releaser = {
        let probe = probe.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(50));
            probe.release();
        })
    };
    let stats = engine.shutdown().expect("clean shutdown");
    releaser.join().expect("releaser");
    assert_eq!(stats.totals.requests, 40);
    assert_eq!((stats.in_flight, stats.queued), (0, 0));
    assert!(futures
        .into_iter()
        .all(|f| f.is_ready() && f.wait().is_ok()));
    let late = handle.client(9, "/", be()).expect("root").read(0, 512);
    assert_eq!(
        late.wait().err().map(|e| e.kind),
        Some(IoErrorKind::ShutDown)
    );
}

/// Dropping an engine shuts it down too, without panicking.
#[test]
fn drop_shuts_down() {
    let engine = engine_on(MemoryBackend::new(MIB as usize), MIB, 1)
        .start()
        .expect("engine starts");
    let client = engine.handle().client(1, "/", be()).expect("root");
    let future = client.read(0, 512);
    drop(engine);
    future.wait().expect("drained before the drop returned");
}

/// Depth one, both classes queued: every RT request leaves before the waiting BE ones.
#[test]
fn real_time_goes_before_best_effort() {
    for spec in ["bfq:slice_idle=0", "cfq:slice_idle=0"] {
        let (builder, probe) = probed_engine(1);
        let engine = builder.scheduler(spec).start().expect("engine starts");
        let handle = engine.handle();
        let best_effort = handle.client(1, "/", be()).expect("root");
        let real_time = handle.client(2, "/", rt()).expect("root");
        probe.hold();
        let mut futures = vec![best_effort.read(0, 512)];
        wait_until(|| handle.stats().in_flight == 1);
        // BE requests below 512 KiB, RT above, none adjacent (no merging).
        for i in 1..=5u64 {
            futures.push(best_effort.read(i * 8192, 512));
        }
        for i in 1..=5u64 {
            futures.push(real_time.read(MIB / 2 + i * 8192, 512));
        }
        wait_until(|| handle.stats().submitted == 11);
        probe.release();
        for future in futures {
            future.wait().expect("read");
        }
        let order: Vec<bool> = probe.log().iter().map(|op| op.offset >= MIB / 2).collect();
        assert_eq!(
            order,
            vec![false, true, true, true, true, true, false, false, false, false, false],
            "{spec}"
        );
        engine.shutdown().expect("clean shutdown");
    }
}

/// Two backlogged groups weighted 100 and 300 under bfq share the device about 1:3.
#[test]
fn weighted_groups_share_by_weight() {
    let (builder, probe) = bfq_tenants(&[("light", 100), ("heavy", 300)]);
    let engine = builder.start().expect("engine starts");
    let handle = engine.handle();
    let light = handle.client(1, "light", be()).expect("light");
    let heavy = handle.client(2, "heavy", be()).expect("heavy");
    // light below 4 MiB, heavy above.
    let submit = || spaced_reads(&[(&light, 0), (&heavy, 4 * MIB)]);
    let served = served_once_backlogged(&probe, &handle, &light, submit, 2 * BACKLOG, || {});
    let heavy_share = upper_share(&served);
    assert!(
        (0.65..=0.85).contains(&heavy_share),
        "heavy group got {heavy_share:.2} of the service, expected about 0.75"
    );
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!(stats.groups["light"].requests, BACKLOG + 1);
    assert_eq!(stats.groups["heavy"].requests, BACKLOG);
}

/// A limit makes the policy answer "wait until t": the dispatcher sleeps until then instead
/// of spinning, and the limit holds.
#[test]
fn policy_waits_are_honoured_without_busy_looping() {
    let backend = MemoryBackend::new(MIB as usize);
    let probe = backend.probe();
    let engine = slow_group_engine(backend);
    let client = engine.handle().client(1, "slow", be()).expect("slow");
    let calls_before = probe.wait_calls();
    let start = Instant::now();
    // 20 IOPS with a 100 ms burst: two at once, then one every 50 ms.
    let futures: Vec<_> = (0..6u64).map(|i| client.read(i * 8192, 512)).collect();
    for future in futures {
        future.wait().expect("read");
    }
    let elapsed = start.elapsed();
    let calls = probe.wait_calls() - calls_before;
    assert!(
        elapsed >= Duration::from_millis(150),
        "the limit was not honoured: {elapsed:?}"
    );
    assert!(
        calls < 60,
        "{calls} backend waits for 6 requests: busy loop"
    );
    engine.shutdown().expect("clean shutdown");
}

/// Statistics are readable while running and keep a stable order.
#[test]
fn stats_while_running() {
    let engine = engine_on(MemoryBackend::new(MIB as usize), MIB, 2)
        .scheduler("cfq")
        .group("x", 100)
        .group("y", 100)
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    let x = handle.client(5, "x", be()).expect("x");
    let y = handle.client(4, "y", rt()).expect("y");
    for i in 0..50u64 {
        x.write(i * 4096, filled(4096, 1)).wait().expect("write");
        y.read(i * 4096, 4096).wait().expect("read");
    }
    let stats = handle.stats();
    assert_eq!(stats.groups["x"].bytes_written, 50 * 4096);
    assert_eq!(stats.groups["y"].bytes_read, 50 * 4096);
    assert_eq!(
        stats.processes.keys().copied().collect::<Vec<_>>(),
        vec![4, 5]
    );
    let latency = stats.totals.latency;
    assert!(latency.p50 <= latency.p90 && latency.p90 <= latency.p99);
    assert!(latency.p99 <= latency.p999 && latency.p999 <= latency.max);
    engine.shutdown().expect("clean shutdown");
}

/// The future works without any runtime: a minimal executor parks the thread until woken.
#[test]
fn futures_resolve_through_the_waker() {
    use std::future::Future;
    use std::task::{Context, Poll, Wake, Waker};

    struct Unpark(thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    fn block_on<F: Future>(future: F) -> F::Output {
        let waker = Waker::from(Arc::new(Unpark(thread::current())));
        let mut context = Context::from_waker(&waker);
        let mut future = std::pin::pin!(future);
        loop {
            if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
                return output;
            }
            thread::park();
        }
    }
    fn assert_shareable<T: Clone + Send + Sync>() {}
    assert_shareable::<ioslice_engine::Handle>();
    assert_shareable::<ioslice_engine::Client>();

    let (builder, probe) = probed_engine(2);
    let engine = builder.start().expect("engine starts");
    let client = engine.handle().client(1, "/", be()).expect("root");
    probe.hold();
    let write = client.write(4096, filled(4096, 0x5a));
    let releaser = thread::spawn(move || {
        thread::sleep(Duration::from_millis(20));
        probe.release();
    });
    let written = block_on(write).expect("write");
    assert_eq!(written.bytes, 4096);
    let read = block_on(async { client.read(4096, 4096).await }).expect("read");
    assert_eq!(read.buffer.as_slice(), &[0x5a; 4096][..]);
    releaser.join().expect("releaser");
    engine.shutdown().expect("clean shutdown");
}
