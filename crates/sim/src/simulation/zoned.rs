//! Zoned devices in the simulator: which elevators the kernel lets run on one and the zone
//! layout it hands mq-deadline, fio's zone mode for them (`zonemode=zbd`: writes placed at
//! write pointers), and what a request the device failed does to its job.
//!
//! The kernel modelled is Linux 5.8 to 6.9. There a host-managed disk requires an elevator
//! with the `ELEVATOR_F_ZBD_SEQ_WRITE` feature (`sd_zbc` sets it as a required feature of
//! the queue, `elv_support_features` refuses others): mq-deadline, whose zone write locking
//! keeps one write per sequential zone at the device, is the only one, and `none` (noop
//! here) is allowed too, with nothing to keep writes in order. Linux 6.10 replaced zone
//! write locking with zone write plugging above the elevator, under which any elevator
//! keeps a zone's writes in order; ioslice models the earlier kernels, whose elevator is
//! what makes the difference.
//!
//! fio in zone mode `zbd` keeps its own write pointer per zone, advanced as it issues a
//! write and shared by every job on the device (fio's `zbd_info`), and places each write
//! at the pointer of the zone its offset falls in (`zbd_adjust_block`): a sequential writer
//! writes each zone from its pointer on, a random writer writes a random zone at its
//! pointer. With `max_open_zones` (the job's, else the device's), a write to a zone not
//! yet open while that many are goes to one of the open zones instead. A write that no
//! longer fits in its zone resets the zone first (fio's `zbd_reset_zone`, a `BLKRESETZONE`
//! ioctl), once the job's I/O at the device has completed (fio quiesces first, so that no
//! write of the old pass lands after the reset); the reset takes no device time here. With
//! `zone_reset_frequency`, once the zones of the job's range hold `zone_reset_threshold` of
//! it in data, every `1 / frequency`-th write resets its zone first the same way (fio's
//! simulated garbage collection). A trim resets its zone (`zone_trim.rs`). Reads are left where the job puts them
//! (the drive returns fill data beyond a write pointer); fio would move them below it
//! (`read_beyond_wp=0`). Sources: fio 3.3x `zbd.c` and its HOWTO (`zonemode`,
//! `max_open_zones`), Linux `block/elevator.c`, `drivers/scsi/sd_zbc.c`,
//! `block/mq-deadline.c` (5.8–6.9). This is our own code.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use ioslice_core::request::SECTOR_SIZE;
use ioslice_core::tunable::SchedSpec;
use ioslice_fio::pattern::{DataDirection, IoUnit};
use ioslice_fio::{JobFile, ZoneMode};

use super::{PendingIo, SimError, Simulation};
use crate::device::ZoneGeometry;

/// The elevators a zoned device takes: mq-deadline (told the zone layout) and noop.
pub(super) fn scheduler_for(
    spec: &SchedSpec,
    zones: Option<ZoneGeometry>,
    device: &str,
) -> Result<SchedSpec, SimError> {
    let Some(zones) = zones else {
        return Ok(spec.clone());
    };
    let name = ioslice_core::registry::lookup(&spec.name)
        .map_err(SimError::Scheduler)?
        .name;
    match name {
        "noop" => Ok(spec.clone()),
        "mq-deadline" => {
            let mut spec = spec.clone();
            for (key, value) in [
                ("zone_sectors", zones.zone_sectors),
                ("conventional_zones", zones.conventional),
            ] {
                if !spec.settings.iter().any(|(k, _)| k == key) {
                    spec.settings.push((key.to_string(), value.to_string()));
                }
            }
            Ok(spec)
        }
        other => Err(SimError::Zoned(format!(
            "scheduler `{other}` cannot run on the zoned device {device} (Linux 5.8–6.9 takes only elevators with zoned write support): expected mq-deadline or noop"
        ))),
    }
}

