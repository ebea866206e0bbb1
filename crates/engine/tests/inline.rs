//! The paths of the "caller runs" engine: clients submit and poll the backend themselves, the
//! poller role moves between threads, and the dispatcher thread takes over when nobody else
//! can (async wakers, policy timers, parked threads, shutdown). Every request completes
//! exactly once, with its bytes.

mod common;

use common::{
    be, engine_on, filled, join_within, probed_engine, slow_group_engine, wait_until, MIB,
};

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

use ioslice_engine::backend::memory::MemoryBackend;
use ioslice_engine::backend::{Backend, ThreadPoolBackend, UringBackend};
use ioslice_engine::device::{OpenOptions, Target};
use ioslice_engine::{Engine, Geometry, IoFuture};

/// Counts its wake-ups; never parks anybody.
struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn poll_once(future: &mut IoFuture, waker: &Waker) -> Poll<ioslice_engine::IoOutcome> {
    Pin::new(future).poll(&mut Context::from_waker(waker))
}

/// Sixteen threads at once, each writing its own region with distinct bytes, several
/// requests in flight each, then reading it all back, on a temporary file through io_uring
/// and through the thread pool: every request completes once, every byte is right.
#[test]
fn many_threads_submit_and_wait_at_once_on_a_real_file() {
    const THREADS: u64 = 16;
    const BLOCKS: u64 = 48;
    const BLOCK: usize = 4096;
    const IN_FLIGHT: usize = 6;
    let dir = tempfile::tempdir().expect("temp dir");
    let options = OpenOptions {
        direct: false,
        write: true,
        create_len: Some(THREADS * BLOCKS * BLOCK as u64),
    };
    let target = Target::open(dir.path().join("data"), &options).expect("file opens");
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(ThreadPoolBackend::new(
        Arc::clone(target.file()),
        8,
    ))];
    match UringBackend::new(Arc::clone(target.file()), 32) {
        Ok(ring) => backends.push(Box::new(ring)),
        Err(e) => eprintln!("io_uring case skipped: {e}"),
    }
    for backend in backends {
        let name = backend.name();
        let engine = Engine::builder(backend, Geometry::of(&target))
            .scheduler("noop")
            .submission_queue(8)
            .start()
            .expect("engine starts");
        let handle = engine.handle();
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let client = handle.client(t as u32 + 1, "/", be()).expect("root");
                thread::spawn(move || {
                    let base = t * BLOCKS * BLOCK as u64;
                    let byte = |block: u64| (t * 7 + block * 13) as u8 | 1;
                    let mut queue: Vec<IoFuture> = Vec::new();
                    for block in 0..BLOCKS {
                        if queue.len() == IN_FLIGHT {
                            let written = queue.remove(0).wait().expect("write");
                            assert_eq!(written.bytes, BLOCK);
                        }
                        let offset = base + block * BLOCK as u64;
                        queue.push(client.write(offset, filled(BLOCK, byte(block))));
                    }
                    for future in queue.drain(..) {
                        future.wait().expect("write");
                    }
                    let reads: Vec<_> = (0..BLOCKS)
                        .map(|block| client.read(base + block * BLOCK as u64, BLOCK))
                        .collect();
                    for (block, future) in reads.into_iter().enumerate() {
                        let read = future.wait().expect("read");
                        let expected = byte(block as u64);
                        assert!(read.buffer.as_slice().iter().all(|&b| b == expected));
                    }
                    2 * BLOCKS
                })
            })
            .collect();
        let completed: u64 = threads.into_iter().map(join_within).sum();
        let stats = engine.shutdown().expect("clean shutdown");
        assert_eq!(completed, THREADS * BLOCKS * 2, "{name}");
        assert_eq!(stats.totals.requests, completed, "{name}");
        assert_eq!(stats.submitted, completed, "{name}");
        assert_eq!(stats.totals.errors, 0, "{name}");
        assert_eq!(stats.double_completions, 0, "{name}");
        assert_eq!(stats.cancelled, 0, "{name}");
        assert_eq!((stats.in_flight, stats.queued), (0, 0), "{name}");
    }
}

