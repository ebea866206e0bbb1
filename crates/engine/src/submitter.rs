//! A thread that handed operations to the kernel lives until they are done.
//!
//! io_uring ties each request to the task that submitted it. When that task exits, a request
//! the kernel still has to do work for on the task's behalf (queued for one of the task's
//! io-wq workers, or waiting to be retried from the task's task work, as buffered writes on
//! most filesystems are) completes with `ECANCELED` instead of being done. In the engine any
//! thread may submit anybody's requests (a client runs the engine's turn itself), so a
//! short-lived client thread could take other clients' requests down with it, and its own
//! requests nobody waits for.
//!
//! So a thread that submits to such a backend is noted here, once per engine, in a
//! thread-local list; when the thread exits, the list's destructor (which runs on the
//! exiting thread, before the kernel sees it exit) waits, engine by engine, until every
//! operation in flight at that moment is complete ([`OutlivesSubmissions`]). The wait submits
//! nothing, so it takes on no new operation. A thread already past its thread-local
//! destructors when it submits waits at once instead.
//!
//! Touched only by the thread it describes.

use std::cell::{Cell, RefCell};
use std::sync::{Arc, Weak};

/// An engine a thread can wait on before it exits.
pub(crate) trait OutlivesSubmissions: Send + Sync {
    /// Block until every operation in flight now is complete, submitting nothing.
    fn outlive_submissions(&self);
}

/// The engines this thread submitted to; waits for each when the thread exits.
#[derive(Default)]
struct Submitted {
    engines: RefCell<Vec<(u64, Weak<dyn OutlivesSubmissions>)>>,
}

impl Drop for Submitted {
    fn drop(&mut self) {
        for (_, engine) in self.engines.take() {
            if let Some(engine) = engine.upgrade() {
                engine.outlive_submissions();
            }
        }
    }
}

crate::sync::thread_local! {
    /// The id of the engine noted last: noting it again costs one comparison.
    static LAST: Cell<u64> = const { Cell::new(0) };
    static SUBMITTED: Submitted = Submitted::default();
}

/// Waits, when dropped, for the operations in flight on an engine: what a thread that could
/// not be noted (it is already past its thread-local destructors) does before it returns.
#[must_use = "dropping it is the wait"]
pub(crate) struct WaitOnReturn(Arc<dyn OutlivesSubmissions>);

impl Drop for WaitOnReturn {
    fn drop(&mut self) {
        self.0.outlive_submissions();
    }
}

/// This thread is about to run a turn of the engine numbered `id` (unique, never 0), whose
/// backend ties operations to their submitter: keep it alive, when it exits, until the
/// operations then in flight are done. `engine` gives the engine on the first call only.
/// Returns what to drop once the turn's system calls are made if the thread is exiting.
pub(crate) fn note(
    id: u64,
    engine: impl FnOnce() -> Weak<dyn OutlivesSubmissions>,
) -> Option<WaitOnReturn> {
    if LAST.with(Cell::get) == id {
        return None;
    }
    let mut engine = Some(engine);
    let noted = SUBMITTED.try_with(|submitted| {
        let mut engines = submitted.engines.borrow_mut();
        engines.retain(|(_, known)| known.strong_count() > 0);
        if !engines.iter().any(|(known, _)| *known == id) {
            if let Some(engine) = engine.take() {
                engines.push((id, engine()));
            }
        }
    });
    match noted {
        Ok(()) => {
            LAST.with(|last| last.set(id));
            None
        }
        // The thread is exiting and its list is gone: wait before returning instead.
        Err(_) => engine
            .and_then(|engine| engine().upgrade())
            .map(WaitOnReturn),
    }
}
