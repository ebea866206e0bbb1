//! A thread's own lane of the backend (an io_uring of its own): the [`Lane`] handle its
//! thread holds, opening and closing one, and the core's bookkeeping of a lane's thread
//! (its state, [`LaneState`], is kept in the core).
//! Whoever dispatches a request tagged with an open lane pushes it on that lane; while the
//! lane's thread is blocked on it, only that thread reaps it (`drive::lane`), otherwise any
//! turn does.
//!
//! [`Lane`] is held by its job's thread; the state is touched under the lock by whichever
//! thread runs a turn.

use std::sync::Arc;
use std::task::{Wake, Waker};
use std::time::Duration;

use super::core::{Core, LaneState};
use super::Shared;
use crate::backend::{Notifier, Waiter};

/// How often a poller looks at a closed lane that still has operations at the device: they
/// complete on the lane's own ring, which the poller's wait does not see, and the lane's
/// thread no longer waits for them. (A job closes its lane once all its requests are done,
/// so this does not happen in a job run.)
pub(crate) const LANE_RECHECK: Duration = Duration::from_millis(1);

/// A lane of the backend opened for one thread, which waits on it for its own requests
/// ([`Shared::block_on_lane`]): whoever dispatches such a request pushes it on this lane, and
/// the backend wakes this thread alone when it completes.
pub(crate) struct Lane {
    pub(crate) id: usize,
    pub(crate) waiter: Arc<dyn Waiter>,
    /// Wakes the lane's waiter: registered on what the thread waits for, in case another
    /// thread completes it (an error, a shutdown, a request merged into another lane's).
    pub(crate) waker: Waker,
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
pub(crate) struct NotifyWaker(pub(crate) Notifier);

impl Wake for NotifyWaker {
    fn wake(self: Arc<Self>) {
        self.0.notify();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.notify();
    }
}

impl Shared {
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
}

impl Core {
    /// The lane's own thread, just woken, takes everything its lane holds: completions, to be
    /// completed at its next turn, and a pending notification.
    pub(crate) fn reap_own_lane(&mut self, lane: usize) {
        let mut done = std::mem::take(&mut self.done);
        self.backend.reap_lane(lane, &mut done);
        self.done = done;
    }

    /// Mark a lane's thread as blocked on it (only it reaps the lane then) or not.
    pub(crate) fn set_waiting(&mut self, lane: usize, waiting: bool) {
        if let Some(state) = self.lanes.get_mut(lane) {
            state.waiting = waiting;
        }
    }

    /// Operations are at the device on a lane whose thread has closed it: nobody waits on
    /// its ring, so a poller must look at it.
    pub(crate) fn orphaned_lane_ops(&self) -> bool {
        self.lanes
            .iter()
            .skip(1)
            .any(|state| state.ops > 0 && !state.open)
    }
}
