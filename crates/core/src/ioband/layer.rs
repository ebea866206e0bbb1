//! The dm-ioband layer: a [`Scheduler`] around another that holds each group's requests in
//! arrival order and lets them into the policy as the groups' tokens allow (see the
//! [module doc](super)).

use std::collections::{BTreeMap, VecDeque};

use super::{IobandSettings, BATCH_TOKENS, BUCKET_FACTOR, DEFAULT_TOKEN_POOL, DEFAULT_WEIGHT};
use crate::trace::TraceBuffer;
use crate::tunable::TunableError;
use crate::{
    Completion, Dispatch, Group, GroupId, GroupTree, Inserted, IoPriority, Nanos, ProcessId,
    Request, RequestId, Scheduler, TraceEvent,
};

/// What a band of `weight` gets each epoch out of `bucket` tokens, among bands of `weights`.
fn share(bucket: u64, weight: u32, weights: &[u32]) -> i64 {
    let total: u64 = weights.iter().map(|&w| u64::from(w)).sum::<u64>().max(1);
    i64::try_from(bucket * u64::from(weight) / total + 1).unwrap_or(i64::MAX)
}

/// A group's weight as dm-ioband takes it: its own when set, else the default.
fn band_weight(group: &Group) -> u32 {
    if group.weight_set {
        group.weight
    } else {
        DEFAULT_WEIGHT
    }
}

/// One ioband group.
#[derive(Debug, Clone)]
struct Band {
    /// Its weight among all the groups.
    weight: u32,
    /// Tokens it gets each epoch.
    initial: i64,
    /// Tokens left; below zero is debt.
    tokens: i64,
    /// The epoch it last took tokens in.
    epoch: u64,
    /// Tokens spent since it last took tokens.
    consumed: i64,
    /// Held requests, in arrival order.
    held: VecDeque<Request>,
}

/// Who a request came from, given back to it when the policy dispatches it.
#[derive(Debug, Clone, Copy)]
struct Origin {
    group: GroupId,
    process: ProcessId,
    priority: IoPriority,
    /// It was held, and the policy saw it come from [`WORKER`].
    held: bool,
}

/// The process the policy sees held requests come from: dm-ioband's worker thread
/// (`kioband`), which submits every bio it held, in its own context.
pub const WORKER: ProcessId = ProcessId(u32::MAX - 1);

/// A policy with dm-ioband above it.
pub struct IobandLayer {
    inner: Box<dyn Scheduler>,
    settings: IobandSettings,
    bands: Vec<Band>,
    /// The device's epoch.
    epoch: u64,
    /// How many epochs' tokens a group may take at once.
    carryover: u64,
    /// Requests held in every band.
    held: usize,
    /// Released to the policy and not yet completed, with whom each came from.
    in_progress: BTreeMap<RequestId, Origin>,
    /// The band chosen last, and the tokens it may spend down to before another is chosen.
    current: Option<(usize, i64)>,
    /// The active band with the most tokens left: no new epoch while it still has much of
    /// its share and the device is busy.
    dominant: Option<usize>,
    /// Tokens in the bucket that every epoch shares out.
    bucket: i64,
    trace: TraceBuffer,
}

impl std::fmt::Debug for IobandLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IobandLayer")
            .field("inner", &self.inner.name())
            .field("settings", &self.settings)
            .field("epoch", &self.epoch)
            .field("held", &self.held)
            .field("in_progress", &self.in_progress.len())
            .finish_non_exhaustive()
    }
}

impl IobandLayer {
    /// A new band with its share of every epoch's tokens, and that share to start with, as
    /// dm-ioband's `ioband_group_init` gives a new group `token_initial`; every other band's
    /// share is worked out again with it.
    fn group_added(&mut self, group: GroupId, groups: &GroupTree, _now: Nanos) {
        while self.bands.len() <= group.index() {
            let id = GroupId(self.bands.len() as u32);
            self.bands.push(Band {
                weight: band_weight(groups.get(id)),
                initial: 0,
                tokens: 0,
                epoch: self.epoch,
                consumed: 0,
                held: VecDeque::new(),
            });
        }
        self.reshare();
        let band = &mut self.bands[group.index()];
        band.tokens = band.initial;
    }

