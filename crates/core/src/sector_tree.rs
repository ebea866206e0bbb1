//! Sort lists of queued requests by start sector, as balanced trees whose nodes live in one
//! arena indexed by the requests' slots, the way the kernel's elevators keep a request's
//! `rb_node` inside the request itself (`block/elevator.c`, `elv_rb_add`/`elv_rb_del`, and
//! `bfq_find_next_rq` in `block/bfq-iosched.c`, Linux 5.x). Many lists share one arena (one
//! per queue, over the slots of one slab); a list itself is only its root and length.
//!
//! Because the node of a request is found from its slot, removing a request, and finding the
//! requests just before and after it in sector order, need no search from the root: a
//! removal rotates the node down until it has at most one child and splices it out, and the
//! neighbours are one walk along parent or child links. Only an insertion, and a lookup by
//! sector (the requests that start where a merge candidate must), walk down from the root.
//!
//! The balance is a treap's: every node draws a priority from a fixed pseudo-random sequence
//! when it is inserted, and the tree is kept a heap on those priorities, so its expected
//! depth is logarithmic whatever order the sectors arrive in (sequential streams included).
//! The order is that of `(start sector, slot)`, the same as a `BTreeSet` of those pairs, so
//! every choice made from it is the same; the draw only shapes the tree, and it is
//! deterministic, so runs repeat byte for byte.

use crate::merge::SlotKey;

/// No node.
const NIL: usize = usize::MAX;

/// One request's place in its list.
#[derive(Debug, Clone, Copy)]
struct Node {
    sector: u64,
    priority: u64,
    parent: usize,
    /// The lower and the higher child.
    child: [usize; 2],
}

impl Node {
    const DETACHED: Node = Node {
        sector: 0,
        priority: 0,
        parent: NIL,
        child: [NIL; 2],
    };

    /// Which side of this node `(sector, slot)` belongs on: 0 before it, 1 after. Computed
    /// without a branch: the walk down follows it at every level, and a random sector would
    /// make a branch's guess wrong half the time.
    fn side(&self, at: usize, sector: u64, slot: SlotKey) -> usize {
        let after = (sector > self.sector) | ((sector == self.sector) & (slot > at));
        usize::from(after)
    }

    /// Which child of this node `child` is.
    fn side_of(&self, child: usize) -> usize {
        usize::from(self.child[1] == child)
    }
}

/// One sort list: the root of its tree and how many requests it holds.
#[derive(Debug, Clone, Copy)]
pub struct SortList {
    root: usize,
    len: usize,
}

impl Default for SortList {
    fn default() -> Self {
        Self { root: NIL, len: 0 }
    }
}

impl SortList {
    /// Number of requests on the list.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The nodes of every list over one slab, by slot.
#[derive(Debug, Clone, Default)]
pub struct SectorTree {
    nodes: Vec<Node>,
    /// State of the priority sequence (splitmix64).
    draws: u64,
}

impl SectorTree {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Put the request in `slot`, starting at `sector`, on `list`. The slot must not be on
    /// any list.
    pub fn insert(&mut self, list: &mut SortList, slot: SlotKey, sector: u64) {
        if self.nodes.len() <= slot {
            self.nodes.resize(slot + 1, Node::DETACHED);
        }
        let priority = self.draw();
        let mut parent = NIL;
        let mut at = list.root;
        let mut side = 0;
        while at != NIL {
            parent = at;
            let node = &self.nodes[at];
            side = node.side(at, sector, slot);
            at = node.child[side];
        }
        self.nodes[slot] = Node {
            sector,
            priority,
            parent,
            child: [NIL; 2],
        };
        if parent == NIL {
            list.root = slot;
        } else {
            self.nodes[parent].child[side] = slot;
        }
        while self.nodes[slot].parent != NIL
            && self.nodes[self.nodes[slot].parent].priority < priority
        {
            self.rotate_up(list, slot);
        }
        list.len += 1;
    }

    /// Take the request in `slot` off `list`, which holds it.
    pub fn remove(&mut self, list: &mut SortList, slot: SlotKey) {
        loop {
            let [left, right] = self.nodes[slot].child;
            if left == NIL || right == NIL {
                let child = if left == NIL { right } else { left };
                let parent = self.nodes[slot].parent;
                if child != NIL {
                    self.nodes[child].parent = parent;
                }
                self.replace_child(list, parent, slot, child);
                break;
            }
            let heavier = if self.nodes[left].priority > self.nodes[right].priority {
                left
            } else {
                right
            };
            self.rotate_up(list, heavier);
        }
        self.nodes[slot] = Node::DETACHED;
        list.len -= 1;
    }

