//! The null device: every command, discards too, takes a fixed latency (default 0), and up to
//! `parallelism` commands are served at once. It measures the scheduler's and the
//! simulator's own overhead.

use std::collections::VecDeque;

use ioslice_core::Nanos;

use super::{Command, DeviceInfo, DeviceModel};

/// A device with fixed latency and configurable parallelism.
#[derive(Debug, Clone)]
pub struct NullDevice {
    name: String,
    latency: Nanos,
    parallelism: usize,
    capacity_sectors: u64,
    /// In-flight commands by completion time; latency is fixed, so arrival order is completion order.
    in_service: VecDeque<(Nanos, u64)>,
}

impl NullDevice {
    /// A null device.
    pub fn new(name: String, latency: Nanos, parallelism: usize, capacity_sectors: u64) -> Self {
        Self {
            name,
            latency,
            parallelism: parallelism.max(1),
            capacity_sectors,
            in_service: VecDeque::new(),
        }
    }
}

impl DeviceModel for NullDevice {
    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            name: self.name.clone(),
            capacity_sectors: self.capacity_sectors,
            queue_depth: self.parallelism,
            rotational: false,
            discard: true,
            zones: None,
        }
    }

    fn in_flight(&self) -> usize {
        self.in_service.len()
    }

    fn submit(&mut self, command: Command, now: Nanos) {
        self.in_service.push_back((now + self.latency, command.tag));
    }

    fn next_event(&self) -> Option<Nanos> {
        self.in_service.front().map(|&(at, _)| at)
    }

    fn advance(&mut self, now: Nanos, completed: &mut Vec<u64>) {
        while let Some(&(at, tag)) = self.in_service.front() {
            if at > now {
                break;
            }
            self.in_service.pop_front();
            completed.push(tag);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ioslice_core::Direction;

    #[test]
    fn fixed_latency_in_order() {
        let mut dev = NullDevice::new("sim:null".into(), 10, 2, 1 << 30);
        let cmd = |tag| Command {
            tag,
            direction: Direction::Read,
            sector: 0,
            sectors: 8,
            fua: false,
        };
        dev.submit(cmd(1), 0);
        dev.submit(cmd(2), 5);
        assert_eq!(dev.in_flight(), 2);
        assert_eq!(dev.next_event(), Some(10));
        let mut done = Vec::new();
        dev.advance(10, &mut done);
        assert_eq!(done, vec![1]);
        dev.advance(15, &mut done);
        assert_eq!(done, vec![1, 2]);
        assert_eq!(dev.next_event(), None);
    }
}
