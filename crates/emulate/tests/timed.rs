//! The timed backend: the device model on the real clock behind the engine. Data written reads
//! back, every operation completes exactly once, and completions follow the model's service
//! times: never before the model completes a command, and late by no more than the disk
//! thread's timer allows on a shared machine (stated below).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ioslice_core::{Direction, IoPriority, PriorityClass};
use ioslice_emulate::timed::TimedBackend;
use ioslice_engine::backend::{IoDone, IoOp, SHARED_LANE};
use ioslice_engine::{AlignedBuffer, Backend, Engine};
use ioslice_sim::device::null::NullDevice;
use ioslice_sim::preset::DeviceSpec;

/// How late a completion may be on this 2-core machine while other tests run: the disk
/// thread sleeps until 60 µs before a model event and spins the rest, but a thread that
/// waits for a CPU is late by as long as it waits.
const LATE_AT_MOST: Duration = Duration::from_millis(50);

fn op(token: u64, direction: Direction, offset: u64, fill: u8) -> IoOp {
    let mut buffer = AlignedBuffer::new(4096, 4096);
    buffer.as_mut_slice().fill(fill);
    IoOp {
        token,
        direction,
        offset,
        buffers: vec![buffer],
        lane: SHARED_LANE,
    }
}

/// Wait until `count` operations have completed; each with the instant it was reaped.
fn collect(backend: &mut TimedBackend, count: usize) -> Vec<(IoDone, Instant)> {
    let mut all = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while all.len() < count && Instant::now() < deadline {
        let mut done = Vec::new();
        backend
            .wait(Some(Instant::now() + Duration::from_millis(100)), &mut done)
            .expect("wait");
        let now = Instant::now();
        all.extend(done.into_iter().map(|d| (d, now)));
    }
    all
}

#[test]
fn completions_follow_the_models_service_time_one_at_a_time() {
    // 2 ms a command, one at a time: the fifth completes 10 ms after they all arrive.
    let model = NullDevice::new("null".into(), 2_000_000, 1, 1 << 21);
    let mut backend = TimedBackend::on_model(Box::new(model)).expect("disk thread");
    assert_eq!(backend.geometry().queue_depth, 1);
    let sent = Instant::now();
    for token in 0..5 {
        backend.push(op(token, Direction::Read, token * 4096, 0));
    }
    backend.submit().expect("submit");
    let done = collect(&mut backend, 5);
    assert_eq!(done.len(), 5);
    let mut order: Vec<u64> = done.iter().map(|(d, _)| d.token).collect();
    order.sort_unstable();
    assert_eq!(order, [0, 1, 2, 3, 4], "each completes once");
    let last = done.iter().map(|(_, at)| *at).max().expect("five");
    assert!(
        last.duration_since(sent) >= Duration::from_millis(10),
        "never early"
    );
    assert!(last.duration_since(sent) <= Duration::from_millis(10) + LATE_AT_MOST);
    assert_eq!(backend.in_flight(), 0);
    let summary = backend.stop();
    assert_eq!((summary.commands, summary.reads), (5, 5));
    assert_eq!(summary.service.mean.round(), 2000.0, "2 ms in the model");
}

#[test]
fn data_written_reads_back_and_the_rest_reads_as_zeros() {
    let spec: DeviceSpec = "sim:ssd".parse().expect("preset");
    let mut backend = TimedBackend::new(&spec).expect("disk thread");
    backend.push(op(1, Direction::Write, 1 << 20, 0xab));
    backend.submit().expect("submit");
    let written = collect(&mut backend, 1);
    assert_eq!(written[0].0.result.as_ref().ok(), Some(&4096));
    backend.push(op(2, Direction::Read, 1 << 20, 0));
    backend.push(op(3, Direction::Read, 2 << 20, 0x55));
    backend.submit().expect("submit");
    let read: HashMap<u64, IoDone> = collect(&mut backend, 2)
        .into_iter()
        .map(|(d, _)| (d.token, d))
        .collect();
    assert!(read[&2].buffers[0].as_slice().iter().all(|&b| b == 0xab));
    assert!(read[&3].buffers[0].as_slice().iter().all(|&b| b == 0));
}

#[test]
fn an_operation_past_the_end_fails_at_once() {
    let model = NullDevice::new("null".into(), 1_000_000, 1, 16);
    let mut backend = TimedBackend::on_model(Box::new(model)).expect("disk thread");
    backend.push(op(9, Direction::Read, 8192, 0));
    backend.submit().expect("submit");
    let done = collect(&mut backend, 1);
    let error = done[0].0.result.as_ref().expect_err("past 8 KiB");
    assert_eq!(error.raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn the_engine_on_a_timed_ssd_completes_every_request_once_under_bfq() {
    let spec: DeviceSpec = "sim:ssd".parse().expect("preset");
    let backend = TimedBackend::new(&spec).expect("disk thread");
    let geometry = backend.geometry();
    let engine = Engine::builder(Box::new(backend), geometry)
        .scheduler("bfq")
        .start()
        .expect("engine");
    let handle = engine.handle();
    let priority = IoPriority::new(PriorityClass::BestEffort, 4).expect("level 4");
    let threads: Vec<_> = (0..4u32)
        .map(|index| {
            let client = handle.client(index + 1, "/", priority).expect("client");
            std::thread::spawn(move || {
                let mut completed = 0u64;
                for round in 0..25u64 {
                    let offset = (u64::from(index) * 1000 + round) * 8192;
                    let mut buffer = AlignedBuffer::new(4096, 4096);
                    buffer.as_mut_slice().fill(index as u8 + 1);
                    client.write(offset, buffer).wait().expect("write");
                    let back = client.read(offset, 4096).wait().expect("read");
                    assert!(back.buffer.as_slice().iter().all(|&b| b == index as u8 + 1));
                    completed += 2;
                }
                client.exit();
                completed
            })
        })
        .collect();
    let completed: u64 = threads.into_iter().map(|t| t.join().expect("client")).sum();
    let stats = engine.shutdown().expect("shutdown");
    assert_eq!(completed, 200);
    assert_eq!(stats.totals.requests, 200, "every request counted once");
}
