//! How a request's outcome gets back to its client: a one-shot cell shared between the
//! engine (which fills it through a `Completer`) and the client (which holds the
//! [`IoFuture`]); or, for a [`Batch`](crate::Batch), a queue many requests complete into.
//!
//! The cell is a `Mutex` + stored [`Waker`], so the same future can be awaited on any async
//! runtime (nothing here depends on one) or waited for with a blocking call
//! ([`IoFuture::wait`]), which registers a waker that unparks its thread. A waker is only
//! registered by someone actually waiting, so completing a request nobody waits on yet
//! wakes nobody. A `Completer` is consumed when it fulfils the cell, so a request cannot be
//! completed twice; one dropped unfulfilled (the engine shut down before the request reached
//! it) completes the cell with [`IoErrorKind::ShutDown`], so no future is left hanging.
//!
//! The outcome itself ([`IoResult`], [`IoError`] and its kinds, errno names) is defined in
//! a module of its own below this one and re-exported here.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use ioslice_core::Direction;

use crate::counters::Counters;
pub use crate::outcome::{describe_errno, errno_name, IoError, IoErrorKind, IoOutcome, IoResult};
use crate::sync::{thread, Mutex, MutexGuard};

/// The engine as a future needs it: what a waiting future asks of whoever serves it (the
/// engine's shared state implements it; this module knows nothing more of the engine).
pub(crate) trait Serves: Send + Sync {
    /// The counters its completers and wakers keep.
    fn counters(&self) -> &Arc<Counters>;
    /// Block until `slot` is ready (or `deadline` passes), polling the backend if nobody does.
    fn block_on(&self, slot: &dyn Slot, deadline: Option<Instant>);
    /// A waker was registered: make sure some thread polls the backend.
    fn ensure_poller(&self);
}

/// Somewhere outcomes land that a thread can wait on: a future's cell, or a job's queue.
pub(crate) trait Slot {
    /// Whether an outcome is there.
    fn is_ready(&self) -> bool;
    /// Register `waker` to be woken by the next outcome, unless one is already there (then
    /// returns `false` and registers nothing). A newly registered waker is counted in
    /// [`Counters::waiting`] until it is woken or unregistered: somebody must poll for it.
    fn register(&self, waker: &Waker, counters: &Counters) -> bool;
    /// [`Slot::register`], not counted as waiting: for a thread that polls itself, or waits
    /// on its own lane, and only needs waking if another thread delivers the outcome.
    fn register_uncounted(&self, waker: &Waker) -> bool;
    /// Take back a registered waker (the wait is over without it).
    fn unregister(&self, counters: &Counters);
}

#[derive(Debug, Default)]
struct State {
    outcome: Option<IoOutcome>,
    taken: bool,
    waker: Option<Waker>,
    /// The waker is counted in the engine's [`Counters::waiting`] (a waker that replaces
    /// another keeps the first one's count).
    counted: bool,
}

impl State {
    /// Put `waker` in the cell, counted in `counters` if given and if there was none.
    fn install(&mut self, waker: &Waker, counters: Option<&Counters>) {
        if self.waker.is_none() {
            self.counted = counters.is_some();
            if let Some(counters) = counters {
                counters.waiting.fetch_add(1, Ordering::SeqCst);
            }
        }
        match &mut self.waker {
            Some(old) if old.will_wake(waker) => {}
            slot => *slot = Some(waker.clone()),
        }
    }

    /// Take the waker out (uncounting it if it was counted), to wake it.
    fn take_waker(&mut self, counters: &Counters) -> Option<Waker> {
        let waker = self.waker.take();
        if waker.is_some() && std::mem::take(&mut self.counted) {
            counters.waiting.fetch_sub(1, Ordering::SeqCst);
        }
        waker
    }
}

#[derive(Debug, Default)]
pub(crate) struct Cell {
    state: Mutex<State>,
}

impl Cell {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Slot for Cell {
    fn is_ready(&self) -> bool {
        let state = self.lock();
        state.outcome.is_some() || state.taken
    }

    fn register(&self, waker: &Waker, counters: &Counters) -> bool {
        self.register_counted(waker, Some(counters))
    }

    fn register_uncounted(&self, waker: &Waker) -> bool {
        self.register_counted(waker, None)
    }

