//! The engine's core and who runs it: the policy, the backend's non-blocking side and the
//! bookkeeping of every request, behind one lock, driven by whichever thread needs it.
//!
//! There is no thread between a client and the device. A thread that submits a request
//! runs the dispatcher's work itself ("caller runs", as blk-mq lets the submitter run the
//! elevator), and a thread that waits for a request polls the backend itself when nobody
//! else does. The dispatcher thread is only the poller of last resort.
//!
//! # One turn
//!
//! Under the lock ([`Core`]), never blocking:
//!
//! 1. **Reap** what the backend has finished (only the poller, or anyone if nobody polls),
//!    split each result among its parts (below), tell the policy with the errno, and queue
//!    each client's outcome. Statistics are folded in once per turn.
//! 2. **Dispatch.** While the backend has fewer than `depth` operations in flight, ask the
//!    policy: a [`Dispatch::Request`] becomes one vectored [`IoOp`] carrying the buffers of
//!    the request and of every request merged into it ([`Request::ids`]), sorted by offset;
//!    a [`Dispatch::WaitUntil`] is remembered as the policy's timer; [`Dispatch::Empty`]
//!    ends it. (Should a policy ever hand over parts that are not contiguous, each
//!    contiguous run becomes its own operation and the policy still hears of one
//!    completion, once all of them are done.)
//! 3. **Submit** everything pushed, with one system call for io_uring.
//!
//! Outcomes are handed to their futures after the lock is released; a future's owner is
//! only woken (a system call) if it registered a waker, that is, if it is parked or an
//! async task waits on it.
//!
//! # Roles, transitions and invariants
//!
//! A thread takes a role only under the lock, and every role but "running a turn" ends in a
//! blocking wait outside it. The roles:
//!
//! - **client**: a thread in a [`Client`](crate::Client) call, running turns inline;
//! - **poller** (`Roles::poller`, at most one): the thread reaping the shared lane, blocked in
//!   the backend's shared [`Waiter`] between turns;
//! - **parked**: a thread waiting for an outcome while another polls;
//! - **lane thread**: a job's thread blocked on its own lane (`LaneState::waiting`), the only
//!   one reaping that lane meanwhile; the **keeper** (`Roles::keeper`) is the lane thread that
//!   blocks no later than the policy's timer;
//! - **dispatcher thread**: the poller of last resort, asleep on `idle` when nobody wants it;
//! - **exiting**: a thread that submitted to a backend that ties operations to their
//!   submitter, waiting on `exits` before it exits.
//!
//! The transitions, each named after the function that makes it:
//!
//! | transition | from → to | what it must do |
//! |---|---|---|
//! | `submit_as` | client → client | insert, run a client turn (reaping the shared lane only if nobody polls), then `keep_timer` and `wake_room_poller` |
//! | `poll` (take the role) | client or dispatcher → poller | only if nobody polls; `Purpose` says until what |
//! | `poll` (block) | poller → poller, blocked | register the poller's waker on its slot, then wait until the deadline, the held timer, or a closed lane's recheck |
//! | `poll` (give the role up) | poller → client | if somebody still needs a poller (`needs_dispatcher`), `want_dispatcher`; wake room waiters |
//! | `block_on` (park) | client → parked | register a counted waker under the lock, while another thread polls |
//! | `unlock_and_deliver` | any | fulfil outcomes after the lock; each wakes its slot's waker |
//! | `block_on_lane` | client → lane thread | register the lane's waker, mark the lane waiting, become the keeper if nobody polls and nobody keeps the timer; on waking take everything on the lane (`reap_own_lane`) |
//! | `keep_timer` | after a non-poller turn | a poller blocked past the timer is woken; with nobody polling, nothing if a lane thread is running, else the keeper is woken through its lane, else `want_dispatcher` |
//! | `wake_room_poller` | after a non-poller turn | a poller or submitters waiting for room that the turn made are woken |
//! | `want_dispatcher` / `run_dispatcher` | dispatcher: asleep → poller → asleep | takes the role once it is free; polls while `needs_dispatcher` or its own operations are out |
//! | `close_lane` | lane thread → client | requests tagged with the lane go to the shared lane; `keep_timer` |
//! | `outlive_submissions` | client → exiting | wait, submitting nothing, until the operations in flight now are done; the dispatcher polls for it |
//! | `stop_after_panic` | any, lock poisoned | fail everything, close, wake every role |
//!
//! The invariants they keep:
//!
//! 1. **One reaper per completion channel.** At most one poller; only it reaps the shared
//!    lane while it holds the role; only a lane's thread reaps its lane while it waits on it.
//!    So a blocked thread cannot miss a completion on the channel it waits on.
//! 2. **No lost wake-up.** A thread blocked for an outcome has a waker on the outcome's slot
//!    that ends its block (the poller's rings the shared notifier, a parked thread's unparks
//!    it, a lane thread's rings its lane's notifier), registered under the slot's lock after
//!    the last look, so an outcome delivered by any other thread wakes it.
//! 3. **Somebody polls for a parked waiter.** A counted waker (a parked thread, an async
//!    task) is only registered while a poller exists or the dispatcher is wanted, and a
//!    poller giving the role up hands it on while anybody still needs one: counted wakers, a
//!    timer nobody keeps, an exiting thread, a shutdown.
//! 4. **The timer is kept.** While requests wait for the policy's timer, some thread will run
//!    a turn at it: a poller blocked no later than it, the keeper, a lane thread that is not
//!    blocked (it turns again, or blocks and keeps it), or the dispatcher thread.
//! 5. **Room wakes the pushed back.** Whichever turn makes room wakes who waits for it.
//! 6. **Submitters outlive their operations** ([`crate::submitter`]).
//! 7. **No progress on a timeout** but the policy's timer, the I/O timeout of the earliest
//!    operation at the device (every blocking wait ends by it, `Core::next_timeout`), and a
//!    closed lane's leftover operations, looked at every [`LANE_RECHECK`]: whatever else can
//!    end a wait wakes it.
//!
//! The `model_check` module runs these hand-offs under shuttle in every order it can find,
//! with timeouts that never fire, and fails on a lost or doubled request or a deadlock.
//!
//! A single client with many requests in flight thus submits, polls and completes its own
//! requests without any other thread, as fio does; and a psync job on its lane is woken by
//! the kernel directly, and keeps BFQ's linger timers itself. (Waking the dispatcher thread
//! for every linger window cost BFQ's psync readers a fifth of their throughput.)
//!
//! # Splitting a result among merged parts
//!
//! Parts are laid out in offset order. On success with `n` bytes, a part that lies wholly
//! within the first `n` bytes succeeds; every other part fails with
//! [`IoErrorKind::ShortTransfer`] (errno `EIO`), and the policy hears `EIO`. An operation of
//! several parts that fails with an errno is sent again part by part (briefly exceeding the
//! queue depth), so the error fails only the requests whose range it lies in; a single part
//! fails with the errno. The policy hears of the merged request once, with the first errno.
//! A failed request never stops the others.
//!
//! # Exactly once
//!
//! A request id is in exactly one place: `pending` (in the policy) or an operation in
//! `ops` (at the device). It leaves `pending` when dispatched and leaves `ops` when
//! completed, both under the lock; a dispatch naming an id not pending, or a completion for
//! a token not in flight, is counted in [`Snapshot::double_completions`](crate::Snapshot)
//! (and asserts in debug builds) instead of being completed again. Each outcome is moved
//! out of the core with its completer, which fulfils it once. An operation that outlives the
//! I/O timeout gives its parts' completers up when it times out (`core::timeout`) and stays
//! in `ops`, empty and marked, until the device answers; that answer finds nothing to
//! complete and is only counted.
//!
//! # Shutdown
//!
//! Once asked to stop, the dispatcher thread tells the policy every process it has seen has
//! exited (so no idling delays the drain), then polls until nothing is pending or in
//! flight, and closes the core: requests submitted after that fail with a shutdown error.
//!
//! # Where each part lives
//!
//! Dependencies point one way: `core` and `roles` know nothing of the modules that drive them.
//!
//! - this module: [`Shared`], what every handle, client, future and the dispatcher thread
//!   of one engine share (the lock, its condition variables, the backend's blocking half),
//!   how the lock is taken (and what a poisoned one does), and what is done after it;
//! - `core`: [`Core`], the state behind the lock (policy, in-flight table, merge
//!   bookkeeping, lanes' state), and one turn over it; `core::complete`, a finished
//!   operation's result split among its parts and the policy told;
//! - `roles`: who holds which role, kept beside the core's state;
//! - `lanes`: a thread's own lane of the backend, opened and closed;
//! - `timer`: the timer keeper: who keeps the policy's timer;
//! - `drive`: the ways a thread runs turns (`inline` after a submission, `poller`, `lane`,
//!   `dispatcher_thread`);
//! - `exits`: an exiting thread that outlives the operations it may have submitted.
//!
//! [`Dispatch::Request`]: ioslice_core::Dispatch::Request
//! [`IoOp`]: crate::backend::IoOp
//! [`Request::ids`]: ioslice_core::Request::ids
//! [`Dispatch::WaitUntil`]: ioslice_core::Dispatch::WaitUntil
//! [`Dispatch::Empty`]: ioslice_core::Dispatch::Empty
//! [`LANE_RECHECK`]: lanes::LANE_RECHECK

