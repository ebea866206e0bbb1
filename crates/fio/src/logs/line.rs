//! The lines of fio 3.33's log files, byte for byte.
//!
//! A value log line is `time, value, direction, block size, priority`, with the I/O's
//! offset before the priority under `log_offset=1`: `0, 24235, 0, 4096, 0`. The time is in
//! milliseconds since the job's start (its ramp's end), the direction 0 for reads, 1 for
//! writes and 2 for trims. The priority is 1 for an I/O of the real-time class and 0
//! otherwise, or with `log_prio=1` the I/O's whole `ioprio` value (class << 13 | level) as
//! `0x%04x`. An averaged entry has block size, offset and priority 0.
//!
//! A histogram line is `time, direction, block size, ` then the count of completions in
//! each of fio's 1856 latency bins since the direction's previous line, neighbouring bins
//! summed in groups of 2^`log_hist_coarseness`.

use std::io::{self, Write};

use crate::latency_bins::BINS;

/// One entry of a value log (bw, iops, slat, clat, lat).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Entry {
    /// Milliseconds since the job's start.
    pub time_ms: u64,
    /// The value: KiB/s, I/Os per second, or nanoseconds.
    pub value: u64,
    /// 0 read, 1 write, 2 trim.
    pub direction: usize,
    /// The I/O's size in bytes (0 for an averaged entry).
    pub block_size: u64,
    /// The I/O's offset in its file.
    pub offset: u64,
    /// The I/O's `ioprio` value: class << 13 | level (0 when the job sets none).
    pub priority: u16,
}

/// Which optional columns a log has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Columns {
    /// `log_offset=1`: the offset column.
    pub offset: bool,
    /// `log_prio=1`: the priority column holds the whole `ioprio` value.
    pub prio: bool,
}

/// The `ioprio` class of real-time I/O.
const REAL_TIME_CLASS: u16 = 1;
/// Where the class sits in an `ioprio` value.
const CLASS_SHIFT: u16 = 13;

/// Write one value log line.
pub fn write_entry(out: &mut impl Write, entry: &Entry, columns: Columns) -> io::Result<()> {
    write!(
        out,
        "{}, {}, {}, {}, ",
        entry.time_ms, entry.value, entry.direction, entry.block_size
    )?;
    if columns.offset {
        write!(out, "{}, ", entry.offset)?;
    }
    if columns.prio {
        writeln!(out, "0x{:04x}", entry.priority)
    } else {
        let real_time = entry.priority >> CLASS_SHIFT == REAL_TIME_CLASS;
        writeln!(out, "{}", u8::from(real_time))
    }
}

/// Write one histogram line: `bins` holds the counts since the direction's last line.
pub fn write_histogram(
    out: &mut impl Write,
    (time_ms, direction, block_size): (u64, usize, u64),
    bins: &[u64; BINS],
    coarseness: u32,
) -> io::Result<()> {
    write!(out, "{time_ms}, {direction}, {block_size}")?;
    let stride = 1usize << coarseness;
    for group in bins.chunks(stride) {
        write!(out, ", {}", group.iter().sum::<u64>())?;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(entry: &Entry, columns: Columns) -> String {
        let mut out = Vec::new();
        write_entry(&mut out, entry, columns).expect("writing to memory");
        String::from_utf8(out).expect("ascii")
    }

    #[test]
    fn value_lines_are_fios() {
        let entry = Entry {
            time_ms: 12,
            value: 24235,
            direction: 1,
            block_size: 4096,
            offset: 503808,
            priority: 1 << 13 | 3,
        };
        assert_eq!(line(&entry, Columns::default()), "12, 24235, 1, 4096, 1\n");
        let both = Columns {
            offset: true,
            prio: true,
        };
        assert_eq!(line(&entry, both), "12, 24235, 1, 4096, 503808, 0x2003\n");
        let best_effort = Entry {
            priority: 2 << 13 | 5,
            ..entry
        };
        let offset = Columns {
            offset: true,
            prio: false,
        };
        assert_eq!(
            line(&best_effort, offset),
            "12, 24235, 1, 4096, 503808, 0\n"
        );
    }

    #[test]
    fn histogram_lines_sum_neighbouring_bins() {
        let mut bins = [0u64; BINS];
        bins[0] = 1;
        bins[3] = 2;
        bins[BINS - 1] = 5;
        let render = |coarseness| {
            let mut out = Vec::new();
            write_histogram(&mut out, (101, 0, 4096), &bins, coarseness).expect("memory");
            String::from_utf8(out).expect("ascii")
        };
        let fine = render(0);
        assert!(fine.starts_with("101, 0, 4096, 1, 0, 0, 2, 0"));
        assert!(fine.ends_with(", 0, 5\n"));
        assert_eq!(fine.split(", ").count(), 3 + BINS);
        let coarse = render(2);
        assert!(coarse.starts_with("101, 0, 4096, 3, 0"));
        assert_eq!(coarse.split(", ").count(), 3 + BINS / 4);
    }
}
