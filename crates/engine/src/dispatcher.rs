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
//! - **poller** (`Core::poller`, at most one): the thread reaping the shared lane, blocked in
//!   the backend's shared [`Waiter`] between turns;
//! - **parked**: a thread waiting for an outcome while another polls;
//! - **lane thread**: a job's thread blocked on its own lane (`LaneState::waiting`), the only
//!   one reaping that lane meanwhile; the **keeper** (`Core::keeper`) is the lane thread that
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
//! 7. **No progress on a timeout** but the policy's timer (and a closed lane's leftover
//!    operations, looked at every [`LANE_RECHECK`]): whatever can end a wait wakes it.
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
//! out of the core with its completer, which fulfils it once.
//!
//! # Shutdown
//!
//! Once asked to stop, the dispatcher thread tells the policy every process it has seen has
//! exited (so no idling delays the drain), then polls until nothing is pending or in
//! flight, and closes the core: requests submitted after that fail with a shutdown error.

use std::cell::Cell as StdCell;
use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError, Weak};
use std::task::{Wake, Waker};
use std::time::{Duration, Instant};

use ioslice_core::request::SECTOR_SIZE;
use ioslice_core::trace::Tracer;
use ioslice_core::{
    Completion, Dispatch, GroupTree, Nanos, ProcessId, Request, RequestId, Scheduler, TraceEvent,
    TraceSink,
};

use crate::backend::{Backend, Doorbell, IoDone, IoOp, Notifier, Waiter, SHARED_LANE};
use crate::completion::{
    park_until, park_waker, Completer, CompletionQueue, Counters, IoError, IoErrorKind, IoOutcome,
    IoResult, Slot,
};
use crate::handle::{Message, Submission};
use crate::stats::{Recorder, Sample};
use crate::submitter::{self, OutlivesSubmissions, WaitOnReturn};
use crate::sync::{now, AtomicBool, Condvar, Mutex, MutexGuard};

/// One client request at the device, part of an operation.
#[derive(Debug)]
struct Part {
    len: usize,
    submission: Submission,
}

/// One backend operation: a contiguous run of parts of one policy request.
#[derive(Debug)]
struct Op {
    request_key: u64,
    parts: Vec<Part>,
    /// The backend lane it completes on.
    lane: usize,
    /// Issued in a turn of the dispatcher thread, which then reaps it before giving up the
    /// poller role (nobody else may be waiting for it).
    by_dispatcher: bool,
}

/// One policy request at the device, until all its operations are back.
#[derive(Debug)]
struct Dispatched {
    request: Request,
    dispatch_time: Nanos,
    ops_left: usize,
    error: Option<i32>,
}

/// A backend lane's state in the core (index = lane; the shared lane is 0).
#[derive(Debug, Default, Clone)]
struct LaneState {
    /// Opened by a thread and not closed since.
    open: bool,
    /// Its thread is blocked in the lane's waiter: only that thread reaps the lane.
    waiting: bool,
    /// Operations on the lane not yet reaped.
    ops: usize,
}

/// A lane's thread blocked until `until` at the latest, which runs a turn then: the policy's
/// timer is kept if it is not earlier.
#[derive(Debug, Clone, Copy)]
struct TimerKeeper {
    lane: usize,
    until: Instant,
}

/// A lane of the backend opened for one thread, which waits on it for its own requests
/// ([`Shared::block_on_lane`]): whoever dispatches such a request pushes it on this lane, and
/// the backend wakes this thread alone when it completes.
pub(crate) struct Lane {
    id: usize,
    waiter: Arc<dyn Waiter>,
    /// Wakes the lane's waiter: registered on what the thread waits for, in case another
    /// thread completes it (an error, a shutdown, a request merged into another lane's).
    waker: Waker,
}

impl std::fmt::Debug for Lane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lane").field("id", &self.id).finish()
    }
}

impl Lane {
    /// The backend lane to tag submissions with.
    pub(crate) fn id(&self) -> usize {
        self.id
    }
}

/// A waker that calls a backend [`Notifier`].
struct NotifyWaker(Notifier);

impl Wake for NotifyWaker {
    fn wake(self: Arc<Self>) {
        self.0.notify();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.notify();
    }
}

/// Who holds the poller role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Client,
    Dispatcher,
}

/// What a thread holds the poller role for.
enum Purpose<'s> {
    /// A client's outcome: until this slot is ready.
    Outcome(&'s dyn Slot),
    /// A submitter pushed back: until the policy has room for its request.
    Room,
    /// The dispatcher thread: until nobody needs a poller.
    Dispatch,
}

impl Purpose<'_> {
    fn role(&self) -> Role {
        match self {
            Purpose::Dispatch => Role::Dispatcher,
            Purpose::Outcome(_) | Purpose::Room => Role::Client,
        }
    }
}

type Outcomes = Vec<(Completer, IoOutcome)>;

/// A map keyed by the engine's own sequential ids: they need no protection against
/// adversarial keys, so a multiplicative hash replaces SipHash (three inserts and removals
/// per request).
type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// Fibonacci hashing of a `u64` id (other input is folded in byte by byte).
#[derive(Debug, Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = (self.0 ^ id).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// How often a poller looks at a closed lane that still has operations at the device: they
/// complete on the lane's own ring, which the poller's wait does not see, and the lane's
/// thread no longer waits for them. (A job closes its lane once all its requests are done,
/// so this does not happen in a job run.)
const LANE_RECHECK: Duration = Duration::from_millis(1);

/// Most operations a deferred submission leaves queued: the next one hands them all to the
/// device, so that a job refilling its queue depth does not starve the device meanwhile.
const DEFER_AT_MOST: usize = 4;

crate::sync::thread_local! {
    /// An emptied outcome list kept per thread, swapped with the core's so that neither
    /// allocates in the steady state.
    static SPARE_OUTCOMES: StdCell<Outcomes> = const { StdCell::new(Vec::new()) };
    /// The same for the doorbells and lane wake-ups left for after the lock.
    static SPARE_AFTER: StdCell<(Vec<Doorbell>, Vec<Notifier>)> =
        const { StdCell::new((Vec::new(), Vec::new())) };
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
    exits: Condvar,
    /// This engine's number in the process (for [`submitter::note`]).
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
    pub groups: GroupTree,
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
}