use std::cell::Cell as StdCell;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError, Weak};
use std::task::Waker;
use std::time::Instant;

use ioslice_core::{GroupTree, Scheduler, TraceSink};

use crate::backend::{Backend, Doorbell, Notifier, Waiter};
use crate::completion::{IoErrorKind, Serves, Slot};
use crate::counters::Counters;
use crate::members::Members;
use crate::stats::{Gauges, Recorder, Sample};
use crate::sync::{AtomicBool, Condvar, Mutex, MutexGuard};

mod core;
mod drive;
mod exits;
mod lanes;
mod roles;
#[cfg(test)]
mod tests;
mod timer;

use self::core::{Core, Outcomes};
pub(crate) use lanes::Lane;
use lanes::NotifyWaker;

crate::sync::thread_local! {
    /// An emptied outcome list kept per thread, swapped with the core's so that neither
    /// allocates in the steady state.
    static SPARE_OUTCOMES: StdCell<Outcomes> = const { StdCell::new(Vec::new()) };
    /// The same for the doorbells and lane wake-ups left for after the lock.
    static SPARE_AFTER: StdCell<(Vec<Doorbell>, Vec<Notifier>)> =
        const { StdCell::new((Vec::new(), Vec::new())) };
    /// The same for the statistics batch folded after the lock.
    static SPARE_SAMPLES: StdCell<Vec<Sample>> = const { StdCell::new(Vec::new()) };
}

