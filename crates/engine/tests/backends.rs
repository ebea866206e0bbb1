//! Both backends against the same expectations, on regular temporary files.
//!
//! io_uring cases print a reason and run only the thread pool where a ring cannot be made
//! (seccomp, `io_uring_disabled`, old kernels).

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ioslice_core::Direction;
use ioslice_engine::backend::{open_backend, InlineBackend, ThreadPoolBackend, UringBackend};
use ioslice_engine::{AlignedBuffer, Backend, IoDone, IoOp};

const ALIGN: usize = 4096;

/// Every backend that can be built here, named.
fn backends(file: &Arc<File>, depth: u32) -> Vec<Box<dyn Backend>> {
    let mut all: Vec<Box<dyn Backend>> = vec![
        Box::new(ThreadPoolBackend::new(Arc::clone(file), depth as usize)),
        Box::new(InlineBackend::new(Arc::clone(file))),
    ];
    match UringBackend::new(Arc::clone(file), depth) {
        Ok(ring) => all.push(Box::new(ring)),
        Err(e) => eprintln!("skipping io_uring cases: cannot create a ring ({e})"),
    }
    all
}

fn temp_file(len: u64) -> (tempfile::NamedTempFile, Arc<File>) {
    let temp = tempfile::NamedTempFile::new().expect("temp file");
    temp.as_file().set_len(len).expect("set_len");
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(temp.path())
        .expect("reopen");
    (temp, Arc::new(file))
}

fn filled(len: usize, seed: u8) -> AlignedBuffer {
    let mut buffer = AlignedBuffer::new(len, ALIGN);
    for (i, byte) in buffer.as_mut_slice().iter_mut().enumerate() {
        *byte = (i as u8).wrapping_mul(31).wrapping_add(seed);
    }
    buffer
}

fn op(token: u64, direction: Direction, offset: u64, buffers: Vec<AlignedBuffer>) -> IoOp {
    IoOp {
        token,
        direction,
        offset,
        buffers,
        lane: 0,
    }
}

/// Wait until every pushed operation has completed (10 s at most).
fn drain(backend: &mut dyn Backend) -> Vec<IoDone> {
    let mut done = Vec::new();
    let give_up = Instant::now() + Duration::from_secs(10);
    while backend.in_flight() > 0 {
        assert!(
            Instant::now() < give_up,
            "{}: operations lost",
            backend.name()
        );
        backend
            .wait(Some(Instant::now() + Duration::from_secs(1)), &mut done)
            .expect("wait");
    }
    done
}

fn run_one(backend: &mut dyn Backend, op: IoOp) -> IoDone {
    backend.push(op);
    let mut done = drain(backend);
    assert_eq!(done.len(), 1, "{}", backend.name());
    done.remove(0)
}

#[test]
fn write_then_read_back_single_and_vectored() {
    let (_temp, file) = temp_file(0);
    for (n, backend) in backends(&file, 8).iter_mut().enumerate() {
        let name = backend.name();
        let base = n as u64 * 65536;
        // Single buffer.
        let written = run_one(
            backend.as_mut(),
            op(1, Direction::Write, base, vec![filled(8192, 1)]),
        );
        assert_eq!(written.result.expect("write"), 8192, "{name}");
        let read = run_one(
            backend.as_mut(),
            op(
                2,
                Direction::Read,
                base,
                vec![AlignedBuffer::new(8192, ALIGN)],
            ),
        );
        assert_eq!(read.token, 2);
        assert_eq!(read.result.expect("read"), 8192, "{name}");
        assert_eq!(read.buffers[0].as_slice(), filled(8192, 1).as_slice());

        // Vectored: three buffers written as one operation, read back as two.
        let parts = vec![filled(4096, 2), filled(8192, 3), filled(4096, 4)];
        let mut expected = Vec::new();
        for part in &parts {
            expected.extend_from_slice(part.as_slice());
        }
        let written = run_one(
            backend.as_mut(),
            op(3, Direction::Write, base + 16384, parts),
        );
        assert_eq!(written.result.expect("writev"), 16384, "{name}");
        assert_eq!(written.buffers.len(), 3, "{name}: buffers handed back");
        let read = run_one(
            backend.as_mut(),
            op(
                4,
                Direction::Read,
                base + 16384,
                vec![
                    AlignedBuffer::new(12288, ALIGN),
                    AlignedBuffer::new(4096, ALIGN),
                ],
            ),
        );
        assert_eq!(read.result.expect("readv"), 16384, "{name}");
        let mut got = Vec::new();
        for buffer in &read.buffers {
            got.extend_from_slice(buffer.as_slice());
        }
        assert_eq!(got, expected, "{name}");

        // And what is on the file is what was written.
        let mut check = vec![0u8; 16384];
        file.read_exact_at(&mut check, base + 16384).expect("pread");
        assert_eq!(check, expected, "{name}");
    }
}