    fn unregister(&self, counters: &Counters) {
        let _ = self.lock().take_waker(counters);
    }
}

impl Cell {
    fn register_counted(&self, waker: &Waker, counters: Option<&Counters>) -> bool {
        let mut state = self.lock();
        if state.outcome.is_some() || state.taken {
            return false;
        }
        state.install(waker, counters);
        true
    }
}

/// Outcomes of many requests, each with its caller's tag, in completion order: what a job
/// thread with many requests in flight waits on, instead of one cell per request. Its
/// requests may go to several engines; a waker registered on it is counted in every one of
/// them, so each keeps polling while the job waits.
#[derive(Debug)]
pub(crate) struct CompletionQueue {
    state: Mutex<QueueState>,
    counters: Vec<Arc<Counters>>,
}

#[derive(Debug, Default)]
struct QueueState {
    done: Vec<(u64, IoOutcome)>,
    waker: Option<Waker>,
    /// The waker is counted in every engine's [`Counters::waiting`].
    counted: bool,
}

impl CompletionQueue {
    /// A queue for requests to the engines with these counters.
    pub(crate) fn new(counters: Vec<Arc<Counters>>) -> Self {
        Self {
            state: Mutex::new(QueueState::default()),
            counters,
        }
    }

    /// Install `waker` (counted in every engine if `counted`, and if there was none).
    fn install(&self, state: &mut QueueState, waker: &Waker, counted: bool) {
        if state.waker.is_none() {
            state.counted = counted;
            if counted {
                for counters in &self.counters {
                    counters.waiting.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
        match &mut state.waker {
            Some(old) if old.will_wake(waker) => {}
            slot => *slot = Some(waker.clone()),
        }
    }

    /// Take the waker out (uncounted in every engine, if it was counted).
    fn take(&self, state: &mut QueueState) -> Option<Waker> {
        let waker = state.waker.take();
        if waker.is_some() && std::mem::take(&mut state.counted) {
            for counters in &self.counters {
                counters.waiting.fetch_sub(1, Ordering::SeqCst);
            }
        }
        waker
    }

    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Move every outcome there into `into`, in completion order.
    pub(crate) fn take_all(&self, into: &mut Vec<(u64, IoOutcome)>) {
        into.append(&mut self.lock().done);
    }

    /// [`Slot::register`], counted in every engine or not.
    fn register_counted(&self, waker: &Waker, counted: bool) -> bool {
        let mut state = self.lock();
        if !state.done.is_empty() {
            return false;
        }
        self.install(&mut state, waker, counted);
        true
    }

    /// An outcome known without the engine (a request refused at submission).
    pub(crate) fn push_ready(&self, tag: u64, outcome: IoOutcome) {
        self.lock().done.push((tag, outcome));
    }
}

impl Slot for CompletionQueue {
    fn is_ready(&self) -> bool {
        !self.lock().done.is_empty()
    }

    fn register(&self, waker: &Waker, _: &Counters) -> bool {
        self.register_counted(waker, true)
    }

    fn register_uncounted(&self, waker: &Waker) -> bool {
        self.register_counted(waker, false)
    }

    fn unregister(&self, _: &Counters) {
        let mut state = self.lock();
        let _ = self.take(&mut state);
    }
}

/// Wakes a thread parked in [`park_until`].
struct Unpark(thread::Thread);

impl std::task::Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

crate::sync::thread_local! {
    static PARK_WAKER: Waker = Waker::from(Arc::new(Unpark(thread::current())));
}

/// A waker that unparks the calling thread.
pub(crate) fn park_waker() -> Waker {
    PARK_WAKER.with(Waker::clone)
}

/// Park the calling thread, whose waker is registered in `slot`, until the slot is ready or
/// `deadline` passes (then the waker is taken back). Returns whether the slot is ready.
pub(crate) fn park_until(slot: &dyn Slot, deadline: Option<Instant>, counters: &Counters) -> bool {
    loop {
        if slot.is_ready() {
            return true;
        }
        match deadline {
            None => thread::park(),
            Some(deadline) => {
                let now = crate::sync::now();
                if now >= deadline {
                    slot.unregister(counters);
                    return slot.is_ready();
                }
                thread::park_timeout(deadline - now);
            }
        }
    }
}

/// A request's eventual outcome: `.await` it on any runtime, or block on [`IoFuture::wait`].
#[must_use = "a request's outcome is only known through its future"]
pub struct IoFuture {
    cell: Arc<Cell>,
    /// The engine that serves it (`None`: refused at submission, already complete).
    engine: Option<Arc<dyn Serves>>,
    direction: Direction,
    offset: u64,
    len: u64,
}

impl fmt::Debug for IoFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IoFuture")
            .field("direction", &self.direction)
            .field("offset", &self.offset)
            .field("len", &self.len)
            .field("ready", &self.cell.is_ready())
            .finish()
    }
}

impl IoFuture {
    /// A future already completed with `outcome` (a request refused at submission).
    pub(crate) fn ready(outcome: IoOutcome, direction: Direction, offset: u64, len: u64) -> Self {
        let cell = Arc::new(Cell::default());
        cell.lock().outcome = Some(outcome);
        Self {
            cell,
            engine: None,
            direction,
            offset,
            len,
        }
    }

