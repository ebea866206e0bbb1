//! Start-time fair queueing, and the order in which one group's held requests leave.
//!
//! Each flow (a process, or a sibling group) carries a finish tag in virtual time. A flow
//! that is picked starts at the later of its own finish tag and the scheduler's virtual
//! time, which is the start tag of the last pick; the flow with the smallest start is
//! picked, and its finish tag then advances by `bytes × SCALE / weight`. Two flows that stay
//! backlogged are thus served in proportion to their weights, and a flow that was idle (or
//! held back by a limit of its own) comes back at the current virtual time without credit
//! for the time it did not use.

use std::collections::{BTreeMap, VecDeque};

use crate::{IoPriority, PriorityClass, ProcessId, Request};

/// Virtual-time units per byte of a flow of weight 1. It is a multiple of every per-level
/// weight (10 to 80) and of the usual group weights (multiples of 100 up to 1000), so that
/// shares between them come out exact rather than rounded.
const SCALE: u128 = 2_520_000_000;

/// A virtual clock and the tags it hands out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VirtualClock {
    /// The start tag of the last pick.
    now: u128,
}

impl VirtualClock {
    /// Where a flow whose finish tag is `finish` would start if picked now.
    pub fn start(&self, finish: u128) -> u128 {
        finish.max(self.now)
    }

    /// A flow with finish tag `finish` and `weight` is picked to send `bytes`: the clock
    /// moves to its start, and its new finish tag is returned.
    pub fn serve(&mut self, finish: u128, bytes: u64, weight: u32) -> u128 {
        let start = self.start(finish);
        self.now = start;
        start + u128::from(bytes) * SCALE / u128::from(weight.max(1))
    }
}

/// A process's weight inside its class: BFQ's `(8 − level) × 10`, 80 for level 0 down to 10
/// for level 7. IDLE has no levels; every IDLE process weighs 10, as BFQ gives them.
pub fn process_weight(priority: IoPriority) -> u32 {
    match priority.class {
        PriorityClass::Idle => 10,
        _ => (8 - u32::from(priority.level.min(7))) * 10,
    }
}

/// One process's held requests, in arrival order, and its finish tag.
#[derive(Debug, Clone, Default)]
struct Flow {
    requests: VecDeque<Request>,
    finish: u128,
}

/// The held requests of one class in one group and direction.
#[derive(Debug, Clone, Default)]
struct ClassQueue {
    clock: VirtualClock,
    /// Flows by process; a flow stays after it empties so that its finish tag is kept
    /// (a process with one request at a time would otherwise start afresh every time).
    flows: BTreeMap<ProcessId, Flow>,
    held: usize,
}

impl ClassQueue {
    /// The process to serve next: smallest start tag, then oldest head request.
    fn next_process(&self) -> Option<ProcessId> {
        self.flows
            .iter()
            .filter_map(|(&process, flow)| {
                let head = flow.requests.front()?;
                Some(((self.clock.start(flow.finish), head.id), process))
            })
            .min()
            .map(|(_, process)| process)
    }
}

/// One group's held requests in one direction: the highest class first, weighted fair
/// queueing between the processes of a class, FIFO within a process; or, in arrival order,
/// the oldest request first whoever sent it.
#[derive(Debug, Clone, Default)]
pub struct Lane {
    classes: [ClassQueue; 3],
    arrival_order: bool,
}

impl Lane {
    /// A lane that lets its requests leave in arrival order (a throttle above the elevator).
    pub fn in_arrival_order() -> Self {
        Self {
            arrival_order: true,
            ..Self::default()
        }
    }

    /// Hold a request.
    pub fn push(&mut self, request: Request) {
        let class = &mut self.classes[request.priority.class.index()];
        class.held += 1;
        class
            .flows
            .entry(request.process)
            .or_default()
            .requests
            .push_back(request);
    }

