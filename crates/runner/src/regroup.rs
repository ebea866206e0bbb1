//! Scheduled changes to the groups on a real run (a job file's `; ioslice-at:` lines,
//! [`RunSpec::group_changes`](ioslice_fio::run_spec::RunSpec::group_changes)), made as the
//! simulator makes them, on the real clock: checked before the run ([`resolve_changes`]),
//! then made at their times from the start of the run by a thread of their own, on every
//! engine of the run: weights and limits set ([`Handle::set_group`]), groups made and
//! removed ([`Handle::add_group`], [`Handle::remove_group`]). A job moved into a group is
//! told through its processes' [`MoveSlot`]s: each process's thread moves its clients
//! ([`Batch::move_to`](ioslice_engine::Batch::move_to)) before its next request, and the
//! changes thread waits for every running process of the job to have moved before it makes
//! the next change. A change the engine refuses when it is due (a group removed while a
//! job's process is still in it) stops the run, whose error then names the change's line and
//! time. A change due after every job has ended is not made.
//!
//! Touched by the changes thread (it makes the changes and posts the moves) and by the job
//! threads (each takes its own move, and says when it runs).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ioslice_core::{GroupTree, SchedulerContext, StopSignal};
use ioslice_engine::Handle;
use ioslice_fio::report::CgroupSettings;
use ioslice_fio::run_spec::{resolve_changes, GroupAction, ResolvedChange};
use ioslice_fio::JobFile;

use crate::{RunConfig, RunError};

/// How often the changes thread looks at the stop request and the jobs' end while it
/// waits for a change's time.
const POLL: Duration = Duration::from_millis(20);

/// The run's changes, checked against its groups at the start and its job file; the run's
/// policy must take the tree each change leaves (as the simulator checks it).
pub(crate) fn check(
    job_file: &JobFile,
    config: &RunConfig,
    groups: &GroupTree,
) -> Result<Vec<ResolvedChange>, RunError> {
    let context = SchedulerContext {
        groups: groups.clone(),
        ..SchedulerContext::default()
    };
    let changes = &config.run.group_changes;
    resolve_changes(changes, &config.run.scheduler, &context, job_file).map_err(RunError::Job)
}

/// One job process's move: the group it is to move to, posted by the changes thread and
/// taken by the process's thread.
#[derive(Debug, Default)]
pub(crate) struct MoveSlot {
    /// The process's job.
    job: String,
    /// The group the plan puts the process in.
    planned: String,
    /// A move is posted and not yet taken.
    pending: AtomicBool,
    /// The group the process is in, once a move has been posted.
    group: Mutex<Option<String>>,
    /// The process's thread runs: it has its clients and submits.
    running: AtomicBool,
    /// The process's thread has ended.
    done: AtomicBool,
}

impl MoveSlot {
    /// The group a process starting now joins: the one it was last moved to, else the
    /// planned one.
    pub(crate) fn group_at_start(&self) -> String {
        self.running.store(true, Ordering::Release);
        self.pending.store(false, Ordering::Release);
        lock(&self.group)
            .clone()
            .unwrap_or_else(|| self.planned.clone())
    }

    /// The group to move to, if a move was posted since the last one taken (one atomic load
    /// when none was).
    pub(crate) fn take(&self) -> Option<String> {
        if !self.pending.load(Ordering::Acquire) || !self.pending.swap(false, Ordering::AcqRel) {
            return None;
        }
        // Read after the flag is cleared: a move posted meanwhile sets it again, and is taken
        // next time if this read saw the one before it.
        lock(&self.group).clone()
    }

    /// The process's thread has ended: it moves no more.
    pub(crate) fn ended(&self) {
        self.running.store(false, Ordering::Release);
        self.done.store(true, Ordering::Release);
    }

