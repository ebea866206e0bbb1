//! A map keyed by request id. Ids are handed out in sequence, so a multiplicative hash
//! spreads them well at a fraction of SipHash's cost; the map is never iterated, so its
//! order cannot reach any output.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Fibonacci hashing of a `u64` key.
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01B3);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A map from request id to `V`.
#[derive(Debug, Clone)]
pub struct IdMap<V>(HashMap<u64, V, BuildHasherDefault<IdHasher>>);

impl<V> Default for IdMap<V> {
    fn default() -> Self {
        Self(HashMap::default())
    }
}

impl<V> IdMap<V> {
    /// Insert; an id is inserted once.
    pub fn insert(&mut self, id: u64, value: V) {
        self.0.insert(id, value);
    }

    /// The value of an id, to change it.
    pub fn get_mut(&mut self, id: u64) -> Option<&mut V> {
        self.0.get_mut(&id)
    }

    /// Remove and return.
    pub fn remove(&mut self, id: u64) -> Option<V> {
        self.0.remove(&id)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every value, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.0.values()
    }
}
