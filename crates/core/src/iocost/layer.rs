//! The iocost layer: a [`Scheduler`] around an elevator that charges each request's cost
//! to its group's vtime and lets it into the elevator only while the group is within
//! budget, and a period timer that sets the device's vrate from its saturation and lends
//! idle groups' shares to busy ones (see the [module doc](super)).
//!
//! The kernel runs iocost as an rq-qos policy above the elevator (`block/blk-iocost.c`,
//! 5.4 to 6.x: `ioc_rqos_throttle` charges and holds bios, `ioc_rqos_done` measures
//! completions, `ioc_timer_fn` ends each period). What it lets through then waits for a
//! request slot (`nr_requests`, twice the device's queue depth up to 128 commands, with an
//! elevator); that wait is the "request wait" share of the period that says the device is
//! saturated. The latency a completion is judged by runs from its slot to its completion,
//! less the time its size alone should take at full vrate (5.10 on).
//!
//! Policies never read a clock, and this one neither: the period ends are worked out from
//! the `now` of each call, and while requests are held the layer asks to be called again
//! when the first could go or the period ends.

use std::collections::{BTreeMap, VecDeque};

use super::budget::{Admit, DeviceClock};
use super::groups::{io_weight, Groups, Held};
use super::model::{CostModel, PAGE_BYTES};
use super::qos::Qos;
use super::settings::{Autop, IocostSettings};
use super::vrate::{adjust, next_busy_level, PeriodStats, MAX_LAGGING_PERIODS};
use super::{MILLION, VTIME_PER_SEC, VTIME_PER_USEC};
use crate::trace::TraceBuffer;
use crate::tunable::TunableError;
use crate::{
    Completion, Direction, Dispatch, Group, GroupId, GroupTree, Inserted, Nanos, Request,
    RequestId, Scheduler, SchedulerContext, TraceEvent,
};

/// Request slots of a queue with an elevator: twice the device's depth, up to 128 commands.
fn nr_requests(queue_depth: usize) -> usize {
    2 * queue_depth.clamp(1, 128)
}

/// A request let into the elevator and not yet completed.
#[derive(Debug, Clone, Copy)]
struct Released {
    group: GroupId,
    /// When it got its request slot.
    at: Nanos,
    /// Whether it holds a slot (a request the elevator merged does not).
    slot: bool,
    /// Time its size alone takes at full vrate.
    size_ns: u64,
    direction: Direction,
}

/// What one period has counted so far.
#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    /// Time requests waited for a request slot, summed.
    rq_wait_ns: u64,
    /// Completions within and past their target, reads then writes.
    met: [u64; 2],
    missed: [u64; 2],
}

impl Counters {
    fn missed_ppm(&self, dir: usize) -> u64 {
        let all = self.met[dir] + self.missed[dir];
        (self.missed[dir] * MILLION).checked_div(all).unwrap_or(0)
    }
}

/// An elevator with iocost above it.
pub struct IocostLayer {
    inner: Box<dyn Scheduler>,
    autop: Autop,
    model: CostModel,
    qos: Qos,
    period_ns: Nanos,
    clock: DeviceClock,
    busy_level: i32,
    /// Whether the period timer runs (some group is active).
    running: bool,
    period_start: Nanos,
    groups: Groups,
    /// Requests held for budget in every group.
    held: usize,
    /// Admitted requests waiting for a request slot, with when they were admitted.
    slot_wait: VecDeque<(Request, Nanos)>,
    slots: usize,
    slots_used: usize,
    released: BTreeMap<RequestId, Released>,
    counters: Counters,
    /// vrate at the end of each period so far.
    history: Vec<u64>,
    trace: TraceBuffer,
}

impl std::fmt::Debug for IocostLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IocostLayer")
            .field("inner", &self.inner.name())
            .field("autop", &self.autop)
            .field("vrate_ppm", &self.clock.vrate_ppm)
            .field("held", &self.held)
            .field("released", &self.released.len())
            .finish_non_exhaustive()
    }
}