#[test]
fn read_past_end_of_file_is_short_or_zero() {
    let (_temp, file) = temp_file(4096);
    for backend in backends(&file, 4).iter_mut() {
        let name = backend.name();
        let short = run_one(
            backend.as_mut(),
            op(1, Direction::Read, 0, vec![AlignedBuffer::new(8192, ALIGN)]),
        );
        assert_eq!(short.result.expect("read"), 4096, "{name}");
        let beyond = run_one(
            backend.as_mut(),
            op(
                2,
                Direction::Read,
                8192,
                vec![AlignedBuffer::new(4096, ALIGN)],
            ),
        );
        assert_eq!(beyond.result.expect("read"), 0, "{name}");
        let vectored = run_one(
            backend.as_mut(),
            op(
                3,
                Direction::Read,
                0,
                vec![
                    AlignedBuffer::new(4096, ALIGN),
                    AlignedBuffer::new(4096, ALIGN),
                ],
            ),
        );
        assert_eq!(vectored.result.expect("readv"), 4096, "{name}");
    }
}

#[test]
fn an_error_completes_the_request_with_its_errno() {
    // Writing through a read-only descriptor: EBADF, on any filesystem.
    let temp = tempfile::NamedTempFile::new().expect("temp file");
    let file = Arc::new(File::open(temp.path()).expect("open read-only"));
    for backend in backends(&file, 4).iter_mut() {
        let done = run_one(
            backend.as_mut(),
            op(7, Direction::Write, 0, vec![filled(4096, 0)]),
        );
        assert_eq!(done.token, 7);
        let err = done.result.expect_err("write on a read-only fd");
        assert_eq!(err.raw_os_error(), Some(libc::EBADF), "{}", backend.name());
        assert_eq!(done.buffers.len(), 1, "buffers come back with an error too");
    }
}

#[test]
fn misaligned_o_direct_request_fails_with_einval() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("direct");
    std::fs::write(&path, vec![0u8; 65536]).expect("lay out");
    let file = match OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
    {
        Ok(file) => Arc::new(file),
        Err(e) => {
            eprintln!(
                "skipping the O_DIRECT case: {} refuses O_DIRECT ({e})",
                dir.path().display()
            );
            return;
        }
    };
    for backend in backends(&file, 4).iter_mut() {
        let name = backend.name();
        // Aligned: fine.
        let fine = run_one(
            backend.as_mut(),
            op(
                1,
                Direction::Read,
                4096,
                vec![AlignedBuffer::new(4096, ALIGN)],
            ),
        );
        assert_eq!(fine.result.expect("aligned O_DIRECT read"), 4096, "{name}");
        // Offset 1: EINVAL.
        let done = run_one(
            backend.as_mut(),
            op(2, Direction::Read, 1, vec![AlignedBuffer::new(4096, ALIGN)]),
        );
        let err = done.result.expect_err("misaligned O_DIRECT read");
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL), "{name}");
        // A misaligned length in a vectored write: EINVAL too.
        let done = run_one(
            backend.as_mut(),
            op(
                3,
                Direction::Write,
                0,
                vec![filled(4096, 0), filled(100, 0)],
            ),
        );
        // The thread pool writes the aligned first buffer and stops at the error, reporting
        // the bytes done (like preadv); the kernel refuses the whole vector.
        match done.result {
            Err(err) => assert_eq!(err.raw_os_error(), Some(libc::EINVAL), "{name}"),
            Ok(n) => assert_eq!(n, 4096, "{name}: partial vectored transfer"),
        }
    }
}

