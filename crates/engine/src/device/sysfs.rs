//! Probing a block device through sysfs (`/sys/dev/block/MAJ:MIN/`): its logical block size,
//! queue depth and rotational flag, and what sits on it (partitions, holders such as
//! device-mapper or md).
//!
//! Read once, by the thread that opens a target.

use std::fs;
use std::path::{Path, PathBuf};

/// Where sysfs is mounted.
pub(crate) const SYSFS: &str = "/sys";

/// Major and minor numbers from a `dev_t` (glibc's encoding, as the kernel exports it).
pub(crate) fn dev_major_minor(dev: u64) -> (u32, u32) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & 0xffff_f000);
    let minor = (dev & 0xff) | ((dev >> 12) & 0xffff_ff00);
    (major as u32, minor as u32)
}

/// A block device's directory in sysfs, and its disk's (the same for a whole disk).
#[derive(Debug, Clone)]
pub(crate) struct SysfsDevice {
    /// `/sys/devices/.../block/sda` or `/sys/devices/.../block/sda/sda1`.
    pub(crate) dir: PathBuf,
    /// The whole disk's directory (holding `queue/` and `device/`).
    disk: PathBuf,
}

impl SysfsDevice {
    /// Resolve `<sys>/dev/block/MAJ:MIN`.
    pub(crate) fn find(sys: &Path, (major, minor): (u32, u32)) -> Option<Self> {
        let dir = fs::canonicalize(sys.join(format!("dev/block/{major}:{minor}"))).ok()?;
        Some(Self::at(dir))
    }

    /// The device whose sysfs directory is `dir`.
    pub(crate) fn at(dir: PathBuf) -> Self {
        let disk = if dir.join("partition").exists() {
            dir.parent().map(Path::to_path_buf).unwrap_or(dir.clone())
        } else {
            dir.clone()
        };
        Self { dir, disk }
    }

    pub(crate) fn logical_block_size(&self) -> Option<u32> {
        read_u32(&self.disk.join("queue/logical_block_size"))
    }

    pub(crate) fn rotational(&self) -> bool {
        read_u32(&self.disk.join("queue/rotational")) == Some(1)
    }

    pub(crate) fn queue_depth(&self) -> Option<u32> {
        read_u32(&self.disk.join("device/queue_depth"))
            .or_else(|| read_u32(&self.disk.join("queue/nr_requests")))
    }

    /// Its kernel name (`sda1`).
    pub(crate) fn name(&self) -> String {
        self.dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Its partitions: `(name, "MAJ:MIN")`.
    pub(crate) fn partitions(&self) -> Vec<(String, String)> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut partitions: Vec<(String, String)> = entries
            .flatten()
            .filter(|entry| entry.path().join("partition").exists())
            .filter_map(|entry| {
                let dev = fs::read_to_string(entry.path().join("dev")).ok()?;
                Some((
                    entry.file_name().to_string_lossy().into_owned(),
                    dev.trim().to_string(),
                ))
            })
            .collect();
        partitions.sort();
        partitions
    }

    /// Devices stacked on it (device mapper, md): names under `holders/`.
    pub(crate) fn holders(&self) -> Vec<String> {
        let Ok(entries) = fs::read_dir(self.dir.join("holders")) else {
            return Vec::new();
        };
        let mut holders: Vec<String> = entries
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        holders.sort();
        holders
    }
}

/// A positive integer from a sysfs file.
pub(crate) fn read_u32(path: &Path) -> Option<u32> {
    fs::read_to_string(path)
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|&value| value > 0)
}
