//! Short-lived client threads: rounds of threads that each make a client (a new process),
//! submit a few buffered writes, and exit, under noop and bfq, through io_uring and the
//! thread pool. Every request completes exactly once with the device's own result: none
//! comes back cancelled because the thread that submitted it to the kernel (its own, or
//! another client's running the engine's turn) has exited, and no wait hangs.
//!
//! In each round most threads wait for their writes before exiting; one in four drops its
//! last futures and exits at once, so the thread that asked for a request is gone before it
//! completes. The counts are exact: every write waited for succeeds, the engine completes
//! every write submitted with no error, and every byte is on the file afterwards.
//!
//! `IOSLICE_CHURN_CASES` keeps only the cases whose name ("io_uring noop", "psync bfq", …)
//! contains it. `IOSLICE_CHURN_ROUNDS` sets the rounds per case (default 60, the short
//! version CI runs);
//! `IOSLICE_CHURN_SECONDS`, if set, runs each case for that long instead. A round that takes
//! longer than 10 s fails the test as a hang; with `IOSLICE_CHURN_PAUSE` set it first
//! sleeps for an hour, so that a debugger can look at the stuck threads.

mod common;

use common::{be, filled};

use std::collections::BTreeMap;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use ioslice_engine::backend::{Backend, ThreadPoolBackend, UringBackend};
use ioslice_engine::device::{OpenOptions, Target};
use ioslice_engine::{Engine, Geometry, Handle, IoFuture};

const THREADS: u64 = 16;
const WRITES: u64 = 6;
const BLOCK: usize = 4096;
const FILE_LEN: u64 = 64 << 20;
/// The longest a round may take before the test calls it a hang.
const ROUND_LIMIT: Duration = Duration::from_secs(10);

/// What one case saw.
#[derive(Debug, Default)]
struct Tally {
    rounds: u64,
    requests: u64,
    waited: u64,
    ok: u64,
    /// Reads the main thread made to reap what nobody waits for.
    probes: u64,
    /// Errors by errno name, in a fixed order.
    errors: BTreeMap<String, u64>,
    longest_wait: Duration,
    longest_round: Duration,
}

/// What one thread saw.
#[derive(Debug, Default)]
struct ThreadTally {
    submitted: u64,
    waited: u64,
    ok: u64,
    errors: Vec<String>,
    longest_wait: Duration,
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
}

/// The byte block `block` of round `round` is filled with (never 0, so a lost write shows).
fn byte_of(round: u64, block: u64) -> u8 {
    ((round * 31 + block * 7) % 251) as u8 + 1
}

/// One short-lived thread: a client of its own, `WRITES` buffered writes, then wait for them
/// (or, if `waits` is false, wait for the first half only and drop the rest).
fn client_thread(
    handle: Handle,
    process: u32,
    round: u64,
    first_block: u64,
    waits: bool,
) -> ThreadTally {
    let mut tally = ThreadTally::default();
    let client = match handle.client(process, "/", be()) {
        Ok(client) => client,
        Err(error) => {
            tally.errors.push(format!("client: {error}"));
            return tally;
        }
    };
    let futures: Vec<IoFuture> = (0..WRITES)
        .map(|i| {
            let block = first_block + i;
            client.write(block * BLOCK as u64, filled(BLOCK, byte_of(round, block)))
        })
        .collect();
    tally.submitted = WRITES;
    let keep = if waits {
        futures.len()
    } else {
        futures.len() / 2
    };
    for future in futures.into_iter().take(keep) {
        let started = Instant::now();
        let outcome = future.wait();
        tally.longest_wait = tally.longest_wait.max(started.elapsed());
        tally.waited += 1;
        match outcome {
            Ok(done) if done.bytes == BLOCK => tally.ok += 1,
            Ok(done) => tally.errors.push(format!("short write of {}", done.bytes)),
            Err(error) => tally.errors.push(errno_label(error.errno())),
        }
    }
    tally
}

/// A round outlived its limit: say what the engine holds, and fail.
fn hung(handle: &Handle, round: u64, tally: &Tally) -> ! {
    let stats = handle.stats();
    if std::env::var_os("IOSLICE_CHURN_PAUSE").is_some() {
        eprintln!("hung in round {round}: pausing for a debugger ({stats:?})");
        thread::sleep(Duration::from_secs(3600));
    }
    panic!(
        "round {round} hung: a thread still waits after {ROUND_LIMIT:?} (engine: {} submitted, \
         {} completed, {} queued in the policy, {} at the device; so far: {tally:?})",
        stats.submitted, stats.totals.requests, stats.queued, stats.in_flight
    );
}

fn errno_label(errno: i32) -> String {
    ioslice_engine::completion::errno_name(errno)
        .map_or_else(|| format!("errno {errno}"), str::to_string)
}

