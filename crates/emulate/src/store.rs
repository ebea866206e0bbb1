//! Where the emulated disk keeps its bytes: a sparse file as large as the disk, so that data
//! written reads back and never-written blocks read as zeros, while only what was written
//! takes space.
//!
//! The store also keeps the extents written so far (read from the file's own data extents
//! when an existing file is given). Reads of never-written space are zero-filled here,
//! without the file: reading a hole through the page cache still allocates and zeroes page
//! cache pages, a whole read-ahead window at a time, which stalled sequential reads of a
//! fresh disk for 18 ms every 4 MiB on this VM.
//!
//! Touched by the FUSE session thread only (reads and writes happen as requests arrive; the
//! disk thread only times their replies).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::EmulateError;

/// Byte ranges written, as start → end, disjoint, with no two touching.
#[derive(Debug, Default)]
struct Extents(BTreeMap<u64, u64>);

impl Extents {
    /// Add `[start, end)`, merging with what it overlaps or touches.
    fn insert(&mut self, mut start: u64, mut end: u64) {
        if start >= end {
            return;
        }
        let touching: Vec<(u64, u64)> = self
            .0
            .range(..=end)
            .rev()
            .take_while(|&(_, &e)| e >= start)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in touching {
            self.0.remove(&s);
            start = start.min(s);
            end = end.max(e);
        }
        self.0.insert(start, end);
    }

    /// The parts of `[start, end)` that were written, in order, clipped to it.
    fn within(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        if start >= end {
            return Vec::new();
        }
        let first = self
            .0
            .range(..=start)
            .next_back()
            .filter(|&(_, &e)| e > start)
            .map(|(&s, &e)| (s, e));
        first
            .into_iter()
            .chain(self.0.range(start + 1..end).map(|(&s, &e)| (s, e)))
            .map(|(s, e)| (s.max(start), e.min(end)))
            .filter(|(s, e)| s < e)
            .collect()
    }
}

/// The disk's bytes.
#[derive(Debug)]
pub(crate) struct Store {
    file: File,
    capacity: u64,
    written: Mutex<Extents>,
}

impl Store {
    /// A store of `capacity` bytes: `path` if given (created sparse, or an existing regular
    /// file, extended to the capacity if shorter, whose data reads back), else an unnamed
    /// temporary file that goes when the emulator stops.
    pub(crate) fn open(path: Option<&Path>, capacity: u64) -> Result<Self, EmulateError> {
        let file = match path {
            None => tempfile::tempfile().map_err(|source| EmulateError::Store {
                path: std::env::temp_dir(),
                source,
            })?,
            Some(path) => open_regular(path)?,
        };
        let error = |source| EmulateError::Store {
            path: path.map_or_else(std::env::temp_dir, Path::to_path_buf),
            source,
        };
        let length = file.metadata().map_err(error)?.len();
        if length < capacity {
            file.set_len(capacity).map_err(error)?;
        }
        let written = data_extents(&file, length.min(capacity)).map_err(error)?;
        Ok(Self {
            file,
            capacity,
            written: Mutex::new(written),
        })
    }

    /// Read into `buffer` from byte `offset`; past the disk's end reads nothing. Returns the
    /// bytes read.
    pub(crate) fn read(&self, offset: u64, buffer: &mut [u8]) -> io::Result<usize> {
        let len = self.clip(offset, buffer.len());
        let buffer = &mut buffer[..len];
        let written = self.extents().within(offset, offset + len as u64);
        let mut at = offset;
        for (start, end) in written {
            fill_zeros(buffer, offset, at, start);
            let slice = &mut buffer[index(offset, start)..index(offset, end)];
            self.file.read_exact_at(slice, start)?;
            at = end;
        }
        fill_zeros(buffer, offset, at, offset + len as u64);
        Ok(len)
    }

    /// Write `data` at byte `offset`; past the disk's end writes nothing. Returns the bytes
    /// written.
    pub(crate) fn write(&self, offset: u64, data: &[u8]) -> io::Result<usize> {
        let len = self.clip(offset, data.len());
        self.file.write_all_at(&data[..len], offset)?;
        self.extents().insert(offset, offset + len as u64);
        Ok(len)
    }

    /// Make written data durable in the store (the disk was asked to flush its cache).
    pub(crate) fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn extents(&self) -> std::sync::MutexGuard<'_, Extents> {
        self.written.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How much of `len` bytes from `offset` lies on the disk.
    fn clip(&self, offset: u64, len: usize) -> usize {
        let room = self.capacity.saturating_sub(offset);
        usize::try_from(room).map_or(len, |room| room.min(len))
    }
}

