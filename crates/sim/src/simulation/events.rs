//! The simulator's pending events, in the order they happen: by time, and events due at the
//! same time in the order they were scheduled.
//!
//! Most events are scheduled at arbitrary times and wait in a heap. A process's reap after a
//! completion comes a fixed host latency after it, and completions come in time order, so
//! those are scheduled in the order they fall due: they wait in a FIFO lane instead, which
//! costs nothing to keep in order. The two are merged by (time, sequence), so the order is
//! exactly the one a single heap would give.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use ioslice_core::Nanos;

/// An event with its time and its place in the order of scheduling.
type Stamped<E> = (Nanos, u64, E);

/// Pending events: a heap, and a lane for events scheduled in time order.
#[derive(Debug)]
pub(super) struct EventQueue<E: Ord + Copy> {
    heap: BinaryHeap<Reverse<Stamped<E>>>,
    lane: VecDeque<Stamped<E>>,
    scheduled: u64,
}

impl<E: Ord + Copy> EventQueue<E> {
    pub(super) fn new() -> Self {
        Self {
            heap: BinaryHeap::new(),
            lane: VecDeque::new(),
            scheduled: 0,
        }
    }

    /// Schedule `event` at `at`.
    pub(super) fn push(&mut self, at: Nanos, event: E) {
        self.scheduled += 1;
        self.heap.push(Reverse((at, self.scheduled, event)));
    }

    /// Schedule `event` at `at`, no earlier than any event scheduled this way before it.
    pub(super) fn push_in_order(&mut self, at: Nanos, event: E) {
        self.scheduled += 1;
        match self.lane.back() {
            Some(&(last, _, _)) if at < last => {
                self.heap.push(Reverse((at, self.scheduled, event)));
            }
            _ => self.lane.push_back((at, self.scheduled, event)),
        }
    }

    /// The next event's time.
    pub(super) fn next_time(&self) -> Option<Nanos> {
        self.peek().map(|(at, _, _)| at)
    }

    /// The next event, if it is due by `now`; it leaves the queue.
    pub(super) fn pop_due(&mut self, now: Nanos) -> Option<E> {
        let (at, seq, event) = self.peek()?;
        if at > now {
            return None;
        }
        match self.lane.front() {
            Some(&(_, lane_seq, _)) if lane_seq == seq => {
                self.lane.pop_front();
            }
            _ => {
                self.heap.pop();
            }
        }
        Some(event)
    }

    fn peek(&self) -> Option<Stamped<E>> {
        let heap = self.heap.peek().map(|Reverse(stamped)| *stamped);
        let lane = self.lane.front().copied();
        match (heap, lane) {
            (Some(h), Some(l)) => Some(if (l.0, l.1) < (h.0, h.1) { l } else { h }),
            (h, l) => h.or(l),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(queue: &mut EventQueue<u32>) -> Vec<(Nanos, u32)> {
        let mut out = Vec::new();
        while let Some(at) = queue.next_time() {
            while let Some(event) = queue.pop_due(at) {
                out.push((at, event));
            }
        }
        out
    }

    #[test]
    fn the_lane_and_the_heap_interleave_by_time_then_by_scheduling() {
        let mut queue = EventQueue::new();
        queue.push(30, 1);
        queue.push_in_order(10, 2);
        queue.push(10, 3);
        queue.push_in_order(30, 4);
        queue.push(5, 5);
        queue.push_in_order(30, 6);
        assert_eq!(
            drain(&mut queue),
            vec![(5, 5), (10, 2), (10, 3), (30, 1), (30, 4), (30, 6)]
        );
    }

    #[test]
    fn an_event_out_of_order_goes_to_the_heap() {
        let mut queue = EventQueue::new();
        queue.push_in_order(20, 1);
        queue.push_in_order(10, 2);
        assert_eq!(drain(&mut queue), vec![(10, 2), (20, 1)]);
        assert_eq!(queue.pop_due(u64::MAX), None);
    }

    #[test]
    fn nothing_is_popped_before_it_is_due() {
        let mut queue = EventQueue::new();
        queue.push_in_order(10, 1);
        queue.push(12, 2);
        assert_eq!(queue.pop_due(9), None);
        assert_eq!(queue.pop_due(11), Some(1));
        assert_eq!(queue.pop_due(11), None);
        assert_eq!(queue.pop_due(12), Some(2));
    }
}