/// Run rounds on one engine until `rounds` are done or `duration` has passed.
fn churn(engine: &Engine, file: &std::fs::File, rounds: u64, duration: Option<Duration>) -> Tally {
    let handle = engine.handle();
    let blocks = FILE_LEN / BLOCK as u64;
    let started = Instant::now();
    let mut tally = Tally::default();
    let mut process = 1u32;
    let mut round = 0u64;
    loop {
        let more = match duration {
            Some(limit) => started.elapsed() < limit,
            None => round < rounds,
        };
        if !more {
            break;
        }
        let round_started = Instant::now();
        let base = (round * THREADS * WRITES) % (blocks - THREADS * WRITES);
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let handle = handle.clone();
                let first = base + t * WRITES;
                let waits = t % 4 != 3;
                process += 1;
                let id = process;
                thread::spawn(move || client_thread(handle, id, round, first, waits))
            })
            .collect();
        for thread in threads {
            while !thread.is_finished() {
                if round_started.elapsed() >= ROUND_LIMIT {
                    hung(&handle, round, &tally);
                }
                thread::sleep(Duration::from_micros(200));
            }
            let seen = thread.join().expect("a client thread panicked");
            tally.requests += seen.submitted;
            tally.waited += seen.waited;
            tally.ok += seen.ok;
            tally.longest_wait = tally.longest_wait.max(seen.longest_wait);
            for error in seen.errors {
                *tally.errors.entry(error).or_default() += 1;
            }
        }
        // The writes nobody waits for are reaped by whoever waits next: this thread's reads
        // (counted apart). Every write of the round is then complete and on the file.
        let deadline = Instant::now() + ROUND_LIMIT;
        let reader = handle.client(0, "/", be()).expect("reader");
        while handle.stats().totals.requests < tally.requests + tally.probes {
            assert!(
                Instant::now() < deadline,
                "round {round}: requests nobody waits for never completed ({:?})",
                handle.stats()
            );
            tally.probes += 1;
            if let Err(error) = reader.read(0, BLOCK).wait() {
                *tally.errors.entry(errno_label(error.errno())).or_default() += 1;
            }
        }
        let mut block = vec![0u8; BLOCK];
        for b in base..base + THREADS * WRITES {
            file.read_exact_at(&mut block, b * BLOCK as u64)
                .expect("read back");
            let expected = byte_of(round, b);
            if block.iter().any(|&byte| byte != expected) {
                *tally
                    .errors
                    .entry("data not on the file".into())
                    .or_default() += 1;
            }
        }
        tally.longest_round = tally.longest_round.max(round_started.elapsed());
        round += 1;
        tally.rounds = round;
    }
    tally
}

/// Every case: both schedulers on every backend this machine has.
fn cases(target: &Target) -> Vec<(&'static str, &'static str, Box<dyn Backend>)> {
    let mut cases: Vec<(&'static str, &'static str, Box<dyn Backend>)> = Vec::new();
    for scheduler in ["noop", "bfq"] {
        match UringBackend::new(Arc::clone(target.file()), 32) {
            Ok(ring) => cases.push(("io_uring", scheduler, Box::new(ring))),
            Err(error) => eprintln!("io_uring case skipped: cannot create a ring ({error})"),
        }
        let pool = ThreadPoolBackend::new(Arc::clone(target.file()), 8);
        cases.push(("psync", scheduler, Box::new(pool)));
    }
    cases
}

#[test]
fn short_lived_client_threads_lose_no_request() {
    let rounds = env_number("IOSLICE_CHURN_ROUNDS").unwrap_or(60);
    let duration = env_number("IOSLICE_CHURN_SECONDS").map(Duration::from_secs);
    let dir = tempfile::tempdir().expect("temp dir");
    let options = OpenOptions {
        direct: false,
        write: true,
        create_len: Some(FILE_LEN),
    };
    let target = Target::open(dir.path().join("data"), &options).expect("file opens");
    let reader = std::fs::File::open(dir.path().join("data")).expect("reader");
    let mut failures = Vec::new();
    let only = std::env::var("IOSLICE_CHURN_CASES").unwrap_or_default();
    for (backend, scheduler, ring) in cases(&target) {
        if !format!("{backend} {scheduler}").contains(&only) {
            continue;
        }
        let engine = Engine::builder(ring, Geometry::of(&target))
            .scheduler(scheduler)
            .start()
            .expect("engine starts");
        let tally = churn(&engine, &reader, rounds, duration);
        let stats = engine.shutdown().expect("clean shutdown");
        eprintln!(
            "{backend} {scheduler}: {} rounds, {} requests ({} waited for, {} ok), errors {:?}, \
             longest wait {:?}, longest round {:?}; engine: {} completed, {} errors",
            tally.rounds,
            tally.requests,
            tally.waited,
            tally.ok,
            tally.errors,
            tally.longest_wait,
            tally.longest_round,
            stats.totals.requests,
            stats.totals.errors,
        );
        let exact = tally.errors.is_empty()
            && tally.ok == tally.waited
            && stats.totals.requests == tally.requests + tally.probes
            && stats.submitted == tally.requests + tally.probes
            && stats.totals.errors == 0
            && stats.double_completions == 0
            && stats.cancelled == 0;
        if !exact {
            failures.push(format!(
                "{backend} {scheduler}: {tally:?}; engine {stats:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
