//! The deadline FIFOs: each direction's queued requests in deadline order, as doubly linked
//! lists threaded through the request slab's slots (the kernel's `fifo_list`).
//!
//! A deadline is `insert time + expire[direction]`; time never goes backwards and the expire
//! of a direction is fixed, so a new request always belongs at the tail (a driver that broke
//! the clock contract would only get a FIFO out of deadline order, nothing worse). Every
//! operation is O(1), and the only allocation is the link table growing with the slab.

use crate::merge::SlotKey;
use crate::{Direction, Nanos};

/// The end of a list.
const NIL: SlotKey = SlotKey::MAX;

/// A slot's place on its direction's FIFO.
#[derive(Debug, Clone, Copy)]
struct Link {
    prev: SlotKey,
    next: SlotKey,
    deadline: Nanos,
}

const UNLINKED: Link = Link {
    prev: NIL,
    next: NIL,
    deadline: 0,
};

/// The two FIFOs (reads, writes), sharing one link table indexed by slot.
#[derive(Debug, Clone)]
pub(super) struct Fifos {
    links: Vec<Link>,
    /// Head and tail of each direction's list.
    ends: [(SlotKey, SlotKey); 2],
}

impl Default for Fifos {
    fn default() -> Self {
        Self {
            links: Vec::new(),
            ends: [(NIL, NIL); 2],
        }
    }
}

impl Fifos {
    /// Append a request with this deadline to its direction's FIFO.
    pub(super) fn push_back(&mut self, direction: Direction, slot: SlotKey, deadline: Nanos) {
        if self.links.len() <= slot {
            self.links.resize(slot + 1, UNLINKED);
        }
        let tail = self.ends[direction.index()].1;
        self.links[slot] = Link {
            prev: tail,
            next: NIL,
            deadline,
        };
        self.set_next(direction, tail, slot);
        self.ends[direction.index()].1 = slot;
    }

    /// The head of a direction's FIFO and its deadline.
    pub(super) fn head(&self, direction: Direction) -> Option<(Nanos, SlotKey)> {
        let head = self.ends[direction.index()].0;
        (head != NIL).then(|| (self.links[head].deadline, head))
    }

    /// The first request of a direction's FIFO that `admit` takes, and its deadline.
    pub(super) fn first_where(
        &self,
        direction: Direction,
        mut admit: impl FnMut(SlotKey) -> bool,
    ) -> Option<(Nanos, SlotKey)> {
        let mut slot = self.ends[direction.index()].0;
        while slot != NIL {
            if admit(slot) {
                return Some((self.links[slot].deadline, slot));
            }
            slot = self.links[slot].next;
        }
        None
    }

    /// The deadline of a request on its direction's FIFO.
    pub(super) fn deadline(&self, slot: SlotKey) -> Nanos {
        self.links[slot].deadline
    }

    /// Whether a direction's FIFO is empty.
    pub(super) fn is_empty(&self, direction: Direction) -> bool {
        self.ends[direction.index()].0 == NIL
    }

    /// Take a request off its direction's FIFO.
    pub(super) fn remove(&mut self, direction: Direction, slot: SlotKey) {
        let Link { prev, next, .. } = self.links[slot];
        self.set_next(direction, prev, next);
        self.set_prev(direction, next, prev);
        self.links[slot] = UNLINKED;
    }

    /// `absorbed` was coalesced into `survivor`: take it off the FIFO, and if its deadline
    /// was earlier, the survivor moves to its place and takes its deadline.
    pub(super) fn coalesce(&mut self, direction: Direction, survivor: SlotKey, absorbed: SlotKey) {
        let inherited = self.links[absorbed].deadline;
        if inherited < self.links[survivor].deadline {
            self.remove(direction, survivor);
            let Link { prev, next, .. } = self.links[absorbed];
            self.links[survivor] = Link {
                prev,
                next,
                deadline: inherited,
            };
            self.set_next(direction, prev, survivor);
            self.set_prev(direction, next, survivor);
            self.links[absorbed] = UNLINKED;
        } else {
            self.remove(direction, absorbed);
        }
    }

    /// Point `slot`'s forward link (or the list head, for `NIL`) at `next`.
    fn set_next(&mut self, direction: Direction, slot: SlotKey, next: SlotKey) {
        match slot {
            NIL => self.ends[direction.index()].0 = next,
            _ => self.links[slot].next = next,
        }
    }

    /// Point `slot`'s backward link (or the list tail, for `NIL`) at `prev`.
    fn set_prev(&mut self, direction: Direction, slot: SlotKey, prev: SlotKey) {
        match slot {
            NIL => self.ends[direction.index()].1 = prev,
            _ => self.links[slot].prev = prev,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(fifos: &Fifos, direction: Direction) -> Vec<(SlotKey, Nanos)> {
        let mut out = Vec::new();
        let mut slot = fifos.ends[direction.index()].0;
        while slot != NIL {
            out.push((slot, fifos.links[slot].deadline));
            slot = fifos.links[slot].next;
        }
        out
    }

    #[test]
    fn push_remove_and_coalesce_keep_the_lists_linked() {
        let mut fifos = Fifos::default();
        let read = Direction::Read;
        for (slot, deadline) in [(3, 10), (0, 20), (5, 30), (1, 40)] {
            fifos.push_back(read, slot, deadline);
        }
        fifos.push_back(Direction::Write, 2, 15);
        assert_eq!(fifos.head(read), Some((10, 3)));
        fifos.remove(read, 3);
        assert_eq!(fifos.head(read), Some((20, 0)));
        // 1 absorbs 0 and takes its earlier place and deadline.
        fifos.coalesce(read, 1, 0);
        assert_eq!(order(&fifos, read), vec![(1, 20), (5, 30)]);
        // 1 absorbs the later 5 and keeps its own.
        fifos.coalesce(read, 1, 5);
        assert_eq!(order(&fifos, read), vec![(1, 20)]);
        fifos.remove(read, 1);
        assert!(fifos.is_empty(read));
        assert_eq!(order(&fifos, Direction::Write), vec![(2, 15)]);
    }

    #[test]
    fn adjacent_coalesce_in_either_order() {
        let mut fifos = Fifos::default();
        let write = Direction::Write;
        for (slot, deadline) in [(0, 1), (1, 2), (2, 3)] {
            fifos.push_back(write, slot, deadline);
        }
        fifos.coalesce(write, 2, 1);
        assert_eq!(order(&fifos, write), vec![(0, 1), (2, 2)]);
        fifos.coalesce(write, 2, 0);
        assert_eq!(order(&fifos, write), vec![(2, 1)]);
        assert_eq!(fifos.ends[write.index()], (2, 2));
    }
}
