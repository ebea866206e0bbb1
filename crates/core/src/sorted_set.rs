//! A small ordered set kept as a sorted vector, for bfq's service trees: a group's entities
//! of one class, by virtual time. Those sets hold as many entries as there are busy queues
//! (a handful to hundreds), and at those sizes a binary search and a shift of the entries
//! after the key cost a fraction of a `BTreeSet`'s node walk and node allocation. The order,
//! and so every choice made from it, is that of a `BTreeSet` of the same keys; only the cost
//! differs: a change shifts up to every entry (linear) where a B-tree's cost is logarithmic,
//! which is why the sort lists of queued requests, which can grow to thousands, stay B-trees.

/// Distinct keys in ascending order.
#[derive(Debug, Clone)]
pub struct SortedSet<K> {
    items: Vec<K>,
}

impl<K> Default for SortedSet<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K> SortedSet<K> {
    /// An empty set.
    pub const fn new() -> Self {
        Self { items: Vec::new() }
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The keys in ascending order.
    pub fn iter(&self) -> std::slice::Iter<'_, K> {
        self.items.iter()
    }

    /// The smallest key.
    pub fn first(&self) -> Option<&K> {
        self.items.first()
    }

    /// Take the smallest key out.
    pub fn pop_first(&mut self) -> Option<K> {
        (!self.items.is_empty()).then(|| self.items.remove(0))
    }
}

impl<K: Ord> SortedSet<K> {
    /// Add a key; whether it was not there yet.
    pub fn insert(&mut self, key: K) -> bool {
        match self.items.binary_search(&key) {
            Ok(_) => false,
            Err(at) => {
                self.items.insert(at, key);
                true
            }
        }
    }

    /// Take a key out; whether it was there.
    pub fn remove(&mut self, key: &K) -> bool {
        match self.items.binary_search(key) {
            Ok(at) => {
                self.items.remove(at);
                true
            }
            Err(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn keeps_the_order_and_answers_of_a_btree_set() {
        let mut set = SortedSet::new();
        let mut reference = BTreeSet::new();
        // A fixed pseudo-random walk of inserts and removes over a small key range.
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        for step in 0..4000u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let key = (state % 97, u64::from(step % 3));
            if state % 5 < 3 {
                assert_eq!(set.insert(key), reference.insert(key), "insert {key:?}");
            } else {
                assert_eq!(set.remove(&key), reference.remove(&key), "remove {key:?}");
            }
            if step % 7 == 0 {
                assert_eq!(set.pop_first(), reference.pop_first());
            }
            assert_eq!(set.first(), reference.first());
            assert_eq!(set.len(), reference.len());
        }
        assert!(set.iter().eq(reference.iter()));
    }
}