impl IocostLayer {
    /// The new group is idle until its first request activates it, as `ioc_pd_init` leaves
    /// a new iocg (block/blk-iocost.c, 5.x–6.x).
    fn group_added(&mut self, _group: GroupId, groups: &GroupTree, _now: Nanos) {
        self.groups.grow(groups);
    }

    /// A removed group stops counting among the active ones, and the shares are worked out
    /// again without it, as `ioc_pd_free` deactivates an iocg that is still active.
    fn group_removed(&mut self, group: GroupId, _groups: &GroupTree, _now: Nanos) {
        if let Some(g) = self.groups.list.get_mut(group.index()) {
            if g.active {
                g.active = false;
                self.groups.recompute();
            }
        }
    }

    /// iocost with `settings` above `inner`, for the device and groups of `context`.
    pub fn new(
        inner: Box<dyn Scheduler>,
        context: &SchedulerContext,
        settings: IocostSettings,
    ) -> Self {
        let autop = Autop::of(context.rotational, context.queue_depth);
        let qos = settings.qos(autop);
        Self {
            inner,
            autop,
            model: CostModel::linear(&settings.model(autop)),
            qos,
            period_ns: qos.period_us() * 1_000,
            clock: DeviceClock {
                period_at_ns: 0,
                period_at_vtime: 0,
                vrate_ppm: MILLION.clamp(qos.min_ppm, qos.max_ppm),
            },
            busy_level: 0,
            running: false,
            period_start: 0,
            groups: Groups::new(&context.groups),
            held: 0,
            slot_wait: VecDeque::new(),
            slots: nr_requests(context.queue_depth),
            slots_used: 0,
            released: BTreeMap::new(),
            counters: Counters::default(),
            history: Vec::new(),
            trace: TraceBuffer::default(),
        }
    }

    /// The parameter set the device kind chose.
    pub fn autop(&self) -> Autop {
        self.autop
    }

    /// The QoS parameters in force.
    pub fn qos(&self) -> Qos {
        self.qos
    }

    /// The cost model in force.
    pub fn model(&self) -> CostModel {
        self.model
    }

    /// The current vrate, ppm of the model's speed.
    pub fn vrate_ppm(&self) -> u64 {
        self.clock.vrate_ppm
    }

    /// vrate (ppm) at the end of each period so far.
    pub fn vrate_history(&self) -> &[u64] {
        &self.history
    }

    /// The busy level the period timer reached.
    pub fn busy_level(&self) -> i32 {
        self.busy_level
    }

    /// A group's `(hweight_active, hweight_inuse)`, `WEIGHT_ONE` being the whole device.
    pub fn hweights(&self, group: GroupId) -> Option<(u64, u64)> {
        self.groups
            .list
            .get(group.index())
            .map(|g| (g.hw_active, g.hw_inuse))
    }

    /// Requests held for budget or for a request slot.
    pub fn held(&self) -> usize {
        self.held + self.slot_wait.len()
    }

    /// Requests let into the elevator and not yet completed.
    pub fn in_flight(&self) -> usize {
        self.released.len()
    }

    fn group_index(&self, group: GroupId) -> usize {
        let index = group.index();
        if index < self.groups.list.len() {
            index
        } else {
            0
        }
    }

    /// Budget a group may keep unused: half a period's vtime.
    fn margin(&self) -> u64 {
        self.period_ns / 1_000 * VTIME_PER_USEC * self.clock.vrate_ppm / MILLION / 2
    }

    /// Ends every period that ended by `now`.
    fn advance(&mut self, now: Nanos) {
        while self.running && now >= self.period_start + self.period_ns {
            self.end_period(self.period_start + self.period_ns);
        }
    }