/// The index in a buffer that starts at disk byte `base` of disk byte `at`.
fn index(base: u64, at: u64) -> usize {
    usize::try_from(at - base).unwrap_or(usize::MAX)
}

/// Zero the part of `buffer` (which starts at disk byte `base`) for disk bytes `[from, to)`.
fn fill_zeros(buffer: &mut [u8], base: u64, from: u64, to: u64) {
    if from < to {
        buffer[index(base, from)..index(base, to)].fill(0);
    }
}

/// The data extents of `file` in its first `length` bytes, from the file system
/// (`SEEK_DATA`/`SEEK_HOLE`); the whole length where the file system cannot say.
fn data_extents(file: &File, length: u64) -> io::Result<Extents> {
    let mut extents = Extents::default();
    let mut at = 0u64;
    while at < length {
        let Some(start) = seek(file, at, libc::SEEK_DATA)? else {
            break;
        };
        if start >= length {
            break;
        }
        let end = seek(file, start, libc::SEEK_HOLE)?
            .unwrap_or(length)
            .min(length);
        extents.insert(start, end);
        at = end.max(start + 1);
    }
    Ok(extents)
}

/// `lseek(fd, at, whence)`; `None` where there is no more data (`ENXIO`).
fn seek(file: &File, at: u64, whence: libc::c_int) -> io::Result<Option<u64>> {
    let at = libc::off_t::try_from(at).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: lseek takes a descriptor the file keeps open and two integers; no memory.
    let found = unsafe { libc::lseek(file.as_raw_fd(), at, whence) };
    if found >= 0 {
        return Ok(u64::try_from(found).ok());
    }
    let error = io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::ENXIO) => Ok(None),
        // No SEEK_DATA here: count the whole file as data.
        Some(libc::EINVAL) if whence == libc::SEEK_DATA => Ok(Some(at as u64)),
        Some(libc::EINVAL) => Ok(None),
        _ => Err(error),
    }
}

/// Open (or create) a regular file for the store; anything else is refused.
fn open_regular(path: &Path) -> Result<File, EmulateError> {
    let refuse = |reason: &str| EmulateError::StoreNotRegular {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    };
    match std::fs::metadata(path) {
        Ok(metadata) if !metadata.is_file() => return Err(refuse("not a regular file")),
        Ok(_) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(EmulateError::Store {
                path: path.to_path_buf(),
                source,
            })
        }
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|source| EmulateError::Store {
            path: PathBuf::from(path),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_bytes_read_back_and_holes_read_as_zeros() {
        let store = Store::open(None, 1 << 20).expect("a store");
        assert_eq!(store.write(4096, &[7u8; 512]).expect("write"), 512);
        let mut buffer = vec![1u8; 1024];
        assert_eq!(store.read(3584, &mut buffer).expect("read"), 1024);
        assert!(
            buffer[..512].iter().all(|&b| b == 0),
            "a hole reads as zeros"
        );
        assert!(buffer[512..].iter().all(|&b| b == 7));
        // Past the end: clipped.
        assert_eq!(
            store.write((1 << 20) - 512, &[1u8; 1024]).expect("write"),
            512
        );
        assert_eq!(store.read(1 << 20, &mut buffer).expect("read"), 0);
    }

    #[test]
    fn extents_merge_what_touches_and_clip_to_a_range() {
        let mut extents = Extents::default();
        extents.insert(100, 200);
        extents.insert(300, 400);
        extents.insert(200, 250);
        extents.insert(390, 500);
        assert_eq!(
            extents.0.iter().map(|(&s, &e)| (s, e)).collect::<Vec<_>>(),
            [(100, 250), (300, 500)]
        );
        assert_eq!(extents.within(150, 350), [(150, 250), (300, 350)]);
        assert_eq!(extents.within(0, 100), []);
        assert_eq!(extents.within(260, 290), []);
        extents.insert(0, 1000);
        assert_eq!(extents.0.len(), 1);
    }

    #[test]
    fn an_existing_store_reads_back_what_it_holds() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("store");
        {
            let store = Store::open(Some(&path), 8 << 20).expect("a store");
            store.write(5 << 20, &[9u8; 4096]).expect("write");
        }
        let store = Store::open(Some(&path), 8 << 20).expect("the store again");
        let mut buffer = vec![0u8; 8192];
        store.read((5 << 20) - 4096, &mut buffer).expect("read");
        assert!(buffer[..4096].iter().all(|&b| b == 0));
        assert!(buffer[4096..].iter().all(|&b| b == 9));
    }

    #[test]
    fn a_directory_is_refused_as_a_store() {
        let dir = tempfile::tempdir().expect("a directory");
        let error = Store::open(Some(dir.path()), 4096).expect_err("refused");
        assert!(error.to_string().contains("not a regular file"), "{error}");
    }
}
