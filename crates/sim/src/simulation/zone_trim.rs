//! Trims in fio's zone mode `zbd`: a trim of a sequential zone is a zone reset.
//!
//! fio 3.33 (`io_u.c` `do_io_u_trim`, `zbd.c` `zbd_do_io_u_trim`) resets the zone a trim
//! falls in instead of discarding it (a `BLKRESETZONE` ioctl: the write pointer goes back to
//! the zone's start, the zone is no longer open) and counts the trim's whole length as
//! done; a trim of a conventional zone is an ordinary discard. A random trim aimed at an
//! empty zone goes to the nearest zone of the job's range that holds data, looking after
//! and before it in turn (`zbd_adjust_block`, `zbd_find_zone` with one byte); sequential
//! trims take their zone as it is. fio also requires the trim block size to be the zone
//! size (`zbd_verify_bs`), which [`super::zoned::check_zbd`] checks.
//!
//! Here the reset takes no device time, as the resets fio makes for writes do in this
//! simulator, and the trim completes the moment it is issued, without the elevator or the
//! device. Where no zone of the job's range holds data, fio finds no I/O to issue and tries
//! again until a write fills one or the job's time is up; here the trim completes at once
//! without resetting anything. This is our own code.

use ioslice_core::request::SECTOR_SIZE;
use ioslice_fio::pattern::{DataDirection, IoUnit};
use ioslice_fio::ZoneMode;

use super::zoned::{job_range, ZbdWriter};
use super::Simulation;
use crate::device::ZoneGeometry;

impl Simulation<'_> {
    /// Whether `unit` is a zone-mode trim of a sequential zone, which is then reset (`unit`
    /// moved to the zone fio picks); it then completes at once, off the device.
    pub(super) fn zbd_trim(&mut self, index: u32, unit: &mut IoUnit) -> bool {
        if unit.direction != DataDirection::Trim {
            return false;
        }
        let process = &self.processes[index as usize];
        let spec = &self.job_file.jobs[process.spec_index];
        if spec.zone_mode != ZoneMode::Zbd {
            return false;
        }
        let base = process.file_sectors[unit.file];
        let range = job_range(spec, base, self.device.info().capacity_sectors);
        let random = spec.pattern.is_random();
        let Some(writer) = self.zbd.as_mut() else {
            return false;
        };
        let geometry = writer.geometry();
        let aimed = geometry.zone_of(base + unit.offset / SECTOR_SIZE);
        if aimed >= geometry.count || !geometry.is_sequential(aimed) {
            return false;
        }
        let device = &*self.device;
        let holds_data = |writer: &ZbdWriter, zone: u64| {
            writer.pointer(zone, device.write_pointer(zone)) > geometry.start_of(zone)
        };
        let zone = if random && !holds_data(writer, aimed) {
            let zones = zone_span(geometry, range);
            nearest_with_data(aimed, zones, |zone| {
                geometry.is_sequential(zone) && holds_data(writer, zone)
            })
        } else {
            Some(aimed)
        };
        let Some(zone) = zone else {
            return true;
        };
        let (start, end) = writer.reset(zone);
        self.device.reset_zones(start, end);
        let process = &mut self.processes[index as usize];
        process.stats.zone_resets += 1;
        unit.offset = start.saturating_sub(base) * SECTOR_SIZE;
        true
    }
}

/// The zones `range` (sectors) covers, as `first..end`.
fn zone_span(geometry: ZoneGeometry, range: (u64, u64)) -> (u64, u64) {
    let (first, end) = range;
    let last = geometry.zone_of(end.max(1) - 1);
    (geometry.zone_of(first), (last + 1).min(geometry.count))
}

/// fio's `zbd_find_zone` for a random job: from `aimed`, the nearest zone of `zones`
/// (`first..end`) that `has_data`, looking one after, then one before, then two after, ….
fn nearest_with_data(aimed: u64, zones: (u64, u64), has_data: impl Fn(u64) -> bool) -> Option<u64> {
    let (first, end) = zones;
    let span = end.saturating_sub(first);
    for step in 1..=span {
        let after = aimed + step;
        if after < end && has_data(after) {
            return Some(after);
        }
        if let Some(before) = aimed.checked_sub(step) {
            if before >= first && has_data(before) {
                return Some(before);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_zone_with_data_is_looked_for_after_then_before() {
        let with = |zones: &'static [u64]| move |zone: u64| zones.contains(&zone);
        assert_eq!(nearest_with_data(5, (0, 10), with(&[3, 7])), Some(7));
        assert_eq!(nearest_with_data(5, (0, 10), with(&[4, 6])), Some(6));
        assert_eq!(nearest_with_data(5, (0, 10), with(&[4, 8])), Some(4));
        assert_eq!(nearest_with_data(5, (5, 10), with(&[4])), None, "outside");
        assert_eq!(nearest_with_data(5, (0, 10), with(&[5])), None, "itself");
        assert_eq!(nearest_with_data(0, (0, 3), with(&[2])), Some(2));
    }

    #[test]
    fn a_job_range_spans_the_zones_it_touches() {
        let geometry = ZoneGeometry {
            zone_sectors: 100,
            conventional: 1,
            count: 10,
            max_open: 2,
        };
        assert_eq!(zone_span(geometry, (100, 300)), (1, 3));
        assert_eq!(zone_span(geometry, (150, 301)), (1, 4));
        assert_eq!(zone_span(geometry, (0, 5000)), (0, 10));
    }
}