    /// The start sector the request in `slot` is sorted by.
    pub fn sector(&self, slot: SlotKey) -> u64 {
        self.nodes[slot].sector
    }

    /// The request after the one in `slot` on its list, in sector order.
    pub fn next(&self, slot: SlotKey) -> Option<SlotKey> {
        self.neighbour(slot, 1)
    }

    /// The request before the one in `slot` on its list, in sector order.
    pub fn prev(&self, slot: SlotKey) -> Option<SlotKey> {
        self.neighbour(slot, 0)
    }

    /// The neighbour on `side` (0 before, 1 after): the outermost node of that subtree
    /// towards `slot`, or else the first ancestor `slot` lies on the other side of.
    fn neighbour(&self, slot: SlotKey, side: usize) -> Option<SlotKey> {
        let down = self.nodes[slot].child[side];
        if down != NIL {
            return Some(self.outermost(down, 1 - side));
        }
        let mut at = slot;
        loop {
            let parent = self.nodes[at].parent;
            if parent == NIL {
                return None;
            }
            if self.nodes[parent].child[1 - side] == at {
                return Some(parent);
            }
            at = parent;
        }
    }

    /// The list's requests that start at `sector`, in slot order (the order of the list).
    pub fn starting_at<'a>(
        &'a self,
        list: &SortList,
        sector: u64,
    ) -> impl Iterator<Item = SlotKey> + 'a {
        let mut found = NIL;
        let mut at = list.root;
        while at != NIL {
            let node = &self.nodes[at];
            if node.sector == sector {
                found = at;
            }
            at = node.child[usize::from(sector > node.sector)];
        }
        let first = (found != NIL).then_some(found);
        std::iter::successors(first, move |&slot| {
            self.next(slot)
                .filter(|&next| self.nodes[next].sector == sector)
        })
    }

    /// The list's first request in sector order.
    pub fn first(&self, list: &SortList) -> Option<SlotKey> {
        (list.root != NIL).then(|| self.outermost(list.root, 0))
    }

    /// The list's requests in sector order, as `(start sector, slot)`.
    pub fn iter<'a>(&'a self, list: &SortList) -> impl Iterator<Item = (u64, SlotKey)> + 'a {
        std::iter::successors(self.first(list), |&slot| self.next(slot))
            .map(|slot| (self.nodes[slot].sector, slot))
    }

    /// The last node down `side` links from `at`.
    fn outermost(&self, mut at: usize, side: usize) -> usize {
        while self.nodes[at].child[side] != NIL {
            at = self.nodes[at].child[side];
        }
        at
    }

    /// The next priority: splitmix64 over a counter.
    fn draw(&mut self) -> u64 {
        self.draws = self.draws.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.draws;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Let `parent`'s link to `old` (or the list's root, if `parent` is none) point at `new`.
    fn replace_child(&mut self, list: &mut SortList, parent: usize, old: usize, new: usize) {
        if parent == NIL {
            list.root = new;
        } else {
            let side = self.nodes[parent].side_of(old);
            self.nodes[parent].child[side] = new;
        }
    }

    /// Rotate `node` above its parent, keeping the order.
    fn rotate_up(&mut self, list: &mut SortList, node: usize) {
        let parent = self.nodes[node].parent;
        let grandparent = self.nodes[parent].parent;
        let side = self.nodes[parent].side_of(node);
        let moved = self.nodes[node].child[1 - side];
        self.nodes[parent].child[side] = moved;
        if moved != NIL {
            self.nodes[moved].parent = parent;
        }
        self.nodes[node].child[1 - side] = parent;
        self.nodes[parent].parent = node;
        self.nodes[node].parent = grandparent;
        self.replace_child(list, grandparent, parent, node);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::ops::Bound;

    use proptest::prelude::*;

    use super::*;

    /// A step on one of a few lists sharing an arena.
    #[derive(Debug, Clone)]
    enum Step {
        Insert { list: usize, sector: u64 },
        Remove { pick: usize },
        Neighbours { pick: usize },
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => (0..3usize, 0..64u64).prop_map(|(list, sector)| Step::Insert { list, sector }),
            2 => any::<usize>().prop_map(|pick| Step::Remove { pick }),
            2 => any::<usize>().prop_map(|pick| Step::Neighbours { pick }),
        ]
    }

    /// The slot of the `pick`-th queued request (over all lists), with its list.
    fn nth(reference: &[BTreeSet<(u64, SlotKey)>], pick: usize) -> Option<(usize, u64, SlotKey)> {
        let total: usize = reference.iter().map(BTreeSet::len).sum();
        if total == 0 {
            return None;
        }
        let mut index = pick % total;
        for (list, set) in reference.iter().enumerate() {
            if index < set.len() {
                let &(sector, slot) = set.iter().nth(index)?;
                return Some((list, sector, slot));
            }
            index -= set.len();
        }
        None
    }

    proptest! {
        #[test]
        fn answers_as_a_btree_set_of_sector_and_slot(steps in prop::collection::vec(step(), 1..300)) {
            let mut tree = SectorTree::new();
            let mut lists = [SortList::default(); 3];
            let mut reference = vec![BTreeSet::new(); 3];
            let mut free: Vec<SlotKey> = Vec::new();
            let mut next_slot = 0;
            for step in steps {
                match step {
                    Step::Insert { list, sector } => {
                        let slot = free.pop().unwrap_or_else(|| {
                            next_slot += 1;
                            next_slot - 1
                        });
                        tree.insert(&mut lists[list], slot, sector);
                        reference[list].insert((sector, slot));
                    }
                    Step::Remove { pick } => {
                        if let Some((list, sector, slot)) = nth(&reference, pick) {
                            tree.remove(&mut lists[list], slot);
                            reference[list].remove(&(sector, slot));
                            free.push(slot);
                        }
                    }
                    Step::Neighbours { pick } => {
                        if let Some((list, sector, slot)) = nth(&reference, pick) {
                            let set = &reference[list];
                            let key = (sector, slot);
                            let after = set
                                .range((Bound::Excluded(key), Bound::Unbounded))
                                .next()
                                .map(|&(_, s)| s);
                            let before = set.range(..key).next_back().map(|&(_, s)| s);
                            prop_assert_eq!(tree.next(slot), after);
                            prop_assert_eq!(tree.prev(slot), before);
                            prop_assert_eq!(tree.sector(slot), sector);
                            let starting: Vec<SlotKey> = set
                                .range((sector, 0)..=(sector, SlotKey::MAX))
                                .map(|&(_, s)| s)
                                .collect();
                            prop_assert!(tree.starting_at(&lists[list], sector).eq(starting));
                            let absent = sector + 64;
                            prop_assert_eq!(tree.starting_at(&lists[list], absent).next(), None);
                        }
                    }
                }
                for (list, set) in lists.iter().zip(&reference) {
                    prop_assert_eq!(list.len(), set.len());
                    prop_assert_eq!(list.is_empty(), set.is_empty());
                    prop_assert_eq!(tree.first(list), set.first().map(|&(_, s)| s));
                }
            }
            for (list, set) in lists.iter().zip(&reference) {
                prop_assert!(tree.iter(list).eq(set.iter().copied()));
            }
        }
    }

    #[test]
    fn a_sequential_stream_stays_shallow() {
        let mut tree = SectorTree::new();
        let mut list = SortList::default();
        for slot in 0..4096 {
            tree.insert(&mut list, slot, slot as u64 * 8);
        }
        let depth = |mut at: usize| {
            let mut depth = 0;
            while tree.nodes[at].parent != NIL {
                at = tree.nodes[at].parent;
                depth += 1;
            }
            depth
        };
        let deepest = (0..4096).map(depth).max().unwrap_or(0);
        // log2(4096) = 12; a treap's expected depth is about 2.5 times that.
        assert!(deepest < 60, "depth {deepest} for 4096 sorted inserts");
        assert_eq!(tree.first(&list), Some(0));
        assert_eq!(tree.next(4095), None);
        assert_eq!(tree.prev(0), None);
        assert_eq!(tree.next(100), Some(101));
        for slot in (0..4096).step_by(2) {
            tree.remove(&mut list, slot);
        }
        assert_eq!(list.len(), 2048);
        assert_eq!(tree.next(101), Some(103));
        assert_eq!(tree.prev(101), Some(99));
    }
}