/// Refuses fio's zone mode on a device without zones.
pub(super) fn check_zbd(
    job_file: &JobFile,
    zones: Option<ZoneGeometry>,
    device: &str,
) -> Result<(), SimError> {
    for job in &job_file.jobs {
        if job.zone_mode != ZoneMode::Zbd {
            continue;
        }
        let Some(zones) = zones else {
            let at = job.option_origins.get("zonemode").unwrap_or(&job.origin);
            return Err(SimError::Job(format!(
                "{}:{}: job {}: zonemode=zbd needs a zoned device, and {device} has no zones: expected --device sim:smr",
                at.file, at.line, job.name
            )));
        };
        let device_bytes = zones.zone_sectors * SECTOR_SIZE;
        let trim_bs = &job.block_size[2];
        if job.pattern.trims() && (trim_bs.min() != device_bytes || trim_bs.max() != device_bytes) {
            // fio's `zbd_verify_bs`: a trim resets one whole zone.
            return Err(SimError::Job(format!(
                "job {}: a trim with zonemode=zbd resets one zone, so its block size must be the zone size of {device}, {device_bytes} bytes: expected bs={device_bytes} for trims",
                job.name
            )));
        }
        if job.zone_size != 0 && job.zone_size != device_bytes {
            return Err(SimError::Job(format!(
                "job {}: zonesize={} does not match the zone size of {device}, {device_bytes} bytes: expected zonesize={device_bytes} or none",
                job.name, job.zone_size
            )));
        }
    }
    Ok(())
}

/// fio's view of the zones it writes (`zbd_info`): the write pointer of each zone as far as
/// fio has issued, and the zones it has open.
#[derive(Debug, Clone)]
pub(super) struct ZbdWriter {
    geometry: ZoneGeometry,
    issued: BTreeMap<u64, u64>,
    open: BTreeSet<u64>,
    /// Zones reset to make room.
    resets: u64,
    /// Writes left before `zone_reset_frequency` resets a zone (0: not counting yet; fio's
    /// `write_cnt`).
    writes_to_reset: u64,
}

impl ZbdWriter {
    pub(super) fn new(geometry: ZoneGeometry) -> Self {
        Self {
            geometry,
            issued: BTreeMap::new(),
            open: BTreeSet::new(),
            resets: 0,
            writes_to_reset: 0,
        }
    }

    /// fio's simulated garbage collection (`zone_reset_threshold`, `zone_reset_frequency`):
    /// whether this write resets its zone, because the zones of `range` (sectors) hold at
    /// least `threshold` of it in data and this is the `1 / frequency`-th write since the
    /// last such reset (the count runs only while the threshold is passed, as in fio).
    fn collection_due(&mut self, range: (u64, u64), threshold: f64, frequency: f64) -> bool {
        if frequency <= 0.0 {
            return false;
        }
        let (first, end) = range;
        let valid: u64 = self
            .issued
            .range(self.geometry.zone_of(first)..self.geometry.zone_of(end.max(1) - 1) + 1)
            .map(|(&zone, &pointer)| pointer - self.geometry.start_of(zone))
            .sum();
        if (valid as f64) < (end - first) as f64 * threshold {
            return false;
        }
        let period = (1.0 / frequency).min(u64::MAX as f64) as u64;
        if self.writes_to_reset == 0 {
            self.writes_to_reset = period.max(1);
        }
        self.writes_to_reset -= 1;
        self.writes_to_reset == 0
    }

    /// The zone layout.
    pub(super) fn geometry(&self) -> ZoneGeometry {
        self.geometry
    }

    /// Where fio believes `zone`'s write pointer is: as far as it has issued, else where the
    /// device has it, else the zone's start.
    pub(super) fn pointer(&self, zone: u64, device_pointer: Option<u64>) -> u64 {
        self.issued
            .get(&zone)
            .copied()
            .or(device_pointer)
            .unwrap_or_else(|| self.geometry.start_of(zone))
    }

    /// `zone` is reset: its pointer back at its start, no longer open. Its sectors.
    pub(super) fn reset(&mut self, zone: u64) -> (u64, u64) {
        let start = self.geometry.start_of(zone);
        self.issued.insert(zone, start);
        self.open.remove(&zone);
        self.resets += 1;
        (start, start + self.geometry.zone_sectors)
    }

    /// The zone a write to `zone` goes to under an open-zone limit of `max_open` (0: none):
    /// itself if open or if there is room, else one of the open zones.
    fn target(&self, zone: u64, max_open: u64) -> u64 {
        let full = max_open > 0 && self.open.len() as u64 >= max_open;
        if !full || self.open.contains(&zone) {
            return zone;
        }
        let pick = (zone % self.open.len() as u64) as usize;
        self.open.iter().nth(pick).copied().unwrap_or(zone)
    }
}