#[test]
fn a_deadline_with_nothing_in_flight_returns_on_time() {
    let (_temp, file) = temp_file(0);
    for backend in backends(&file, 4).iter_mut() {
        let start = Instant::now();
        let mut done = Vec::new();
        backend
            .wait(Some(start + Duration::from_millis(50)), &mut done)
            .expect("wait");
        let waited = start.elapsed();
        assert!(done.is_empty());
        assert!(
            waited >= Duration::from_millis(50),
            "{}: returned early after {waited:?}",
            backend.name()
        );
        assert!(
            waited < Duration::from_millis(1000),
            "{}: returned late after {waited:?}",
            backend.name()
        );
        // A deadline already past returns at once.
        let start = Instant::now();
        backend.wait(Some(start), &mut done).expect("wait");
        assert!(start.elapsed() < Duration::from_millis(500));
    }
}

#[test]
fn a_notify_from_another_thread_wakes_a_blocked_wait() {
    let (_temp, file) = temp_file(0);
    for backend in backends(&file, 4).iter_mut() {
        let notifier = backend.notifier();
        let waker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            notifier.notify();
        });
        let start = Instant::now();
        let mut done = Vec::new();
        // No deadline: only the notification can end this wait.
        backend.wait(None, &mut done).expect("wait");
        assert!(done.is_empty());
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{}",
            backend.name()
        );
        waker.join().expect("waker thread");
    }
}

#[test]
fn a_notify_before_the_wait_is_not_lost_and_is_consumed_once() {
    let (_temp, file) = temp_file(0);
    for backend in backends(&file, 4).iter_mut() {
        let name = backend.name();
        let notifier = backend.notifier();
        notifier.notify();
        notifier.notify();
        let start = Instant::now();
        let mut done = Vec::new();
        backend
            .wait(Some(start + Duration::from_secs(5)), &mut done)
            .expect("wait");
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{name}: pending notification lost"
        );
        // Both notifications were taken by that wait: the next one runs to its deadline.
        let start = Instant::now();
        backend
            .wait(Some(start + Duration::from_millis(50)), &mut done)
            .expect("wait");
        assert!(start.elapsed() >= Duration::from_millis(50), "{name}");
        // And the wake-up is re-armed: a later notify still wakes.
        notifier.notify();
        let start = Instant::now();
        backend
            .wait(Some(start + Duration::from_secs(5)), &mut done)
            .expect("wait");
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{name}: not re-armed"
        );
    }
}

#[test]
fn more_operations_than_the_ring_holds_all_complete_exactly_once() {
    const OPS: u64 = 1000;
    let (_temp, file) = temp_file(OPS * 4096);
    for backend in backends(&file, 4).iter_mut() {
        let name = backend.name();
        for token in 0..OPS {
            let direction = if token % 3 == 0 {
                Direction::Write
            } else {
                Direction::Read
            };
            let buffers = if token % 5 == 0 {
                vec![filled(2048, 0), filled(2048, 1)]
            } else {
                vec![filled(4096, 0)]
            };
            backend.push(op(token, direction, token * 4096, buffers));
        }
        assert_eq!(backend.in_flight(), OPS as usize, "{name}");
        let done = drain(backend.as_mut());
        assert_eq!(done.len(), OPS as usize, "{name}");
        let mut seen = HashSet::new();
        for io in done {
            assert!(seen.insert(io.token), "{name}: token {} twice", io.token);
            assert_eq!(io.result.expect("transfer"), 4096, "{name}");
        }
        assert_eq!(backend.in_flight(), 0, "{name}");
    }
}