    /// A removed band takes no share: the others' are worked out again without it, as
    /// `ioband_group_destroy` does.
    fn group_removed(&mut self, group: GroupId, _groups: &GroupTree, _now: Nanos) {
        let index = group.index();
        if let Some(band) = self.bands.get_mut(index) {
            band.weight = 0;
            band.tokens = 0;
            self.reshare();
        }
        if self.current.is_some_and(|(band, _)| band == index) {
            self.current = None;
        }
        if self.dominant == Some(index) {
            self.dominant = None;
        }
    }

    /// Every band's tokens per epoch, from the weights as they now are.
    fn reshare(&mut self) {
        let weights: Vec<u32> = self.bands.iter().map(|band| band.weight).collect();
        let bucket = u64::try_from(self.bucket).unwrap_or(0);
        for (band, &weight) in self.bands.iter_mut().zip(&weights) {
            band.initial = share(bucket, weight, &weights);
        }
    }

    /// dm-ioband with `settings` above `inner`, one ioband group per group of `groups`.
    pub fn new(inner: Box<dyn Scheduler>, groups: &GroupTree, settings: IobandSettings) -> Self {
        let shift = settings.policy.unit_shift();
        let io_limit = settings.io_limit.max(1) as u64;
        let bucket = (io_limit * BUCKET_FACTOR) << shift;
        let pool = match settings.token {
            0 => DEFAULT_TOKEN_POOL << shift,
            token => token,
        };
        let weights: Vec<u32> = groups.iter().map(|(_, group)| band_weight(group)).collect();
        let bands = weights
            .iter()
            .map(|&weight| {
                let initial = share(bucket, weight, &weights);
                Band {
                    weight,
                    initial,
                    tokens: initial,
                    epoch: 0,
                    consumed: 0,
                    held: VecDeque::new(),
                }
            })
            .collect();
        Self {
            inner,
            settings,
            bands,
            epoch: 0,
            carryover: (pool.max(bucket) / bucket).max(1),
            held: 0,
            in_progress: BTreeMap::new(),
            current: None,
            dominant: None,
            bucket: i64::try_from(bucket).unwrap_or(i64::MAX),
            trace: TraceBuffer::default(),
        }
    }

    /// Requests held, not yet let into the policy.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Requests let into the policy and not yet completed.
    pub fn in_progress(&self) -> usize {
        self.in_progress.len()
    }

    /// What `request` costs in tokens.
    fn cost(&self, request: &Request) -> i64 {
        match self.settings.policy {
            super::TokenPolicy::Weight => 1,
            super::TokenPolicy::WeightIosize => i64::from(request.sectors),
        }
    }

    /// Epochs' worth of tokens `band` may still take.
    fn allowance(&self, band: usize) -> u64 {
        (self.epoch - self.bands[band].epoch).min(self.carryover)
    }

    /// Its tokens counting those of the epochs it may still take.
    fn effective_tokens(&self, band: usize) -> i64 {
        let b = &self.bands[band];
        let allowance = i64::try_from(self.allowance(band)).unwrap_or(i64::MAX);
        b.tokens.saturating_add(b.initial.saturating_mul(allowance))
    }

    /// Its effective tokens in proportion to its share: dm-ioband's priority among the
    /// groups allowed to send requests (100 for a full share, plus one).
    fn priority(&self, band: usize) -> i64 {
        self.effective_tokens(band).saturating_mul(100) / self.bands[band].initial.max(1) + 1
    }

    /// Start a new epoch, unless the dominant band still has more than an eighth of its
    /// share while the device is busy: then its requests, not new tokens for the others,
    /// should come next. Returns whether it started one.
    fn new_epoch(&mut self) -> bool {
        if let Some(dominant) = self.dominant {
            if self.priority(dominant) * 8 > 100 && !self.uncontrolled() {
                return false;
            }
        }
        self.epoch += 1;
        self.dominant = None;
        true
    }

