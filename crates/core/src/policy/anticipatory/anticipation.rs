//! Read anticipation: after a sync request completes, keep the disk idle for up to
//! `antic_expire` when the process that issued it is likely to send a nearby request soon,
//! instead of seeking away to another process's request ("deceptive idleness").
//!
//! The state machine: `Off` (nothing decided) → `WaitRequest` (we would wait, but the
//! anticipated process's request is still at the device) → `WaitNext` (it completed; the
//! timer runs for `antic_expire` from that completion) → `Finished` (a good request came,
//! a rule broke the wait, or the timer ran out: dispatch the next request). Dispatching any
//! request turns it `Off` again. While waiting only the anticipated request is at the device.
//!
//! Anticipation is broken when the candidate request comes from the anticipated process
//! (a sync write from it too: probably an fsync, so no read follows); when that process
//! has other requests queued or at the device; when the wait has lasted `antic_expire`;
//! when the candidate is a sync request *close* to where the head is (within 8192 sectors
//! at first, the window doubling per millisecond waited up to 20 ms, or closer than the
//! process's mean seek distance); when the process has exited and exits have mostly gone
//! unrescued by cooperating processes; and when its mean think time exceeds
//! `antic_expire` (for a process with no history: the new-process think time, or new
//! processes' likelihood of exiting).
//!
//! Those are the rules from 2.6.18 on. `version` below 20618 selects the 2.6.10 ones
//! ([`super::version::Anticipation::Original`]): the close window starts at 64 sectors and
//! doubles per millisecond from the second; a close request restarts the anticipated
//! process's think-time clock instead of standing in for its request; an exit always ends
//! the wait; and, checked last, any candidate, sync or not, nearer the head than the
//! process's mean seek ends it.
//!
//! One rule is ioslice's own: anticipation is broken, or not started, for a process a layer
//! around the policy says is *outranked* (see [`crate::Scheduler::set_outranked`]). The
//! limit layer says so of a process in a limited group when it has released another
//! process's request of that group into the policy, and would hold the anticipated
//! process's next request back behind it. Waiting for that process would serve the group
//! in the order of AS's bet, not in the order of its priorities.
//!
//! Source: Linux's `block/as-iosched.c` (`as_antic_waitreq`, `as_antic_waitnext`,
//! `as_can_break_anticipation`, `as_close_req`; 2.6.18 and later, and 2.6.11's
//! `drivers/block/as-iosched.c` for the original rules), `Documentation/block/as-iosched.txt` §4,
//! Iyer & Druschel, "Anticipatory scheduling", SOSP 2001; our own code.

use std::collections::BTreeSet;

use super::process_stats::{Statistics, Unlikely};
use super::version::Anticipation as Rules;
use crate::time::MILLISECOND;
use crate::{Nanos, ProcessId, Request};

/// The close window at the start of a wait, in sectors (4 MiB).
const CLOSE_WINDOW: u64 = 8192;
/// The close window of the original (2.6.10) rules, in sectors (32 KiB).
const ORIGINAL_CLOSE_WINDOW: u64 = 64;
/// The close window stops doubling after this many milliseconds of waiting.
const CLOSE_WINDOW_MAX_DOUBLINGS: u64 = 20;

/// Where the anticipation state machine is (the kernel's `antic_status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnticipationState {
    /// Not anticipating: the next dispatch decides.
    Off,
    /// Anticipating, but the anticipated process's last request is still at the device.
    WaitRequest,
    /// Anticipating: its request completed and the `antic_expire` timer runs.
    WaitNext,
    /// Anticipation ended (broken or timed out): the next dispatch serves the next request.
    Finished,
}

/// Why anticipation was broken (or not started).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BreakReason {
    /// No sync request was dispatched last, so there is no process to wait for.
    NoProcess,
    /// The candidate comes from the anticipated process (its read, or a sync write).
    SameProcess,
    /// A layer around the policy ranks a queued request before the anticipated process's
    /// next one.
    Outranked,
    /// The wait has lasted `antic_expire` already.
    TimedOut,
    /// The anticipated process has other requests queued.
    Queued,
    /// The anticipated process has other requests at the device.
    Dispatched,
    /// The candidate is a sync request close to the head.
    Close,
    /// The original rules: the candidate is nearer the head than the anticipated process's
    /// mean seek, so serving it beats what waiting is expected to bring.
    BetterThanExpected,
    /// The anticipated process exited, and exits are rarely rescued by cooperation.
    Exited,
    /// New processes are likely to exit with no cooperating request following.
    ExitLikely,
    /// The process (or a new process) thinks longer than `antic_expire` between requests.
    ThinkTime,
}