    /// Requests held.
    pub fn len(&self) -> usize {
        self.classes.iter().map(|c| c.held).sum()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn next(&self) -> Option<(usize, ProcessId)> {
        if self.arrival_order {
            return self.oldest();
        }
        let class = self.classes.iter().position(|c| c.held > 0)?;
        Some((class, self.classes[class].next_process()?))
    }

    /// The class and process of the oldest held request.
    fn oldest(&self) -> Option<(usize, ProcessId)> {
        self.classes
            .iter()
            .enumerate()
            .flat_map(|(class, queue)| {
                queue.flows.iter().filter_map(move |(&process, flow)| {
                    let head = flow.requests.front()?;
                    Some(((head.submit_time, head.id), (class, process)))
                })
            })
            .min()
            .map(|(_, next)| next)
    }

    /// The request that leaves next.
    pub fn head(&self) -> Option<&Request> {
        let (class, process) = self.next()?;
        self.classes[class].flows[&process].requests.front()
    }

    /// Take the request that leaves next, advancing its class's virtual time.
    pub fn pop(&mut self) -> Option<Request> {
        let (class, process) = self.next()?;
        let queue = &mut self.classes[class];
        let flow = queue.flows.get_mut(&process)?;
        let request = flow.requests.pop_front()?;
        let weight = process_weight(request.priority);
        flow.finish = queue.clock.serve(flow.finish, request.bytes(), weight);
        queue.held -= 1;
        Some(request)
    }

    /// A process has exited: forget its flows that hold nothing.
    pub fn forget(&mut self, process: ProcessId) {
        for class in &mut self.classes {
            if class
                .flows
                .get(&process)
                .is_some_and(|f| f.requests.is_empty())
            {
                class.flows.remove(&process);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Direction, RequestId};

    fn rq(id: u64, process: u32, class: PriorityClass, level: u8) -> Request {
        Request {
            priority: IoPriority { class, level },
            ..Request::new(
                RequestId(id),
                ProcessId(process),
                Direction::Read,
                id * 8,
                8,
            )
        }
    }

    #[test]
    fn weights_follow_bfq() {
        let be = |level| process_weight(IoPriority::new(PriorityClass::BestEffort, level).unwrap());
        assert_eq!((be(0), be(4), be(7)), (80, 40, 10));
        assert_eq!(
            process_weight(IoPriority {
                class: PriorityClass::Idle,
                level: 0
            }),
            10
        );
    }

    #[test]
    fn class_first_then_eight_to_one_between_levels_zero_and_seven() {
        let mut lane = Lane::default();
        for i in 0..90 {
            lane.push(rq(1000 + i, 1, PriorityClass::BestEffort, 0));
            lane.push(rq(2000 + i, 2, PriorityClass::BestEffort, 7));
        }
        lane.push(rq(1, 3, PriorityClass::Idle, 0));
        lane.push(rq(5000, 4, PriorityClass::RealTime, 7));
        assert_eq!(lane.pop().map(|r| r.process), Some(ProcessId(4)));
        let first: Vec<u32> = (0..90)
            .filter_map(|_| lane.pop())
            .map(|r| r.process.0)
            .collect();
        let level0 = first.iter().filter(|&&p| p == 1).count();
        assert_eq!((level0, 90 - level0), (80, 10));
        while lane.len() > 1 {
            assert_ne!(lane.pop().map(|r| r.process), Some(ProcessId(3)));
        }
        assert_eq!(lane.pop().map(|r| r.process), Some(ProcessId(3)));
        assert!(lane.is_empty() && lane.pop().is_none());
    }

    #[test]
    fn in_arrival_order_the_oldest_leaves_first_whatever_its_class() {
        let mut lane = Lane::in_arrival_order();
        let mut arrived = Vec::new();
        for i in 0..12u64 {
            let (process, class, level) = match i % 3 {
                0 => (1, PriorityClass::BestEffort, 7),
                1 => (2, PriorityClass::RealTime, 0),
                _ => (3, PriorityClass::Idle, 0),
            };
            let mut request = rq(100 + i, process, class, level);
            request.submit_time = i * 1000;
            arrived.push(request.id);
            lane.push(request);
        }
        let left: Vec<RequestId> = std::iter::from_fn(|| lane.pop()).map(|r| r.id).collect();
        assert_eq!(left, arrived);
    }
}