/// A future only ever polled with a waker (nobody calls `wait`, nobody polls the backend):
/// the dispatcher thread reaps it and the waker fires exactly once.
#[test]
fn an_async_future_completes_with_nobody_waiting_on_it() {
    let (builder, probe) = probed_engine(2);
    let engine = builder.start().expect("engine starts");
    let client = engine.handle().client(1, "/", be()).expect("root");
    probe.hold();
    let mut write = client.write(8192, filled(4096, 0x3c));
    let counter = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let waker = Waker::from(Arc::clone(&counter));
    assert!(poll_once(&mut write, &waker).is_pending());
    // Polled again with the same waker: still one registration.
    assert!(poll_once(&mut write, &waker).is_pending());
    probe.release();
    wait_until(|| counter.0.load(Ordering::SeqCst) > 0);
    match poll_once(&mut write, &waker) {
        Poll::Ready(outcome) => assert_eq!(outcome.expect("write").bytes, 4096),
        Poll::Pending => panic!("woken but not ready"),
    }
    assert_eq!(counter.0.load(Ordering::SeqCst), 1);
    assert_eq!(probe.read(8192, 4096), vec![0x3c; 4096]);
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!(stats.totals.requests, 1);
}

/// Requests a limit holds back are dispatched at the policy's time although no client
/// waits for them: the dispatcher thread keeps the timer.
#[test]
fn a_policy_timer_is_kept_with_no_client_waiting() {
    let backend = MemoryBackend::new(MIB as usize);
    let engine = slow_group_engine(backend);
    let handle = engine.handle();
    let client = handle.client(1, "slow", be()).expect("slow");
    let start = Instant::now();
    // 20 IOPS with a 100 ms burst: two at once, then one every 50 ms.
    let futures: Vec<_> = (0..5u64).map(|i| client.read(i * 8192, 512)).collect();
    wait_until(|| handle.stats().totals.requests == 5);
    assert!(
        start.elapsed() >= Duration::from_millis(100),
        "the limit was not honoured"
    );
    assert!(futures.iter().all(IoFuture::is_ready));
    for future in futures {
        future.wait().expect("read");
    }
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!((stats.totals.requests, stats.double_completions), (5, 0));
}

/// Several threads submitting into a full policy block, whoever polls; they all go on once
/// the device drains, and nothing is lost.
#[test]
fn push_back_holds_every_submitter_until_there_is_room() {
    const THREADS: u64 = 4;
    const EACH: u64 = 5;
    let (builder, probe) = probed_engine(1);
    let engine = builder
        .scheduler("noop:nomerges=2")
        .submission_queue(2)
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    probe.hold();
    let submitted = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let client = handle.client(t as u32 + 1, "/", be()).expect("root");
            let submitted = Arc::clone(&submitted);
            thread::spawn(move || {
                let futures: Vec<_> = (0..EACH)
                    .map(|i| {
                        let future = client.read((t * EACH + i) * 8192, 512);
                        submitted.fetch_add(1, Ordering::SeqCst);
                        future
                    })
                    .collect();
                futures
                    .into_iter()
                    .map(IoFuture::wait)
                    .filter(Result::is_ok)
                    .count()
            })
        })
        .collect();
    thread::sleep(Duration::from_millis(200));
    let stats = handle.stats();
    // One at the device and two in the policy; everyone else is blocked.
    assert_eq!((stats.in_flight, stats.queued), (1, 2));
    assert_eq!(submitted.load(Ordering::SeqCst), 3);
    probe.release();
    let waited: usize = threads.into_iter().map(join_within).sum();
    assert_eq!(waited as u64, THREADS * EACH);
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!(stats.totals.requests, THREADS * EACH);
    assert_eq!((stats.totals.errors, stats.double_completions), (0, 0));
    let offsets: HashSet<u64> = probe.log().iter().map(|op| op.offset).collect();
    assert_eq!(offsets.len() as u64, THREADS * EACH, "each served once");
}

/// Shutdown while a client thread is the poller, blocked on a stalled device, with another
/// client parked behind it: both complete, the engine drains and closes.
#[test]
fn shutdown_while_a_client_is_the_poller() {
    let (builder, probe) = probed_engine(4);
    let engine = builder.start().expect("engine starts");
    let handle = engine.handle();
    probe.hold();
    let poller = {
        let client = handle.client(1, "/", be()).expect("root");
        thread::spawn(move || client.read(0, 4096).wait().map(|r| r.bytes))
    };
    // The poller's own backend waits: it blocks there while the device is held.
    wait_until(|| probe.wait_calls() >= 1);
    let parked = {
        let client = handle.client(2, "/", be()).expect("root");
        thread::spawn(move || client.read(8192, 4096).wait().map(|r| r.bytes))
    };
    wait_until(|| handle.stats().submitted == 2);
    let releaser = {
        let probe = probe.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(50));
            probe.release();
        })
    };
    let stats = engine.shutdown().expect("clean shutdown");
    releaser.join().expect("releaser");
    assert_eq!(join_within(poller).expect("poller's read"), 4096);
    assert_eq!(join_within(parked).expect("parked read"), 4096);
    assert_eq!(stats.totals.requests, 2);
    assert_eq!((stats.in_flight, stats.queued, stats.cancelled), (0, 0, 0));
    let late = handle.client(3, "/", be()).expect("root").read(0, 512);
    assert!(late.wait().is_err(), "a request after shutdown fails");
}

