//! A flash SSD at the level a scheduler sees it: no seeks, internal parallelism across
//! `channels` flash channels, a fixed per-command controller overhead, read and write
//! service times plus a per-channel transfer rate, and a host link (SATA or PCIe) that all
//! data crosses one command at a time. A command goes to the channel that frees first, so
//! up to `channels` commands are served at once and a deep queue is needed to reach full
//! throughput, as on real NCQ/NVMe devices (MQSim models the same parallelism in far more
//! detail). There is no garbage collection: steady-state write costs are folded into the
//! write service time.
//!
//! A discard (TRIM on SATA, Dataset Management/Deallocate on NVMe) carries no data: the
//! controller marks the range unmapped in its mapping table, touching neither flash nor
//! the link. It costs the command overhead and then `discard_latency` on the controller's
//! mapping-table work, which serves one discard at a time whatever its length, so discards
//! queue behind each other and not behind reads or writes. The figure is an assumption
//! (see the presets); queued and non-queued TRIM on SATA are not told apart (a drive with
//! non-queued TRIM drains its NCQ queue first). Deterministic.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use ioslice_core::{Direction, Nanos};

use super::{Command, DeviceInfo, DeviceModel};

/// Everything an [`Ssd`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct SsdConfig {
    /// The name reported in [`DeviceInfo`].
    pub name: String,
    /// Capacity in sectors.
    pub capacity_sectors: u64,
    /// Commands the device queues (NCQ 32 on SATA, deeper on NVMe).
    pub queue_depth: usize,
    /// Flash channels working in parallel.
    pub channels: usize,
    /// Controller overhead per command.
    pub overhead: Nanos,
    /// Flash read latency per command.
    pub read_latency: Nanos,
    /// Flash program latency per command (as seen behind the drive's buffer).
    pub write_latency: Nanos,
    /// Mapping-table work per discard command, whatever its length.
    pub discard_latency: Nanos,
    /// Transfer rate of one channel, MB/s.
    pub channel_mbps: f64,
    /// Host link rate, MB/s.
    pub link_mbps: f64,
}

/// A simulated SSD.
#[derive(Debug, Clone)]
pub struct Ssd {
    config: SsdConfig,
    channel_free: Vec<Nanos>,
    link_free: Nanos,
    /// When the mapping-table work of the discards accepted so far ends.
    unmap_free: Nanos,
    completions: BinaryHeap<Reverse<(Nanos, u64, u64)>>,
    seq: u64,
}

fn transfer_time(sectors: u32, mbps: f64) -> Nanos {
    (f64::from(sectors) * 512.0 * 1e3 / mbps.max(1e-3)).round() as Nanos
}

impl Ssd {
    /// Build an SSD.
    pub fn new(config: SsdConfig) -> Self {
        Self {
            channel_free: vec![0; config.channels.max(1)],
            link_free: 0,
            unmap_free: 0,
            completions: BinaryHeap::new(),
            seq: 0,
            config,
        }
    }

    /// A discard: the command overhead, then its turn at the mapping-table work.
    fn unmap(&mut self, tag: u64, now: Nanos) {
        let start = self.unmap_free.max(now + self.config.overhead);
        self.unmap_free = start + self.config.discard_latency;
        self.seq += 1;
        self.completions
            .push(Reverse((self.unmap_free, self.seq, tag)));
    }

    fn earliest_channel(&self) -> usize {
        (0..self.channel_free.len())
            .min_by_key(|&i| (self.channel_free[i], i))
            .unwrap_or(0)
    }
}

impl DeviceModel for Ssd {
    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            name: self.config.name.clone(),
            capacity_sectors: self.config.capacity_sectors,
            queue_depth: self.config.queue_depth.max(1),
            rotational: false,
            discard: true,
            zones: None,
        }
    }

    fn in_flight(&self) -> usize {
        self.completions.len()
    }

    fn submit(&mut self, command: Command, now: Nanos) {
        let flash = match command.direction {
            Direction::Read => self.config.read_latency,
            Direction::Write => self.config.write_latency,
            Direction::Discard => return self.unmap(command.tag, now),
        };
        let channel = self.earliest_channel();
        let start = self.channel_free[channel].max(now + self.config.overhead);
        let flash_done = start + flash + transfer_time(command.sectors, self.config.channel_mbps);
        self.channel_free[channel] = flash_done;
        let link_start = self.link_free.max(match command.direction {
            Direction::Read => flash_done,
            Direction::Write | Direction::Discard => now + self.config.overhead,
        });
        self.link_free = link_start + transfer_time(command.sectors, self.config.link_mbps);
        let done = self.link_free.max(flash_done);
        self.seq += 1;
        self.completions
            .push(Reverse((done, self.seq, command.tag)));
    }

    fn next_event(&self) -> Option<Nanos> {
        self.completions.peek().map(|Reverse((at, _, _))| *at)
    }

    fn advance(&mut self, now: Nanos, completed: &mut Vec<u64>) {
        while let Some(&Reverse((at, _, tag))) = self.completions.peek() {
            if at > now {
                break;
            }
            self.completions.pop();
            completed.push(tag);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ssd(channels: usize) -> Ssd {
        Ssd::new(SsdConfig {
            name: "sim:ssd".into(),
            capacity_sectors: 1 << 30,
            queue_depth: 32,
            channels,
            overhead: 10_000,
            read_latency: 80_000,
            write_latency: 20_000,
            discard_latency: 30_000,
            channel_mbps: 400.0,
            link_mbps: 550.0,
        })
    }

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
    fn channels_serve_in_parallel() {
        let mut one = ssd(1);
        let mut eight = ssd(8);
        for tag in 0..8 {
            one.submit(read(tag), 0);
            eight.submit(read(tag), 0);
        }
        let drain = |dev: &mut Ssd| {
            let mut done = Vec::new();
            let mut last = 0;
            while let Some(at) = dev.next_event() {
                dev.advance(at, &mut done);
                last = at;
            }
            assert_eq!(done.len(), 8);
            last
        };
        let serial = drain(&mut one);
        let parallel = drain(&mut eight);
        assert!(parallel * 4 < serial, "{parallel} vs {serial}");
    }
}