    /// The period timer at `at`: idle groups leave, unused budget beyond the margin is
    /// dropped, donors lend what they did not use, and vrate moves by the device's
    /// saturation.
    fn end_period(&mut self, at: Nanos) {
        let vnow = self.clock.vnow(at);
        let period_vtime = vnow.saturating_sub(self.clock.period_at_vtime).max(1);
        let margin = self.margin();
        let mut shortages = 0;
        for g in self.groups.list.iter_mut().filter(|g| g.active) {
            if !g.held.is_empty() {
                shortages += 1;
                g.usage = None;
            } else if !g.busy && g.in_flight == 0 {
                g.active = false;
                g.usage = None;
            } else {
                let used = u128::from(g.usage_abs) * u128::from(super::hweight::WEIGHT_ONE)
                    / u128::from(period_vtime);
                g.usage = Some(u64::try_from(used).unwrap_or(u64::MAX));
            }
            g.account.cap_budget(vnow, margin);
            g.usage_abs = 0;
            g.busy = false;
        }
        self.groups.recompute();
        let stats = PeriodStats {
            rq_wait_pct: self.counters.rq_wait_ns * 100 / self.period_ns.max(1),
            read_missed_ppm: self.counters.missed_ppm(0),
            write_missed_ppm: self.counters.missed_ppm(1),
            shortages,
            lagging: self.lagging(at),
        };
        let previous_level = self.busy_level;
        self.busy_level = next_busy_level(self.busy_level, &self.qos, &stats);
        let from_ppm = self.clock.vrate_ppm;
        let vrate = adjust(from_ppm, self.busy_level, stats.lagging, &self.qos);
        if vrate != from_ppm || self.busy_level != previous_level || stats.lagging > 0 {
            let busy_level = self.busy_level;
            self.trace.emit(|| TraceEvent::VrateAdjust {
                from_ppm,
                vrate_ppm: vrate,
                busy_level,
                read_missed_ppm: stats.read_missed_ppm,
                write_missed_ppm: stats.write_missed_ppm,
                rq_wait_pct: stats.rq_wait_pct,
                shortages: stats.shortages,
                lagging: stats.lagging,
            });
        }
        self.clock.restart(at, vrate);
        self.history.push(vrate);
        self.counters = Counters::default();
        self.period_start = at;
        self.running = self.groups.any_active();
    }

    /// Groups with a request in flight since before the period ending at `at` began, issued
    /// within the last [`MAX_LAGGING_PERIODS`] periods (the kernel's `nr_lagging`, which
    /// compares a group's completed vtime with `vnow` one period back).
    fn lagging(&self, at: Nanos) -> u32 {
        let begun = at.saturating_sub(self.period_ns);
        let recent = at.saturating_sub(self.period_ns * MAX_LAGGING_PERIODS);
        let mut groups: Vec<GroupId> = self
            .released
            .values()
            .filter(|r| r.at < begun && r.at >= recent)
            .map(|r| r.group)
            .collect();
        groups.sort_unstable();
        groups.dedup();
        u32::try_from(groups.len()).unwrap_or(u32::MAX)
    }

    /// A group with a request: it counts among its siblings from now, with no more than
    /// the margin of unused budget; the timer starts if it was stopped.
    fn activate(&mut self, gi: usize, now: Nanos) {
        if !self.running {
            self.running = true;
            self.period_start = now;
            self.clock.restart(now, self.clock.vrate_ppm);
        }
        let margin = self.margin();
        let vnow = self.clock.vnow(now);
        let g = &mut self.groups.list[gi];
        g.busy = true;
        if !g.active {
            g.active = true;
            g.usage = None;
            g.account.cap_budget(vnow, margin);
            self.groups.recompute();
        }
    }

