//! The batch API ([`Batch`]): many requests from one thread completing into one queue by
//! tag, on one engine or several, with or without a lane; every request completes exactly
//! once, refusals included, and the data is what was written.

mod common;

use std::collections::BTreeSet;
use std::thread;
use std::time::{Duration, Instant};

use common::{be, engine_on, filled, join_within, MIB};
use ioslice_engine::backend::memory::MemoryBackend;
use ioslice_engine::{AlignedBuffer, Batch, Direction, Engine, IoOutcome, Transfer};

const BLOCK: usize = 4096;

/// Wait and collect until `expected` outcomes have arrived, failing instead of hanging.
fn collect(batch: &mut Batch, expected: usize) -> Vec<(u64, IoOutcome)> {
    let give_up = Instant::now() + Duration::from_secs(20);
    let mut all = Vec::new();
    while all.len() < expected {
        assert!(
            Instant::now() < give_up,
            "only {} of {expected} outcomes",
            all.len()
        );
        batch.wait(Some(Instant::now() + Duration::from_millis(100)));
        batch.take_completions(&mut all);
    }
    all
}

fn tags(outcomes: &[(u64, IoOutcome)]) -> Vec<u64> {
    let mut tags: Vec<u64> = outcomes.iter().map(|(tag, _)| *tag).collect();
    tags.sort_unstable();
    tags
}

fn engine(lanes: usize, scheduler: &str) -> Engine {
    let backend = MemoryBackend::new(MIB as usize).with_lanes(lanes);
    engine_on(backend, MIB, 8)
        .scheduler(scheduler)
        .start()
        .expect("engine")
}

#[test]
fn every_request_of_a_batch_completes_once_under_its_tag_with_its_data() {
    for scheduler in ["noop", "mq-deadline", "kyber", "bfq", "cfq"] {
        let engine = engine(0, scheduler);
        let handle = engine.handle();
        let writer = handle.client(1, "/", be()).expect("client");
        let reader = handle.client(2, "/", be()).expect("client");
        let mut batch = Batch::new(vec![writer, reader]);
        assert!(!batch.open_lane(), "the backend has no lanes");

        // 64 writes through client 0, each block filled with its number, tags 1000..
        for block in 0..64u64 {
            let transfer = Transfer::write(block * BLOCK as u64, filled(BLOCK, block as u8));
            batch.submit(0, transfer, 1000 + block);
        }
        assert_eq!(batch.in_flight(), 64);
        let written = collect(&mut batch, 64);
        assert_eq!(
            tags(&written),
            (1000..1064).collect::<Vec<_>>(),
            "{scheduler}"
        );
        assert_eq!(batch.in_flight(), 0);
        for (tag, outcome) in &written {
            let result = outcome.as_ref().expect("write");
            assert_eq!(result.offset, (tag - 1000) * BLOCK as u64);
            assert_eq!(result.bytes, BLOCK);
        }

        // Read them back through client 1, in reverse order.
        for block in (0..64u64).rev() {
            let buffer = AlignedBuffer::new(BLOCK, 512);
            batch.submit(1, Transfer::read(block * BLOCK as u64, buffer), block);
        }
        let read = collect(&mut batch, 64);
        assert_eq!(tags(&read), (0..64).collect::<Vec<_>>(), "{scheduler}");
        for (tag, outcome) in read {
            let result = outcome.expect("read");
            assert!(result.buffer.as_slice().iter().all(|&b| b == tag as u8));
        }

        // Nothing else arrives, and a wait with nothing in flight returns at once.
        batch.wait(None);
        let mut none = Vec::new();
        batch.take_completions(&mut none);
        assert!(none.is_empty());
        for client in batch.finish() {
            client.exit();
        }
        let last = engine.shutdown().expect("shutdown");
        assert_eq!(last.totals.requests, 128, "{scheduler}");
        assert_eq!(last.totals.errors, 0);
    }
}

#[test]
fn a_refused_request_completes_at_once_with_its_error() {
    let engine = engine(0, "mq-deadline");
    let client = engine.handle().client(1, "/", be()).expect("client");
    let mut batch = Batch::new(vec![client]);
    // Misaligned offset, and past the end of the device.
    batch.submit(0, Transfer::read(100, AlignedBuffer::new(512, 512)), 7);
    batch.submit(0, Transfer::read(MIB, AlignedBuffer::new(512, 512)), 8);
    assert_eq!(batch.in_flight(), 2);
    let mut outcomes = Vec::new();
    batch.take_completions(&mut outcomes);
    assert_eq!(tags(&outcomes), vec![7, 8]);
    for (_, outcome) in &outcomes {
        let error = outcome.as_ref().expect_err("refused");
        assert_eq!(error.errno(), libc::EINVAL);
        assert_eq!(error.direction, Direction::Read);
    }
    assert_eq!(batch.in_flight(), 0);
    drop(batch);
    assert_eq!(engine.shutdown().expect("shutdown").totals.requests, 0);
}

#[test]
fn a_batch_on_its_own_lane_completes_one_request_at_a_time() {
    let engine = engine(4, "bfq:slice_idle=0");
    let client = engine.handle().client(1, "/", be()).expect("client");
    let mut batch = Batch::new(vec![client]);
    assert!(batch.open_lane());
    assert!(batch.has_lane());
    for block in 0..32u64 {
        let transfer = Transfer::write(block * BLOCK as u64, filled(BLOCK, 0x5a));
        batch.submit(0, transfer, block);
        let done = collect(&mut batch, 1);
        assert_eq!(tags(&done), vec![block]);
        assert!(done[0].1.is_ok());
    }
    drop(batch); // flushes and gives the lane back
    let last = engine.shutdown().expect("shutdown");
    assert_eq!(last.totals.requests, 32);
    assert_eq!(last.in_flight, 0);
}

#[test]
fn a_batch_over_two_engines_is_served_by_both() {
    let first = engine(0, "bfq");
    let second = engine(4, "mq-deadline");
    let a = first.handle().client(1, "/", be()).expect("client");
    let b = second.handle().client(1, "/", be()).expect("client");
    let worker = thread::spawn(move || {
        let mut batch = Batch::new(vec![a, b]);
        // Two engines: no lane, whatever the backends have.
        assert!(!batch.open_lane());
        for block in 0..16u64 {
            let offset = block * BLOCK as u64;
            batch.submit(0, Transfer::write(offset, filled(BLOCK, 1)), block);
            batch.submit(1, Transfer::write(offset, filled(BLOCK, 2)), 100 + block);
        }
        let done = collect(&mut batch, 32);
        let expected: BTreeSet<u64> = (0..16).chain(100..116).collect();
        assert_eq!(tags(&done).into_iter().collect::<BTreeSet<_>>(), expected);
        assert!(done.iter().all(|(_, outcome)| outcome.is_ok()));
        batch.finish()
    });
    let clients = join_within(worker);
    assert_eq!(clients.len(), 2);
    assert_eq!(first.shutdown().expect("shutdown").totals.writes, 16);
    assert_eq!(second.shutdown().expect("shutdown").totals.writes, 16);
}
