//! The linear cost model (`io.cost.model ctrl=user model=linear ...`).
//!
//! A device is described by six figures: sequential bytes per second and 4 KiB sequential
//! and random IOPS, for reads and for writes. They become three coefficients per
//! direction, in vtime units: a cost per 4 KiB page (one second over pages per second),
//! and a base cost per sequential and per random request (one second over the IOPS, less
//! the page cost, never below zero). A request costs its base (sequential when it starts
//! within [`RANDIO_PAGES`] pages of where its group's last request ended, random beyond)
//! plus its pages (at least one). Defaults are the kernel's `autop` tables for a
//! rotational disk, an SSD of queue depth 1 and a default-class SSD (`block/blk-iocost.c`,
//! 5.4 to 6.x).

use super::VTIME_PER_SEC;
use crate::Direction;

/// Bytes in one cost page.
pub const PAGE_BYTES: u64 = 4096;
/// A seek of more than this many pages from the group's last request end makes a request
/// random.
pub const RANDIO_PAGES: u64 = 4096;

/// The six user-visible parameters of `io.cost.model` (bytes/s and IOPS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinearParams {
    /// Read sequential bytes per second.
    pub rbps: u64,
    /// Read sequential 4 KiB IOPS.
    pub rseqiops: u64,
    /// Read random 4 KiB IOPS.
    pub rrandiops: u64,
    /// Write sequential bytes per second.
    pub wbps: u64,
    /// Write sequential 4 KiB IOPS.
    pub wseqiops: u64,
    /// Write random 4 KiB IOPS.
    pub wrandiops: u64,
}

impl LinearParams {
    /// The kernel's default for rotational disks (`AUTOP_HDD`).
    pub const HDD: LinearParams = LinearParams {
        rbps: 174_019_176,
        rseqiops: 41_708,
        rrandiops: 370,
        wbps: 178_075_866,
        wseqiops: 42_705,
        wrandiops: 378,
    };
    /// The kernel's default for a non-rotational device of queue depth 1 (`AUTOP_SSD_QD1`).
    pub const SSD_QD1: LinearParams = LinearParams {
        rbps: 245_855_193,
        rseqiops: 61_575,
        rrandiops: 6_946,
        wbps: 141_365_009,
        wseqiops: 33_716,
        wrandiops: 26_796,
    };
    /// The kernel's default for non-rotational devices (`AUTOP_SSD_DFL`).
    pub const SSD: LinearParams = LinearParams {
        rbps: 488_636_629,
        rseqiops: 8_932,
        rrandiops: 8_518,
        wbps: 427_891_549,
        wseqiops: 28_755,
        wrandiops: 21_940,
    };
}

/// Per-direction coefficients in vtime units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coefs {
    /// Cost of one 4 KiB page.
    pub page: u64,
    /// Base cost of a sequential request.
    pub seqio: u64,
    /// Base cost of a random request.
    pub randio: u64,
}

impl Coefs {
    /// Coefficients from bytes/s and sequential/random IOPS; a zero figure gives a zero
    /// coefficient.
    pub fn from_rates(bps: u64, seqiops: u64, randiops: u64) -> Coefs {
        let page = match bps.div_ceil(PAGE_BYTES) {
            0 if bps == 0 => 0,
            0 => 1,
            pages => VTIME_PER_SEC.div_ceil(pages),
        };
        let base = |iops: u64| {
            if iops == 0 {
                return 0;
            }
            VTIME_PER_SEC.div_ceil(iops).saturating_sub(page)
        };
        Coefs {
            page,
            seqio: base(seqiops),
            randio: base(randiops),
        }
    }
}

/// The cost model of one device: read and write coefficients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostModel {
    /// Read coefficients.
    pub read: Coefs,
    /// Write coefficients.
    pub write: Coefs,
}

impl CostModel {
    /// The model for the given parameters.
    pub fn linear(p: &LinearParams) -> CostModel {
        CostModel {
            read: Coefs::from_rates(p.rbps, p.rseqiops, p.rrandiops),
            write: Coefs::from_rates(p.wbps, p.wseqiops, p.wrandiops),
        }
    }

    /// The absolute cost (at hweight 100%) of a request of `bytes` at `sector`, for a
    /// group whose last request ended at `cursor` (sector; `None` before its first). The
    /// built-in model charges only reads and writes: a discard costs nothing, as in the
    /// kernel's model, whose cost switch has no case for any other operation.
    pub fn cost(&self, dir: Direction, sector: u64, bytes: u64, cursor: Option<u64>) -> u64 {
        let c = match dir {
            Direction::Read => &self.read,
            Direction::Write => &self.write,
            Direction::Discard => return 0,
        };
        let seek_pages = cursor.map_or(0, |end| sector.abs_diff(end) / (PAGE_BYTES / 512));
        let base = if seek_pages > RANDIO_PAGES {
            c.randio
        } else {
            c.seqio
        };
        let pages = (bytes / PAGE_BYTES).max(1);
        base + pages * c.page
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_discard_costs_nothing() {
        let m = CostModel::linear(&LinearParams::SSD);
        assert_eq!(m.cost(Direction::Discard, 0, 1 << 20, None), 0);
        assert!(m.cost(Direction::Write, 0, 1 << 20, None) > 0);
    }

    #[test]
    fn ssd_default_coefficients() {
        let m = CostModel::linear(&LinearParams::SSD);
        // 2^37 / ceil(488636629 / 4096) rounded up.
        assert_eq!(m.read.page, 1_152_074);
        assert_eq!(m.read.seqio, 15_387_255 - 1_152_074);
        assert_eq!(m.read.randio, 16_135_121 - 1_152_074);
    }

    #[test]
    fn hdd_random_read_costs_a_seek() {
        let m = CostModel::linear(&LinearParams::HDD);
        let seq = m.cost(Direction::Read, 8, 4096, Some(0));
        let rand = m.cost(Direction::Read, 8 * 5000, 4096, Some(0));
        // About one second over 41708 IOPS against one over 370.
        assert_eq!(seq, VTIME_PER_SEC.div_ceil(41_708));
        assert_eq!(rand, VTIME_PER_SEC.div_ceil(370));
    }

    #[test]
    fn first_request_and_partial_pages_count_as_sequential_single_page() {
        let m = CostModel::linear(&LinearParams::SSD);
        assert_eq!(
            m.cost(Direction::Write, 1 << 30, 512, None),
            m.write.seqio + m.write.page
        );
        assert_eq!(
            m.cost(Direction::Write, 0, 1 << 20, Some(0)),
            m.write.seqio + 256 * m.write.page
        );
    }

    #[test]
    fn zero_rates_give_zero_coefficients() {
        assert_eq!(
            Coefs::from_rates(0, 0, 0),
            Coefs {
                page: 0,
                seqio: 0,
                randio: 0
            }
        );
    }
}
