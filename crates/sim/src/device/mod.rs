//! Device models. A device accepts commands up to its queue depth, services them in
//! virtual time and reports completions. Models are deterministic: the same commands at
//! the same times always complete at the same times.

use ioslice_core::{Direction, Nanos};

pub mod controller_cache;
pub mod driver_queue;
pub mod hdd;
pub mod null;
pub mod raid;
pub mod ssd;
pub mod zones;

pub use zones::ZoneGeometry;

/// One command sent to a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    /// The driver's tag, returned at completion.
    pub tag: u64,
    /// Read, write or discard.
    pub direction: Direction,
    /// First sector.
    pub sector: u64,
    /// Length in sectors.
    pub sectors: u32,
    /// Forced unit access: a write that must reach the medium before it completes.
    pub fua: bool,
}

/// What a scheduler and the user are told about a device.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceInfo {
    /// The device as named on the command line, overrides included (`sim:sata-7200:ncq=1`).
    pub name: String,
    /// Capacity in sectors.
    pub capacity_sectors: u64,
    /// Commands the device accepts at once.
    pub queue_depth: usize,
    /// Whether it has moving heads (the kernel's `queue/rotational`).
    pub rotational: bool,
    /// Whether it accepts discards (the kernel's `queue/discard_max_bytes` is not 0). The
    /// kernel refuses a discard to a device that does not with `EOPNOTSUPP` before any
    /// request is made (`blkdev_issue_discard`), so such a device is never sent one.
    pub discard: bool,
    /// The zone layout of a zoned (host-managed) device; `None` for a conventional one.
    pub zones: Option<ZoneGeometry>,
}

/// A simulated device.
pub trait DeviceModel: Send {
    /// Name, capacity, queue depth, rotational.
    fn info(&self) -> DeviceInfo;

    /// Commands accepted and not yet completed.
    fn in_flight(&self) -> usize;

    /// Accept a command at `now`. The driver submits only while `in_flight() < info().queue_depth`.
    fn submit(&mut self, command: Command, now: Nanos);

    /// The time of the device's next internal event (a completion, or internal work such as
    /// a write-back destage), if any.
    fn next_event(&self) -> Option<Nanos>;

    /// Run the device up to `now` (the driver calls it at `next_event()`), appending the tags
    /// of commands that completed, in completion order, to `completed`.
    fn advance(&mut self, now: Nanos, completed: &mut Vec<u64>);

    /// The error a completed command failed with, taken once (`None`: it succeeded). Only
    /// a zoned device fails commands: a write off its zone's write pointer.
    fn take_error(&mut self, _tag: u64) -> Option<i32> {
        None
    }

    /// Reset the write pointers of the sequential zones `[start, end)` covers whole (the
    /// kernel's `BLKRESETZONE`); nothing on a device without zones.
    fn reset_zones(&mut self, _start: u64, _end: u64) {}

    /// The write pointer of a sequential zone of a zoned device.
    fn write_pointer(&self, _zone: u64) -> Option<u64> {
        None
    }
}
