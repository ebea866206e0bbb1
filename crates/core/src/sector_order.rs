//! The sector-distance choice AS, CFQ and BFQ share (Linux's `as_choose_req`,
//! `cfq_choose_req` and `bfq_choose_req`): given the head position, which of two requests
//! costs less to reach. Forward distance counts as is; a short backward seek (up to
//! `back_seek_max`) costs its distance times `back_seek_penalty`; anything further back
//! "wraps" and loses to any candidate that does not.

use std::collections::BTreeSet;
use std::ops::Bound;

use crate::merge::{RequestSlab, SlotKey};
use crate::Request;

/// The parameters of the choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeekCost {
    /// Largest backward seek treated as a seek rather than a wrap, in sectors.
    pub back_seek_max: u64,
    /// Multiplier on the distance of a backward seek.
    pub back_seek_penalty: u64,
}

impl Default for SeekCost {
    /// CFQ/BFQ defaults: 16384 KiB (32768 sectors), penalty 2.
    fn default() -> Self {
        Self {
            back_seek_max: 32_768,
            back_seek_penalty: 2,
        }
    }
}

/// How far a request is from the head, or that it lies behind beyond the backward limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    Cost(u64),
    Wrapped,
}

impl SeekCost {
    fn reach(&self, head: u64, sector: u64) -> Reach {
        if sector >= head {
            Reach::Cost(sector - head)
        } else if head - sector <= self.back_seek_max {
            Reach::Cost((head - sector).saturating_mul(self.back_seek_penalty))
        } else {
            Reach::Wrapped
        }
    }

    /// The better of two requests to serve next with the head at `head`: a sync request
    /// beats an async one; then the cheaper reach; if both wrap, the lower sector; on a tie,
    /// the higher sector.
    pub fn choose<'a>(&self, head: u64, a: &'a Request, b: &'a Request) -> &'a Request {
        if a.sync != b.sync {
            return if a.sync { a } else { b };
        }
        match (self.reach(head, a.sector), self.reach(head, b.sector)) {
            (Reach::Cost(x), Reach::Cost(y)) if x != y => {
                if x < y {
                    a
                } else {
                    b
                }
            }
            (Reach::Cost(_), Reach::Wrapped) => a,
            (Reach::Wrapped, Reach::Cost(_)) => b,
            (Reach::Wrapped, Reach::Wrapped) => {
                if a.sector <= b.sector {
                    a
                } else {
                    b
                }
            }
            _ => {
                if a.sector >= b.sector {
                    a
                } else {
                    b
                }
            }
        }
    }
}

impl SeekCost {
    /// The better of two queued requests (by slot) with the head at `head`; either may be
    /// missing, and the same slot twice is that slot.
    pub fn choose_slot(
        &self,
        slab: &RequestSlab,
        head: u64,
        a: Option<SlotKey>,
        b: Option<SlotKey>,
    ) -> Option<SlotKey> {
        match (a, b) {
            (None, other) | (other, None) => other,
            (Some(a), Some(b)) if a == b => Some(a),
            (Some(a), Some(b)) => {
                let (first, second) = (slab.get(a), slab.get(b));
                let chosen = self.choose(head, first, second);
                Some(if std::ptr::eq(chosen, first) { a } else { b })
            }
        }
    }

    /// The request to serve after `last` leaves a sort list keyed by (sector, slot): the better,
    /// from `last`'s position, of its neighbours in sector order (wrapping to the first), as the
    /// kernel's `cfq_find_next_rq`/`bfq_find_next_rq` do.
    pub fn next_after(
        &self,
        slab: &RequestSlab,
        sort_list: &BTreeSet<(u64, SlotKey)>,
        last: SlotKey,
    ) -> Option<SlotKey> {
        let key = (slab.get(last).sector, last);
        let after = sort_list
            .range((Bound::Excluded(key), Bound::Unbounded))
            .next()
            .or_else(|| sort_list.first().filter(|&&(_, slot)| slot != last))
            .map(|&(_, slot)| slot);
        let before = sort_list.range(..key).next_back().map(|&(_, slot)| slot);
        self.choose_slot(slab, key.0, after, before)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Direction, ProcessId, RequestId};

    fn rq(sector: u64, sync: bool) -> Request {
        Request {
            sync,
            ..Request::new(RequestId(sector), ProcessId(1), Direction::Read, sector, 8)
        }
    }

    #[test]
    fn forward_backward_wrap_and_sync() {
        let cost = SeekCost::default();
        let head = 100_000;
        // 1000 forward beats 600 backward (cost 1200).
        assert_eq!(
            cost.choose(head, &rq(101_000, true), &rq(99_400, true))
                .sector,
            101_000
        );
        // 400 backward (cost 800) beats 1000 forward.
        assert_eq!(
            cost.choose(head, &rq(101_000, true), &rq(99_600, true))
                .sector,
            99_600
        );
        // Beyond back_seek_max wraps and loses even to a far forward request.
        assert_eq!(
            cost.choose(head, &rq(10, true), &rq(9_000_000, true))
                .sector,
            9_000_000
        );
        // Both wrapped: the lower sector.
        assert_eq!(cost.choose(head, &rq(20, true), &rq(10, true)).sector, 10);
        // Tie: the higher sector (500 forward vs 250 back × 2).
        assert_eq!(
            cost.choose(head, &rq(100_500, true), &rq(99_750, true))
                .sector,
            100_500
        );
        // Sync beats async whatever the distance.
        assert_eq!(
            cost.choose(head, &rq(100_001, false), &rq(1, true)).sector,
            1
        );
    }
}
