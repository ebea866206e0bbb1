use std::sync::Arc;
use std::time::{Duration, Instant};

use ioslice_core::limit::Limits;
use ioslice_core::request::Direction;
use ioslice_core::IoPriority;

use crate::backend::uring::UringBackend;
use crate::completion::CompletionQueue;
use crate::request::Transfer;
use crate::{AlignedBuffer, Engine, Geometry};

/// An engine under deadline on a 1 MiB temporary file through io_uring, whose group
/// "slow" may read `iops` requests a second; `None` (with the reason printed) where
/// io_uring is refused.
fn limited_uring_engine(iops: u64) -> Option<(tempfile::NamedTempFile, Engine)> {
    let limits = Limits {
        read_iops: Some(iops),
        ..Default::default()
    };
    uring_engine_with_limits(&[("slow", limits)])
}

/// An engine under deadline on a 1 MiB temporary file through io_uring, with these
/// groups' limits; `None` (with the reason printed) where io_uring is refused.
fn uring_engine_with_limits(
    groups: &[(&str, Limits)],
) -> Option<(tempfile::NamedTempFile, Engine)> {
    let temp = tempfile::NamedTempFile::new().expect("a temporary file");
    temp.as_file().set_len(1 << 20).expect("sized");
    let file = Arc::new(temp.reopen().expect("reopened"));
    let backend = match UringBackend::new(file, 8) {
        Ok(backend) => backend,
        Err(error) => {
            eprintln!("skipping: cannot create an io_uring ({error})");
            return None;
        }
    };
    let target = Geometry {
        queue_depth: 8,
        ..Geometry::new(1 << 20)
    };
    let mut builder = Engine::builder(Box::new(backend), target).scheduler("deadline");
    for (group, limits) in groups {
        builder = builder.group_limits(group, *limits);
    }
    Some((temp, builder.start().expect("engine starts")))
}

/// A psync-like client alone on its lane, in a group held back by an IOPS limit: every
/// request waits for the limit's timer, and the client's own thread keeps it. The
/// dispatcher thread is never asked to poll, and the limit still holds.
#[test]
fn a_lane_thread_keeps_the_policys_timer_itself() {
    let Some((_temp, engine)) = limited_uring_engine(50) else {
        return;
    };
    let handle = engine.handle();
    let client = handle
        .client(1, "slow", IoPriority::default())
        .expect("a client");
    let lane = client.open_lane().expect("io_uring has lanes");
    let queue = Arc::new(CompletionQueue::new(vec![client.counters()]));
    let started = Instant::now();
    let requests = 20u64;
    for tag in 0..requests {
        read_into(&client, &queue, tag, Some(&lane));
        wait_for(&client, &queue, tag, Some(&lane));
    }
    let elapsed = started.elapsed();
    client.close_lane(lane);
    // 50 a second after the 100 ms burst (5 requests): 15 more take 300 ms.
    assert!(
        (Duration::from_millis(250)..Duration::from_secs(2)).contains(&elapsed),
        "{elapsed:?}"
    );
    assert_eq!(handle.shared.lock().dispatcher_polls, 0);
    let stats = engine.shutdown().expect("shuts down");
    assert_eq!(stats.totals.requests, requests);
}

/// One 4 KiB read for `tag`, at offset `tag` × 4 KiB, on `lane` if given.
fn read_into(
    client: &crate::Client,
    queue: &Arc<CompletionQueue>,
    tag: u64,
    lane: Option<&super::Lane>,
) {
    let transfer = Transfer {
        direction: Direction::Read,
        offset: tag * 4096,
        buffer: AlignedBuffer::new(4096, 4096),
        submitted: Instant::now(),
    };
    client.transfer_to(transfer, queue, tag, lane);
    client.flush();
}

/// Wait for the request `tag` and check it read.
fn wait_for(client: &crate::Client, queue: &CompletionQueue, tag: u64, lane: Option<&super::Lane>) {
    let mut done = Vec::new();
    while done.is_empty() {
        client.wait_queue(queue, None, lane);
        queue.take_all(&mut done);
    }
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].0, tag);
    assert!(done[0].1.is_ok(), "{:?}", done[0].1);
}

/// A lane thread keeps the timer of a request held until t1. A client without a lane then
/// submits a request held until an earlier t2, and goes on without waiting. Nobody polls,
/// so the keeper is woken through its lane to keep t2: the second request leaves the
/// policy near t2, long before t1, and the dispatcher thread is never asked to poll.
#[test]
fn a_keeper_is_woken_for_an_earlier_timer() {
    // One token each: a second request of "slow" waits 1 s, of "fast" 20 ms.
    let slow = Limits {
        read_iops: Some(1),
        burst: Some(ioslice_core::time::ms(1000)),
        ..Default::default()
    };
    let fast = Limits {
        read_iops: Some(50),
        burst: Some(ioslice_core::time::ms(20)),
        ..Default::default()
    };
    let Some((_temp, engine)) = uring_engine_with_limits(&[("slow", slow), ("fast", fast)]) else {
        return;
    };
    let handle = engine.handle();
    let client = handle
        .client(2, "fast", IoPriority::default())
        .expect("a client");
    let queue = Arc::new(CompletionQueue::new(vec![client.counters()]));

    let keeper_handle = handle.clone();
    let keeper = std::thread::spawn(move || {
        let client = keeper_handle
            .client(1, "slow", IoPriority::default())
            .expect("a client");
        let lane = client.open_lane().expect("io_uring has lanes");
        let queue = Arc::new(CompletionQueue::new(vec![client.counters()]));
        for tag in 10..12 {
            read_into(&client, &queue, tag, Some(&lane));
            wait_for(&client, &queue, tag, Some(&lane));
        }
        client.close_lane(lane);
    });
    // The keeper's second request is held, and its thread has blocked until t1.
    let until = |what: &dyn Fn(&crate::Snapshot) -> bool| {
        let started = Instant::now();
        while !what(&handle.stats()) {
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{:?}",
                handle.stats()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        started.elapsed()
    };
    until(&|stats| stats.queued == 1 && stats.totals.requests == 1);
    std::thread::sleep(Duration::from_millis(50));

    // The first takes "fast"'s token and goes to the device; the second is held.
    read_into(&client, &queue, 0, None);
    read_into(&client, &queue, 1, None);
    assert_eq!(handle.stats().queued, 2, "both held");
    let dispatched_after = until(&|stats| stats.queued < 2);
    assert!(
        dispatched_after < Duration::from_millis(300),
        "held until {dispatched_after:?}, as if nobody kept the earlier timer"
    );
    let mut done = Vec::new();
    while done.len() < 2 {
        client.wait_queue(&queue, None, None);
        queue.take_all(&mut done);
    }
    done.sort_by_key(|(tag, _)| *tag);
    assert_eq!(done.iter().map(|(tag, _)| *tag).collect::<Vec<_>>(), [0, 1]);
    assert!(done.iter().all(|(_, result)| result.is_ok()), "{done:?}");
    keeper.join().expect("the keeper's thread");
    assert_eq!(handle.shared.lock().dispatcher_polls, 0);
    let stats = engine.shutdown().expect("shuts down");
    assert_eq!(stats.totals.requests, 4);
}