/// The poller's own request finishes while another thread is parked on a request still at
/// the device: the poller gives the role up and the parked thread is still served.
#[test]
fn the_poller_role_is_handed_on_when_its_request_is_done() {
    let (builder, probe) = probed_engine(1);
    // Depth one: the second request only reaches the device once the first is back.
    let engine = builder
        .scheduler("noop:nomerges=2")
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    probe.hold();
    let first = handle.client(1, "/", be()).expect("root");
    let second = handle.client(2, "/", be()).expect("root");
    let a = first.read(0, 4096);
    let b = second.read(64 * 1024, 4096);
    let poller = thread::spawn(move || a.wait().map(|r| r.offset));
    wait_until(|| probe.wait_calls() >= 1);
    let parked = thread::spawn(move || b.wait().map(|r| r.offset));
    // Let the second thread find the poller busy and park.
    thread::sleep(Duration::from_millis(100));
    probe.release();
    assert_eq!(join_within(poller).expect("first"), 0);
    assert_eq!(join_within(parked).expect("second"), 64 * 1024);
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!((stats.totals.requests, stats.double_completions), (2, 0));
    assert_eq!(probe.log().len(), 2);
}

/// Property: threads mixing blocking waits, async polls and futures dropped unwaited, with
/// the device stalling and resuming under them: every request is served exactly once and
/// the engine drains.
#[test]
fn no_request_is_lost_or_completed_twice_whoever_polls() {
    const THREADS: u64 = 6;
    const ROUNDS: u64 = 30;
    for spec in ["noop", "bfq:slice_idle=0", "deadline"] {
        let backend = MemoryBackend::new(4 * MIB as usize);
        let probe = backend.probe();
        let engine = engine_on(backend, 4 * MIB, 3)
            .scheduler(spec)
            .submission_queue(4)
            .start()
            .expect("engine starts");
        let handle = engine.handle();
        let staller = {
            let probe = probe.clone();
            thread::spawn(move || {
                for _ in 0..20 {
                    probe.hold();
                    thread::sleep(Duration::from_millis(2));
                    probe.release();
                    thread::sleep(Duration::from_millis(2));
                }
            })
        };
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let client = handle.client(t as u32 + 1, "/", be()).expect("root");
                thread::spawn(move || {
                    let counter = Arc::new(CountingWaker(AtomicUsize::new(0)));
                    let waker = Waker::from(Arc::clone(&counter));
                    let mut done = 0u64;
                    for round in 0..ROUNDS {
                        // Gaps between requests: nothing merges, each is one operation.
                        let offset = (t * ROUNDS + round) * 8192;
                        let mut future = client.read(offset, 4096);
                        match round % 3 {
                            0 => {
                                future.wait().expect("read");
                                done += 1;
                            }
                            1 => {
                                let seen = counter.0.load(Ordering::SeqCst);
                                let outcome = match poll_once(&mut future, &waker) {
                                    Poll::Ready(outcome) => outcome,
                                    Poll::Pending => {
                                        wait_until(|| counter.0.load(Ordering::SeqCst) > seen);
                                        match poll_once(&mut future, &waker) {
                                            Poll::Ready(outcome) => outcome,
                                            Poll::Pending => panic!("woken but not ready"),
                                        }
                                    }
                                };
                                outcome.expect("read");
                                done += 1;
                            }
                            _ => drop(future),
                        }
                    }
                    done
                })
            })
            .collect();
        let waited: u64 = threads.into_iter().map(join_within).sum();
        join_within(staller);
        let stats = engine.shutdown().expect("clean shutdown");
        assert_eq!(waited, THREADS * (ROUNDS - ROUNDS / 3), "{spec}");
        assert_eq!(stats.totals.requests, THREADS * ROUNDS, "{spec}");
        assert_eq!(stats.submitted, THREADS * ROUNDS, "{spec}");
        assert_eq!(stats.double_completions, 0, "{spec}");
        assert_eq!(stats.cancelled, 0, "{spec}");
        assert_eq!((stats.in_flight, stats.queued), (0, 0), "{spec}");
        let mut offsets: Vec<u64> = probe.log().iter().map(|op| op.offset).collect();
        let served = offsets.len();
        offsets.sort_unstable();
        offsets.dedup();
        assert_eq!(offsets.len(), served, "{spec}: an offset served twice");
        assert_eq!(served as u64, THREADS * ROUNDS, "{spec}");
    }
}
