//! The engine's hand-offs between threads, model-checked with shuttle.
//!
//! Built only with `--cfg ioslice_model` (`RUSTFLAGS="--cfg ioslice_model" cargo test -p
//! ioslice-engine --lib model_check`): then every lock, condition variable, atomic, thread,
//! park and thread-local of the engine's core is shuttle's ([`crate::sync`]), and each
//! scenario below runs many times, each time with the threads interleaved in another order
//! (shuttle's random and PCT schedulers, from fixed seeds). A scenario fails if any order
//! loses or doubles a request, returns a wrong byte or error, or leaves every thread blocked
//! (shuttle reports a deadlock): a lost wake-up.
//!
//! Shuttle does not model time: a timed wait only ends when another thread wakes it. So the
//! scenarios without a clock check that no hand-off relies on a timeout (the pollers'
//! rechecks included) to make progress; the scenario with policy timers has a clock thread
//! that moves the engine's virtual clock at arbitrary points and wakes the timed waiters, as
//! time passing would.
//!
//! `IOSLICE_MODEL_ITERATIONS` sets the orders tried per scheduler and scenario (default 300,
//! what CI runs); `IOSLICE_MODEL_SEED` the first seed (default 1).

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use ioslice_core::limit::Limits;
use ioslice_core::{Direction, IoPriority};
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::{thread, Config, Runner};

use crate::backend::memory::{MemoryBackend, MemoryProbe};
use crate::completion::CompletionQueue;
use crate::request::Transfer;
use crate::{AlignedBuffer, Client, Engine, EngineBuilder, Geometry, IoErrorKind, IoFuture};

const CAPACITY: usize = 1 << 16;
const BLOCK: usize = 512;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// Run `scenario` under shuttle's random scheduler and its PCT scheduler (depth 3).
fn explore(scenario: fn()) {
    let iterations = env_number("IOSLICE_MODEL_ITERATIONS", 300) as usize;
    let seed = env_number("IOSLICE_MODEL_SEED", 1);
    let config = || {
        let mut config = Config::new();
        config.silence_warnings = true;
        config
    };
    let random = RandomScheduler::new_from_seed(seed, iterations);
    Runner::new(random, config()).run(scenario);
    let pct = PctScheduler::new_from_seed(seed, 3, iterations);
    Runner::new(pct, config()).run(scenario);
}

/// A memory device of 64 KiB under `scheduler` taking `depth` commands, and its probe.
fn engine(
    backend: MemoryBackend,
    scheduler: &str,
    depth: usize,
    tune: impl FnOnce(EngineBuilder) -> EngineBuilder,
) -> (Engine, MemoryProbe) {
    let probe = backend.probe();
    let target = Geometry {
        queue_depth: depth,
        ..Geometry::new(CAPACITY as u64)
    };
    let builder = Engine::builder(Box::new(backend), target).scheduler(scheduler);
    let engine = tune(builder).start().expect("engine starts");
    (engine, probe)
}

fn filled(byte: u8) -> AlignedBuffer {
    let mut buffer = AlignedBuffer::new(BLOCK, BLOCK);
    buffer.as_mut_slice().fill(byte);
    buffer
}

/// Write `byte` at block `block`, read it back, through futures waited for.
fn write_and_read(client: &Client, block: u64, byte: u8) {
    let offset = block * BLOCK as u64;
    let written = client.write(offset, filled(byte)).wait().expect("write");
    assert_eq!(written.bytes, BLOCK);
    let read = client.read(offset, BLOCK).wait().expect("read");
    assert!(read.buffer.as_slice().iter().all(|&b| b == byte));
}

/// The engine's own account: every request submitted completed once, none failed.
fn assert_clean(engine: Engine, requests: u64) {
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!(stats.submitted, requests);
    assert_eq!(stats.totals.requests, requests);
    assert_eq!(stats.totals.errors, 0);
    assert_eq!(stats.double_completions, 0);
    assert_eq!((stats.queued, stats.in_flight), (0, 0));
}

/// The main thread writes and reads a block of its own while `threads` run, joins them and
/// the device thread, and checks that the engine served `requests` cleanly.
fn main_thread_joins(
    engine: Engine,
    threads: Vec<thread::JoinHandle<()>>,
    device: thread::JoinHandle<()>,
    requests: u64,
) {
    let main = engine
        .handle()
        .client(9, "/", IoPriority::default())
        .expect("client");
    write_and_read(&main, 8, 9);
    for thread in threads {
        thread.join().expect("client thread");
    }
    device.join().expect("device thread");
    assert_clean(engine, requests);
}

/// Holds and releases the device a few times while clients run, so that requests sit at
/// the device across the clients' hand-offs.
fn device_thread(probe: MemoryProbe) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        for _ in 0..2 {
            probe.hold();
            thread::yield_now();
            probe.release();
        }
    })
}