/// A request being weighed against waiting: who sent it, where it lies, whether it is sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Candidate {
    /// The issuing process.
    pub process: ProcessId,
    /// First sector.
    pub sector: u64,
    /// The sector just past its end.
    pub end_sector: u64,
    /// Whether it is in the sync class.
    pub sync: bool,
}

impl Candidate {
    /// The candidate a request makes, given its class.
    pub fn new(request: &Request, sync: bool) -> Self {
        Self {
            process: request.process,
            sector: request.sector,
            end_sector: request.end_sector(),
            sync,
        }
    }
}

/// The anticipation state (the kernel's `antic_status`, `antic_start`, `io_context`,
/// `ioc_finished` and `antic_expire`).
#[derive(Debug, Clone)]
pub(super) struct Anticipation {
    /// Where the state machine is.
    pub state: AnticipationState,
    /// The process whose sync request was dispatched last: the one to wait for.
    pub process: Option<ProcessId>,
    /// When its request completed (the timer's start).
    start: Nanos,
    /// Whether its request has completed since it was dispatched.
    completed: bool,
    /// `antic_expire`: the longest wait; 0 turns anticipation off.
    pub expire: Nanos,
    /// Processes not to wait for: a layer around the policy ranks a queued request before
    /// their next one.
    pub outranked: BTreeSet<ProcessId>,
    /// Which release's rules break a wait.
    rules: Rules,
}

impl Anticipation {
    /// Anticipation that waits at most `expire`.
    pub fn new(expire: Nanos) -> Self {
        Self {
            state: AnticipationState::Off,
            process: None,
            start: 0,
            completed: false,
            expire,
            outranked: BTreeSet::new(),
            rules: Rules::Cooperative,
        }
    }

    /// The same, breaking waits by `rules`.
    pub fn with_rules(mut self, rules: Rules) -> Self {
        self.rules = rules;
        self
    }

    /// Whether the state machine is waiting (for the request, or for the next one).
    pub fn is_waiting(&self) -> bool {
        matches!(
            self.state,
            AnticipationState::WaitRequest | AnticipationState::WaitNext
        )
    }

    /// When a wait for the next request times out.
    pub fn deadline(&self) -> Nanos {
        self.start.saturating_add(self.expire)
    }

    /// Whether a running `WaitNext` timer has run out by `now`.
    pub fn timer_due(&self, now: Nanos) -> bool {
        self.state == AnticipationState::WaitNext && now >= self.deadline()
    }

    /// End the wait: a good request came or the timer ran out.
    pub fn finish(&mut self) {
        if self.is_waiting() {
            self.state = AnticipationState::Finished;
        }
    }

    /// Start waiting: for the next request if the anticipated one has completed, else for
    /// that completion first.
    pub fn begin_wait(&mut self) {
        if self.state == AnticipationState::Off {
            self.state = if self.completed {
                AnticipationState::WaitNext
            } else {
                AnticipationState::WaitRequest
            };
        }
    }

    /// A request of the anticipated process completed at `now`: the timer starts.
    pub fn process_completed(&mut self, now: Nanos) {
        self.start = now;
        self.completed = true;
        if self.state == AnticipationState::WaitRequest {
            self.state = AnticipationState::WaitNext;
        }
    }

    /// A request went to the device: anticipation starts over, on its process if it is
    /// sync (`None` for async).
    pub fn dispatched(&mut self, process: Option<ProcessId>) {
        self.state = AnticipationState::Off;
        self.process = process;
        self.completed = false;
    }

    /// Whether the wait has already lasted `antic_expire` (the timer may not have run yet).
    fn waited_too_long(&self, now: Nanos) -> bool {
        self.completed && now.saturating_sub(self.start) >= self.expire
    }

    /// Requests of the anticipated process allowed at the device: the one we wait for,
    /// until it completes.
    fn awaited_in_flight(&self) -> usize {
        usize::from(!self.completed)
    }