/// A zone-mode job's state in the simulator.
#[derive(Debug, Default)]
pub(super) struct ZbdProcess {
    /// Its requests submitted and not completed.
    pub(super) at_device: u32,
    /// Writes held until `at_device` is 0: the first resets its zone, the others (issued
    /// while it waited) follow it.
    held: VecDeque<IoUnit>,
    /// The first held write resets its zone whether or not it is full (garbage collection).
    held_forces_reset: bool,
}

/// What placing a write did: where it goes, and the zone to reset first, if any.
struct Placement {
    sector: u64,
    reset: Option<(u64, u64)>,
}

impl Simulation<'_> {
    /// fio's placement of a write in zone mode `zbd` (other I/O is left as it is); `None`
    /// when the write must reset its zone and the job still has I/O at the device: it is
    /// held until that completes ([`Self::zbd_release`]).
    pub(super) fn zbd_place(&mut self, index: u32, unit: IoUnit) -> Option<IoUnit> {
        let process = &self.processes[index as usize];
        let spec = &self.job_file.jobs[process.spec_index];
        if spec.zone_mode != ZoneMode::Zbd {
            return Some(unit);
        }
        if unit.direction != DataDirection::Write {
            self.processes[index as usize].zbd.at_device += 1;
            return Some(unit);
        }
        let unit = self.zbd_place_write(index, unit)?;
        self.processes[index as usize].zbd.at_device += 1;
        Some(unit)
    }

    /// Submit a held write once the job has nothing at the device.
    pub(super) fn zbd_release(&mut self, index: u32) {
        let zbd = &mut self.processes[index as usize].zbd;
        if zbd.at_device > 0 {
            return;
        }
        let held = std::mem::take(&mut zbd.held);
        for unit in held {
            self.submit(index, unit);
        }
    }

    fn zbd_place_write(&mut self, index: u32, mut unit: IoUnit) -> Option<IoUnit> {
        let process = &self.processes[index as usize];
        let spec = &self.job_file.jobs[process.spec_index];
        let base = process.file_sectors[unit.file];
        let sector = base + unit.offset / SECTOR_SIZE;
        let sectors = unit.length.div_ceil(SECTOR_SIZE);
        let max_open = spec.max_open_zones;
        let busy = process.zbd.at_device > 0;
        let Some(writer) = self.zbd.as_mut() else {
            return Some(unit);
        };
        let max_open = if max_open > 0 {
            max_open
        } else {
            writer.geometry.max_open
        };
        let device = &*self.device;
        let pointer = |zone| device.write_pointer(zone);
        if !process.zbd.held.is_empty() {
            self.processes[index as usize].zbd.held.push_back(unit);
            return None;
        }
        let force = std::mem::take(&mut self.processes[index as usize].zbd.held_forces_reset)
            || writer.collection_due(
                job_range(spec, base, device.info().capacity_sectors),
                spec.zone_reset_threshold,
                spec.zone_reset_frequency,
            );
        if busy && needs_reset(writer, sector, sectors, max_open, force, pointer) {
            let zbd = &mut self.processes[index as usize].zbd;
            zbd.held.push_back(unit);
            zbd.held_forces_reset = force;
            return None;
        }
        let Some(placement) = place(writer, sector, sectors, max_open, force, pointer) else {
            return Some(unit);
        };
        if let Some((start, end)) = placement.reset {
            self.device.reset_zones(start, end);
            self.processes[index as usize].stats.zone_resets += 1;
        }
        unit.offset = placement.sector.saturating_sub(base) * SECTOR_SIZE;
        Some(unit)
    }

    /// A request of a job failed with `errno`: the job counts it, remembers the first, and
    /// stops issuing unless `continue_on_error` covers it, as fio does; the process then
    /// reaps it as any completion.
    pub(super) fn io_failed(&mut self, io: &PendingIo, errno: i32) {
        let process = &mut self.processes[io.process as usize];
        let spec = &self.job_file.jobs[process.spec_index];
        let d = ioslice_fio::workload::direction_index(io.direction);
        process.stats.directions[d].errors += 1;
        if process.stats.error == 0 {
            process.stats.error = errno;
        }
        let goes_on = ioslice_fio::errno::goes_on(
            &spec.continue_on_error,
            &spec.ignore_error,
            io.direction,
            errno,
        );
        if !goes_on {
            if let Some(clock) = process.clock.as_mut() {
                clock.abort();
            }
        }
    }
}

