//! ioslice-engine: runs ioslice's scheduling policies in front of real files and block devices.
//!
//! A dispatcher thread owns the policy and an I/O backend (io_uring, or a thread pool doing
//! `pread`/`pwrite` where io_uring is unavailable). Clients on any thread submit reads and
//! writes, tagged with their process, group and priority, through a cheap cloneable handle; the
//! dispatcher inserts them into the policy and asks it for work whenever fewer than the queue
//! depth are in flight. A policy's "wait until t" becomes a timed wait of the backend.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod backend;
pub mod buffer;
pub mod device;

pub use backend::{Backend, IoDone, IoOp, Notifier};
pub use buffer::AlignedBuffer;