#[test]
fn an_operation_without_buffers_completes_with_zero_bytes() {
    let (_temp, file) = temp_file(0);
    for backend in backends(&file, 4).iter_mut() {
        let done = run_one(backend.as_mut(), op(9, Direction::Read, 0, Vec::new()));
        assert_eq!(done.result.expect("empty op"), 0, "{}", backend.name());
    }
}

#[test]
fn dropping_a_backend_with_operations_in_flight_is_safe() {
    let (_temp, file) = temp_file(1 << 20);
    for mut backend in backends(&file, 8) {
        for token in 0..64 {
            backend.push(op(
                token,
                Direction::Read,
                token * 4096,
                vec![AlignedBuffer::new(16384, ALIGN)],
            ));
        }
        let mut done = Vec::new();
        // Submit them, then drop with most still in the kernel.
        backend.wait(Some(Instant::now()), &mut done).expect("wait");
        drop(backend);
    }
}

#[test]
fn open_backend_obeys_the_environment_and_falls_back() {
    let (_temp, file) = temp_file(4096);
    // The only test touching IOSLICE_BACKEND; others build backends directly.
    std::env::set_var("IOSLICE_BACKEND", "psync");
    let (backend, message) = open_backend(Arc::clone(&file), 8);
    std::env::remove_var("IOSLICE_BACKEND");
    assert_eq!(backend.name(), "psync");
    let message = message.expect("a forced choice is logged");
    assert!(message.contains("thread pool of 8"), "{message}");

    let (mut backend, message) = open_backend(Arc::clone(&file), 8);
    match UringBackend::new(Arc::clone(&file), 8) {
        Ok(_) => {
            assert_eq!(backend.name(), "io_uring");
            assert!(message.is_none(), "{message:?}");
        }
        Err(e) => {
            assert_eq!(backend.name(), "psync");
            let message = message.expect("fallback logged");
            assert!(
                message.starts_with("io_uring unavailable ("),
                "{message}: {e}"
            );
        }
    }
    let done = run_one(
        backend.as_mut(),
        op(1, Direction::Read, 0, vec![AlignedBuffer::new(4096, ALIGN)]),
    );
    assert_eq!(done.result.expect("read"), 4096);
}

/// A ring-backed backend, or `None` (with the reason printed) where none can be made.
fn uring(file: &Arc<File>, depth: u32) -> Option<UringBackend> {
    match UringBackend::new(Arc::clone(file), depth) {
        Ok(ring) => Some(ring),
        Err(e) => {
            eprintln!("skipping: cannot create an io_uring ({e})");
            None
        }
    }
}

/// A ring-backed backend on a 1 MiB temporary file, with one lane open.
fn with_a_lane() -> Option<(tempfile::NamedTempFile, UringBackend, usize)> {
    let (temp, file) = temp_file(1 << 20);
    let mut backend = uring(&file, 8)?;
    let lane = backend
        .open_lane()
        .expect("open")
        .expect("io_uring has lanes");
    Some((temp, backend, lane))
}

fn on_lane(token: u64, offset: u64, lane: usize) -> IoOp {
    IoOp {
        lane,
        ..op(
            token,
            Direction::Read,
            offset,
            vec![AlignedBuffer::new(4096, ALIGN)],
        )
    }
}

/// Reap `lane` until `count` completions came back (10 s at most), waiting on its waiter.
fn reap_lane_until(backend: &mut UringBackend, lane: usize, count: usize) -> Vec<IoDone> {
    let waiter = backend
        .lane_waiter(lane)
        .expect("an open lane has a waiter");
    let give_up = Instant::now() + Duration::from_secs(10);
    let mut done = Vec::new();
    while done.len() < count {
        assert!(Instant::now() < give_up, "lane {lane}: operations lost");
        backend.submit().expect("submit");
        backend.reap_lane(lane, &mut done);
        if done.len() < count {
            waiter
                .wait(Some(Instant::now() + Duration::from_millis(100)))
                .expect("wait");
        }
    }
    done
}

