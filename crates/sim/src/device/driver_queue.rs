//! A deep driver queue in front of a device's own queue: the arrangement of a kernel elevator
//! on a loop device over `ioslice emulate`.
//!
//! The host's driver takes up to `depth` commands (the loop device's 128 tags) and hands them
//! to the device first come first served as its own queue has room (its NCQ depth, or one
//! for a disk without command queueing), each the moment a slot frees. The elevator above
//! sees the driver's depth, so it hands over at once what it would otherwise have kept and
//! sorted; the commands beyond the device's depth wait in arrival order. `--host
//! driver_queue=128` runs the simulator this way, so that its figures compare like for like
//! with the kernel's on the emulated device.

use std::collections::VecDeque;

use ioslice_core::Nanos;

use super::{Command, DeviceInfo, DeviceModel};

/// A device behind a first-come-first-served driver queue.
pub struct DriverQueue {
    inner: Box<dyn DeviceModel>,
    /// The device's own queue depth.
    inner_depth: usize,
    /// Commands the driver takes in all.
    depth: usize,
    waiting: VecDeque<Command>,
}

impl DriverQueue {
    /// `inner` behind a driver that takes `depth` commands (at least the device's own depth).
    pub fn new(inner: Box<dyn DeviceModel>, depth: usize) -> Self {
        let inner_depth = inner.info().queue_depth.max(1);
        Self {
            inner,
            inner_depth,
            depth: depth.max(inner_depth),
            waiting: VecDeque::new(),
        }
    }

    /// Hand the device what waits, as long as it has room, at `now`.
    fn feed(&mut self, now: Nanos) {
        while self.inner.in_flight() < self.inner_depth {
            let Some(command) = self.waiting.pop_front() else {
                return;
            };
            self.inner.submit(command, now);
        }
    }
}

impl DeviceModel for DriverQueue {
    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            queue_depth: self.depth,
            ..self.inner.info()
        }
    }

    fn in_flight(&self) -> usize {
        self.inner.in_flight() + self.waiting.len()
    }

    fn submit(&mut self, command: Command, now: Nanos) {
        self.waiting.push_back(command);
        self.feed(now);
    }

    fn next_event(&self) -> Option<Nanos> {
        self.inner.next_event()
    }

    fn advance(&mut self, now: Nanos, completed: &mut Vec<u64>) {
        // Event by event, so that a waiting command takes a freed slot at the moment it frees.
        while let Some(at) = self.inner.next_event().filter(|&at| at <= now) {
            self.inner.advance(at, completed);
            self.feed(at);
        }
        self.inner.advance(now, completed);
    }

    fn take_error(&mut self, tag: u64) -> Option<i32> {
        self.inner.take_error(tag)
    }

    fn reset_zones(&mut self, start: u64, end: u64) {
        self.inner.reset_zones(start, end);
    }

    fn write_pointer(&self, zone: u64) -> Option<u64> {
        self.inner.write_pointer(zone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::null::NullDevice;
    use ioslice_core::Direction;

    fn read(tag: u64) -> Command {
        Command {
            tag,
            direction: Direction::Read,
            sector: tag * 8,
            sectors: 8,
            fua: false,
        }
    }

    #[test]
    fn commands_beyond_the_devices_depth_wait_in_arrival_order() {
        // A device that serves one command at a time, 1 ms each, behind a driver of eight.
        let inner = NullDevice::new("null".into(), 1_000_000, 1, 1 << 20);
        let mut device = DriverQueue::new(Box::new(inner), 8);
        assert_eq!(device.info().queue_depth, 8);
        for tag in [3, 1, 2] {
            device.submit(read(tag), 0);
        }
        assert_eq!(device.in_flight(), 3);
        let mut completed = Vec::new();
        let mut times = Vec::new();
        while let Some(at) = device.next_event() {
            let before = completed.len();
            device.advance(at, &mut completed);
            times.extend(std::iter::repeat_n(at, completed.len() - before));
        }
        assert_eq!(completed, [3, 1, 2]);
        assert_eq!(times, [1_000_000, 2_000_000, 3_000_000]);
        assert_eq!(device.in_flight(), 0);
    }
}
