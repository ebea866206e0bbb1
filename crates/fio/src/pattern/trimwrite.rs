//! fio's sequential `trimwrite` when the trim and write block sizes differ
//! (`bs=4k,8k,16k`): each direction keeps its own position and block size, and the next I/O
//! of a file is a trim when the file's last write started where its last trim did (or
//! neither happened yet), else a write. The job ends when a trim is due and the bytes to trim
//! are spent, or when the next write would pass the end of the file (a time-based job starts
//! the file over instead). With equal sizes this is the trim-then-write pair of each block that
//! [`IoPattern::next`] issues; fio's `set_rw_ddir` (io_u.c, 3.33) decides both the same way.
//!
//! Measured with fio 3.33 on a loop device (`rw=trimwrite bs=4k,8k,16k size=64k`,
//! `write_iolog`): trim 0 (16 KiB), write 0 (8 KiB), trim 16k, write 8k, write 16k, trim
//! 32k, write 24k, write 32k, trim 48k, write 40k, write 48k: 4 trims, 7 writes. Over 1 MiB,
//! `bs=4k,8k,16k` gives 64 trims and 127 writes, `bs=4k,16k,8k` 2 trims and 64 writes.

use rand::RngCore;

use super::{direction_slot, draw_block_size, IoPattern, IoUnit};
use crate::direction::DataDirection;

/// One file's positions.
#[derive(Debug, Clone, Default)]
pub(super) struct Cursors {
    /// Where the next write starts, relative to the file's region.
    write: u64,
    /// Where the last trim started (absolute), if one was issued.
    last_trim: Option<u64>,
    /// Where the last write started (absolute), if one was issued.
    last_write: Option<u64>,
}

impl IoPattern {
    /// The next I/O of a `trimwrite` job whose trims and writes differ in size.
    pub(super) fn next_split_trimwrite(&mut self, rng: &mut impl RngCore) -> Option<IoUnit> {
        let file = self.next_file;
        let cursors = &self.split_trimwrite[file];
        let trim = cursors.last_write == cursors.last_trim;
        if trim && (self.budget == Some(0) || self.ios_left == Some(0)) {
            return None;
        }
        self.next_file = (file + 1) % self.regions.len();
        if trim {
            let length = self.draw_length(DataDirection::Trim, rng);
            let unit = self.place(file, DataDirection::Trim, length, rng)?;
            self.charge(unit.length);
            self.split_trimwrite[file].last_trim = Some(unit.offset);
            return Some(unit);
        }
        let wanted = draw_block_size(&self.block_size[direction_slot(DataDirection::Write)], rng);
        let region = &self.regions[file];
        let cursors = &mut self.split_trimwrite[file];
        let length = wanted.min(region.len);
        let position = if cursors.write.saturating_add(length) <= region.len {
            cursors.write
        } else if self.budget.is_none() {
            // Time based: the file starts over.
            0
        } else {
            // A write past the end of the file ends the job, as fio's does.
            self.budget = Some(0);
            return None;
        };
        cursors.write = position + length;
        let offset = region.start + position;
        cursors.last_write = Some(offset);
        Some(IoUnit {
            direction: DataDirection::Write,
            file,
            offset,
            length,
        })
    }
}