    /// Whether `band` has tokens, taking those of the epochs it sat out.
    fn take_tokens(&mut self, band: usize) -> bool {
        if self.bands[band].tokens > 0 {
            return true;
        }
        let allowance = self.allowance(band);
        if allowance == 0 {
            return false;
        }
        let b = &mut self.bands[band];
        b.epoch = self.epoch;
        b.consumed = 0;
        let more = b
            .initial
            .saturating_mul(i64::try_from(allowance).unwrap_or(i64::MAX));
        b.tokens = b.tokens.saturating_add(more);
        b.tokens > 0
    }

    /// Whether nothing may go to the policy while this much is in progress.
    fn full(&self) -> bool {
        self.in_progress.len() >= self.settings.io_limit.max(1)
    }

    /// Whether requests pass whatever their tokens (the device is not busy enough).
    fn uncontrolled(&self) -> bool {
        self.in_progress.len() < self.settings.io_throttle
    }

    /// The band to let a request go from next, if any may: the current one while it has
    /// batch left, else the one with the most tokens in proportion to its share (the lowest
    /// index on a tie). Every band with requests waiting takes the tokens it is owed first.
    fn choose(&mut self) -> Option<usize> {
        let free = self.uncontrolled();
        let mut best: Option<(i64, usize)> = None;
        let mut current_goes_on = false;
        for band in 0..self.bands.len() {
            if self.bands[band].held.is_empty() || !(self.take_tokens(band) || free) {
                continue;
            }
            if self
                .current
                .is_some_and(|(current, mark)| current == band && self.bands[band].tokens > mark)
            {
                current_goes_on = true;
            }
            let priority = self.priority(band);
            if best.is_none_or(|(highest, _)| priority > highest) {
                best = Some((priority, band));
            }
        }
        match self.current {
            Some((current, _)) if current_goes_on => Some(current),
            _ => best.map(|(_, band)| band),
        }
    }

    /// Let requests into the policy while the device has room and some group may issue;
    /// start a new epoch when every group with requests waiting has spent its tokens.
    fn release(&mut self, now: Nanos) {
        while self.held > 0 && !self.full() {
            let band = match self.choose() {
                Some(band) => band,
                None if self.new_epoch() => match self.choose() {
                    Some(band) => band,
                    None => return,
                },
                None => return,
            };
            let Some(request) = self.bands[band].held.pop_front() else {
                return;
            };
            self.held -= 1;
            self.charge(band, &request);
            self.let_in(request, true, now);
        }
    }

    /// Spend `request`'s tokens from `band`, which becomes the current band; keep track of
    /// the dominant band.
    fn charge(&mut self, band: usize, request: &Request) {
        let cost = self.cost(request);
        self.note_dominant(band, cost);
        if self.current.is_none_or(|(current, _)| current != band) {
            let mark =
                self.bands[band].tokens - (BATCH_TOKENS << self.settings.policy.unit_shift());
            self.current = Some((band, mark));
        }
        self.bands[band].tokens -= cost;
    }

    /// A band that has spent a good part of its share (an eighth of it, or a sixteenth of
    /// the bucket) since it took tokens is active; the active band with the most effective
    /// tokens is dominant, until it spends its last ones of this epoch.
    fn note_dominant(&mut self, band: usize, cost: i64) {
        let b = &self.bands[band];
        let active = b.consumed * 8 >= b.initial || b.consumed * 16 >= self.bucket;
        if active
            && self
                .dominant
                .is_none_or(|d| self.effective_tokens(band) > self.effective_tokens(d))
        {
            self.dominant = Some(band);
        }
        let b = &self.bands[band];
        if b.epoch == self.epoch
            && b.tokens > 0
            && b.tokens - cost <= 0
            && self.dominant == Some(band)
        {
            self.dominant = None;
        }
        self.bands[band].consumed += cost;
    }

