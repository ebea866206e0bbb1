//! Helpers for the CFQ unit tests: a policy built from settings and groups, requests, and a
//! depth-1 device driven with a fake clock.

use crate::scheduler::SchedulerContext;
use crate::time::ms;
use crate::tunable::Tunables;
use crate::{
    Completion, Direction, Dispatch, GroupId, GroupTree, IoPriority, Nanos, ProcessId, Request,
    RequestId, Scheduler,
};

use super::Cfq;

/// A CFQ on a rotational single-command disk, with these settings and groups (path, weight).
pub(super) fn cfq_with(settings: &[(&str, &str)], groups: &[(&str, u32)]) -> (Cfq, Vec<GroupId>) {
    let mut tree = GroupTree::default();
    let ids = groups
        .iter()
        .map(|&(path, weight)| {
            let id = tree.ensure(path).expect("valid group path");
            tree.set_weight(id, weight).expect("valid weight");
            id
        })
        .collect();
    let settings: Vec<(String, String)> = settings
        .iter()
        .map(|&(name, value)| (name.to_string(), value.to_string()))
        .collect();
    let tunables = Tunables::resolve("cfq", Cfq::TUNABLES, &settings).expect("valid settings");
    let context = SchedulerContext {
        groups: tree,
        rotational: true,
        queue_depth: 1,
    };
    (Cfq::new(&tunables, &context), ids)
}

/// A CFQ with these settings and only the root group.
pub(super) fn cfq(settings: &[(&str, &str)]) -> Cfq {
    cfq_with(settings, &[]).0
}

/// A sync read of 8 sectors.
pub(super) fn read(id: u64, process: u32, sector: u64) -> Request {
    Request::new(
        RequestId(id),
        ProcessId(process),
        Direction::Read,
        sector,
        8,
    )
}

/// The same request with another priority.
pub(super) fn with_priority(request: Request, priority: IoPriority) -> Request {
    Request {
        priority,
        ..request
    }
}

/// The same request in another group.
pub(super) fn in_group(request: Request, group: GroupId) -> Request {
    Request { group, ..request }
}

/// Dispatch a request, which must come.
pub(super) fn take(cfq: &mut Cfq, now: Nanos) -> Request {
    match cfq.dispatch(now) {
        Dispatch::Request(request) => request,
        other => panic!("expected a request at {now}, got {other:?}"),
    }
}

/// Complete a request.
pub(super) fn finish(cfq: &mut Cfq, request: &Request, now: Nanos) {
    let completion = Completion {
        request: request.clone(),
        dispatch_time: 0,
        error: None,
    };
    cfq.complete(&completion, now);
}

/// Serve one process's requests at these sectors one at a time, 1 ms each, from `now`;
/// returns the time after the last completion.
pub(super) fn serve_alone(cfq: &mut Cfq, process: u32, sectors: &[u64], mut now: Nanos) -> Nanos {
    for &sector in sectors {
        let id = 1_000 * u64::from(process) + sector % 1_000 + now;
        cfq.insert(read(id, process, sector), now);
        let request = take(cfq, now);
        now += ms(1);
        finish(cfq, &request, now);
    }
    now
}

/// Processes that each keep one sequential read outstanding, re-issued the moment the last
/// completes, on a device that serves one request at a time in `service`.
pub(super) struct ClosedLoop {
    /// The clock.
    pub(super) now: Nanos,
    service: Nanos,
    next_id: u64,
    in_flight: Option<(Request, Nanos)>,
}

impl ClosedLoop {
    /// Start the processes (each with its group) at time 0.
    pub(super) fn start(cfq: &mut Cfq, processes: &[(u32, GroupId)], service: Nanos) -> Self {
        let mut driver = Self {
            now: 0,
            service,
            next_id: 1,
            in_flight: None,
        };
        for &(process, group) in processes {
            driver.issue(cfq, ProcessId(process), group, u64::from(process) << 30);
        }
        driver
    }

    fn issue(&mut self, cfq: &mut Cfq, process: ProcessId, group: GroupId, sector: u64) {
        let request = Request {
            group,
            ..read(self.next_id, process.0, sector)
        };
        self.next_id += 1;
        cfq.insert(request, self.now);
    }

    /// Advance by one event (a dispatch, a completion with the re-issue, or a wait), then
    /// call `observe`. Returns the request dispatched, if any.
    pub(super) fn step(&mut self, cfq: &mut Cfq) -> Option<Request> {
        if let Some((request, done)) = self.in_flight.take() {
            self.now = done;
            finish(cfq, &request, done);
            self.issue(cfq, request.process, request.group, request.end_sector());
            return None;
        }
        match cfq.dispatch(self.now) {
            Dispatch::Request(request) => {
                self.in_flight = Some((request.clone(), self.now + self.service));
                Some(request)
            }
            Dispatch::WaitUntil(at) => {
                self.now = at.max(self.now + 1);
                None
            }
            Dispatch::Empty => panic!("closed-loop processes always have a request queued"),
        }
    }
}