    /// An empty future served by `engine`, and the completer that fills it.
    pub(crate) fn pair<E: Serves + 'static>(
        engine: &Arc<E>,
        direction: Direction,
        offset: u64,
        len: u64,
    ) -> (Self, Completer) {
        let cell = Arc::new(Cell::default());
        let completer = Completer {
            target: Some(Target::Cell(Arc::clone(&cell))),
            direction,
            offset,
            len,
            counters: Arc::clone(engine.counters()),
        };
        (
            Self {
                cell,
                engine: Some(Arc::clone(engine) as Arc<dyn Serves>),
                direction,
                offset,
                len,
            },
            completer,
        )
    }

    /// Block the calling thread until the request completes. If no other thread is polling
    /// the engine's backend, this one does (submitting, reaping and completing other
    /// requests too) until its request is done.
    pub fn wait(self) -> IoOutcome {
        if let Some(engine) = &self.engine {
            engine.block_on(&*self.cell, None);
        }
        loop {
            {
                let mut state = self.cell.lock();
                if let Some(outcome) = state.outcome.take() {
                    state.taken = true;
                    return outcome;
                }
                if state.taken {
                    return Err(self.error(IoErrorKind::AlreadyTaken));
                }
            }
            // Only reached for a future whose engine is gone: its completer fulfils the cell
            // (with a shutdown error if dropped), so parking on it ends.
            let counters = Counters::default();
            if self.cell.register(&park_waker(), &counters) {
                park_until(&*self.cell, None, &counters);
            }
        }
    }

    /// Whether the outcome is available (a later `wait` returns at once).
    pub fn is_ready(&self) -> bool {
        self.cell.lock().outcome.is_some()
    }

    fn error(&self, kind: IoErrorKind) -> IoError {
        IoError {
            direction: self.direction,
            offset: self.offset,
            len: self.len,
            kind,
        }
    }
}

impl Future for IoFuture {
    type Output = IoOutcome;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<IoOutcome> {
        let newly_registered = {
            let mut state = self.cell.lock();
            if let Some(outcome) = state.outcome.take() {
                state.taken = true;
                return Poll::Ready(outcome);
            }
            if state.taken {
                drop(state);
                return Poll::Ready(Err(self.error(IoErrorKind::AlreadyTaken)));
            }
            let Some(engine) = &self.engine else {
                // Unreachable: a future without an engine is created complete.
                return Poll::Pending;
            };
            let first = state.waker.is_none();
            state.install(context.waker(), Some(engine.counters().as_ref()));
            first
        };
        if newly_registered {
            if let Some(engine) = &self.engine {
                // Nobody may be polling the backend: make sure somebody will.
                engine.ensure_poller();
            }
        }
        Poll::Pending
    }
}

/// Where a completer puts its outcome.
#[derive(Debug)]
pub(crate) enum Target {
    /// A future's cell.
    Cell(Arc<Cell>),
    /// A job's queue, with the job's tag for the request.
    Queue(Arc<CompletionQueue>, u64),
}

/// The engine's end of a request's outcome: fulfils it exactly once.
#[derive(Debug)]
pub(crate) struct Completer {
    target: Option<Target>,
    direction: Direction,
    offset: u64,
    len: u64,
    counters: Arc<Counters>,
}

impl Completer {
    /// A completer that puts the outcome in `queue` under `tag`.
    pub(crate) fn to_queue(
        counters: &Arc<Counters>,
        queue: &Arc<CompletionQueue>,
        tag: u64,
        direction: Direction,
        offset: u64,
        len: u64,
    ) -> Self {
        Self {
            target: Some(Target::Queue(Arc::clone(queue), tag)),
            direction,
            offset,
            len,
            counters: Arc::clone(counters),
        }
    }