    /// Whether the process is still to run, or runs, in the group at `path`.
    fn in_group(&self, path: &str) -> bool {
        !self.done.load(Ordering::Acquire)
            && lock(&self.group).as_deref().unwrap_or(&self.planned) == path
    }

    fn post(&self, group: &str) {
        *lock(&self.group) = Some(group.to_string());
        self.pending.store(true, Ordering::Release);
    }

    /// Whether a posted move waits for a running process to take it.
    fn waiting(&self) -> bool {
        self.running.load(Ordering::Acquire) && self.pending.load(Ordering::Acquire)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Every process's [`MoveSlot`], in the plan's order, with the job each belongs to.
#[derive(Debug, Default)]
pub(crate) struct Moves {
    slots: Vec<(usize, Arc<MoveSlot>)>,
}

impl Moves {
    /// A slot for each process: its job's index and name, and the group the plan puts it in.
    pub(crate) fn for_processes<'a>(
        processes: impl Iterator<Item = (usize, &'a str, &'a str)>,
    ) -> Self {
        let slot = |job: &str, planned: &str| MoveSlot {
            job: job.to_string(),
            planned: planned.to_string(),
            ..MoveSlot::default()
        };
        Self {
            slots: processes
                .map(|(index, job, planned)| (index, Arc::new(slot(job, planned))))
                .collect(),
        }
    }

    /// Process `index`'s slot (an index of the plan's processes, which the slots follow).
    pub(crate) fn slot(&self, index: usize) -> Arc<MoveSlot> {
        Arc::clone(&self.slots[index].1)
    }

    fn of_job(&self, job: usize) -> impl Iterator<Item = &MoveSlot> {
        self.slots
            .iter()
            .filter(move |(of, _)| *of == job)
            .map(|(_, slot)| slot.as_ref())
    }
}

/// The thread that makes the changes, while the jobs run.
pub(crate) struct ChangesThread {
    jobs_done: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<Vec<CgroupSettings>, String>>>,
}

impl ChangesThread {
    /// Start making `changes` (none: no thread) at their times from `started` on every
    /// engine of `handles`; a refused change sets `stop`.
    pub(crate) fn start(
        changes: Vec<ResolvedChange>,
        handles: Vec<Handle>,
        moves: Arc<Moves>,
        started: Instant,
        stop: StopSignal,
    ) -> Result<Self, RunError> {
        let jobs_done = Arc::new(AtomicBool::new(false));
        if changes.is_empty() {
            return Ok(Self {
                jobs_done,
                thread: None,
            });
        }
        let maker = Maker {
            handles,
            moves,
            started,
            stop,
            jobs_done: Arc::clone(&jobs_done),
        };
        let thread = std::thread::Builder::new()
            .name("ioslice-changes".into())
            .spawn(move || maker.run(changes))
            .map_err(|e| RunError::Thread(e.to_string()))?;
        Ok(Self {
            jobs_done,
            thread: Some(thread),
        })
    }

    /// The jobs have ended: the changes not yet due are not made. The groups made, as the
    /// report lists a run's groups (each with the weight its policy gave it when it was
    /// made); the first change refused, as the run's error.
    pub(crate) fn finish(mut self) -> Result<Vec<CgroupSettings>, RunError> {
        self.jobs_done.store(true, Ordering::Release);
        match self.thread.take().map(JoinHandle::join) {
            None => Ok(Vec::new()),
            Some(Ok(result)) => result.map_err(RunError::Job),
            Some(Err(_)) => Err(RunError::Thread("the changes thread panicked".into())),
        }
    }
}

/// What the changes thread holds.
struct Maker {
    handles: Vec<Handle>,
    moves: Arc<Moves>,
    started: Instant,
    stop: StopSignal,
    jobs_done: Arc<AtomicBool>,
}

impl Maker {
    fn run(self, changes: Vec<ResolvedChange>) -> Result<Vec<CgroupSettings>, String> {
        let mut made = Vec::new();
        for resolved in changes {
            let due = self.started + Duration::from_nanos(resolved.change.at);
            if !self.wait_until(due) {
                break;
            }
            let change = &resolved.change;
            if let Err(why) = self.make(&resolved) {
                self.stop.set(1);
                let at_ms = change.at / 1_000_000;
                return Err(format!("{}: at {at_ms} ms: {why}", change.origin));
            }
            if change.action == GroupAction::Create {
                made.push(CgroupSettings {
                    path: change.group.clone(),
                    weight: self
                        .handles
                        .first()
                        .and_then(|h| h.group_weight(&change.group)),
                    weight_set: change.weight.is_some(),
                    limits: change.limits.unwrap_or_default(),
                });
            }
        }
        Ok(made)
    }

