//! ioslice-engine: runs ioslice's scheduling policies in front of real files and block devices.
//!
//! The policy and an I/O backend (io_uring, or a thread pool doing `pread`/`pwrite` where
//! io_uring is unavailable) sit behind one lock. Clients on any thread submit reads and
//! writes, tagged with their process, group and priority, through a cheap cloneable
//! [`Handle`]; the submitting thread itself inserts each request into the policy, asks it for
//! work while fewer than the queue depth are in flight, and submits. A thread waiting for a
//! request polls the backend itself when nobody else does; a dispatcher thread polls only
//! when no client can (async wakers, a policy's "wait until t" with nobody waiting,
//! shutdown). Each request completes through an [`IoFuture`], which is both a
//! runtime-agnostic `Future` and a blocking [`IoFuture::wait`].
//!
//! - [`engine`]: the builder, start and shutdown; a traced engine
//!   ([`EngineBuilder::trace`]) hands every request's insert, dispatch and completion and
//!   every decision of its policy to a trace sink, on the real clock.
//! - [`handle`]: handles and per-process clients; requests are checked for alignment here.
//! - `dispatcher` (private): the engine's core, who runs it, and the dispatcher thread.
//! - [`completion`]: futures, results and errors (each error names its errno).
//! - [`stats`]: per-group and per-process figures and latency percentiles, live.
//! - [`backend`]: what moves the bytes; [`backend::memory`] keeps a device in memory.
//! - [`job_run`]: runs an fio job file on a real file, directory or block device and
//!   reports it as fio would (what `ioslice run --device PATH` does).
//!
//! # Example
//!
//! Two groups weighted 100 and 300, one of them limited; a real-time and a best-effort
//! client; statistics read while running; a clean shutdown.
//!
//! ```
//! use ioslice_core::limit::Limits;
//! use ioslice_core::{IoPriority, PriorityClass};
//! use ioslice_engine::backend::memory::MemoryBackend;
//! use ioslice_engine::{AlignedBuffer, Engine, Geometry};
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
//! println!("tenant-a p99 {} µs", stats.groups["tenant-a"].latency.p99);
//!
//! let last = engine.shutdown()?;
//! assert_eq!(last.totals.requests, 2);
//! assert_eq!(last.in_flight, 0);
//! # Ok(())
//! # }
//! ```
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod backend;
pub mod buffer;
pub mod completion;
mod counters;
pub mod device;
mod dispatcher;
pub mod engine;
mod error;
pub mod handle;
pub mod job_run;
#[cfg(all(test, ioslice_model))]
mod model_check;
mod outcome;
mod request;
pub mod stats;
mod submitter;
mod sync;

pub use backend::{Backend, IoDone, IoOp, Notifier};
pub use buffer::AlignedBuffer;
pub use completion::{IoError, IoErrorKind, IoFuture, IoOutcome, IoResult};
pub use engine::{Engine, EngineBuilder, EngineError, Geometry};
pub use handle::{Client, Handle};
pub use stats::{Figures, FinalStats, Latency, Snapshot};