    /// Complete the request; wakes whoever registered a waker (a parked thread, a task).
    pub(crate) fn complete(mut self, outcome: IoOutcome) {
        if let Some(target) = self.target.take() {
            fulfil(target, outcome, &self.counters);
        }
    }

    /// Complete the request with an error of this kind.
    pub(crate) fn fail(self, kind: IoErrorKind) {
        let error = IoError {
            direction: self.direction,
            offset: self.offset,
            len: self.len,
            kind,
        };
        self.complete(Err(error));
    }
}

/// Store the outcome, then wake the registered waker, if any, outside the lock. Nobody is
/// woken (no system call) when the owner is not waiting.
fn fulfil(target: Target, outcome: IoOutcome, counters: &Counters) {
    let waker = match &target {
        Target::Cell(cell) => {
            let mut state = cell.lock();
            state.outcome = Some(outcome);
            state.take_waker(counters)
        }
        Target::Queue(queue, tag) => {
            let mut state = queue.lock();
            state.done.push((*tag, outcome));
            queue.take(&mut state)
        }
    };
    if let Some(waker) = waker {
        waker.wake();
    }
}

impl Drop for Completer {
    fn drop(&mut self) {
        if let Some(target) = self.target.take() {
            self.counters.cancelled.fetch_add(1, Ordering::Relaxed);
            let error = IoError {
                direction: self.direction,
                offset: self.offset,
                len: self.len,
                kind: IoErrorKind::ShutDown,
            };
            fulfil(target, Err(error), &self.counters);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_errnos_are_this_systems() {
        let libc_values = [
            ("EPERM", libc::EPERM),
            ("ENOENT", libc::ENOENT),
            ("EINTR", libc::EINTR),
            ("EIO", libc::EIO),
            ("ENXIO", libc::ENXIO),
            ("EBADF", libc::EBADF),
            ("EAGAIN", libc::EAGAIN),
            ("ENOMEM", libc::ENOMEM),
            ("EACCES", libc::EACCES),
            ("EFAULT", libc::EFAULT),
            ("EBUSY", libc::EBUSY),
            ("ENODEV", libc::ENODEV),
            ("EINVAL", libc::EINVAL),
            ("EFBIG", libc::EFBIG),
            ("ENOSPC", libc::ENOSPC),
            ("EROFS", libc::EROFS),
            ("ENODATA", libc::ENODATA),
            ("ETIME", libc::ETIME),
            ("ENOLINK", libc::ENOLINK),
            ("EOVERFLOW", libc::EOVERFLOW),
            ("EILSEQ", libc::EILSEQ),
            ("EOPNOTSUPP", libc::EOPNOTSUPP),
            ("ESHUTDOWN", libc::ESHUTDOWN),
            ("ETIMEDOUT", libc::ETIMEDOUT),
            ("EREMOTEIO", libc::EREMOTEIO),
            ("EDQUOT", libc::EDQUOT),
            ("ENOMEDIUM", libc::ENOMEDIUM),
            ("EMEDIUMTYPE", libc::EMEDIUMTYPE),
            ("ECANCELED", libc::ECANCELED),
        ];
        assert_eq!(ioslice_core::errno::ERRNOS, libc_values.as_slice());
    }

    #[test]
    fn errno_names_and_descriptions() {
        assert_eq!(describe_errno(libc::EIO), "EIO (Input/output error)");
        let error = IoError {
            direction: Direction::Write,
            offset: 4096,
            len: 512,
            kind: IoErrorKind::Os(libc::EINVAL),
        };
        assert_eq!(
            error.to_string(),
            "write of 512 bytes at offset 4096 failed: EINVAL (Invalid argument) — misaligned O_DIRECT request?"
        );
    }

    #[test]
    fn a_dropped_completer_fails_the_future() {
        let counters = Arc::new(Counters::default());
        let cell = Arc::new(Cell::default());
        let completer = Completer {
            target: Some(Target::Cell(Arc::clone(&cell))),
            direction: Direction::Read,
            offset: 0,
            len: 512,
            counters: Arc::clone(&counters),
        };
        let future = IoFuture {
            cell,
            engine: None,
            direction: Direction::Read,
            offset: 0,
            len: 512,
        };
        drop(completer);
        let error = future.wait().err().map(|e| e.kind);
        assert_eq!(error, Some(IoErrorKind::ShutDown));
        assert_eq!(counters.cancelled.load(Ordering::Relaxed), 1);
        assert_eq!(counters.waiting.load(Ordering::SeqCst), 0);
    }
}
