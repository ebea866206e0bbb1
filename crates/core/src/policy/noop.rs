//! noop (alias `none`): one FIFO list in arrival order, with back and front merging of
//! contiguous requests from the same process. It does no reordering, no fairness and no
//! priority handling; it is the reference for overhead. (Linux's legacy
//! `block/noop-iosched.c` and blk-mq `none`; merging as the elevator core supplies it,
//! `elv_merge` in `block/elevator.c`.)

use std::collections::VecDeque;

use crate::merge::{MergeIndex, RequestSlab, SlotKey};
use crate::trace::TraceBuffer;
use crate::tunable::{TunableDef, Tunables};
use crate::{Completion, Dispatch, Inserted, Nanos, Request, RequestId, Scheduler, TraceEvent};

/// The noop policy.
#[derive(Debug, Clone, Default)]
pub struct Noop {
    slab: RequestSlab,
    merges: MergeIndex,
    /// Arrival order. An entry whose request was coalesced into another is stale and skipped.
    fifo: VecDeque<(SlotKey, RequestId)>,
    /// Merges, when tracing is on.
    trace: TraceBuffer,
}

impl Noop {
    /// noop's tunables: only the queue's `nomerges`.
    pub const TUNABLES: &'static [TunableDef] = &[TunableDef {
        name: "nomerges",
        default: 0,
        min: 0,
        max: 2,
        unit: "0 merges, 1 or 2 no merging",
        help: "turn request merging off (the queue's nomerges)",
    }];

    /// A noop policy with these tunables.
    pub fn new(tunables: &Tunables) -> Self {
        let mut merges = MergeIndex::default();
        merges.enabled = tunables.get("nomerges") == 0;
        Self {
            merges,
            ..Self::default()
        }
    }

    fn try_merge(&mut self, request: Request) -> Result<RequestId, Request> {
        let Some((key, kind)) = self
            .merges
            .find(&self.slab, &request, Request::mergeable_with)
        else {
            return Err(request);
        };
        self.trace.emit(|| TraceEvent::Merge {
            request: request.id,
            into: self.slab.get(key).id,
            position: kind,
        });
        self.merges.merge(&mut self.slab, key, kind, request);
        let survivor_id =
            match self
                .merges
                .coalesce_candidate(&self.slab, key, kind, Request::mergeable_with)
            {
                Some((survivor, absorbed)) => {
                    self.trace.emit(|| TraceEvent::Coalesce {
                        into: self.slab.get(survivor).id,
                        absorbed: self.slab.get(absorbed).id,
                    });
                    self.merges.coalesce(&mut self.slab, survivor, absorbed);
                    self.slab.get(survivor).id
                }
                None => self.slab.get(key).id,
            };
        Ok(survivor_id)
    }
}

impl Scheduler for Noop {
    fn name(&self) -> &'static str {
        "noop"
    }

    fn insert(&mut self, request: Request, _now: Nanos) -> Inserted {
        match self.try_merge(request) {
            Ok(into) => Inserted::Merged(into),
            Err(request) => {
                let id = request.id;
                let key = self.slab.insert(request);
                self.merges.add(key, self.slab.get(key));
                self.fifo.push_back((key, id));
                Inserted::Queued
            }
        }
    }

    fn dispatch(&mut self, _now: Nanos) -> Dispatch {
        while let Some((key, id)) = self.fifo.pop_front() {
            if self.slab.contains(key) && self.slab.get(key).id == id {
                self.merges.remove(key, self.slab.get(key));
                return Dispatch::Request(self.slab.remove(key));
            }
        }
        Dispatch::Empty
    }

    fn complete(&mut self, _completion: &Completion, _now: Nanos) {}

    fn queued(&self) -> usize {
        self.slab.len()
    }

    fn set_tracing(&mut self, on: bool) {
        self.trace.set_enabled(on);
    }

    fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        self.trace.drain_into(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Direction, ProcessId};

    fn rq(id: u64, process: u32, sector: u64) -> Request {
        Request {
            submit_time: id,
            ..Request::new(
                RequestId(id),
                ProcessId(process),
                Direction::Read,
                sector,
                8,
            )
        }
    }

    fn noop(settings: &[(&str, &str)]) -> Noop {
        let settings: Vec<(String, String)> = settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Noop::new(&Tunables::resolve("noop", Noop::TUNABLES, &settings).unwrap())
    }

    fn drain(policy: &mut Noop) -> Vec<(u64, u64, u32, Vec<RequestId>)> {
        let mut out = Vec::new();
        while let Dispatch::Request(r) = policy.dispatch(0) {
            out.push((r.id.0, r.sector, r.sectors, r.ids().collect()));
        }
        out
    }

    #[test]
    fn arrival_order_without_reordering() {
        let mut policy = noop(&[]);
        for (id, sector) in [(1, 900), (2, 100), (3, 500)] {
            assert_eq!(
                policy.insert(rq(id, id as u32, sector), 0),
                Inserted::Queued
            );
        }
        assert_eq!(policy.queued(), 3);
        let order: Vec<u64> = drain(&mut policy).iter().map(|d| d.0).collect();
        assert_eq!(order, vec![1, 2, 3]);
        assert_eq!(policy.dispatch(0), Dispatch::Empty);
    }

    #[test]
    fn back_front_merges_and_coalescing_from_the_same_process() {
        let mut policy = noop(&[]);
        policy.insert(rq(1, 7, 0), 0);
        policy.insert(rq(2, 7, 16), 0);
        assert_eq!(
            policy.insert(rq(3, 8, 8), 0),
            Inserted::Queued,
            "other process"
        );
        assert_eq!(
            policy.insert(rq(4, 7, 8), 0),
            Inserted::Merged(RequestId(1))
        );
        assert_eq!(policy.queued(), 2, "1 absorbed 4 and then coalesced with 2");
        let dispatched = drain(&mut policy);
        assert_eq!(dispatched[0].1, 0);
        assert_eq!(dispatched[0].2, 24);
        assert_eq!(
            dispatched[0].3,
            vec![RequestId(1), RequestId(4), RequestId(2)]
        );
        assert_eq!(dispatched[1].0, 3);

        let mut front = noop(&[]);
        front.insert(rq(1, 7, 8), 0);
        assert_eq!(front.insert(rq(2, 7, 0), 0), Inserted::Merged(RequestId(1)));
        assert_eq!(drain(&mut front)[0].1, 0);
    }

    #[test]
    fn nomerges_turns_merging_off() {
        let mut policy = noop(&[("nomerges", "1")]);
        policy.insert(rq(1, 7, 0), 0);
        assert_eq!(policy.insert(rq(2, 7, 8), 0), Inserted::Queued);
        assert_eq!(drain(&mut policy).len(), 2);
    }
}