    /// How far from the head a request may start and still count as close, in sectors
    /// forward (half that backward); `None` when the wait has gone on so long that any
    /// request is better.
    pub(super) fn close_window(&self, now: Nanos) -> Option<u64> {
        let waited_ms = if self.state == AnticipationState::Off || !self.completed {
            0
        } else {
            now.saturating_sub(self.start) / MILLISECOND
        };
        let expire_ms = self.expire / MILLISECOND;
        let in_reach = |ms: u64| ms <= CLOSE_WINDOW_MAX_DOUBLINGS && ms <= expire_ms;
        match (self.rules, waited_ms) {
            (Rules::Cooperative, 0) => Some(CLOSE_WINDOW),
            (Rules::Cooperative, ms) if in_reach(ms) => Some(CLOSE_WINDOW << ms),
            (Rules::Original, 0 | 1) => Some(ORIGINAL_CLOSE_WINDOW),
            (Rules::Original, ms) if in_reach(ms) => Some(ORIGINAL_CLOSE_WINDOW << (ms - 1)),
            _ => None,
        }
    }

    /// Whether a request at `sector` is close to the head at `head`, for a process whose
    /// seeks average `expected_seek` sectors.
    fn is_close(&self, sector: u64, head: u64, expected_seek: u64, now: Nanos) -> bool {
        let Some(window) = self.close_window(now) else {
            return true;
        };
        let within =
            head <= sector.saturating_add(window / 2) && sector <= head.saturating_add(window);
        within || (self.rules == Rules::Cooperative && expected_seek > sector.abs_diff(head))
    }

    /// Whether to stop waiting for the anticipated process, given a candidate request (or
    /// none), and why. The head is where the current batch's last request ended. A close
    /// candidate from a cooperating process stands in for the anticipated process's next
    /// request in its statistics; an exit or a missing history updates the exit estimates.
    pub fn break_reason(
        &self,
        statistics: &mut Statistics,
        candidate: Option<Candidate>,
        head: u64,
        now: Nanos,
    ) -> Option<BreakReason> {
        let Some(process) = self.process else {
            return Some(BreakReason::NoProcess);
        };
        if candidate.is_some_and(|c| c.process == process) {
            return Some(BreakReason::SameProcess);
        }
        if self.outranked.contains(&process) {
            return Some(BreakReason::Outranked);
        }
        if self.waited_too_long(now) {
            return Some(BreakReason::TimedOut);
        }
        match self.rules {
            Rules::Cooperative => {
                self.cooperative_reason(statistics, process, candidate, head, now)
            }
            Rules::Original => self.original_reason(statistics, process, candidate, head, now),
        }
    }

    /// The rules from 2.6.18 on, once the common ones let the wait go on.
    fn cooperative_reason(
        &self,
        statistics: &mut Statistics,
        process: ProcessId,
        candidate: Option<Candidate>,
        head: u64,
        now: Nanos,
    ) -> Option<BreakReason> {
        let history = statistics.get(process)?;
        if history.queued > 0 {
            return Some(BreakReason::Queued);
        }
        if history.in_flight > self.awaited_in_flight() {
            return Some(BreakReason::Dispatched);
        }
        if let Some(close) = candidate
            .filter(|c| c.sync)
            .filter(|c| self.is_close(c.sector, head, statistics.expected_seek(process), now))
        {
            statistics.cooperation_after_exit(process);
            statistics.record_arrival(process, close.sector, close.end_sector, now);
            return Some(BreakReason::Close);
        }
        if statistics.exited_without_cooperation(process) {
            return Some(BreakReason::Exited);
        }
        match statistics.unlikely_to_return(process, self.expire, Rules::Cooperative)? {
            Unlikely::ThinkTime => Some(BreakReason::ThinkTime),
            Unlikely::Exit => Some(BreakReason::ExitLikely),
        }
    }