impl Shared {
    /// The shared state of a new engine.
    pub(crate) fn start(parts: Parts) -> Arc<Self> {
        Arc::new_cyclic(|me| Self::new(parts, me.clone()))
    }

    fn new(parts: Parts, me: Weak<Shared>) -> Self {
        /// Engines made in this process so far: each one's number (never 0).
        static ENGINES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let id = ENGINES.fetch_add(1, Ordering::Relaxed) + 1;
        let ties_operations_to_submitter = parts.backend.ties_operations_to_submitter();
        let waiter = parts.backend.waiter();
        let notifier = parts.backend.notifier();
        let backend_name = parts.backend.name();
        let counters = Arc::clone(&parts.recorder.counters);
        let mut policy = parts.policy;
        // Engine time starts at 0 with the engine: the trace's times are engine times.
        let trace = parts
            .trace
            .map(|sink| Tracer::new(sink, 0, &parts.groups, policy.as_mut()));
        let core = Core {
            backend: parts.backend,
            policy,
            trace,
            recorder: Arc::clone(&parts.recorder),
            started: parts.started,
            depth: parts.depth,
            next_id: 0,
            next_token: 0,
            pending: IdMap::default(),
            ops: IdMap::default(),
            dispatched: IdMap::default(),
            parts_in_flight: 0,
            lanes: vec![LaneState::default()],
            defer_syscalls: false,
            doorbells: Vec::new(),
            wakes: Vec::new(),
            processes: BTreeSet::new(),
            submitted: 0,
            double_completions: 0,
            last_now: 0,
            done: Vec::new(),
            samples: Vec::new(),
            outcomes: Vec::new(),
            poller: None,
            poller_blocked: false,
            poller_wants_room: false,
            poll_deadline: None,
            timer: None,
            keeper: None,
            room_waiters: 0,
            exit_waiters: 0,
            dispatcher_wanted: false,
            turn_role: None,
            defer_submit: false,
            deferred: false,
            unsubmitted: 0,
            dispatcher_ops: 0,
            dispatcher_asleep: false,
            #[cfg(test)]
            dispatcher_polls: 0,
            stopping: false,
            exits_told: false,
            closed: false,
            panicked: false,
            failure: None,
        };
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
            groups: parts.groups,
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
    fn lock(&self) -> MutexGuard<'_, Core> {
        self.relock(self.core.lock())
    }