    /// Hand `request` to the policy as a request of the root group (the elevator below
    /// dm-ioband has no groups), remembering its own. A request that was held leaves from
    /// dm-ioband's worker thread, so the policy sees it come from [`WORKER`] at the default
    /// priority: the process's class and level are lost, as they were in the kernel.
    fn let_in(&mut self, mut request: Request, held: bool, now: Nanos) {
        self.trace.emit(|| TraceEvent::Release {
            request: request.id,
            process: request.process,
            group: request.group,
            direction: request.direction,
            waited: now.saturating_sub(request.submit_time),
        });
        // A request the policy merges into another completes with it, under its id too.
        let origin = Origin {
            group: request.group,
            process: request.process,
            priority: request.priority,
            held,
        };
        self.in_progress.insert(request.id, origin);
        request.group = GroupId::ROOT;
        if held {
            request.process = WORKER;
            request.priority = IoPriority::default();
        }
        self.inner.insert(request, now);
        self.trace.pull(self.inner.as_mut());
    }

    /// Hold `request` in its band (its wait is not known ahead: it leaves when its band is
    /// chosen, so the trace says 0).
    fn hold(&mut self, band: usize, request: Request) {
        self.trace.emit(|| TraceEvent::Hold {
            request: request.id,
            process: request.process,
            group: request.group,
            direction: request.direction,
            bytes: request.bytes(),
            wait: 0,
        });
        self.bands[band].held.push_back(request);
        self.held += 1;
    }
}

impl Scheduler for IobandLayer {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        // A group the tree does not know is dm-ioband's default group, the root's.
        let index = request.group.index();
        let band = if index < self.bands.len() { index } else { 0 };
        let may_pass = self.bands[band].held.is_empty()
            && !self.full()
            && (self.take_tokens(band) || self.uncontrolled());
        if may_pass {
            self.charge(band, &request);
            self.let_in(request, false, now);
        } else {
            self.hold(band, request);
        }
        Inserted::Queued
    }

    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        self.release(now);
        let answer = self.inner.dispatch(now);
        self.trace.pull(self.inner.as_mut());
        match answer {
            Dispatch::Request(mut request) => {
                if let Some(origin) = self.in_progress.get(&request.id) {
                    request.group = origin.group;
                    request.process = origin.process;
                    request.priority = origin.priority;
                }
                Dispatch::Request(request)
            }
            other => other,
        }
    }

    fn complete(&mut self, completion: &Completion, now: Nanos) {
        // The policy hears of it as it knew it.
        let mut inner = completion.clone();
        inner.request.group = GroupId::ROOT;
        if self
            .in_progress
            .get(&completion.request.id)
            .is_some_and(|origin| origin.held)
        {
            inner.request.process = WORKER;
            inner.request.priority = IoPriority::default();
        }
        for id in completion.request.ids() {
            self.in_progress.remove(&id);
        }
        self.inner.complete(&inner, now);
        self.trace.pull(self.inner.as_mut());
        self.release(now);
    }

    fn queued(&self) -> usize {
        self.held + self.inner.queued()
    }

    crate::scheduler::pass_to_inner!();

    /// The new weight (100 when unset) recomputes every band's tokens per epoch at once, as
    /// dm-ioband's `set_weight` recomputes each group's `token_initial` from the weights
    /// (drivers/md/dm-ioband-policy.c, 1.x); the tokens on hand are kept, and the next
    /// epochs hand out the new shares. Limits are not dm-ioband's: the policy below is told.
    fn update_group(
        &mut self,
        group: GroupId,
        settings: &Group,
        now: Nanos,
    ) -> Result<(), TunableError> {
        self.inner.update_group(group, settings, now)?;
        self.trace.pull(self.inner.as_mut());
        let Some(band) = self.bands.get_mut(group.index()) else {
            return Ok(());
        };
        band.weight = band_weight(settings);
        self.reshare();
        Ok(())
    }

    crate::scheduler::groups_pass_to_inner!();

    /// dm-ioband's weight of the group (its `cgroup_weight`, else 100); `None` for the
    /// root, the default group.
    fn group_weight(&self, group: GroupId) -> Option<u32> {
        if group == GroupId::ROOT {
            return None;
        }
        self.bands.get(group.index()).map(|band| band.weight)
    }

    fn set_tracing(&mut self, on: bool) {
        self.trace.set_enabled(on);
        self.inner.set_tracing(on);
    }

    fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        self.trace.drain_into(out);
    }
}
