//! Many requests in flight from one thread, without a future each: a [`Batch`].
//!
//! A thread that keeps a queue depth of its own (a log writer, a compaction, a benchmark's
//! job) submits through a batch: every request carries a tag of the caller's choosing and
//! completes into the batch's one queue, where [`Batch::take_completions`] collects the
//! outcomes, buffers included, in completion order. Nothing is allocated per request.
//!
//! Two things make it cheaper than a future per request, and both are what `ioslice run`'s
//! job threads use:
//! - **Deferred submission.** A submitted request may wait at the backend until
//!   [`Batch::flush`] (or [`Batch::wait`], which flushes first), so that what a thread
//!   submits between two waits goes to the device in one system call.
//! - **A lane.** [`Batch::open_lane`] gives the thread a lane of its engine (with io_uring,
//!   a ring of its own): its requests complete there and the kernel wakes exactly this
//!   thread. Worth it for a thread with one request in flight at a time, as a synchronous
//!   job has; a deeper thread does better on the shared ring, where one poller reaps
//!   everybody's completions in one batch (`docs/engine.md` has the figures).
//!
//! A batch may hold clients of several engines (a job on several files): it then waits
//! parked, counted as a waiter in each engine, so that each engine's dispatcher thread
//! polls for it.
//!
//! A batch is used by one thread at a time (its methods that submit or wait take `&mut`).

use std::sync::Arc;
use std::time::Instant;

use crate::completion::{park_until, park_waker, CompletionQueue, IoOutcome, Slot};
use crate::counters::Counters;
use crate::dispatcher::Lane;
use crate::error::EngineError;
use crate::handle::Client;
pub use crate::request::Transfer;

/// One thread's requests in flight, to the engines of its clients, completing into one
/// queue by tag. See the [module documentation](self).
///
/// ```
/// use ioslice_engine::backend::memory::MemoryBackend;
/// use ioslice_engine::batch::{Batch, Transfer};
/// use ioslice_engine::{AlignedBuffer, Engine, Geometry, IoPriority};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let engine = Engine::builder(Box::new(MemoryBackend::new(1 << 20)), Geometry::new(1 << 20))
///     .scheduler("mq-deadline")
///     .start()?;
/// let client = engine.handle().client(1, "/", IoPriority::default())?;
/// let mut batch = Batch::new(vec![client]);
/// batch.open_lane(); // worth it at depth 1; a no-op where the backend has no lanes
///
/// // Sixteen reads in flight at once, tagged by their block number.
/// for block in 0..16u64 {
///     let buffer = AlignedBuffer::new(4096, 512);
///     batch.submit(0, Transfer::read(block * 4096, buffer), block);
/// }
/// let mut done = Vec::new();
/// let mut outcomes = Vec::new();
/// while done.len() < 16 {
///     batch.wait(None);
///     batch.take_completions(&mut outcomes);
///     for (tag, outcome) in outcomes.drain(..) {
///         assert_eq!(outcome?.offset, tag * 4096);
///         done.push(tag);
///     }
/// }
/// for client in batch.finish() {
///     client.exit();
/// }
/// assert_eq!(engine.shutdown()?.totals.requests, 16);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Batch {
    clients: Vec<Client>,
    queue: Arc<CompletionQueue>,
    /// All clients submit to one engine.
    one_engine: bool,
    lane: Option<Lane>,
    /// Requests submitted whose outcomes were not yet taken.
    in_flight: usize,
}

impl Batch {
    /// A batch for `clients` (one per file or engine the thread uses; a request names its
    /// client by its index here).
    pub fn new(clients: Vec<Client>) -> Self {
        let counters: Vec<Arc<Counters>> = clients.iter().map(Client::counters).collect();
        let one_engine = match clients.split_first() {
            Some((first, rest)) => rest.iter().all(|client| first.same_engine(client)),
            None => true,
        };
        Self {
            clients,
            queue: Arc::new(CompletionQueue::new(counters)),
            one_engine,
            lane: None,
            in_flight: 0,
        }
    }