    /// Charge `abs_cost` to group `gi` if it is within budget; a donor that cannot afford
    /// it takes its share back first. Otherwise note when it could.
    fn try_issue(&mut self, gi: usize, abs_cost: u64, now: Nanos) -> bool {
        let vnow = self.clock.vnow(now);
        let hw = self.groups.list[gi].hw_inuse;
        match self.groups.list[gi].account.admit(abs_cost, hw, vnow) {
            Admit::Issue => {}
            Admit::Wait(shortfall) => {
                let g = &self.groups.list[gi];
                if g.hw_inuse >= g.hw_active || g.usage.is_none() {
                    self.groups.list[gi].wake = now + self.clock.wait_ns(shortfall);
                    return false;
                }
                self.groups.list[gi].usage = None;
                self.groups.recompute();
                return self.try_issue(gi, abs_cost, now);
            }
        }
        self.groups.list[gi].usage_abs += abs_cost;
        true
    }

    /// Lets held requests go while their groups have budget, then into free request slots.
    fn release(&mut self, now: Nanos) {
        for gi in 0..self.groups.list.len() {
            while let Some(abs_cost) = self.groups.list[gi].held.front().map(|h| h.abs_cost) {
                if !self.try_issue(gi, abs_cost, now) {
                    break;
                }
                if let Some(held) = self.groups.list[gi].held.pop_front() {
                    self.held -= 1;
                    self.take_slot(held.request, now);
                }
            }
        }
        while self.slots_used < self.slots {
            let Some((request, admitted)) = self.slot_wait.pop_front() else {
                break;
            };
            self.counters.rq_wait_ns += now.saturating_sub(admitted);
            self.let_in(request, now);
        }
    }

    /// An admitted request takes a request slot, or waits for one.
    fn take_slot(&mut self, request: Request, now: Nanos) {
        if self.slots_used < self.slots && self.slot_wait.is_empty() {
            self.let_in(request, now);
        } else {
            self.slot_wait.push_back((request, now));
        }
    }

    /// Hands `request` to the elevator as a request of the root group (iocost, not the
    /// elevator, weighs the groups), remembering its own.
    fn let_in(&mut self, mut request: Request, now: Nanos) {
        self.trace.emit(|| TraceEvent::Release {
            request: request.id,
            process: request.process,
            group: request.group,
            direction: request.direction,
            waited: now.saturating_sub(request.submit_time),
        });
        let pages = (request.bytes() / PAGE_BYTES).max(1);
        let page = match request.direction {
            Direction::Read => self.model.read.page,
            Direction::Write | Direction::Discard => self.model.write.page,
        };
        let size_ns = u128::from(pages * page) * 1_000_000_000 / u128::from(VTIME_PER_SEC);
        let mut released = Released {
            group: request.group,
            at: now,
            slot: true,
            size_ns: u64::try_from(size_ns).unwrap_or(u64::MAX),
            direction: request.direction,
        };
        let gi = self.group_index(request.group);
        let id = request.id;
        let merged: Vec<RequestId> = request.merged.clone();
        request.group = GroupId::ROOT;
        if let Inserted::Merged(_) = self.inner.insert(request, now) {
            released.slot = false;
        }
        self.trace.pull(self.inner.as_mut());
        if released.slot {
            self.slots_used += 1;
        }
        self.groups.list[gi].in_flight += 1 + merged.len();
        self.released.insert(id, released);
        for other in merged {
            self.released.insert(
                other,
                Released {
                    slot: false,
                    ..released
                },
            );
        }
    }

    /// Holds `request` in its group until the group's vtime allows it.
    fn hold(&mut self, gi: usize, request: Request, abs_cost: u64, now: Nanos) {
        let wait = self.groups.list[gi].wake.saturating_sub(now);
        self.trace.emit(|| TraceEvent::Hold {
            request: request.id,
            process: request.process,
            group: request.group,
            direction: request.direction,
            bytes: request.bytes(),
            wait,
        });
        self.groups.list[gi]
            .held
            .push_back(Held { request, abs_cost });
        self.held += 1;
    }

    /// When to ask again while requests are held: when the first group could issue, or
    /// at the period's end, whichever is first.
    fn next_wake(&self, now: Nanos) -> Nanos {
        let period_end = self.period_start + self.period_ns;
        self.groups
            .list
            .iter()
            .filter(|g| !g.held.is_empty())
            .map(|g| g.wake)
            .fold(period_end, Nanos::min)
            .max(now + 1)
    }