/// A statistics batch taken under the engine's lock, folded into the recorder when dropped:
/// after the lock in the normal course, or while unwinding from a panic in between, so the
/// final statistics never wait for a batch that would not come.
struct PendingFold<'a> {
    recorder: &'a Recorder,
    samples: Vec<Sample>,
    gauges: Gauges,
}

impl Drop for PendingFold<'_> {
    fn drop(&mut self) {
        self.recorder.fold(&self.samples, self.gauges);
        let mut samples = std::mem::take(&mut self.samples);
        samples.clear();
        SPARE_SAMPLES.with(|spare| spare.set(samples));
    }
}

/// What every handle, client, future and the dispatcher thread of one engine share.
pub(crate) struct Shared {
    core: Mutex<Core>,
    /// Submitters waiting for the policy to have room (push-back).
    room: Condvar,
    /// The dispatcher thread sleeps here while nobody needs it.
    idle: Condvar,
    /// Exiting threads wait here for the operations they may have submitted
    /// ([`Shared::outlive_submissions`]).
    ///
    /// [`Shared::outlive_submissions`]: crate::submitter::OutlivesSubmissions::outlive_submissions
    exits: Condvar,
    /// This engine's number in the process (for [`submitter::note`]).
    ///
    /// [`submitter::note`]: crate::submitter::note
    id: u64,
    /// This engine, for the exit waits of the threads that submit to it.
    me: Weak<Shared>,
    /// The backend cancels an operation whose submitting thread exits first (io_uring).
    ties_operations_to_submitter: bool,
    /// The backend's blocking half, used without the lock.
    waiter: Arc<dyn Waiter>,
    pub notifier: Notifier,
    /// Wakes a blocked poller through the notifier: registered on the slot it polls for, so
    /// that an outcome another thread delivers ends its wait.
    poller_waker: Waker,
    pub counters: Arc<Counters>,
    pub accepting: AtomicBool,
    /// A thread panicked under the lock and the engine stopped ([`Shared::stop_after_panic`]).
    panicked: AtomicBool,
    /// Set, under the lock, whenever a turn leaves operations queued at the backend; lets
    /// [`Shared::flush`] skip the lock when nothing is (a stale `true` only costs the lock).
    deferred: AtomicBool,
    /// Live clients per group (see the `tenants` module).
    pub members: Members,
    pub logical_block_size: u64,
    pub capacity: u64,
    pub recorder: Arc<Recorder>,
    pub backend_name: &'static str,
    max_queued: usize,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("backend", &self.backend_name)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

/// What [`Shared::start`] needs.
pub(crate) struct Parts {
    pub backend: Box<dyn Backend>,
    pub policy: Box<dyn Scheduler>,
    pub groups: GroupTree,
    pub logical_block_size: u64,
    pub capacity: u64,
    pub recorder: Arc<Recorder>,
    pub started: Instant,
    pub depth: usize,
    pub max_queued: usize,
    /// Where the run's trace goes, if it is traced.
    pub trace: Option<Box<dyn TraceSink + Send>>,
    /// How long an operation may stay at the device (`None`: for ever).
    pub io_timeout: Option<std::time::Duration>,
    /// The layers the policy has for limits given only at run time.
    pub later: crate::settings::LaterLayers,
}

impl Shared {
    /// The shared state of a new engine.
    pub(crate) fn start(parts: Parts) -> Arc<Self> {
        Arc::new_cyclic(|me| Self::new(parts, me.clone()))
    }

