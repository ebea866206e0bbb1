//! Where each job's files lie on the simulated disk. Files named like devices (`/dev/…`)
//! are the device itself and start at sector 0. Other files are laid out one after
//! another from the start of the disk, in order of first use and aligned to 1 MiB, as a
//! fresh filesystem would place files written one at a time; jobs naming the same file
//! share it.

use std::collections::BTreeMap;

use ioslice_core::request::SECTOR_SIZE;

/// Alignment of each file's start: 1 MiB.
const FILE_ALIGNMENT: u64 = 1 << 20;

/// A file too large for the device.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "file '{name}' ({size} bytes) does not fit on the device: {available} bytes left of {capacity}"
)]
pub struct LayoutError {
    /// The file.
    pub name: String,
    /// Its size.
    pub size: u64,
    /// Bytes left after the files placed before it.
    pub available: u64,
    /// Device capacity in bytes.
    pub capacity: u64,
}

/// Files and their first sectors.
#[derive(Debug, Clone)]
pub struct Layout {
    capacity_bytes: u64,
    next_free: u64,
    files: BTreeMap<String, (u64, u64)>,
}

impl Layout {
    /// An empty disk of this many bytes.
    pub fn new(capacity_bytes: u64) -> Self {
        Self {
            capacity_bytes,
            next_free: 0,
            files: BTreeMap::new(),
        }
    }

    /// Whether a name stands for the device itself rather than a file on it.
    pub fn is_device_name(name: &str) -> bool {
        name.starts_with("/dev/")
    }

    /// The first sector of a file, placing it if it is new. A file already placed keeps
    /// its place; if a later job wants it larger, it must still fit where it is.
    pub fn place(&mut self, name: &str, size: u64) -> Result<u64, LayoutError> {
        if Self::is_device_name(name) {
            return self.check_fits(name, 0, size).map(|_| 0);
        }
        if let Some(&(start, placed_size)) = self.files.get(name) {
            if size > placed_size {
                self.check_fits(name, start, size)?;
                self.files.insert(name.to_string(), (start, size));
                self.next_free = self.next_free.max(align(start + size));
            }
            return Ok(start / SECTOR_SIZE);
        }
        let start = self.next_free;
        self.check_fits(name, start, size)?;
        self.files.insert(name.to_string(), (start, size));
        self.next_free = align(start + size);
        Ok(start / SECTOR_SIZE)
    }

    fn check_fits(&self, name: &str, start: u64, size: u64) -> Result<(), LayoutError> {
        if start.saturating_add(size) > self.capacity_bytes {
            return Err(LayoutError {
                name: name.to_string(),
                size,
                available: self.capacity_bytes.saturating_sub(start),
                capacity: self.capacity_bytes,
            });
        }
        Ok(())
    }
}

fn align(bytes: u64) -> u64 {
    bytes.div_ceil(FILE_ALIGNMENT) * FILE_ALIGNMENT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_follow_one_another_aligned_and_shared_by_name() {
        let mut layout = Layout::new(1 << 30);
        assert_eq!(layout.place("a", 1000).unwrap(), 0);
        assert_eq!(layout.place("b", 4 << 20).unwrap(), (1 << 20) / 512);
        assert_eq!(layout.place("a", 1000).unwrap(), 0);
        assert_eq!(layout.place("c", 1).unwrap(), (5 << 20) / 512);
        assert_eq!(layout.place("/dev/sdb", 1 << 30).unwrap(), 0);
        let err = layout.place("huge", 2 << 30).unwrap_err();
        assert!(err.to_string().contains("'huge'"));
    }
}