#[test]
fn a_lane_completes_its_own_operations_and_the_shared_ring_the_others() {
    let Some((_temp, mut backend, lane)) = with_a_lane() else {
        return;
    };
    assert_ne!(lane, 0, "lane 0 is the shared ring");
    backend.push(on_lane(1, 0, lane));
    backend.push(on_lane(2, 4096, lane));
    backend.push(on_lane(3, 8192, 0));
    assert_eq!(backend.in_flight(), 3);
    let on_the_lane = reap_lane_until(&mut backend, lane, 2);
    let mut tokens: Vec<u64> = on_the_lane.iter().map(|done| done.token).collect();
    tokens.sort_unstable();
    assert_eq!(tokens, [1, 2]);
    assert!(on_the_lane
        .iter()
        .all(|done| done.result.as_ref().ok() == Some(&4096)));
    let shared = drain(&mut backend);
    assert_eq!(
        shared.iter().map(|done| done.token).collect::<Vec<_>>(),
        [3]
    );
    assert_eq!(backend.in_flight(), 0);
}

#[test]
fn a_lane_notifier_wakes_its_waiter_only() {
    let Some((_temp, mut backend, lane)) = with_a_lane() else {
        return;
    };
    backend.submit().expect("arms the wake-up polls");
    let waiter = backend.lane_waiter(lane).expect("waiter");
    let notifier = backend.lane_notifier(lane).expect("notifier");
    let started = Instant::now();
    let wake = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        notifier.notify();
    });
    waiter
        .wait(Some(Instant::now() + Duration::from_secs(10)))
        .expect("wait");
    assert!(started.elapsed() < Duration::from_secs(5), "not woken");
    wake.join().expect("notifier thread");
    let mut done = Vec::new();
    assert!(
        backend.reap_lane(lane, &mut done),
        "the lane's wake-up is consumed"
    );
    assert!(!backend.reap(&mut done), "the shared ring was not woken");
    assert!(done.is_empty());
}

#[test]
fn a_closed_lane_finishes_its_operations_then_its_id_is_reused() {
    let (_temp, file) = temp_file(1 << 20);
    let Some(mut backend) = uring(&file, 8) else {
        return;
    };
    let first = backend.open_lane().expect("open").expect("lanes");
    backend.push(on_lane(7, 0, first));
    backend.submit().expect("submit");
    backend.close_lane(first);
    let second = backend.open_lane().expect("open").expect("lanes");
    assert_ne!(
        second, first,
        "a closing lane with work in flight is not reused"
    );
    let done = reap_lane_until(&mut backend, first, 1);
    assert_eq!(done[0].token, 7);
    assert_eq!(backend.in_flight(), 0);
    backend.close_lane(second);
    let third = backend.open_lane().expect("open").expect("lanes");
    assert!(
        third == first || third == second,
        "a retired lane's id is reused"
    );
}

#[test]
fn an_operation_for_a_lane_that_is_not_open_completes_on_the_shared_ring() {
    let (_temp, file) = temp_file(1 << 20);
    let Some(mut backend) = uring(&file, 8) else {
        return;
    };
    backend.push(on_lane(5, 0, 17));
    let done = drain(&mut backend);
    assert_eq!(done.iter().map(|done| done.token).collect::<Vec<_>>(), [5]);
}

#[test]
fn lanes_are_limited_and_the_thread_pool_has_none() {
    let (_temp, file) = temp_file(1 << 20);
    let mut pool = ThreadPoolBackend::new(Arc::clone(&file), 2);
    assert!(pool.open_lane().expect("no error").is_none());
    let Some(mut backend) = uring(&file, 2) else {
        return;
    };
    let mut lanes = HashSet::new();
    for _ in 0..ioslice_engine::backend::uring::MAX_LANES {
        match backend.open_lane() {
            Ok(Some(lane)) => assert!(lanes.insert(lane), "lane {lane} handed out twice"),
            Ok(None) => panic!("fewer than MAX_LANES lanes"),
            Err(e) => {
                eprintln!("stopping at {} lanes: {e} (descriptor limit?)", lanes.len());
                return;
            }
        }
    }
    assert!(backend.open_lane().expect("no error").is_none());
}