    /// The guard a lock or condition-variable wait returned, the engine stopped if the lock
    /// was poisoned.
    fn relock<'a>(
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
    fn stop_after_panic<'a>(&'a self, mut core: MutexGuard<'a, Core>) -> MutexGuard<'a, Core> {
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
    /// backend's doorbells, wake a blocked poller) and fulfil the outcomes collected.
    fn unlock_and_deliver(&self, mut core: MutexGuard<'_, Core>) {
        if core.exit_waiters > 0 {
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
        for (completer, outcome) in batch.drain(..) {
            completer.complete(outcome);
        }
        SPARE_OUTCOMES.with(|spare| spare.set(batch));
        if let Some(error) = failed {
            self.lock().fail_everything(error);
        }
    }

    /// [`Core::turn`] whose system calls wait for [`Shared::unlock_and_deliver`]: the caller
    /// must release the lock through it.
    fn turn_unlocked_syscalls(core: &mut Core, reap: bool) {
        core.defer_syscalls = true;
        core.turn(reap);
        core.defer_syscalls = false;
    }

    /// Whether somebody other than a client's own wait needs the backend polled.
    fn needs_dispatcher(&self, core: &Core) -> bool {
        if core.closed {
            return false;
        }
        if core.stopping {
            return true;
        }
        let outstanding = !core.pending.is_empty() || !core.ops.is_empty();
        let timer = core.unkept_timer().is_some();
        let waiting = self.counters.waiting.load(Ordering::SeqCst) > 0 || core.exit_waiters > 0;
        outstanding && (timer || waiting)
    }

    /// Ask the dispatcher thread to take the poller role (it takes it once it is free).
    fn want_dispatcher(&self, core: &mut Core) {
        core.dispatcher_wanted = true;
        if core.dispatcher_asleep {
            // Once per sleep: it clears the flag itself when it sleeps again.
            core.dispatcher_asleep = false;
            self.idle.notify_one();
        }
    }

    /// An async task registered a waker: make sure some thread polls the backend.
    pub(crate) fn ensure_poller(&self) {
        let mut core = self.lock();
        if core.poller.is_none() && !core.closed {
            self.want_dispatcher(&mut core);
        }
    }

    /// Insert a request (or a process's exit) and run a turn on the calling thread. Blocks
    /// while the policy holds `max_queued` requests (push-back). A request the engine can no
    /// longer take (it has shut down) is failed with a shutdown error.
    pub(crate) fn submit(&self, message: Message) {
        self.submit_as(message, true);
    }

    /// [`Shared::submit`]; with `flush` false, what the turn dispatches is queued at the
    /// backend but not handed to the device yet (no system call), unless
    /// [`DEFER_AT_MOST`] operations are already queued: a later turn or [`Shared::flush`]
    /// hands them over, batching several submissions into one. The caller must flush before
    /// it waits or stops submitting.
    pub(crate) fn submit_as(&self, message: Message, flush: bool) {
        let _exiting = self.note_submitter();
        let mut core = self.lock();
        if matches!(message, Message::Submit(_)) {
            let has_room = |core: &Core| core.closed || core.pending.len() < self.max_queued;
            while !has_room(&core) {
                if core.poller.is_none() {
                    core = self.poll(core, Purpose::Room, None);
                } else {
                    core.room_waiters += 1;
                    core = self.relock(self.room.wait(core));
                    core.room_waiters -= 1;
                }
            }
        }
        if core.closed {
            drop(core);
            if let Message::Submit(submission) = message {
                submission.completer.fail(self.refusal());
            }
            return;
        }
        match message {
            Message::Submit(submission) => core.insert(submission),
            Message::Exit(process) => {
                let now = core.now();
                core.policy.process_exited(process, now);
                core.collect_trace(now);
            }
        }
        core.defer_submit = !flush;
        self.client_turn(&mut core);
        core.defer_submit = false;
        if core.deferred {
            self.deferred.store(true, Ordering::Release);
        }
        self.unlock_and_deliver(core);
    }

    /// A turn on a client's thread, which reaps the shared ring only if nobody polls it, and
    /// makes sure somebody is there at the policy's timer. The caller releases the lock
    /// through [`Shared::unlock_and_deliver`].
    fn client_turn(&self, core: &mut Core) {
        let polling = core.poller.is_some();
        Self::turn_unlocked_syscalls(core, !polling);
        self.keep_timer(core);
        self.wake_room_poller(core);
    }

    /// After a turn by a thread that is not the poller: make sure somebody is there at the
    /// policy's timer, if requests wait for it. With no poller, nothing is needed while a
    /// lane's thread runs (it keeps the timer when it blocks, [`Core::unkept_timer`]);
    /// otherwise a keeper blocked until later is woken (after the lock) to block again until
    /// the earlier time, and with no keeper the dispatcher thread is asked to poll. A poller
    /// blocked until later is woken likewise.
    fn keep_timer(&self, core: &mut Core) {
        let Some(timer) = core.held_timer() else {
            return;
        };
        if core.poller.is_none() {
            if core.unkept_timer().is_none() {
                return;
            }
            let keeper = core.keeper.take();
            match keeper.and_then(|keeper| core.backend.lane_notifier(keeper.lane)) {
                Some(notifier) => core.wakes.push(notifier),
                None => self.want_dispatcher(core),
            }
        } else if core.poller_blocked && core.poll_deadline.is_none_or(|at| timer < at) {
            core.poll_deadline = Some(timer);
            core.wakes.push(self.notifier.clone());
        }
    }

    /// Hand the device what deferred submissions left queued.
    pub(crate) fn flush(&self) {
        if !self.deferred.load(Ordering::Acquire) {
            return;
        }
        let _exiting = self.note_submitter();
        let mut core = self.lock();
        self.deferred.store(false, Ordering::Release);
        if core.deferred {
            core.deferred = false;
            core.unsubmitted = 0;
            if let Err(error) = core.backend.submit() {
                core.fail_everything(error);
            }
        }
    }

    /// Block until `slot` is ready or `deadline` passes, polling the backend if nobody else
    /// does, else parked until the poller completes what the slot waits for.
    pub(crate) fn block_on(&self, slot: &dyn Slot, deadline: Option<Instant>) {
        let _exiting = self.note_submitter();
        loop {
            if slot.is_ready() || deadline.is_some_and(|at| now() >= at) {
                return;
            }
            let mut core = self.lock();
            if core.poller.is_none() && !core.closed {
                core = self.poll(core, Purpose::Outcome(slot), deadline);
                drop(core);
                continue;
            }
            // Registered under the lock, so a poller giving up its role sees the waker
            // counted and hands the role on.
            let registered = slot.register(&park_waker(), &self.counters);
            drop(core);
            if registered {
                park_until(slot, deadline, &self.counters);
            }
        }
    }

    /// Open a lane of the backend for the calling thread, which will wait on it for its own
    /// requests ([`Shared::block_on_lane`]); `None` if the backend has no lanes or no more.
    pub(crate) fn open_lane(&self) -> Option<Lane> {
        let mut core = self.lock();
        if core.closed {
            return None;
        }
        let id = core.backend.open_lane().ok().flatten()?;
        let (Some(waiter), Some(notifier)) =
            (core.backend.lane_waiter(id), core.backend.lane_notifier(id))
        else {
            core.backend.close_lane(id);
            return None;
        };
        if core.lanes.len() <= id {
            core.lanes.resize(id + 1, LaneState::default());
        }
        core.lanes[id].open = true;
        core.lanes[id].waiting = false;
        Some(Lane {
            id,
            waiter,
            waker: Waker::from(Arc::new(NotifyWaker(notifier))),
        })
    }

    /// Close a lane: requests still tagged with it go to the shared lane from now on, and
    /// whoever turns next reaps what is left on it.
    pub(crate) fn close_lane(&self, lane: Lane) {
        let _exiting = self.note_submitter();
        let mut core = self.lock();
        if let Some(state) = core.lanes.get_mut(lane.id) {
            state.open = false;
            state.waiting = false;
        }
        core.backend.close_lane(lane.id);
        // The thread kept the timer whenever it blocked; from now on somebody else must.
        self.keep_timer(&mut core);
        self.unlock_and_deliver(core);
    }

    /// Block until the job queue `slot` is ready or `deadline` passes, where every request
    /// `slot` waits for was submitted on `lane` by this thread: run a turn, then block on the
    /// lane alone. The backend wakes this thread when one of its operations completes, and
    /// only this thread reaps the lane meanwhile, so it cannot miss its completion; another
    /// thread that completes what the slot waits for wakes the lane through the registered
    /// waker.
    pub(crate) fn block_on_lane(
        &self,
        slot: &CompletionQueue,
        deadline: Option<Instant>,
        lane: &Lane,
    ) {
        let _exiting = self.note_submitter();
        // Lane waits are not counted as waiters: they need no poller.
        let uncounted = Counters::default();
        let passed = || deadline.is_some_and(|at| now() >= at);
        if slot.is_ready() || passed() {
            return;
        }
        let mut core = self.lock();
        loop {
            let open = core.lanes.get(lane.id).is_some_and(|state| state.open);
            if core.closed || !open {
                drop(core);
                return self.block_on(slot, deadline);
            }
            self.client_turn(&mut core);
            if !core.outcomes.is_empty() {
                self.unlock_and_deliver(core);
                if slot.is_ready() || passed() {
                    return;
                }
                core = self.lock();
                continue;
            }
            if !slot.register_uncounted(&lane.waker) {
                return self.unlock_and_deliver(core); // ready
            }
            core.set_waiting(lane.id, true);
            let until = core.keep_timer_on_lane(lane.id, deadline);
            self.unlock_and_deliver(core);
            let waited = lane.waiter.wait(until);
            core = self.lock();
            core.set_waiting(lane.id, false);
            // Take what woke us, completions or a notification alike: a notification left on
            // the lane (a keeper woken for an earlier timer, with nothing of its own at the
            // device) would end every later wait at once, and the thread would spin.
            core.reap_own_lane(lane.id);
            if core.keeper.is_some_and(|keeper| keeper.lane == lane.id) {
                core.keeper = None;
            }
            slot.unregister(&uncounted);
            if let Err(error) = waited {
                core.fail_everything(error);
            }
            if slot.is_ready() || passed() {
                // What woke us may be this lane's completions: reap them for the next wait.
                self.client_turn(&mut core);
                self.unlock_and_deliver(core);
                return;
            }
        }
    }

    /// Hold the poller role (nobody holds it) and run turns, blocking in the backend's waiter
    /// between them, until `purpose` is met (checked under the lock), `deadline`, or the
    /// engine closes; then give the role up, handing it to the dispatcher thread if somebody
    /// needs a poller.
    ///
    /// Whatever another thread does that can meet the purpose wakes the blocked poller: an
    /// outcome delivered to its slot by another thread wakes it through the waker it
    /// registers there before blocking; room made by another thread's turn, through
    /// [`Shared::wake_room_poller`]; a new earlier timer, through [`Shared::keep_timer`].
    fn poll<'a>(
        &'a self,
        mut core: MutexGuard<'a, Core>,
        purpose: Purpose<'_>,
        deadline: Option<Instant>,
    ) -> MutexGuard<'a, Core> {
        let role = purpose.role();
        core.poller = Some(role);
        core.poller_wants_room = matches!(purpose, Purpose::Room);
        loop {
            core.turn_role = Some(role);
            Self::turn_unlocked_syscalls(&mut core, true);
            core.turn_role = None;
            if core.room_waiters > 0 && core.pending.len() < self.max_queued {
                self.room.notify_all();
            }
            if core.has_after_unlock() {
                self.unlock_and_deliver(core);
                core = self.lock();
            }
            if core.closed
                || self.purpose_met(&core, &purpose)
                || deadline.is_some_and(|at| now() >= at)
            {
                break;
            }
            if let Purpose::Outcome(slot) = purpose {
                if !slot.register_uncounted(&self.poller_waker) {
                    continue; // delivered meanwhile
                }
            }
            let until = self.poll_until(&core, deadline);
            core.poller_blocked = true;
            core.poll_deadline = until;
            self.unlock_and_deliver(core);
            let waited = self.waiter.wait(until);
            if let Purpose::Outcome(slot) = purpose {
                slot.unregister(&self.counters);
            }
            core = self.lock();
            core.poller_blocked = false;
            core.poll_deadline = None;
            if let Err(error) = waited {
                core.fail_everything(error);
                break;
            }
        }
        core.poller = None;
        core.poller_wants_room = false;
        if role == Role::Client && self.needs_dispatcher(&core) {
            self.want_dispatcher(&mut core);
        }
        if core.room_waiters > 0 {
            self.room.notify_all();
        }
        core
    }

