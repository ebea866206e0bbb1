//! The block layer's dispatch list before Linux 2.6.30 (`q->queue_head`): CFQ moved whole
//! batches of requests onto it, and the driver took them from its head. The elevator was asked
//! for more only when the list was empty, so a request CFQ chose later — a reader's, say —
//! waited behind every request already on the list.
//!
//! Requests join in one-way elevator order (the kernel's `elv_dispatch_sort`): walking back
//! from the tail, a request stops behind the first request of the other direction, and
//! otherwise sorts by start sector in the sweep that starts at the end of the last request the
//! driver took (the boundary): requests at or past the boundary first, in ascending order, then
//! those before it, in ascending order.
//!
//! Source: `block/elevator.c` (`elv_dispatch_sort`, `elv_next_request`), Linux 2.6.28.

use std::collections::VecDeque;

use crate::Request;

/// The dispatch list.
#[derive(Debug, Clone, Default)]
pub(super) struct DispatchList {
    requests: VecDeque<Request>,
    /// End sector of the last request the driver took (`q->end_sector`).
    boundary: u64,
}

impl DispatchList {
    /// Requests waiting on the list.
    pub(super) fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether the list is empty (the elevator is asked for more only then).
    pub(super) fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// Add a request in one-way elevator order.
    pub(super) fn insert_sorted(&mut self, request: Request) {
        let boundary = self.boundary;
        let mut at = self.requests.len();
        while at > 0 {
            let before = &self.requests[at - 1];
            if before.direction != request.direction {
                break;
            }
            if request.sector >= boundary {
                if before.sector < boundary {
                    at -= 1;
                    continue;
                }
            } else if before.sector >= boundary {
                break;
            }
            if request.sector >= before.sector {
                break;
            }
            at -= 1;
        }
        self.requests.insert(at, request);
    }

    /// The driver takes the head; the boundary moves to its end.
    pub(super) fn take(&mut self) -> Option<Request> {
        let request = self.requests.pop_front()?;
        self.boundary = request.end_sector();
        Some(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Direction, ProcessId, RequestId};

    fn rq(id: u64, direction: Direction, sector: u64) -> Request {
        Request::new(RequestId(id), ProcessId(1), direction, sector, 8)
    }

    fn order(list: &mut DispatchList) -> Vec<u64> {
        std::iter::from_fn(|| list.take()).map(|r| r.id.0).collect()
    }

    #[test]
    fn sorts_in_one_sweep_from_the_boundary() {
        let mut list = DispatchList::default();
        list.insert_sorted(rq(1, Direction::Write, 100));
        assert_eq!(list.take().map(|r| r.id.0), Some(1));
        // Boundary now 108: 500 and 200 lie ahead, 50 behind (served after the sweep).
        for (id, sector) in [(2, 500), (3, 50), (4, 200)] {
            list.insert_sorted(rq(id, Direction::Write, sector));
        }
        assert_eq!(order(&mut list), vec![4, 2, 3]);
    }

    #[test]
    fn a_request_of_the_other_direction_waits_behind_the_tail() {
        let mut list = DispatchList::default();
        for (id, sector) in [(1, 1_000), (2, 2_000), (3, 3_000)] {
            list.insert_sorted(rq(id, Direction::Write, sector));
        }
        list.insert_sorted(rq(4, Direction::Read, 10));
        list.insert_sorted(rq(5, Direction::Read, 5));
        assert_eq!(list.len(), 5);
        // The reads queue after every write; among themselves they sort.
        assert_eq!(order(&mut list), vec![1, 2, 3, 5, 4]);
    }
}