    /// Counts a completion against its direction's latency target.
    fn judge(&mut self, released: &Released, now: Nanos) {
        let (dir, lat_us) = match released.direction {
            Direction::Read => (0, self.qos.rlat_us),
            Direction::Write => (1, self.qos.wlat_us),
            Direction::Discard => return,
        };
        let on_queue = now.saturating_sub(released.at);
        if on_queue.saturating_sub(released.size_ns) <= lat_us * 1_000 {
            self.counters.met[dir] += 1;
        } else {
            self.counters.missed[dir] += 1;
        }
    }
}

impl Scheduler for IocostLayer {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        self.advance(now);
        let gi = self.group_index(request.group);
        self.activate(gi, now);
        let g = &mut self.groups.list[gi];
        let abs_cost =
            self.model
                .cost(request.direction, request.sector, request.bytes(), g.cursor);
        g.cursor = Some(request.end_sector());
        if g.held.is_empty() && self.try_issue(gi, abs_cost, now) {
            self.take_slot(request, now);
        } else {
            self.hold(gi, request, abs_cost, now);
        }
        Inserted::Queued
    }

    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        self.advance(now);
        self.release(now);
        let answer = self.inner.dispatch(now);
        self.trace.pull(self.inner.as_mut());
        match answer {
            Dispatch::Request(mut request) => {
                if let Some(released) = self.released.get(&request.id) {
                    request.group = released.group;
                }
                Dispatch::Request(request)
            }
            other if self.held == 0 && self.slot_wait.is_empty() => other,
            Dispatch::WaitUntil(at) => Dispatch::WaitUntil(at.min(self.next_wake(now))),
            Dispatch::Empty => Dispatch::WaitUntil(self.next_wake(now)),
        }
    }

    fn complete(&mut self, completion: &Completion, now: Nanos) {
        self.advance(now);
        let mut first = None;
        for id in completion.request.ids() {
            let Some(released) = self.released.remove(&id) else {
                continue;
            };
            let gi = self.group_index(released.group);
            let g = &mut self.groups.list[gi];
            g.in_flight = g.in_flight.saturating_sub(1);
            if released.slot {
                self.slots_used = self.slots_used.saturating_sub(1);
            }
            first.get_or_insert(released);
        }
        if let Some(released) = first {
            self.judge(&released, now);
        }
        let mut inner = completion.clone();
        inner.request.group = GroupId::ROOT;
        self.inner.complete(&inner, now);
        self.trace.pull(self.inner.as_mut());
        self.release(now);
    }

    fn queued(&self) -> usize {
        self.held + self.slot_wait.len() + self.inner.queued()
    }

    crate::scheduler::pass_to_inner!();

    /// A new `io.weight` (100 when unset) changes the shares at once, as writing the file
    /// does in the kernel; limits are not iocost's, and the elevator below is told.
    fn update_group(
        &mut self,
        group: GroupId,
        settings: &Group,
        now: Nanos,
    ) -> Result<(), TunableError> {
        self.inner.update_group(group, settings, now)?;
        self.trace.pull(self.inner.as_mut());
        if let Some(g) = self.groups.list.get_mut(group.index()) {
            g.weight = io_weight(settings.weight, settings.weight_set);
            self.groups.recompute();
        }
        Ok(())
    }

    crate::scheduler::groups_pass_to_inner!();

    /// The group's `io.weight`; `None` for the root, which has no siblings.
    fn group_weight(&self, group: GroupId) -> Option<u32> {
        if group == GroupId::ROOT {
            return None;
        }
        self.groups
            .list
            .get(group.index())
            .map(|g| u32::try_from(g.weight).unwrap_or(u32::MAX))
    }

    fn set_tracing(&mut self, on: bool) {
        self.trace.set_enabled(on);
        self.inner.set_tracing(on);
    }

    fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        self.trace.drain_into(out);
    }
}