    /// Whether a poller has what it polls for.
    fn purpose_met(&self, core: &Core, purpose: &Purpose<'_>) -> bool {
        match purpose {
            Purpose::Outcome(slot) => slot.is_ready(),
            Purpose::Room => core.pending.len() < self.max_queued,
            Purpose::Dispatch => {
                let needed = self.needs_dispatcher(core) || core.dispatcher_ops > 0;
                !needed || (core.stopping && core.drained())
            }
        }
    }

    /// How long a poller blocks: until its deadline or the policy's timer, whichever is
    /// first, and no longer than the lane recheck while a closed lane has operations left.
    /// Nothing else bounds the wait: whatever can end it wakes it (see [`Shared::poll`]).
    fn poll_until(&self, core: &Core, deadline: Option<Instant>) -> Option<Instant> {
        let timer = core.held_timer();
        let mut until = match (deadline, timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if core.orphaned_lane_ops() {
            let soon = now() + LANE_RECHECK;
            until = Some(until.map_or(soon, |at| at.min(soon)));
        }
        until
    }

    /// After a turn by a thread that is not the poller: a poller blocked for room, which the
    /// turn made, is woken (after the lock), and so are submitters waiting for it.
    fn wake_room_poller(&self, core: &mut Core) {
        if core.pending.len() >= self.max_queued {
            return;
        }
        if core.room_waiters > 0 {
            self.room.notify_all();
        }
        if core.poller_blocked && core.poller_wants_room {
            core.poller_blocked = false;
            core.wakes.push(self.notifier.clone());
        }
    }

    /// The dispatcher thread: poll whenever somebody needs it, drain on shutdown. An error is
    /// a backend failure that ended the engine; every request it held was failed with it.
    pub(crate) fn run_dispatcher(&self) -> io::Result<()> {
        let mut core = self.lock();
        loop {
            if core.stopping && !core.exits_told && !core.closed {
                core.exits_told = true;
                let now = core.now();
                let processes: Vec<ProcessId> = core.processes.iter().copied().collect();
                for process in processes {
                    core.policy.process_exited(process, now);
                }
                core.collect_trace(now);
                let polling = core.poller.is_some();
                core.turn_role = Some(Role::Dispatcher);
                core.turn(!polling);
                core.turn_role = None;
                self.unlock_and_deliver(core);
                core = self.lock();
                continue;
            }
            if core.stopping && core.poller.is_none() && !core.closed && core.drained() {
                core.closed = true;
                core.publish();
                if core.room_waiters > 0 {
                    self.room.notify_all();
                }
                self.exits.notify_all();
            }
            if core.closed {
                break;
            }
            let needed = self.needs_dispatcher(&core) || core.dispatcher_ops > 0;
            if core.poller.is_none() && (core.dispatcher_wanted || needed) {
                core.dispatcher_wanted = false;
                #[cfg(test)]
                {
                    core.dispatcher_polls += 1;
                }
                core = self.poll(core, Purpose::Dispatch, None);
                continue;
            }
            core.dispatcher_asleep = true;
            core = self.relock(self.idle.wait(core));
            core.dispatcher_asleep = false;
        }
        match core.failure.take() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// The calling thread (a client's, never the dispatcher thread) is about to run turns,
    /// which may submit to the backend: if the backend ties operations to the thread that
    /// submits them, keep this thread alive when it exits until those in flight are done
    /// ([`submitter`]). What it returns must live until the caller has released the lock and
    /// made its system calls.
    fn note_submitter(&self) -> Option<WaitOnReturn> {
        if !self.ties_operations_to_submitter {
            return None;
        }
        submitter::note(self.id, || {
            let me: Weak<dyn OutlivesSubmissions> = self.me.clone();
            me
        })
    }

    /// Who holds which role now, for a model's failure message.
    #[cfg(all(test, ioslice_model))]
    pub(crate) fn roles(&self) -> String {
        let core = self.lock();
        format!(
            "poller {:?} blocked {} until {:?}, timer {:?} (held {}), keeper {:?}, lanes {:?}, \
             pending {}, ops {}, dispatcher wanted {} asleep {}, waiting {}, now {:?}",
            core.poller,
            core.poller_blocked,
            core.poll_deadline,
            core.timer,
            core.held_timer().is_some(),
            core.keeper,
            core.lanes,
            core.pending.len(),
            core.ops.len(),
            core.dispatcher_wanted,
            core.dispatcher_asleep,
            self.counters.waiting.load(Ordering::SeqCst),
            now(),
        )
    }

    /// Stop: no more requests are accepted; the dispatcher thread drains and closes.
    pub(crate) fn begin_stop(&self) {
        self.accepting.store(false, Ordering::Release);
        let mut core = self.lock();
        core.stopping = true;
        self.want_dispatcher(&mut core);
        let blocked = core.poller_blocked;
        drop(core);
        if blocked {
            // The poller re-checks with the lock: the dispatcher may now be needed.
            self.notifier.notify();
        }
    }

    /// The dispatcher thread is gone without closing (it panicked): fail what is left.
    pub(crate) fn abandon(&self) {
        let mut core = self.lock();
        if !core.closed {
            core.fail_all(IoErrorKind::ShutDown);
            core.closed = true;
            core.publish();
        }
        self.room.notify_all();
        self.exits.notify_all();
    }
}

impl OutlivesSubmissions for Shared {
    /// Block until no operation in flight now is still at the device, or the engine has
    /// closed, submitting nothing: the dispatcher thread (asked for, as for any waiter) polls
    /// meanwhile, and wakes this thread through `exits` whenever operations complete.
    fn outlive_submissions(&self) {
        let mut core = self.lock();
        let horizon = core.next_token;
        core.exit_waiters += 1;
        loop {
            let in_flight = core.ops.keys().any(|&token| token < horizon);
            if core.closed || !in_flight {
                break;
            }
            if core.poller.is_none() {
                self.want_dispatcher(&mut core);
            }
            core = self
                .exits
                .wait(core)
                .unwrap_or_else(PoisonError::into_inner);
        }
        core.exit_waiters -= 1;
    }
}

/// The engine's state behind the lock.
pub(crate) struct Core {
    backend: Box<dyn Backend>,
    policy: Box<dyn Scheduler>,
    /// Where the policy's decisions and the requests' arrivals, dispatches and completions
    /// go, when the engine is traced.
    trace: Option<Tracer<Box<dyn TraceSink + Send>>>,
    recorder: Arc<Recorder>,
    started: Instant,
    depth: usize,
    next_id: u64,
    next_token: u64,
    pending: IdMap<RequestId, Submission>,
    ops: IdMap<u64, Op>,
    dispatched: IdMap<u64, Dispatched>,
    parts_in_flight: usize,
    /// Every backend lane by id (0: the shared lane).
    lanes: Vec<LaneState>,
    /// The current turn leaves its system calls for after the lock.
    defer_syscalls: bool,
    /// Doorbells to ring once the lock is released.
    doorbells: Vec<Doorbell>,
    /// Waiters to wake once the lock is released.
    wakes: Vec<Notifier>,
    processes: BTreeSet<ProcessId>,
    submitted: u64,
    double_completions: u64,
    last_now: Nanos,
    done: Vec<IoDone>,
    samples: Vec<Sample>,
    outcomes: Outcomes,
    /// Who polls the backend, if anybody.
    poller: Option<Role>,
    /// The poller is blocked in the waiter (until `poll_deadline`).
    poller_blocked: bool,
    /// The poller polls for room in the policy (a submitter pushed back).
    poller_wants_room: bool,
    poll_deadline: Option<Instant>,
    /// The policy's last "wait until", from the last dispatch.
    timer: Option<Instant>,
    /// The lane thread blocked until (at the latest) the policy's timer, if any.
    keeper: Option<TimerKeeper>,
    /// Submitters blocked for room.
    room_waiters: usize,
    /// Exiting threads waiting for the operations in flight ([`Shared::outlive_submissions`]).
    exit_waiters: usize,
    /// The dispatcher thread was asked to take the poller role.
    dispatcher_wanted: bool,
    /// This turn leaves what it dispatches queued at the backend (see [`Shared::submit_as`]).
    defer_submit: bool,
    /// A turn left operations queued at the backend.
    deferred: bool,
    /// Operations pushed to the backend since it last submitted.
    unsubmitted: usize,
    /// Whose turn it is (the dispatcher marks the operations it issues).
    turn_role: Option<Role>,
    /// Operations the dispatcher thread issued that are still at the device.
    dispatcher_ops: usize,
    /// The dispatcher thread sleeps on `idle` and nobody has woken it since.
    dispatcher_asleep: bool,
    /// Times the dispatcher thread took the poller role (what the tests check it is spared).
    #[cfg(test)]
    dispatcher_polls: u64,
    stopping: bool,
    exits_told: bool,
    /// Drained after a shutdown, or failed: takes no more requests.
    closed: bool,
    /// A thread panicked while holding the lock; the engine stopped.
    panicked: bool,
    /// The backend error that ended the engine.
    failure: Option<io::Error>,
}

impl Core {
    /// Engine time: nanoseconds since start, never going backwards.
    fn now(&mut self) -> Nanos {
        let elapsed = now().saturating_duration_since(self.started);
        let elapsed = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.last_now = self.last_now.max(elapsed);
        self.last_now
    }

    /// The policy's timer, if requests wait for it.
    fn held_timer(&self) -> Option<Instant> {
        self.timer.filter(|_| !self.pending.is_empty())
    }

    /// The policy's timer, if requests wait for it and no lane's thread keeps it: neither
    /// the keeper (blocked until the timer at the latest) nor a lane's thread that is not
    /// blocked, which runs a turn or blocks (and keeps the timer) next, or closes its lane.
    fn unkept_timer(&self) -> Option<Instant> {
        let timer = self.held_timer()?;
        let kept = self.keeper.is_some_and(|keeper| keeper.until <= timer);
        let keeper_to_come = self.lanes.iter().any(|lane| lane.open && !lane.waiting);
        (!kept && !keeper_to_come).then_some(timer)
    }

    /// A lane's thread is about to block on `lane` until `deadline`: with nobody polling and
    /// a timer nobody keeps, it becomes the keeper. Returns how long it blocks.
    fn keep_timer_on_lane(&mut self, lane: usize, deadline: Option<Instant>) -> Option<Instant> {
        if self.poller.is_some() {
            return deadline;
        }
        let Some(timer) = self.unkept_timer() else {
            return deadline;
        };
        let until = deadline.map_or(timer, |at| at.min(timer));
        self.keeper = Some(TimerKeeper { lane, until });
        Some(until)
    }

    /// A turn left system calls or outcomes for after the lock.
    fn has_after_unlock(&self) -> bool {
        !self.outcomes.is_empty() || !self.doorbells.is_empty() || !self.wakes.is_empty()
    }

    /// Nothing pending or in flight.
    fn drained(&self) -> bool {
        self.pending.is_empty() && self.ops.is_empty() && self.backend.in_flight() == 0
    }

    /// Put a submission into the policy under a fresh id.
    fn insert(&mut self, submission: Submission) {
        // The client read the clock an instant ago: no need to read it again.
        let submitted = u64::try_from(
            submission
                .submitted
                .saturating_duration_since(self.started)
                .as_nanos(),
        )
        .unwrap_or(u64::MAX);
        self.last_now = self.last_now.max(submitted);
        let now = self.last_now;
        self.submitted += 1;
        self.processes.insert(submission.process);
        let id = RequestId(self.next_id);
        self.next_id += 1;
        let submit_time = submitted.min(now);
        let request = Request {
            id,
            process: submission.process,
            group: submission.group,
            priority: submission.priority,
            direction: submission.direction,
            // O_DIRECT: the client waits for every request, reads and writes alike.
            sync: true,
            sector: submission.offset / SECTOR_SIZE,
            sectors: u32::try_from(submission.buffer.len() as u64 / SECTOR_SIZE)
                .unwrap_or(u32::MAX),
            submit_time,
            merged: Vec::new(),
        };
        self.pending.insert(id, submission);
        // Merged or queued, the request stays pending under its own id; the carrier's
        // `merged` list names it when the policy dispatches it.
        match &mut self.trace {
            None => {
                let _ = self.policy.insert(request, now);
            }
            Some(trace) => {
                trace.record(now, &TraceEvent::insert(&request));
                let _ = self.policy.insert(request, now);
                trace.collect(now, self.policy.as_mut());
            }
        }
    }

    /// Hand what the policy recorded in its last call, made at `now`, to the trace.
    fn collect_trace(&mut self, now: Nanos) {
        if let Some(trace) = &mut self.trace {
            trace.collect(now, self.policy.as_mut());
        }
    }

    /// One turn: reap (if `reap`), complete, dispatch while there is room, submit, publish.
    /// A backend failure fails every request and closes the engine.
    fn turn(&mut self, reap: bool) {
        if self.closed {
            return;
        }
        let mut done = std::mem::take(&mut self.done);
        if reap {
            self.backend.reap(&mut done);
        }
        // A thread's lane is reaped by anyone while the thread is not blocked on it.
        for (lane, state) in self.lanes.iter().enumerate().skip(1) {
            if state.ops > 0 && !state.waiting {
                self.backend.reap_lane(lane, &mut done);
            }
        }
        self.done = done;
        self.complete_batch();
        if self.stopping
            && self.ops.is_empty()
            && self.backend.in_flight() == 0
            && !self.pending.is_empty()
            && self.policy.queued() == 0
        {
            // The policy holds nothing yet requests are pending: it lost them. Fail them
            // rather than wait forever.
            for (_, submission) in self.pending.drain() {
                self.double_completions += 1;
                self.outcomes.push((
                    submission.completer,
                    Err(IoError {
                        direction: submission.direction,
                        offset: submission.offset,
                        len: submission.buffer.len() as u64,
                        kind: IoErrorKind::ShutDown,
                    }),
                ));
            }
        }
        self.pump();
        if self.defer_submit && self.unsubmitted < DEFER_AT_MOST {
            self.deferred = true;
        } else {
            self.deferred = false;
            self.unsubmitted = 0;
            let submitted = if self.defer_syscalls {
                self.backend.submit_later(&mut self.doorbells)
            } else {
                self.backend.submit()
            };
            if let Err(error) = submitted {
                self.fail_everything(error);
                return;
            }
        }
        self.publish();
    }

    /// Hand the backend what the policy gives while there is room; remember a policy's
    /// "wait until" as the timer.
    fn pump(&mut self) {
        self.timer = None;
        // One clock read per turn: its dispatches are one instant to the policy.
        let now = self.now();
        while self.backend.in_flight() < self.depth {
            let answer = self.policy.dispatch(now);
            if let Some(trace) = &mut self.trace {
                trace.collect(now, self.policy.as_mut());
                if let Dispatch::Request(request) = &answer {
                    trace.record(now, &TraceEvent::dispatch(request));
                }
            }
            match answer {
                Dispatch::Request(request) => self.issue(request, now),
                Dispatch::WaitUntil(at) => {
                    // A time now or past is taken as the next nanosecond, as the simulator does.
                    let at = at.max(now + 1);
                    self.timer = Some(self.started + Duration::from_nanos(at));
                    return;
                }
                Dispatch::Empty => return,
            }
        }
    }

    fn issue(&mut self, request: Request, now: Nanos) {
        let mut parts: Vec<Part> = Vec::with_capacity(1 + request.merged.len());
        for id in request.ids() {
            match self.pending.remove(&id) {
                Some(submission) => parts.push(Part {
                    len: submission.buffer.len(),
                    submission,
                }),
                None => {
                    debug_assert!(false, "policy dispatched {id:?}, which is not pending");
                    self.double_completions += 1;
                }
            }
        }
        parts.sort_by_key(|part| part.submission.offset);
        let key = self.next_token;
        let runs = contiguous_runs(parts);
        self.dispatched.insert(
            key,
            Dispatched {
                request,
                dispatch_time: now,
                ops_left: runs.len(),
                error: None,
            },
        );
        if runs.is_empty() {
            // Every id was bogus: the policy still expects a completion.
            self.finish_request(key, now);
            return;
        }
        for mut run in runs {
            let token = self.next_token;
            self.next_token += 1;
            let offset = run[0].submission.offset;
            let direction = run[0].submission.direction;
            let lane = self.lane_for(run[0].submission.lane);
            let buffers = run
                .iter_mut()
                .map(|part| std::mem::replace(&mut part.submission.buffer, empty_buffer()))
                .collect();
            self.parts_in_flight += run.len();
            // The dispatcher thread waits for its own operations on the shared lane only; a
            // lane's operations are reaped by the thread waiting on it.
            let by_dispatcher = self.turn_role == Some(Role::Dispatcher) && lane == SHARED_LANE;
            self.dispatcher_ops += usize::from(by_dispatcher);
            self.count_lane_op(lane);
            self.ops.insert(
                token,
                Op {
                    request_key: key,
                    parts: run,
                    lane,
                    by_dispatcher,
                },
            );
            self.unsubmitted += 1;
            self.backend.push(IoOp {
                token,
                direction,
                offset,
                buffers,
                lane,
            });
        }
    }

    fn complete_batch(&mut self) {
        if self.done.is_empty() {
            return;
        }
        let finished = now();
        let mut done = std::mem::take(&mut self.done);
        for io_done in done.drain(..) {
            self.complete_op(io_done, finished);
        }
        self.done = done;
    }

    fn complete_op(&mut self, io_done: IoDone, finished: Instant) {
        let Some(op) = self.ops.remove(&io_done.token) else {
            debug_assert!(
                false,
                "completion for token {} not in flight",
                io_done.token
            );
            self.double_completions += 1;
            return;
        };
        self.dispatcher_ops -= usize::from(op.by_dispatcher);
        self.uncount_lane_op(op.lane);
        let (transferred, errno) = match &io_done.result {
            Ok(bytes) => (*bytes, None),
            Err(error) => (0, Some(error.raw_os_error().unwrap_or(libc::EIO))),
        };
        if errno.is_some() && op.parts.len() > 1 && io_done.buffers.len() == op.parts.len() {
            self.retry_parts(op, io_done.buffers);
            return;
        }
        self.parts_in_flight -= op.parts.len();
        let mut buffers = io_done.buffers.into_iter();
        let mut position = 0usize;
        let mut op_error = errno;
        for part in op.parts {
            let Part { len, submission } = part;
            let buffer = buffers.next();
            let start = position;
            position += len;
            let latency = finished.saturating_duration_since(submission.submitted);
            let kind = match (errno, buffer.is_some()) {
                (Some(errno), _) => Some(IoErrorKind::Os(errno)),
                (None, false) => Some(IoErrorKind::Os(libc::EIO)),
                (None, true) if position <= transferred => None,
                (None, true) => Some(IoErrorKind::ShortTransfer {
                    transferred: transferred.saturating_sub(start).min(len),
                }),
            };
            self.samples.push(Sample {
                group: Arc::clone(&submission.group_path),
                process: submission.process.0,
                direction: submission.direction,
                bytes: len as u64,
                ok: kind.is_none(),
                latency,
            });
            let outcome = match (kind, buffer) {
                (None, Some(buffer)) => Ok(IoResult {
                    buffer,
                    bytes: len,
                    offset: submission.offset,
                    latency,
                }),
                (kind, _) => {
                    op_error = op_error.or(Some(libc::EIO));
                    Err(IoError {
                        direction: submission.direction,
                        offset: submission.offset,
                        len: len as u64,
                        kind: kind.unwrap_or(IoErrorKind::Os(libc::EIO)),
                    })
                }
            };
            self.outcomes.push((submission.completer, outcome));
        }
        let key = op.request_key;
        // The batch's completion time, not another clock read per operation.
        let finished_at =
            u64::try_from(finished.saturating_duration_since(self.started).as_nanos())
                .unwrap_or(u64::MAX);
        self.last_now = self.last_now.max(finished_at);
        let now = self.last_now;
        if let Some(dispatched) = self.dispatched.get_mut(&key) {
            dispatched.ops_left = dispatched.ops_left.saturating_sub(1);
            dispatched.error = dispatched.error.or(op_error);
            if dispatched.ops_left == 0 {
                self.finish_request(key, now);
            }
        }
    }

    /// A merged operation failed: send each part again on its own, so that the error
    /// fails only the requests whose range it lies in. The policy hears of the request
    /// once every part is back.
    fn retry_parts(&mut self, op: Op, buffers: Vec<crate::AlignedBuffer>) {
        if let Some(dispatched) = self.dispatched.get_mut(&op.request_key) {
            dispatched.ops_left += op.parts.len() - 1;
        }
        for (part, buffer) in op.parts.into_iter().zip(buffers) {
            let token = self.next_token;
            self.next_token += 1;
            let offset = part.submission.offset;
            let direction = part.submission.direction;
            self.dispatcher_ops += usize::from(op.by_dispatcher);
            self.count_lane_op(op.lane);
            self.ops.insert(
                token,
                Op {
                    request_key: op.request_key,
                    parts: vec![part],
                    lane: op.lane,
                    by_dispatcher: op.by_dispatcher,
                },
            );
            self.backend.push(IoOp {
                token,
                direction,
                offset,
                buffers: vec![buffer],
                lane: op.lane,
            });
        }
    }

    /// Every operation of a policy request is back: tell the policy, once.
    fn finish_request(&mut self, key: u64, now: Nanos) {
        if let Some(dispatched) = self.dispatched.remove(&key) {
            let completion = Completion {
                request: dispatched.request,
                dispatch_time: dispatched.dispatch_time,
                error: dispatched.error,
            };
            match &mut self.trace {
                None => self.policy.complete(&completion, now),
                Some(trace) => {
                    trace.record(now, &TraceEvent::complete(&completion, now));
                    self.policy.complete(&completion, now);
                    trace.collect(now, self.policy.as_mut());
                }
            }
        }
    }

    fn publish(&mut self) {
        self.recorder.record(
            &self.samples,
            self.submitted,
            self.pending.len(),
            self.parts_in_flight,
            self.double_completions,
        );
        self.samples.clear();
    }

    /// The backend failed for good: fail every request still held with its errno, and close.
    fn fail_everything(&mut self, error: io::Error) {
        let errno = error.raw_os_error().unwrap_or(libc::EIO);
        self.fail_all(IoErrorKind::Os(errno));
        self.closed = true;
        self.failure = Some(error);
        self.publish();
    }

    /// Fail every request pending or at the device with `kind`.
    fn fail_all(&mut self, kind: IoErrorKind) {
        for (_, submission) in self.pending.drain() {
            submission.completer.fail(kind.clone());
        }
        for (_, op) in self.ops.drain() {
            for part in op.parts {
                part.submission.completer.fail(kind.clone());
            }
        }
        self.dispatched.clear();
        self.parts_in_flight = 0;
        self.dispatcher_ops = 0;
        for lane in &mut self.lanes {
            lane.ops = 0;
        }
    }

    /// The lane a submission tagged `lane` goes to: its own while it is open, else the
    /// shared lane (its thread closed it, or never had one).
    fn lane_for(&self, lane: usize) -> usize {
        match self.lanes.get(lane) {
            Some(state) if state.open => lane,
            _ => SHARED_LANE,
        }
    }

    /// The lane's own thread, just woken, takes everything its lane holds: completions, to be
    /// completed at its next turn, and a pending notification.
    fn reap_own_lane(&mut self, lane: usize) {
        let mut done = std::mem::take(&mut self.done);
        self.backend.reap_lane(lane, &mut done);
        self.done = done;
    }

    /// Mark a lane's thread as blocked on it (only it reaps the lane then) or not.
    fn set_waiting(&mut self, lane: usize, waiting: bool) {
        if let Some(state) = self.lanes.get_mut(lane) {
            state.waiting = waiting;
        }
    }

    /// Operations are at the device on a lane whose thread has closed it: nobody waits on
    /// its ring, so a poller must look at it.
    fn orphaned_lane_ops(&self) -> bool {
        self.lanes
            .iter()
            .skip(1)
            .any(|state| state.ops > 0 && !state.open)
    }

    fn count_lane_op(&mut self, lane: usize) {
        if let Some(state) = self.lanes.get_mut(lane).filter(|_| lane != SHARED_LANE) {
            state.ops += 1;
        }
    }

    fn uncount_lane_op(&mut self, lane: usize) {
        if let Some(state) = self.lanes.get_mut(lane).filter(|_| lane != SHARED_LANE) {
            state.ops = state.ops.saturating_sub(1);
        }
    }
}

/// A zero-length placeholder left in a submission whose buffer went to the device.
fn empty_buffer() -> crate::AlignedBuffer {
    crate::AlignedBuffer::empty()
}

/// Split parts sorted by offset into contiguous runs, one operation each: a single run (the
/// parts themselves, no copy) whenever the policy merged correctly, as it always should.
fn contiguous_runs(parts: Vec<Part>) -> Vec<Vec<Part>> {
    let end = |part: &Part| part.submission.offset + part.len as u64;
    if parts
        .windows(2)
        .all(|pair| end(&pair[0]) == pair[1].submission.offset)
    {
        return if parts.is_empty() {
            Vec::new()
        } else {
            vec![parts]
        };
    }
    debug_assert!(false, "policy merged requests that are not contiguous");
    let mut runs: Vec<Vec<Part>> = Vec::new();
    for part in parts {
        match runs.last_mut() {
            Some(run) if run.last().map(end) == Some(part.submission.offset) => run.push(part),
            _ => runs.push(vec![part]),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use ioslice_core::limit::Limits;
    use ioslice_core::request::Direction;
    use ioslice_core::IoPriority;

    use crate::backend::uring::UringBackend;
    use crate::completion::CompletionQueue;
    use crate::handle::Transfer;
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
    fn wait_for(
        client: &crate::Client,
        queue: &CompletionQueue,
        tag: u64,
        lane: Option<&super::Lane>,
    ) {
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
        let Some((_temp, engine)) = uring_engine_with_limits(&[("slow", slow), ("fast", fast)])
        else {
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
}