    /// The batch's clients, in the order requests name them.
    pub fn clients(&self) -> &[Client] {
        &self.clients
    }

    /// Give this thread a lane of its engine, if every client is on one engine and the
    /// backend has lanes (io_uring does; at most 64 per engine). Returns whether the batch
    /// now has one. Requests submitted from now on complete on it; only the thread that
    /// waits on the batch should submit to it.
    pub fn open_lane(&mut self) -> bool {
        if self.lane.is_none() && self.one_engine {
            self.lane = self.clients.first().and_then(Client::open_lane);
        }
        self.lane.is_some()
    }

    /// Whether the batch has a lane.
    pub fn has_lane(&self) -> bool {
        self.lane.is_some()
    }

    /// Move the batch's process to the group at path `group`, as writing its pid to the
    /// group's `cgroup.procs` does ([`Client::moved_to`], for every client): its requests
    /// from now on are charged there (the policy takes it as `moved_to` says). On an error
    /// the batch keeps its clients.
    pub fn move_to(&mut self, group: &str) -> Result<(), EngineError> {
        self.flush();
        let moved = self
            .clients
            .iter()
            .map(|client| client.moved_to(group))
            .collect::<Result<Vec<Client>, EngineError>>()?;
        self.clients = moved;
        Ok(())
    }

    /// Submit `transfer` through client number `client` under `tag`. The request is checked
    /// as [`Client::read`] and [`Client::write`] check theirs; a refused one completes at
    /// once with its error. It may wait at the backend until the next [`Batch::flush`] or
    /// [`Batch::wait`]. Blocks while the engine's submission queue is full.
    ///
    /// # Panics
    /// If `client` is not an index of [`Batch::clients`].
    pub fn submit(&mut self, client: usize, transfer: Transfer, tag: u64) {
        self.in_flight += 1;
        self.clients[client].transfer_to(transfer, &self.queue, tag, self.lane.as_ref());
    }

    /// Hand the device every request submitted and not yet sent, one system call per engine.
    pub fn flush(&mut self) {
        for client in &self.clients {
            client.flush();
        }
    }

    /// Move every outcome that arrived into `into`, with its tag, in completion order
    /// (reuse `into` across calls: no allocation once it is large enough). One lock when
    /// nothing arrived.
    pub fn take_completions(&mut self, into: &mut Vec<(u64, IoOutcome)>) {
        let before = into.len();
        self.queue.take_all(into);
        self.in_flight -= into.len() - before;
    }

    /// Requests submitted whose outcomes [`Batch::take_completions`] has not yet taken.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Flush, then block until an outcome is waiting or `deadline` passes. The calling
    /// thread runs the engine's work itself while it waits if no other thread does (it
    /// polls the backend, or blocks on its lane). Returns at once if an outcome is waiting,
    /// or if nothing is in flight and there is no deadline.
    pub fn wait(&mut self, deadline: Option<Instant>) {
        self.flush();
        if self.queue.is_ready() || (self.in_flight == 0 && deadline.is_none()) {
            return;
        }
        if self.one_engine {
            if let Some(first) = self.clients.first() {
                first.wait_queue(&self.queue, deadline, self.lane.as_ref());
            }
            return;
        }
        // Several engines: park, counted as waiting in each, so that each one's dispatcher
        // thread polls for this batch.
        if self.queue.register(&park_waker(), &Counters::default()) {
            for client in &self.clients {
                client.ensure_poller();
            }
            park_until(&*self.queue, deadline, &Counters::default());
        }
    }

    /// Flush, give the lane back and return the clients (to [`Client::exit`] them, or to
    /// keep using them). Requests still in flight complete unseen: wait for them first.
    pub fn finish(mut self) -> Vec<Client> {
        self.close();
        std::mem::take(&mut self.clients)
    }

    fn close(&mut self) {
        self.flush();
        if let (Some(lane), Some(client)) = (self.lane.take(), self.clients.first()) {
            client.close_lane(lane);
        }
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        self.close();
    }
}