    pub(crate) fn new(parts: Parts, me: Weak<Shared>) -> Self {
        /// Engines made in this process so far: each one's number (never 0).
        static ENGINES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let id = ENGINES.fetch_add(1, Ordering::Relaxed) + 1;
        let ties_operations_to_submitter = parts.backend.ties_operations_to_submitter();
        let waiter = parts.backend.waiter();
        let notifier = parts.backend.notifier();
        let backend_name = parts.backend.name();
        let counters = Arc::clone(&parts.recorder.counters);
        let core = Core::new(
            parts.backend,
            parts.policy,
            parts.trace,
            &parts.groups,
            Arc::clone(&parts.recorder),
            parts.started,
            parts.depth,
        );
        let mut core = core;
        core.limit_layer |= parts.later.limits;
        core.latency_layer |= parts.later.latency_targets;
        core.io_timeout = parts
            .io_timeout
            .map(|t| u64::try_from(t.as_nanos()).unwrap_or(u64::MAX));
        Self {
            core: Mutex::new(core),
            room: Condvar::new(),
            idle: Condvar::new(),
            exits: Condvar::new(),
            id,
            me,
            ties_operations_to_submitter,
            waiter,
            poller_waker: Waker::from(Arc::new(NotifyWaker(notifier.clone()))),
            notifier,
            counters,
            accepting: AtomicBool::new(true),
            panicked: AtomicBool::new(false),
            deferred: AtomicBool::new(false),
            members: Members::default(),
            logical_block_size: parts.logical_block_size,
            capacity: parts.capacity,
            recorder: parts.recorder,
            backend_name,
            max_queued: parts.max_queued,
        }
    }

    /// The engine's lock. If a thread panicked while holding it (a bug in a policy, a
    /// backend or the engine), the state behind it may be half updated: the first thread to
    /// find it so stops the engine ([`Shared::stop_after_panic`]).
    pub(crate) fn lock(&self) -> MutexGuard<'_, Core> {
        self.relock(self.core.lock())
    }