    /// Wait until `due`, looking at the jobs' end and the stop request at least every
    /// [`POLL`]: false if either came first.
    fn wait_until(&self, due: Instant) -> bool {
        loop {
            if self.jobs_done.load(Ordering::Acquire) || self.stop.is_set() {
                return false;
            }
            let now = Instant::now();
            if now >= due {
                return true;
            }
            std::thread::sleep((due - now).min(POLL));
        }
    }

    /// Wait, a millisecond at a time, until no running process of `job` has a move to take
    /// (or the jobs ended, or a stop was asked).
    fn wait_moved(&self, job: usize) {
        while self.moves.of_job(job).any(MoveSlot::waiting)
            && !self.jobs_done.load(Ordering::Acquire)
            && !self.stop.is_set()
        {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// One change, on every engine.
    fn make(&self, resolved: &ResolvedChange) -> Result<(), String> {
        let change = &resolved.change;
        let path = change.group.as_str();
        if let (GroupAction::Move { .. }, Some(job)) = (&change.action, resolved.job) {
            for slot in self.moves.of_job(job) {
                slot.post(path);
            }
            self.wait_moved(job);
            return Ok(());
        }
        if change.action == GroupAction::Remove {
            if let Some(busy) = self
                .moves
                .slots
                .iter()
                .find(|(_, slot)| slot.in_group(path))
            {
                return Err(format!(
                    "cgroup '{path}' is busy: job '{}' still runs in it (remove it after the job ends, or move the job out first)",
                    busy.1.job
                ));
            }
        }
        for handle in &self.handles {
            let made = match change.action {
                GroupAction::Create => handle.add_group(path, change.weight, change.limits),
                GroupAction::Remove => handle.remove_group(path),
                _ => handle.set_group(path, change.weight, change.limits),
            };
            made.map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moves() -> Moves {
        Moves::for_processes([(0, "a", "g1"), (1, "b", "g1"), (1, "b", "g1")].into_iter())
    }

    #[test]
    fn a_move_is_taken_once_and_the_latest_wins() {
        let moves = moves();
        let slot = moves.slot(1);
        assert_eq!(slot.group_at_start(), "g1");
        assert_eq!(slot.take(), None);
        slot.post("g2");
        slot.post("g3");
        assert!(slot.waiting());
        assert_eq!(slot.take().as_deref(), Some("g3"));
        assert_eq!(slot.take(), None);
        assert!(!slot.waiting());
    }

    #[test]
    fn a_process_is_in_its_group_until_it_ends_and_starts_where_it_was_moved() {
        let moves = moves();
        // a, and b's second process.
        let (a, b) = (moves.slot(0), moves.slot(2));
        for slot in moves.of_job(1) {
            slot.post("g2");
        }
        // Not yet started: it is in the group it was moved to, and starts there.
        assert!(b.in_group("g2") && !b.in_group("g1"));
        assert!(!b.waiting(), "a process not running is not waited for");
        assert_eq!(b.group_at_start(), "g2");
        assert_eq!(b.take(), None, "nothing left to take once started there");
        assert!(a.in_group("g1"));
        a.ended();
        assert!(!a.in_group("g1"));
    }
}