/// Three clients on their own threads, and the main thread, submit and wait at once: the
/// poller role moves among them and every outcome reaches its thread, whoever reaped it.
fn clients_wait_for_their_requests() {
    let (engine, probe) = engine(MemoryBackend::new(CAPACITY), "noop", 2, |b| b);
    let handle = engine.handle();
    let device = device_thread(probe);
    let threads: Vec<_> = (0..3u64)
        .map(|t| {
            let client = handle.client(t as u32 + 1, "/", IoPriority::default());
            thread::spawn(move || write_and_read(&client.expect("client"), t, t as u8 + 1))
        })
        .collect();
    main_thread_joins(engine, threads, device, 8);
}

#[test]
fn model_clients_wait_for_their_requests() {
    explore(clients_wait_for_their_requests);
}

/// Counts its wake-ups and unparks the thread that made it.
struct TaskWaker {
    wakes: AtomicUsize,
    thread: thread::Thread,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// An async task's request, which no thread waits on, beside a thread that waits for its
/// own: whoever polls completes the task's, and the task's waker fires exactly once.
fn an_async_task_and_a_waiting_thread() {
    let (engine, probe) = engine(MemoryBackend::new(CAPACITY), "noop", 2, |b| b);
    let handle = engine.handle();
    let client = handle
        .client(1, "/", IoPriority::default())
        .expect("client");
    probe.hold();
    let mut task = client.write(0, filled(7));
    let counter = Arc::new(TaskWaker {
        wakes: AtomicUsize::new(0),
        thread: thread::current(),
    });
    let waker = Waker::from(Arc::clone(&counter));
    let poll = |future: &mut IoFuture| Pin::new(future).poll(&mut Context::from_waker(&waker));
    assert!(poll(&mut task).is_pending());
    let other = handle
        .client(2, "/", IoPriority::default())
        .expect("client");
    let waiter = thread::spawn(move || write_and_read(&other, 3, 4));
    probe.release();
    waiter.join().expect("waiting thread");
    // The task is woken once its write is complete; the dispatcher thread polls for it.
    while counter.wakes.load(Ordering::SeqCst) == 0 {
        thread::park();
    }
    match poll(&mut task) {
        Poll::Ready(outcome) => assert_eq!(outcome.expect("write").bytes, BLOCK),
        Poll::Pending => panic!("woken but not ready"),
    }
    assert_eq!(counter.wakes.load(Ordering::SeqCst), 1);
    assert_clean(engine, 3);
}

#[test]
fn model_an_async_task_and_a_waiting_thread() {
    explore(an_async_task_and_a_waiting_thread);
}

/// The policy takes one request at a time: submitters are pushed back and wait for room,
/// polling themselves or woken when another thread's turn makes it.
fn submitters_pushed_back() {
    let (engine, probe) = engine(MemoryBackend::new(CAPACITY), "noop", 1, |b| {
        b.submission_queue(1)
    });
    let handle = engine.handle();
    let device = device_thread(probe);
    let threads: Vec<_> = (0..3u64)
        .map(|t| {
            let client = handle.client(t as u32 + 1, "/", IoPriority::default());
            thread::spawn(move || {
                let client = client.expect("client");
                let futures: Vec<_> = (0..2u64)
                    .map(|i| client.write((t * 2 + i) * BLOCK as u64, filled(t as u8 + 1)))
                    .collect();
                for future in futures {
                    assert_eq!(future.wait().expect("write").bytes, BLOCK);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("client thread");
    }
    device.join().expect("device thread");
    assert_clean(engine, 6);
}

#[test]
fn model_submitters_pushed_back() {
    explore(submitters_pushed_back);
}

/// A job as `ioslice run` drives one: requests into a completion queue, submitted in a
/// batch and flushed, waited for on the job's own lane, the lane closed at the end.
fn run_job_on_lane(client: &Client, blocks: std::ops::Range<u64>, byte: u8) {
    let queue = Arc::new(CompletionQueue::new(vec![client.counters()]));
    let lane = client.open_lane();
    for block in blocks.clone() {
        let transfer = Transfer {
            direction: Direction::Write,
            offset: block * BLOCK as u64,
            buffer: filled(byte),
            submitted: crate::sync::now(),
        };
        client.transfer_to(transfer, &queue, block, lane.as_ref());
    }
    client.flush();
    let mut done = Vec::new();
    while done.len() < blocks.clone().count() {
        client.wait_queue(&queue, None, lane.as_ref());
        queue.take_all(&mut done);
    }
    let tags: BTreeSet<u64> = done.iter().map(|(tag, _)| *tag).collect();
    assert_eq!(tags, blocks.collect::<BTreeSet<_>>());
    assert!(done.iter().all(|(_, outcome)| outcome.is_ok()), "{done:?}");
    if let Some(lane) = lane {
        client.close_lane(lane);
    }
}

/// Two jobs on lanes of their own beside a client on the shared lane: a lane's requests may
/// be submitted by any thread, only the lane's thread reaps them while it waits, and another
/// thread that completes one of them wakes it through its lane.
fn jobs_on_lanes() {
    let backend = MemoryBackend::new(CAPACITY).with_lanes(2);
    let (engine, probe) = engine(backend, "noop", 2, |b| b);
    let handle = engine.handle();
    let device = device_thread(probe);
    let jobs: Vec<_> = (0..2u64)
        .map(|j| {
            let client = handle.client(j as u32 + 1, "/", IoPriority::default());
            thread::spawn(move || {
                run_job_on_lane(&client.expect("client"), j * 2..j * 2 + 2, j as u8 + 1);
            })
        })
        .collect();
    main_thread_joins(engine, jobs, device, 6);
}

#[test]
fn model_jobs_on_lanes() {
    explore(jobs_on_lanes);
}

/// A group limited to 100 reads a second with a burst of one: a job on its lane keeps the
/// limit's timer itself, another client's requests to an unlimited group go on meanwhile, and
/// a clock thread moves time on at arbitrary points. Every request completes.
fn a_lane_thread_keeps_the_timer() {
    let slow = Limits {
        write_iops: Some(100),
        burst: Some(ioslice_core::time::ms(10)),
        ..Default::default()
    };
    let backend = MemoryBackend::new(CAPACITY).with_lanes(1);
    let (engine, probe) = engine(backend, "deadline", 2, |b| b.group_limits("slow", slow));
    let handle = engine.handle();
    let clock = {
        let probe = probe.clone();
        thread::spawn(move || {
            for _ in 0..6 {
                thread::yield_now();
                probe.advance_clock(Duration::from_millis(10));
            }
        })
    };
    let job_client = handle.client(1, "slow", IoPriority::default());
    let finished = Arc::new(AtomicBool::new(false));
    let job = {
        let finished = Arc::clone(&finished);
        thread::spawn(move || {
            run_job_on_lane(&job_client.expect("client"), 0..3, 5);
            finished.store(true, Ordering::SeqCst);
        })
    };
    let main = handle
        .client(2, "/", IoPriority::default())
        .expect("client");
    write_and_read(&main, 8, 9);
    clock.join().expect("clock thread");
    // The clock has stopped: if the job still waits for the limit, move time on until done.
    let mut ticks = 0;
    while !finished.load(Ordering::SeqCst) {
        probe.advance_clock(Duration::from_millis(10));
        thread::yield_now();
        ticks += 1;
        assert!(
            ticks < 1000,
            "the job never finished: {}",
            handle.shared.roles()
        );
    }
    job.join().expect("job thread");
    assert_clean(engine, 5);
}

#[test]
fn model_a_lane_thread_keeps_the_timer() {
    explore(a_lane_thread_keeps_the_timer);
}

/// Short-lived threads on a backend that ties operations to their submitter (as io_uring
/// does): each submits, some wait and some drop their futures, and each exits; the device
/// cancels what an exited thread submitted and it had not done. No request is cancelled: a
/// thread that ran the engine's turns lives until the operations in flight are done.
fn threads_outlive_their_submissions() {
    let backend = MemoryBackend::new(CAPACITY).tied_to_submitter();
    let (engine, probe) = engine(backend, "noop", 2, |b| b);
    let handle = engine.handle();
    probe.hold();
    let threads: Vec<_> = (0..3u64)
        .map(|t| {
            let client = handle.client(t as u32 + 1, "/", IoPriority::default());
            thread::spawn(move || {
                let client = client.expect("client");
                let write = client.write(t * BLOCK as u64, filled(t as u8 + 1));
                if t == 0 {
                    assert_eq!(write.wait().expect("write").bytes, BLOCK);
                }
            })
        })
        .collect();
    thread::yield_now();
    probe.release();
    for thread in threads {
        let id = thread.thread().id();
        thread.join().expect("client thread");
        probe.thread_exited(id);
    }
    let main = handle
        .client(9, "/", IoPriority::default())
        .expect("client");
    write_and_read(&main, 8, 9);
    for t in 0..3u64 {
        let read = main.read(t * BLOCK as u64, BLOCK).wait().expect("read");
        assert!(read.buffer.as_slice().iter().all(|&b| b == t as u8 + 1));
    }
    assert_clean(engine, 8);
}

#[test]
fn model_threads_outlive_their_submissions() {
    explore(threads_outlive_their_submissions);
}

/// The engine shuts down while clients wait: each wait ends, with its result or with a
/// shutdown error for a request the engine never took, and nothing hangs.
fn shutdown_while_clients_wait() {
    let (engine, probe) = engine(MemoryBackend::new(CAPACITY), "noop", 2, |b| b);
    let handle = engine.handle();
    let device = device_thread(probe);
    let threads: Vec<_> = (0..2u64)
        .map(|t| {
            let client = handle.client(t as u32 + 1, "/", IoPriority::default());
            thread::spawn(move || {
                let client = client.expect("client");
                match client.write(t * BLOCK as u64, filled(1)).wait() {
                    Ok(done) => assert_eq!(done.bytes, BLOCK),
                    Err(error) => assert_eq!(error.kind, IoErrorKind::ShutDown),
                }
            })
        })
        .collect();
    let stats = engine.shutdown().expect("clean shutdown");
    for thread in threads {
        thread.join().expect("client thread");
    }
    device.join().expect("device thread");
    assert_eq!(stats.totals.errors, 0);
    assert_eq!(stats.double_completions, 0);
    assert_eq!((stats.queued, stats.in_flight), (0, 0));
}

#[test]
fn model_shutdown_while_clients_wait() {
    explore(shutdown_while_clients_wait);
}