/// The sectors of a job's range (fio's `file_offset` to `file_offset + io_size`): from its
/// `offset` for `size` bytes, else to the end of the device.
pub(super) fn job_range(spec: &ioslice_fio::JobSpec, base: u64, capacity: u64) -> (u64, u64) {
    let start = match spec.offset {
        ioslice_fio::Extent::Bytes(bytes) => base + bytes / SECTOR_SIZE,
        ioslice_fio::Extent::Percent(_) => base,
    };
    let end = match spec.size {
        Some(ioslice_fio::Extent::Bytes(bytes)) => start + bytes / SECTOR_SIZE,
        _ => capacity,
    };
    (start, end.min(capacity).max(start + 1))
}

/// Whether placing a write of `sectors` aimed at `sector` would reset its zone (always, if
/// `force` and the zone is sequential).
fn needs_reset(
    writer: &ZbdWriter,
    sector: u64,
    sectors: u64,
    max_open: u64,
    force: bool,
    device_pointer: impl Fn(u64) -> Option<u64>,
) -> bool {
    let geometry = writer.geometry;
    let aimed = geometry.zone_of(sector);
    if !geometry.is_sequential(aimed) || aimed >= geometry.count {
        return false;
    }
    let zone = writer.target(aimed, max_open);
    let start = geometry.start_of(zone);
    let pointer = writer
        .issued
        .get(&zone)
        .copied()
        .or_else(|| device_pointer(zone))
        .unwrap_or(start);
    force || pointer + sectors > start + geometry.zone_sectors
}

/// Place a write of `sectors` aimed at `sector`: at the write pointer of its zone (or of an
/// open zone, under the limit), resetting the zone first when the write no longer fits or
/// `force` says so.
/// `None` for a conventional zone, written where the job says.
fn place(
    writer: &mut ZbdWriter,
    sector: u64,
    sectors: u64,
    max_open: u64,
    force: bool,
    device_pointer: impl Fn(u64) -> Option<u64>,
) -> Option<Placement> {
    let geometry = writer.geometry;
    let aimed = geometry.zone_of(sector);
    if !geometry.is_sequential(aimed) || aimed >= geometry.count {
        return None;
    }
    let zone = writer.target(aimed, max_open);
    let start = geometry.start_of(zone);
    let end = start + geometry.zone_sectors;
    let pointer = *writer
        .issued
        .entry(zone)
        .or_insert_with(|| device_pointer(zone).unwrap_or(start));
    let mut placement = Placement {
        sector: pointer,
        reset: None,
    };
    if force || pointer + sectors > end {
        placement = Placement {
            sector: start,
            reset: Some((start, end)),
        };
        writer.resets += 1;
    }
    let after = placement.sector + sectors;
    writer.issued.insert(zone, after);
    if after >= end {
        writer.open.remove(&zone);
    } else {
        writer.open.insert(zone);
    }
    Some(placement)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer() -> ZbdWriter {
        ZbdWriter::new(ZoneGeometry {
            zone_sectors: 100,
            conventional: 1,
            count: 10,
            max_open: 2,
        })
    }

    #[test]
    fn writes_go_to_the_pointer_and_reset_a_full_zone() {
        let mut w = writer();
        let at =
            |w: &mut ZbdWriter, sector| place(w, sector, 50, 0, false, |_| None).map(|p| p.sector);
        assert_eq!(at(&mut w, 10), None, "conventional zone");
        assert_eq!(at(&mut w, 170), Some(100));
        assert_eq!(at(&mut w, 120), Some(150));
        assert_eq!(w.resets, 0);
        assert_eq!(at(&mut w, 100), Some(100), "full: reset, then its start");
        assert_eq!(w.resets, 1);
    }

    #[test]
    fn the_open_zone_limit_redirects_to_an_open_zone() {
        let mut w = writer();
        let at =
            |w: &mut ZbdWriter, sector| place(w, sector, 10, 2, false, |_| None).map(|p| p.sector);
        assert_eq!(at(&mut w, 100), Some(100));
        assert_eq!(at(&mut w, 200), Some(200));
        // Zones 1 and 2 are open: a write aimed at zone 5 goes to one of them.
        let sector = at(&mut w, 500).expect("sequential zone");
        assert!(sector == 110 || sector == 210, "{sector}");
    }
}
