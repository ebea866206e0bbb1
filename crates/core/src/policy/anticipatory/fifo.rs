//! The FIFOs: each class's queued requests in deadline order (the kernel's `fifo_list`).
//!
//! A request's deadline is its insertion time plus its class's expire time. Entries are
//! ordered by (deadline, arrival number), which is arrival order within a class since the
//! expire time of a class is fixed and time never goes backwards. When two queued requests
//! coalesce, the survivor takes the absorbed request's place if that deadline was earlier.

use std::collections::BTreeMap;

use super::class::Class;
use crate::merge::SlotKey;
use crate::Nanos;

/// A place on a FIFO: deadline, then arrival number.
type Place = (Nanos, u64);

/// The FIFOs of both classes.
#[derive(Debug, Clone, Default)]
pub(super) struct Fifos {
    lists: [BTreeMap<Place, SlotKey>; 2],
    /// Each queued slot's class and place.
    places: Vec<Option<(Class, Place)>>,
    arrivals: u64,
}

impl Fifos {
    /// Append a request with this deadline to its class's FIFO.
    pub fn push(&mut self, class: Class, slot: SlotKey, deadline: Nanos) {
        let place = (deadline, self.arrivals);
        self.arrivals += 1;
        self.lists[class.index()].insert(place, slot);
        if self.places.len() <= slot {
            self.places.resize(slot + 1, None);
        }
        self.places[slot] = Some((class, place));
    }

    /// The head of a class's FIFO: its deadline and slot.
    pub fn head(&self, class: Class) -> Option<(Nanos, SlotKey)> {
        self.lists[class.index()]
            .first_key_value()
            .map(|(&(deadline, _), &slot)| (deadline, slot))
    }

    /// Whether a class's FIFO is empty.
    pub fn is_empty(&self, class: Class) -> bool {
        self.lists[class.index()].is_empty()
    }

    /// Take a request off its FIFO; returns its place.
    pub fn remove(&mut self, slot: SlotKey) -> Option<(Class, Place)> {
        let (class, place) = self.places.get_mut(slot)?.take()?;
        self.lists[class.index()].remove(&place);
        Some((class, place))
    }

    /// `absorbed` was coalesced into `survivor`: it leaves, and the survivor moves to its
    /// place if that deadline was earlier.
    pub fn coalesce(&mut self, survivor: SlotKey, absorbed: SlotKey) {
        let Some((class, inherited)) = self.remove(absorbed) else {
            return;
        };
        let survivor_place = self.places.get(survivor).copied().flatten();
        if let Some((_, own)) = survivor_place.filter(|&(_, own)| inherited < own) {
            let list = &mut self.lists[class.index()];
            list.remove(&own);
            list.insert(inherited, survivor);
            self.places[survivor] = Some((class, inherited));
        }
    }

    /// The deadline of a queued request.
    #[cfg(test)]
    pub fn deadline(&self, slot: SlotKey) -> Option<Nanos> {
        self.places
            .get(slot)
            .copied()
            .flatten()
            .map(|(_, (deadline, _))| deadline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_remove_and_coalesce() {
        let mut fifos = Fifos::default();
        fifos.push(Class::Sync, 3, 10);
        fifos.push(Class::Sync, 0, 20);
        fifos.push(Class::Sync, 5, 30);
        fifos.push(Class::Async, 1, 15);
        assert_eq!(fifos.head(Class::Sync), Some((10, 3)));
        assert_eq!(fifos.head(Class::Async), Some((15, 1)));
        // 5 absorbs 0 and takes its earlier deadline.
        fifos.coalesce(5, 0);
        assert_eq!(fifos.deadline(5), Some(20));
        assert_eq!(fifos.deadline(0), None);
        // 3 absorbs 5 and keeps its own earlier one.
        fifos.coalesce(3, 5);
        assert_eq!(fifos.deadline(3), Some(10));
        assert!(fifos.remove(3).is_some());
        assert!(fifos.is_empty(Class::Sync));
        assert!(fifos.remove(3).is_none());
        assert!(!fifos.is_empty(Class::Async));
    }
}
