//! `ioengine=ftruncate` and `ioengine=falloc` in a real run: each request the job's clock
//! issues becomes one system call on its file, made and timed in the job's thread, as fio
//! 3.33's `engines/ftruncate.c` and `engines/falloc.c` make them (both `FIO_SYNCIO`: one
//! at a time, the call's duration the request's completion latency, no submission latency):
//!
//! - `ftruncate`: a write truncates the file to the request's offset (its length is not
//!   used); a read or a trim fails with `EINVAL`;
//! - `falloc`: `fallocate` of the request's range: a read with `FALLOC_FL_KEEP_SIZE`, a
//!   write with no flag (the file may grow), a trim with `FALLOC_FL_PUNCH_HOLE |
//!   FALLOC_FL_KEEP_SIZE`.
//!
//! The files are opened here, read-write, the first time a request names them; the
//! engine the runner starts for them moves no byte of these jobs.

use std::fs::{File, OpenOptions};
use std::time::Instant;

use ioslice_core::Nanos;
use ioslice_fio::file_ops::RangeOp;
use ioslice_fio::pattern::{DataDirection, IoUnit};
use rustix::fs::FallocateFlags;

/// A job's files, opened for its range operations.
#[derive(Default)]
pub(crate) struct RangeFiles {
    open: Vec<Option<File>>,
}

impl RangeFiles {
    /// Carry out `unit` on `path` (file `unit.file` of the job): how long the call took, or
    /// its errno.
    pub(crate) fn apply(&mut self, op: RangeOp, unit: &IoUnit, path: &str) -> Result<Nanos, i32> {
        let file = self.file(unit.file, path)?;
        let began = Instant::now();
        let result = match (op, unit.direction) {
            (RangeOp::Ftruncate, DataDirection::Write) => rustix::fs::ftruncate(file, unit.offset),
            (RangeOp::Ftruncate, _) => Err(rustix::io::Errno::INVAL),
            (RangeOp::Falloc, direction) => {
                rustix::fs::fallocate(file, falloc_mode(direction), unit.offset, unit.length)
            }
        };
        let took = u64::try_from(began.elapsed().as_nanos()).unwrap_or(u64::MAX);
        result.map(|()| took).map_err(|errno| errno.raw_os_error())
    }

    fn file(&mut self, index: usize, path: &str) -> Result<&File, i32> {
        if self.open.len() <= index {
            self.open.resize_with(index + 1, || None);
        }
        if self.open[index].is_none() {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
            self.open[index] = Some(file);
        }
        self.open[index].as_ref().ok_or(libc::EBADF)
    }
}

/// fio's `fallocate` mode for a request's direction.
fn falloc_mode(direction: DataDirection) -> FallocateFlags {
    match direction {
        DataDirection::Read => FallocateFlags::KEEP_SIZE,
        DataDirection::Write => FallocateFlags::empty(),
        DataDirection::Trim => FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE,
    }
}
