//! ioslice-engine: runs ioslice's scheduling policies (bfq, cfq, mq-deadline, …) in front of
//! real files and block devices, through io_uring or a thread pool.
//!
//! A storage engine or database puts its I/O through one [`Engine`] per file or device.
//! Each of its activities (a write-ahead log, foreground reads, compaction, a tenant) is a
//! *client*: a process id, a *group* with a weight and optional bandwidth/IOPS limits, and an
//! I/O priority. The policy decides, request by request, who goes to the device next, as the
//! Linux block layer's schedulers do for processes and cgroups.
//!
//! # Starting an engine on a file or block device
//!
//! [`Engine::on_path`] is the entry point: it returns an [`OpenBuilder`] whose
//! [`start`](OpenBuilder::start) opens the target, checks that writing to it is safe,
//! chooses the backend and starts the engine.
//!
//! | Builder method | What it sets | Default |
//! |---|---|---|
//! | [`direct`](OpenBuilder::direct) | O_DIRECT: [`DirectIo::Off`], [`On`](DirectIo::On), [`IfSupported`](DirectIo::IfSupported) (falls back to buffered) | off |
//! | [`create`](OpenBuilder::create) | create or extend a regular file to a size, writing zeros | the file must exist |
//! | [`read_only`](OpenBuilder::read_only) | open without write access | read and write |
//! | [`allow_mounted_write`](OpenBuilder::allow_mounted_write) | write to a block device holding a filesystem, mounted or in use | refused |
//! | [`min_len`](OpenBuilder::min_len) | refuse a block device shorter than this | any length |
//! | [`queue_depth`](OpenBuilder::queue_depth) | operations at the device at once (ring size, thread count, dispatch limit) | the device's (sysfs), 32 for a file |
//! | [`backend`](OpenBuilder::backend) | [`BackendChoice::Automatic`] (io_uring, else a thread pool), [`IoUring`](BackendChoice::IoUring), [`ThreadPool`](BackendChoice::ThreadPool), [`Synchronous`](BackendChoice::Synchronous) (on the submitting thread) | automatic |
//! | [`scheduler`](OpenBuilder::scheduler) | the policy, as `--sched` takes it: `"bfq:slice_idle=0"` | `bfq` |
//! | [`group`](OpenBuilder::group), [`group_limits`](OpenBuilder::group_limits) | groups with weights and [`Limits`] | the root group `/` |
//! | [`submission_queue`](OpenBuilder::submission_queue) | requests the policy holds before submitters block | 1024 |
//! | [`trace`](OpenBuilder::trace), [`io_timeout`](OpenBuilder::io_timeout) | a trace sink; how long a request may stay at the device | none; 30 s |
//!
//! Then [`Engine::handle`] gives a cheap, cloneable [`Handle`]; [`Handle::client`] makes a
//! [`Client`] for a process in a group at an [`IoPriority`]; [`Client::read`] and
//! [`Client::write`] return an [`IoFuture`], which is both a runtime-agnostic `Future` and a
//! blocking [`IoFuture::wait`]. [`Handle::stats`] reads per-group and per-process figures
//! and latency percentiles at any time; [`Engine::shutdown`] drains every request and
//! returns the last figures.
//!
//! A thread that keeps many requests in flight itself (a log writer, a compaction, a
//! benchmark) can submit through a [`Batch`] instead: every request carries a tag and
//! completes into the batch's one queue, submissions go to the device together when the
//! thread waits, and a thread with one request at a time can have a lane of its own that
//! the kernel wakes directly. `ioslice run --device` drives every job this way.
//!
//! ## Example: blocking threads
//!
//! A temporary file laid out to 8 MiB; a write-ahead log weighted 300 at real-time priority
//! and a compaction group weighted 100 and limited to 64 MiB/s of writes, each on its own
//! thread; every block written, read back and checked; statistics; a clean shutdown.
//!
//! ```
//! use ioslice_engine::{
//!     AlignedBuffer, BackendChoice, DirectIo, Engine, IoPriority, Limits, PriorityClass,
//! };
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let path = std::env::temp_dir().join(format!("ioslice-doc-threads-{}", std::process::id()));
//! let engine = Engine::on_path(&path)
//!     .create(8 << 20) // lay the file out if it is missing or shorter
//!     .direct(DirectIo::IfSupported) // tmpfs refuses O_DIRECT: buffered I/O there
//!     .backend(BackendChoice::Automatic) // io_uring, else a thread pool
//!     .queue_depth(16)
//!     .scheduler("bfq:slice_idle=0")
//!     .group("wal", 300)
//!     .group("compaction", 100)
//!     .group_limits("compaction", Limits { write_bps: Some(64 << 20), ..Limits::default() })
//!     .start()?;
//! for note in engine.notes() {
//!     eprintln!("{note}"); // e.g. "io_uring unavailable (…): using a thread pool …"
//! }
//! let target = engine.target().expect("opened from a path");
//! println!("{} on {}, O_DIRECT {}", engine.backend_name(), target.path().display(), target.direct());
//!
//! let handle = engine.handle();
//! // Offsets, lengths and buffers must be aligned to this (4096 with O_DIRECT on a file).
//! let align = handle.logical_block_size() as usize;
//! const BLOCK: usize = 4096;
//!
//! let wal = handle.client(1, "wal", IoPriority::new(PriorityClass::RealTime, 0).ok_or("level")?)?;
//! let compaction = handle.client(2, "compaction", IoPriority::default())?;
//! std::thread::scope(|scope| {
//!     for (client, base) in [(wal, 0u64), (compaction, 4 << 20)] {
//!         scope.spawn(move || {
//!             for block in 0..32u64 {
//!                 let mut buffer = AlignedBuffer::new(BLOCK, align);
//!                 buffer.as_mut_slice().fill(block as u8 ^ client.process() as u8);
//!                 client.write(base + block * BLOCK as u64, buffer).wait().expect("write");
//!             }
//!             for block in 0..32u64 {
//!                 let done = client.read(base + block * BLOCK as u64, BLOCK).wait().expect("read");
//!                 let expected = block as u8 ^ client.process() as u8;
//!                 assert!(done.buffer.as_slice().iter().all(|&byte| byte == expected));
//!             }
//!         });
//!     }
//! });
//!
//! let stats = handle.stats();
//! assert_eq!(stats.groups["wal"].bytes_written, 32 * BLOCK as u64);
//! assert_eq!(stats.groups["compaction"].reads, 32);
//! println!("wal p99 {} µs", stats.groups["wal"].latency.p99);
//!
//! let last = engine.shutdown()?;
//! assert_eq!(last.totals.requests, 128);
//! assert_eq!(last.totals.errors, 0);
//! std::fs::remove_file(&path)?;
//! # Ok(())
//! # }
//! ```
//!
//! ## Example: async, under tokio
//!
//! Every request is a `Future`: submit a batch, then `.await` each. Nothing ties the engine
//! to one runtime; when no thread is blocked on the engine, its dispatcher thread polls the
//! backend and wakes the task.
//!
//! ```
//! use ioslice_engine::{AlignedBuffer, Engine, IoPriority, PriorityClass};
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let path = std::env::temp_dir().join(format!("ioslice-doc-async-{}", std::process::id()));
//!     let engine = Engine::on_path(&path).create(1 << 20).scheduler("mq-deadline").start()?;
//!     let handle = engine.handle();
//!     let align = handle.logical_block_size() as usize;
//!     let client = handle.client(7, "/", IoPriority::new(PriorityClass::BestEffort, 2).ok_or("level")?)?;
//!
//!     let writes: Vec<_> = (0..8u8)
//!         .map(|page| {
//!             let mut buffer = AlignedBuffer::new(4096, align);
//!             buffer.as_mut_slice().fill(page);
//!             client.write(u64::from(page) * 4096, buffer)
//!         })
//!         .collect();
//!     for write in writes {
//!         write.await?;
//!     }
//!     let reads: Vec<_> = (0..8u8).map(|page| client.read(u64::from(page) * 4096, 4096)).collect();
//!     for (page, read) in (0..8u8).zip(reads) {
//!         let done = read.await?;
//!         assert!(done.buffer.as_slice().iter().all(|&byte| byte == page));
//!     }
//!
//!     assert_eq!(handle.stats().processes[&7].requests, 16);
//!     engine.shutdown()?;
//!     std::fs::remove_file(&path)?;
//!     Ok(())
//! }
//! ```
//!
//! ## Safety, alignment and errors
//!
//! - Writing to a block device that is mounted, partitioned, held by device mapper or md,
//!   or carries a filesystem, swap, LUKS, LVM, ZFS or RAID signature is refused
//!   ([`OpenError::WriteRefused`]) unless [`OpenBuilder::allow_mounted_write`] says so;
//!   reading one ([`OpenBuilder::read_only`]) is always allowed.
//! - With O_DIRECT, offsets, lengths and buffer addresses must be multiples of
//!   [`Handle::logical_block_size`] (the device's logical block size; 4096 for a regular
//!   file); build buffers with [`AlignedBuffer::new`]. Opening reads the first block once
//!   to catch a filesystem that takes O_DIRECT but refuses the I/O. A misaligned request
//!   fails with `EINVAL` before the device sees it.
//! - Opening fails with an [`OpenError`] whose one-line message names the path and what was
//!   expected ([`OpenError::path`]); options are checked before anything is created. A
//!   request fails with an [`IoError`] naming its errno; the engine keeps serving the others.
//!
//! # Without a file: your own backend
//!
//! [`Engine::builder`] takes any [`Backend`] and the target's [`Geometry`]; this is how the
//! job runner and the tests drive it. It takes the same policy settings as [`OpenBuilder`],
//! and the policy as a parsed [`SchedSpec`] too ([`EngineBuilder::scheduler_spec`]). [`backend::memory`] keeps a device in memory:
//!
//! ```
//! use ioslice_engine::backend::memory::MemoryBackend;
//! use ioslice_engine::{AlignedBuffer, Engine, Geometry, IoPriority, Limits, PriorityClass};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let capacity = 1 << 20;
//! let backend = MemoryBackend::new(capacity);
//! let engine = Engine::builder(Box::new(backend), Geometry::new(capacity as u64))
//!     .scheduler("bfq:slice_idle=0")
//!     .group("tenant-a", 100)
//!     .group("tenant-b", 300)
//!     .group_limits("tenant-b", Limits { write_bps: Some(64 << 20), ..Default::default() })
//!     .start()?;
//! let handle = engine.handle();
//!
//! let rt = IoPriority::new(PriorityClass::RealTime, 0).ok_or("bad level")?;
//! let be = IoPriority::new(PriorityClass::BestEffort, 4).ok_or("bad level")?;
//! let a = handle.client(1, "tenant-a", rt)?;
//! let b = handle.client(2, "tenant-b", be)?;
//!
//! let mut data = AlignedBuffer::new(4096, 512);
//! data.as_mut_slice().fill(0xab);
//! b.write(8192, data).wait()?;
//! let read = a.read(8192, 4096).wait()?;
//! assert!(read.buffer.as_slice().iter().all(|&byte| byte == 0xab));
//!
//! // Misaligned requests are refused before the device sees them.
//! let error = a.read(100, 512).wait().unwrap_err();
//! assert!(error.to_string().contains("EINVAL"));
//!
//! let stats = handle.stats();
//! assert_eq!(stats.groups["tenant-b"].bytes_written, 4096);
//! assert_eq!(stats.processes[&1].reads, 1);
//!
//! let last = engine.shutdown()?;
//! assert_eq!(last.totals.requests, 2);
//! assert_eq!(last.in_flight, 0);
//! # Ok(())
//! # }
//! ```
//!
//! # How it runs
//!
//! The policy and the backend sit behind one lock. The submitting thread itself inserts
//! each request into the policy, asks it for work while fewer than the queue depth are in
//! flight, and submits. A thread waiting for a request polls the backend itself when nobody
//! else does; a dispatcher thread polls only when no client can (async wakers, a policy's
//! "wait until t" with nobody waiting, shutdown).
//!
//! # Modules
//!
//! - [`open`]: [`Engine::on_path`] and its options and errors.
//! - [`engine`]: the lower-level builder on a backend, start and shutdown; a traced engine
//!   ([`EngineBuilder::trace`]) hands every request's insert, dispatch and completion and
//!   every decision of its policy to a trace sink, on the real clock.
//! - [`handle`]: handles and per-process clients; requests are checked for alignment here.
//! - [`batch`]: many requests in flight from one thread, completing into one queue by tag,
//!   with deferred submission and an optional lane.
//! - `dispatcher` (private): the engine's core, who runs it, and the dispatcher thread.
//! - [`completion`]: futures, results and errors (each error names its errno).
//! - [`stats`]: per-group and per-process figures and latency percentiles, live.
//! - [`device`]: opening a file or block device, its geometry, the write-safety check.
//! - [`backend`]: what moves the bytes (io_uring, thread pool); [`backend::memory`] keeps a
//!   device in memory.
//!
//! The types of the policies' crate a caller names ([`IoPriority`], [`PriorityClass`],
//! [`Limits`], [`GroupTree`], [`Scheduler`], [`TraceSink`], …) are re-exported here, so
//! `ioslice-engine` is the only dependency needed.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod backend;
pub mod batch;
pub mod buffer;
pub mod completion;
mod counters;
pub mod device;
mod dispatcher;
pub mod engine;
mod error;
pub mod handle;
mod members;
#[cfg(all(test, ioslice_model))]
mod model_check;
pub mod open;
mod outcome;
mod request;
mod settings;
pub mod stats;
mod submitter;
mod sync;
mod tenants;

pub use backend::{Backend, IoDone, IoOp, Notifier};
pub use batch::{Batch, Transfer};
pub use buffer::AlignedBuffer;
pub use completion::{IoError, IoErrorKind, IoFuture, IoOutcome, IoResult};
pub use device::{DeviceError, Target, TargetKind};
pub use engine::{Engine, EngineBuilder, EngineError, Geometry};
pub use handle::{Client, Handle};
pub use open::{BackendChoice, DirectIo, OpenBuilder, OpenError};
pub use settings::DEFAULT_IO_TIMEOUT;
pub use stats::{Figures, FinalStats, Latency, Snapshot, Statistics};

// What a caller names from the policies' crate, so that `ioslice-engine` is the only
// dependency needed.
pub use ioslice_core::group::GroupError;
pub use ioslice_core::limit::Limits;
pub use ioslice_core::{
    Direction, GroupTree, IoPriority, PriorityClass, SchedSpec, Scheduler, SchedulerContext,
    TraceEvent, TraceSink, TunableError,
};
