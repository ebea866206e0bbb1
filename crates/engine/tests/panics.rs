//! A panic while a thread runs the engine (here: inside the policy, on a client's thread that
//! holds the engine's lock) stops the engine instead of letting the other clients carry on
//! over state that may be half updated. Every request it held fails with a clear error, every
//! later one too, every waiting thread and task is woken to see it, and shutdown says so.

mod common;

use common::{be, filled, join_within, probed_engine, wait_until};

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;

use ioslice_core::{
    build_scheduler, Completion, Dispatch, Inserted, Nanos, ProcessId, Request, SchedSpec,
    Scheduler,
};
use ioslice_engine::{EngineError, IoErrorKind};

/// The sector whose request makes [`PanicsOnSector`] panic.
const TRAP: u64 = 512;

/// noop, except that inserting a request for sector [`TRAP`] panics (a policy with a bug).
struct PanicsOnSector(Box<dyn Scheduler>);

impl Scheduler for PanicsOnSector {
    fn name(&self) -> &'static str {
        "panics-on-sector"
    }

    fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        assert_ne!(request.sector, TRAP, "a policy bug");
        self.0.insert(request, now)
    }

    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        self.0.dispatch(now)
    }

    fn complete(&mut self, completion: &Completion, now: Nanos) {
        self.0.complete(completion, now);
    }

    fn queued(&self) -> usize {
        self.0.queued()
    }

    fn process_exited(&mut self, process: ProcessId, now: Nanos) {
        self.0.process_exited(process, now);
    }
}

/// Counts its wake-ups.
struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_panic_under_the_lock_fails_every_request_and_wakes_every_waiter() {
    let (builder, probe) = probed_engine(4);
    let engine = builder
        .policy(|context| {
            let noop: SchedSpec = "noop".parse().expect("noop");
            Box::new(PanicsOnSector(
                build_scheduler(&noop, context).expect("noop builds"),
            ))
        })
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    let client = handle.client(1, "/", be()).expect("root");
    // The device holds everything: four requests at the device, two queued in the policy.
    probe.hold();
    let mut futures: Vec<_> = (0..6u64)
        .map(|i| client.read(i * 4096 + 65536, 4096))
        .collect();
    wait_until(|| handle.stats().in_flight == 4 && handle.stats().queued == 2);
    // An async task waits on one, a thread waits (and polls the backend) on another.
    let counter = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let waker = Waker::from(Arc::clone(&counter));
    let mut task = futures.remove(0);
    assert!(Pin::new(&mut task)
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    let waiting = futures.remove(0);
    let waiter = thread::spawn(move || waiting.wait());
    wait_until(|| probe.wait_calls() > 0);

    // Another client's write reaches the buggy policy: its thread panics holding the lock.
    let buggy = handle.client(2, "/", be()).expect("root");
    let panicking = thread::spawn(move || buggy.write(TRAP * 512, filled(4096, 1)).wait());
    assert!(
        panicking.join().is_err(),
        "the policy's panic reaches the submitting thread"
    );

    // The engine stops the first time a thread takes its lock after the panic (here: a new
    // request), and wakes everybody.
    let later = client.read(0, 4096).wait().err().map(|error| error.kind);
    assert_eq!(later, Some(IoErrorKind::EnginePanicked));
    let waited = join_within(waiter).err().map(|error| error.kind);
    assert_eq!(waited, Some(IoErrorKind::EnginePanicked));
    wait_until(|| counter.0.load(Ordering::SeqCst) > 0);
    match Pin::new(&mut task).poll(&mut Context::from_waker(&waker)) {
        Poll::Ready(outcome) => {
            let error = outcome.expect_err("failed");
            assert_eq!(error.kind, IoErrorKind::EnginePanicked);
            assert_eq!(error.errno(), libc::ENOTRECOVERABLE);
            assert!(error.to_string().contains("panicked"), "{error}");
        }
        Poll::Pending => panic!("woken but not ready"),
    }
    for future in futures {
        let kind = future.wait().err().map(|error| error.kind);
        assert_eq!(kind, Some(IoErrorKind::EnginePanicked));
    }
    // The device finishing what it held changes nothing.
    probe.release();
    let refused = client
        .write(8192, filled(4096, 2))
        .wait()
        .err()
        .map(|e| e.kind);
    assert_eq!(refused, Some(IoErrorKind::EnginePanicked));
    assert!(matches!(engine.shutdown(), Err(EngineError::Panicked)));
}
