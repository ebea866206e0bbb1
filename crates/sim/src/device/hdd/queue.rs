//! The on-drive command queue (NCQ/TCQ). The drive picks the queued command with the
//! shortest positioning time (SPTF: seek plus rotational latency from where the head is
//! now), with an age limit so that no command starves: a command that has waited longer
//! than the limit goes next. With a depth of 1 it is a plain one-slot queue.

use ioslice_core::Nanos;

use crate::device::Command;

/// A command waiting in the drive's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queued {
    /// The command.
    pub command: Command,
    /// When the drive accepted it.
    pub arrival: Nanos,
    /// Acceptance order, to break ties.
    pub seq: u64,
}

/// The queue of commands that need the mechanism.
#[derive(Debug, Clone, Default)]
pub struct DriveQueue {
    items: Vec<Queued>,
    age_limit: Nanos,
}

impl DriveQueue {
    /// An empty queue with the given starvation age limit.
    pub fn new(age_limit: Nanos) -> Self {
        Self {
            items: Vec::new(),
            age_limit,
        }
    }

    /// Commands waiting.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Add a command.
    pub fn push(&mut self, queued: Queued) {
        self.items.push(queued);
    }

    /// Take the command SPTF chooses at `now`, given each command's positioning time.
    pub fn pop_sptf(
        &mut self,
        now: Nanos,
        mut positioning: impl FnMut(&Command) -> Nanos,
    ) -> Option<Queued> {
        let oldest = (0..self.items.len()).min_by_key(|&i| self.items[i].seq)?;
        let chosen = if now.saturating_sub(self.items[oldest].arrival) > self.age_limit {
            oldest
        } else {
            (0..self.items.len())
                .min_by_key(|&i| (positioning(&self.items[i].command), self.items[i].seq))
                .unwrap_or(oldest)
        };
        Some(self.items.swap_remove(chosen))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ioslice_core::Direction;

    fn queued(tag: u64, sector: u64, arrival: Nanos) -> Queued {
        let command = Command {
            tag,
            direction: Direction::Read,
            sector,
            sectors: 8,
            fua: false,
        };
        Queued {
            command,
            arrival,
            seq: tag,
        }
    }

    #[test]
    fn shortest_positioning_first_unless_too_old() {
        let mut queue = DriveQueue::new(100);
        queue.push(queued(1, 1000, 0));
        queue.push(queued(2, 10, 0));
        queue.push(queued(3, 500, 0));
        let distance = |command: &Command| command.sector;
        assert_eq!(queue.pop_sptf(50, distance).map(|q| q.command.tag), Some(2));
        assert_eq!(
            queue.pop_sptf(200, distance).map(|q| q.command.tag),
            Some(1)
        );
        assert_eq!(
            queue.pop_sptf(200, distance).map(|q| q.command.tag),
            Some(3)
        );
        assert!(queue.pop_sptf(200, distance).is_none());
    }
}