    /// The guard a lock or condition-variable wait returned, the engine stopped if the lock
    /// was poisoned.
    pub(crate) fn relock<'a>(
        &'a self,
        locked: Result<MutexGuard<'a, Core>, PoisonError<MutexGuard<'a, Core>>>,
    ) -> MutexGuard<'a, Core> {
        match locked {
            Ok(core) => core,
            Err(poisoned) => self.stop_after_panic(poisoned.into_inner()),
        }
    }

    /// A thread panicked under the lock: nothing the policy or the bookkeeping says can be
    /// trusted, so nothing more is asked of them. Every request pending or at the device fails
    /// with [`IoErrorKind::EnginePanicked`], outcomes already collected are delivered, later
    /// requests are refused with the same error, and every blocked thread is woken to see it.
    /// Operations at the device keep their buffers in the backend until they complete.
    pub(crate) fn stop_after_panic<'a>(
        &'a self,
        mut core: MutexGuard<'a, Core>,
    ) -> MutexGuard<'a, Core> {
        if core.panicked {
            return core;
        }
        core.panicked = true;
        self.panicked.store(true, Ordering::Release);
        self.accepting.store(false, Ordering::Release);
        core.fail_all(IoErrorKind::EnginePanicked);
        core.closed = true;
        for (completer, outcome) in core.outcomes.drain(..) {
            completer.complete(outcome);
        }
        core.publish();
        self.room.notify_all();
        self.idle.notify_all();
        self.exits.notify_all();
        // A poller blocked in the backend; lane threads are woken by their failed requests.
        self.notifier.notify();
        core
    }

    /// Why a request the engine no longer takes is refused.
    pub(crate) fn refusal(&self) -> IoErrorKind {
        if self.panicked.load(Ordering::Acquire) {
            IoErrorKind::EnginePanicked
        } else {
            IoErrorKind::ShutDown
        }
    }

    /// Whether a thread panicked while running the engine (which then stopped).
    pub(crate) fn has_panicked(&self) -> bool {
        self.panicked.load(Ordering::Acquire)
    }

    /// Release the lock, then make the system calls the turns left for after it (ring the
    /// backend's doorbells, wake a blocked poller), fold the statistics batch into the
    /// recorder and fulfil the outcomes collected.
    pub(crate) fn unlock_and_deliver(&self, mut core: MutexGuard<'_, Core>) {
        if core.roles.exit_waiters > 0 {
            // Operations may have completed, or the engine closed: exiting threads look again.
            self.exits.notify_all();
        }
        if !core.has_after_unlock() {
            return;
        }
        let mut batch = SPARE_OUTCOMES.with(StdCell::take);
        std::mem::swap(&mut batch, &mut core.outcomes);
        let mut after = SPARE_AFTER.with(StdCell::take);
        std::mem::swap(&mut after.0, &mut core.doorbells);
        std::mem::swap(&mut after.1, &mut core.wakes);
        let fold = core.has_unpublished().then(|| {
            let mut samples = SPARE_SAMPLES.with(StdCell::take);
            let gauges = core.take_samples(&mut samples);
            PendingFold {
                recorder: &self.recorder,
                samples,
                gauges,
            }
        });
        drop(core);
        let mut failed = None;
        for doorbell in after.0.drain(..) {
            if let Err(error) = doorbell.ring() {
                failed = Some(error);
            }
        }
        for notifier in after.1.drain(..) {
            notifier.notify();
        }
        SPARE_AFTER.with(|spare| spare.set(after));
        // The statistics before the outcomes: a client that has its outcome finds it counted.
        drop(fold);
        for (completer, outcome) in batch.drain(..) {
            completer.complete(outcome);
        }
        SPARE_OUTCOMES.with(|spare| spare.set(batch));
        if let Some(error) = failed {
            self.lock().fail_everything(error);
        }
    }

    /// Who holds which role now, for a model's failure message.
    #[cfg(all(test, ioslice_model))]
    pub(crate) fn roles(&self) -> String {
        let core = self.lock();
        format!(
            "poller {:?} blocked {} until {:?}, timer {:?} (held {}), keeper {:?}, lanes {:?}, \
             pending {}, ops {}, dispatcher wanted {} asleep {}, waiting {}, now {:?}",
            core.roles.poller,
            core.roles.poller_blocked,
            core.roles.poll_deadline,
            core.timer,
            core.held_timer().is_some(),
            core.roles.keeper,
            core.lanes,
            core.pending.len(),
            core.ops.len(),
            core.roles.dispatcher_wanted,
            core.roles.dispatcher_asleep,
            self.counters.waiting.load(Ordering::SeqCst),
            crate::sync::now(),
        )
    }
}

impl Serves for Shared {
    fn counters(&self) -> &Arc<Counters> {
        &self.counters
    }

    fn block_on(&self, slot: &dyn Slot, deadline: Option<Instant>) {
        Shared::block_on(self, slot, deadline);
    }

    fn ensure_poller(&self) {
        Shared::ensure_poller(self);
    }
}