    /// The 2.6.10 rules, once the common ones let the wait go on: an exit always breaks, a
    /// close request restarts the process's think-time clock, and after the think-time
    /// checks any candidate nearer the head than the process's mean seek breaks the wait.
    fn original_reason(
        &self,
        statistics: &mut Statistics,
        process: ProcessId,
        candidate: Option<Candidate>,
        head: u64,
        now: Nanos,
    ) -> Option<BreakReason> {
        let history = statistics.get(process)?;
        if history.exited {
            statistics.count_exit(process);
            return Some(BreakReason::Exited);
        }
        if history.queued > 0 {
            return Some(BreakReason::Queued);
        }
        if history.in_flight > self.awaited_in_flight() {
            return Some(BreakReason::Dispatched);
        }
        if candidate.is_some_and(|c| c.sync && self.is_close(c.sector, head, 0, now)) {
            statistics.restart_think_clock(process, now);
            return Some(BreakReason::Close);
        }
        if let Some(unlikely) = statistics.unlikely_to_return(process, self.expire, Rules::Original)
        {
            return Some(match unlikely {
                Unlikely::ThinkTime => BreakReason::ThinkTime,
                Unlikely::Exit => BreakReason::ExitLikely,
            });
        }
        let expected = statistics.expected_seek(process);
        candidate
            .filter(|c| expected > c.sector.abs_diff(head))
            .map(|_| BreakReason::BetterThanExpected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    const P: ProcessId = ProcessId(1);
    const Q: ProcessId = ProcessId(2);

    fn waiting_since(start: Nanos) -> Anticipation {
        let mut anticipation = Anticipation::new(ms(6));
        anticipation.dispatched(Some(P));
        anticipation.process_completed(start);
        anticipation.begin_wait();
        anticipation
    }

    #[test]
    fn states_follow_the_request_and_the_timer() {
        let mut anticipation = Anticipation::new(ms(6));
        anticipation.dispatched(Some(P));
        anticipation.begin_wait();
        assert_eq!(anticipation.state, AnticipationState::WaitRequest);
        anticipation.process_completed(ms(10));
        assert_eq!(anticipation.state, AnticipationState::WaitNext);
        assert_eq!(anticipation.deadline(), ms(16));
        assert!(!anticipation.timer_due(ms(16) - 1));
        assert!(anticipation.timer_due(ms(16)));
        anticipation.finish();
        assert_eq!(anticipation.state, AnticipationState::Finished);
        anticipation.dispatched(None);
        assert_eq!(anticipation.state, AnticipationState::Off);
    }

    #[test]
    fn the_close_window_doubles_per_millisecond_waited() {
        let anticipation = waiting_since(ms(100));
        assert_eq!(anticipation.close_window(ms(100)), Some(8192));
        assert_eq!(anticipation.close_window(ms(101) - 1), Some(8192));
        assert_eq!(anticipation.close_window(ms(101)), Some(16_384));
        assert_eq!(anticipation.close_window(ms(106)), Some(8192 << 6));
        // Past antic_expire, anything is close.
        assert_eq!(anticipation.close_window(ms(107)), None);
        // Up to 20 ms only, however long antic_expire is.
        let mut long = Anticipation::new(ms(50));
        long.dispatched(Some(P));
        long.process_completed(0);
        long.begin_wait();
        assert_eq!(long.close_window(ms(20)), Some(8192 << 20));
        assert_eq!(long.close_window(ms(21)), None);
        // Before the awaited request completes, the window is the initial one.
        let mut before = Anticipation::new(ms(6));
        before.dispatched(Some(P));
        assert_eq!(before.close_window(ms(3)), Some(8192));
    }

    #[test]
    fn close_means_within_the_window_forward_half_backward_or_below_the_mean_seek() {
        let anticipation = waiting_since(0);
        let head = 100_000;
        assert!(anticipation.is_close(head + 8192, head, 0, 0));
        assert!(!anticipation.is_close(head + 8193, head, 0, 0));
        assert!(anticipation.is_close(head - 4096, head, 0, 0));
        assert!(!anticipation.is_close(head - 4097, head, 0, 0));
        assert!(anticipation.is_close(head + 50_000, head, 50_001, 0));
        assert!(!anticipation.is_close(head + 50_000, head, 50_000, 0));
    }

    #[test]
    fn no_history_means_no_opinion() {
        let anticipation = waiting_since(0);
        let mut statistics = Statistics::default();
        let far = Candidate {
            process: Q,
            sector: 1 << 30,
            end_sector: (1 << 30) + 8,
            sync: true,
        };
        assert_eq!(
            anticipation.break_reason(&mut statistics, Some(far), 0, 0),
            None
        );
        assert_eq!(
            Anticipation::new(ms(6)).break_reason(&mut statistics, Some(far), 0, 0),
            Some(BreakReason::NoProcess)
        );
    }
}
