//! The whole engine on a regular temporary file, through each real backend (io_uring, the
//! thread pool, and transfers inline on the clients' threads): clients in two
//! weighted groups write a pattern and read it back under bfq; every request completes once
//! with the right bytes.

use std::sync::Arc;

use ioslice_core::{IoPriority, PriorityClass};
use ioslice_engine::backend::{Backend, InlineBackend, ThreadPoolBackend, UringBackend};
use ioslice_engine::device::{OpenOptions, Target};
use ioslice_engine::{AlignedBuffer, Engine, Geometry};

const FILE_BYTES: u64 = 4 << 20;
const BLOCK: usize = 4096;

fn open_file(dir: &tempfile::TempDir) -> Target {
    let options = OpenOptions {
        direct: false,
        write: true,
        create_len: Some(FILE_BYTES),
    };
    Target::open(dir.path().join("data"), &options).expect("temporary file opens")
}

fn round_trip(backend: Box<dyn Backend>, target: &Target) {
    let engine = Engine::builder(backend, Geometry::of(target))
        .scheduler("bfq")
        .group("a", 100)
        .group("b", 300)
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    let be = IoPriority::new(PriorityClass::BestEffort, 4).expect("level 4");
    let writers: Vec<_> = (0..4u32)
        .map(|process| {
            let group = if process % 2 == 0 { "a" } else { "b" };
            let client = handle.client(process + 1, group, be).expect("client");
            std::thread::spawn(move || {
                let base = u64::from(process) * (FILE_BYTES / 4);
                for block in 0..64u64 {
                    let mut buffer = AlignedBuffer::new(BLOCK, BLOCK);
                    buffer
                        .as_mut_slice()
                        .fill((process * 64 + block as u32) as u8);
                    client
                        .write(base + block * BLOCK as u64, buffer)
                        .wait()
                        .expect("write");
                }
                // Odd processes read into a reused buffer holding stale bytes: every byte
                // must be overwritten.
                let mut reused = AlignedBuffer::new(BLOCK, BLOCK);
                reused.as_mut_slice().fill(0xEE);
                for block in 0..64u64 {
                    let offset = base + block * BLOCK as u64;
                    let read = if process % 2 == 1 {
                        client.read_into(offset, reused)
                    } else {
                        client.read(offset, BLOCK)
                    }
                    .wait()
                    .expect("read");
                    let expected = (process * 64 + block as u32) as u8;
                    assert!(read.buffer.as_slice().iter().all(|&b| b == expected));
                    reused = read.buffer;
                    reused.as_mut_slice()[..BLOCK / 2].fill(0xEE);
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("client thread");
    }
    let last = engine.shutdown().expect("clean shutdown");
    assert_eq!(last.totals.requests, 4 * 128);
    assert_eq!(last.totals.errors, 0);
    assert_eq!(last.double_completions, 0);
    assert_eq!(last.groups["a"].bytes_written, 2 * 64 * BLOCK as u64);
    assert_eq!(last.groups["b"].bytes_read, 2 * 64 * BLOCK as u64);
}

#[test]
fn the_engine_round_trips_through_the_thread_pool() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let target = open_file(&dir);
    let backend = ThreadPoolBackend::new(Arc::clone(target.file()), 4);
    round_trip(Box::new(backend), &target);
}

#[test]
fn the_engine_round_trips_through_io_uring() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let target = open_file(&dir);
    match UringBackend::new(Arc::clone(target.file()), 32) {
        Ok(backend) => round_trip(Box::new(backend), &target),
        Err(error) => eprintln!("skipped: io_uring is not available here ({error})"),
    }
}

#[test]
fn the_engine_round_trips_through_inline_transfers() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let target = open_file(&dir);
    let backend = InlineBackend::new(Arc::clone(target.file()));
    round_trip(Box::new(backend), &target);
}
