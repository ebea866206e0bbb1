//! Targets: the regular file or block device the engine drives, opened with or without
//! O_DIRECT, with what the engine must know about it (logical block size for buffer
//! alignment, queue depth, size), and the safety check before writing to a block device.
//!
//! Everything here is safe code: the block device size comes from seeking to its end, its
//! geometry from sysfs (`/sys/dev/block/MAJ:MIN/`).

use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod refusal;
mod sysfs;

pub use ioslice_core::file_kind::kind_name;
pub(crate) use refusal::refusal_reason;
#[cfg(test)]
use refusal::*;
pub use refusal::{refusal_line, write_refusal};
pub(crate) use sysfs::dev_major_minor;
use sysfs::{SysfsDevice, SYSFS};

/// Queue depth when sysfs does not say (and for regular files).
pub const DEFAULT_QUEUE_DEPTH: u32 = 32;

/// Logical block size assumed for regular files opened with O_DIRECT. The real requirement
/// is the filesystem's direct-I/O alignment (`statx` `STATX_DIOALIGN`, Linux 6.1), which is
/// the underlying device's logical block size on ext4 and XFS: 512 or 4096. 4096 satisfies
/// both, so buffers, offsets and lengths aligned to it work on almost every filesystem.
pub const REGULAR_FILE_DIRECT_ALIGN: u32 = 4096;

/// Logical block size reported for buffered regular files (any alignment works; 512 is what
/// a sector-addressed request model expects).
pub const REGULAR_FILE_BUFFERED_ALIGN: u32 = 512;

/// What a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// A regular file on some filesystem.
    RegularFile,
    /// A block device (a disk, a partition, a loop device, a device-mapper volume).
    BlockDevice,
}

/// How to open a target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// Open with O_DIRECT (fio's `direct=1`): buffers, offsets and lengths must then be
    /// multiples of [`Target::logical_block_size`].
    pub direct: bool,
    /// Open for writing as well as reading.
    pub write: bool,
    /// For a regular file: create it, or extend it, to this many bytes by writing zeros (as
    /// fio lays out its files, so reads hit real blocks rather than holes), then `fsync`. A
    /// longer file is left alone. Ignored for block devices.
    pub create_len: Option<u64>,
}

/// Why a target could not be opened. Each message is one line naming the path.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// The path does not exist and no size was given to create a file there.
    #[error("{path}: no such file or block device (give a size to create a file there)")]
    NotFound {
        /// The path.
        path: PathBuf,
    },
    /// Opening (or creating) was refused.
    #[error(
        "{path}: permission denied (opening a block device usually needs root or the disk group)"
    )]
    PermissionDenied {
        /// The path.
        path: PathBuf,
    },
    /// A directory, character device, FIFO or socket.
    #[error("{path}: is a {what}; expected a regular file or a block device")]
    NotFileOrBlockDevice {
        /// The path.
        path: PathBuf,
        /// What it is instead.
        what: &'static str,
    },
    /// O_DIRECT refused at open (`EINVAL`): tmpfs and some FUSE filesystems do this.
    #[error("{path}: O_DIRECT is not supported on this filesystem (tmpfs, for one); put the file on a disk filesystem or use direct=0")]
    DirectUnsupported {
        /// The path.
        path: PathBuf,
    },
    /// Laying out the file failed (a full disk, a read-only filesystem, …).
    #[error("{path}: cannot lay out a {len}-byte file: {source}")]
    LayOut {
        /// The path.
        path: PathBuf,
        /// The size asked for.
        len: u64,
        /// What failed.
        source: io::Error,
    },
    /// Any other failure to open or inspect the target.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

impl DeviceError {
    fn from_io(path: &Path, source: io::Error) -> Self {
        let path = path.to_path_buf();
        match source.kind() {
            io::ErrorKind::NotFound => DeviceError::NotFound { path },
            io::ErrorKind::PermissionDenied => DeviceError::PermissionDenied { path },
            _ => DeviceError::Io { path, source },
        }
    }
}

/// An open file or block device and what the engine needs to know about it.
#[derive(Debug, Clone)]
pub struct Target {
    file: Arc<File>,
    path: PathBuf,
    kind: TargetKind,
    logical_block_size: u32,
    queue_depth: u32,
    size_bytes: u64,
    direct: bool,
    /// Major and minor number of a block device.
    devno: Option<(u32, u32)>,
    /// The device (for a file: the one holding its filesystem) has moving heads, as sysfs's
    /// `queue/rotational` says; `false` where sysfs does not say (tmpfs, overlay).
    rotational: bool,
}

impl Target {
    /// Open `path` as `options` say.
    ///
    /// - A regular file is created or extended when `create_len` asks; its queue depth is
    ///   [`DEFAULT_QUEUE_DEPTH`], its logical block size [`REGULAR_FILE_DIRECT_ALIGN`] with
    ///   O_DIRECT and [`REGULAR_FILE_BUFFERED_ALIGN`] without.
    /// - A block device's logical block size is sysfs's `queue/logical_block_size`, its queue
    ///   depth `device/queue_depth`, else `queue/nr_requests`, else [`DEFAULT_QUEUE_DEPTH`]
    ///   (for a partition, its disk's), its size where a seek to its end lands.
    ///
    /// # Errors
    /// A [`DeviceError`] naming the path and what was expected.
    pub fn open(path: impl AsRef<Path>, options: &OpenOptions) -> Result<Self, DeviceError> {
        let path = path.as_ref();
        let metadata = match fs::metadata(path) {
            Ok(metadata) => Some(metadata),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(DeviceError::from_io(path, e)),
        };
        match (&metadata, options.create_len) {
            (None, None) => {
                return Err(DeviceError::NotFound {
                    path: path.to_path_buf(),
                })
            }
            (None, Some(len)) => lay_out(path, len)?,
            (Some(metadata), Some(len)) if metadata.is_file() && metadata.len() < len => {
                lay_out(path, len)?;
            }
            _ => {}
        }
        if let Some(metadata) = &metadata {
            check_kind(path, &metadata.file_type())?;
        }

        let mut open = fs::OpenOptions::new();
        open.read(true).write(options.write);
        if options.direct {
            open.custom_flags(libc::O_DIRECT);
        }
        let file = match open.open(path) {
            Ok(file) => file,
            Err(e) if options.direct && e.raw_os_error() == Some(libc::EINVAL) => {
                return Err(DeviceError::DirectUnsupported {
                    path: path.to_path_buf(),
                })
            }
            Err(e) => return Err(DeviceError::from_io(path, e)),
        };
        // What was opened, not what the path named a moment ago.
        let metadata = file.metadata().map_err(|e| DeviceError::from_io(path, e))?;
        let file_type = metadata.file_type();
        check_kind(path, &file_type)?;

        let target = if file_type.is_block_device() {
            let devno = dev_major_minor(metadata.rdev());
            let sys = SysfsDevice::find(Path::new(SYSFS), devno);
            let size_bytes = (&file)
                .seek(SeekFrom::End(0))
                .map_err(|e| DeviceError::from_io(path, e))?;
            Target {
                file: Arc::new(file),
                path: path.to_path_buf(),
                kind: TargetKind::BlockDevice,
                logical_block_size: sys
                    .as_ref()
                    .and_then(SysfsDevice::logical_block_size)
                    .unwrap_or(512),
                queue_depth: sys
                    .as_ref()
                    .and_then(SysfsDevice::queue_depth)
                    .unwrap_or(DEFAULT_QUEUE_DEPTH),
                size_bytes,
                direct: options.direct,
                devno: Some(devno),
                rotational: sys.as_ref().is_some_and(SysfsDevice::rotational),
            }
        } else {
            Target {
                file: Arc::new(file),
                path: path.to_path_buf(),
                kind: TargetKind::RegularFile,
                logical_block_size: if options.direct {
                    REGULAR_FILE_DIRECT_ALIGN
                } else {
                    REGULAR_FILE_BUFFERED_ALIGN
                },
                queue_depth: DEFAULT_QUEUE_DEPTH,
                size_bytes: metadata.len(),
                direct: options.direct,
                devno: None,
                rotational: SysfsDevice::find(Path::new(SYSFS), dev_major_minor(metadata.dev()))
                    .is_some_and(|sys| sys.rotational()),
            }
        };
        Ok(target)
    }

    /// The open file, shared with the backend.
    pub fn file(&self) -> &Arc<File> {
        &self.file
    }

    /// The path it was opened by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Regular file or block device.
    pub fn kind(&self) -> TargetKind {
        self.kind
    }

    /// Alignment, in bytes, for buffers, offsets and lengths under O_DIRECT.
    pub fn logical_block_size(&self) -> u32 {
        self.logical_block_size
    }

    /// Default number of operations in flight: what the device reports, else 32.
    pub fn queue_depth(&self) -> u32 {
        self.queue_depth
    }

    /// Whether the device has moving heads (sysfs `queue/rotational`; for a regular file, of
    /// the device holding its filesystem; `false` where sysfs does not say).
    pub fn rotational(&self) -> bool {
        self.rotational
    }

    /// Size in bytes (at open).
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    /// Whether it was opened with O_DIRECT.
    pub fn direct(&self) -> bool {
        self.direct
    }

    /// The block device the I/O lands on, as (major, minor): the device itself, or the one
    /// holding a regular file's filesystem (what `/sys/dev/block/MAJ:MIN` names; a tmpfs
    /// file's has no directory there). `None` if the file's metadata cannot be read.
    pub fn disk_number(&self) -> Option<(u32, u32)> {
        if let Some(devno) = self.devno {
            return Some(devno);
        }
        let metadata = self.file.metadata().ok()?;
        Some(dev_major_minor(metadata.dev()))
    }
}

/// Refuse a kind that is neither a regular file nor a block device.
fn check_kind(path: &Path, file_type: &fs::FileType) -> Result<(), DeviceError> {
    if file_type.is_file() || file_type.is_block_device() {
        return Ok(());
    }
    Err(DeviceError::NotFileOrBlockDevice {
        path: path.to_path_buf(),
        what: kind_name(file_type),
    })
}

/// Create or extend a regular file to `len` bytes of written zeros, then `fsync` it.
fn lay_out(path: &Path, len: u64) -> Result<(), DeviceError> {
    let fail = |source: io::Error| match source.kind() {
        io::ErrorKind::PermissionDenied => DeviceError::PermissionDenied {
            path: path.to_path_buf(),
        },
        _ => DeviceError::LayOut {
            path: path.to_path_buf(),
            len,
            source,
        },
    };
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(fail)?;
    let metadata = file.metadata().map_err(fail)?;
    check_kind(path, &metadata.file_type())?;
    if !metadata.is_file() {
        return Ok(());
    }
    let mut at = metadata.len();
    if at >= len {
        return Ok(());
    }
    file.seek(SeekFrom::Start(at)).map_err(fail)?;
    let zeros = vec![0u8; 1 << 20];
    while at < len {
        let chunk = (len - at).min(zeros.len() as u64) as usize;
        file.write_all(&zeros[..chunk]).map_err(fail)?;
        at += chunk as u64;
    }
    file.sync_all().map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
36 22 8:17 / /mnt/my\\040disk rw,noatime shared:2 - ext4 /dev/sdb1 rw
40 22 0:45 / /srv rw shared:3 - btrfs /dev/sdc2 rw,space_cache
";

    /// An image file of `len` zeros with `patches` written in.
    fn image(len: usize, patches: &[(usize, &[u8])]) -> tempfile::NamedTempFile {
        let mut bytes = vec![0u8; len];
        for (offset, patch) in patches {
            bytes[*offset..*offset + patch.len()].copy_from_slice(patch);
        }
        let temp = tempfile::NamedTempFile::new().expect("temp file");
        fs::write(temp.path(), &bytes).expect("write image");
        temp
    }

    /// A fake sysfs directory for disk `name` with `partitions` (name, dev) and `holders`.
    fn fake_sysfs(
        root: &Path,
        name: &str,
        partitions: &[(&str, &str)],
        holders: &[&str],
    ) -> SysfsDevice {
        let dir = root.join(name);
        fs::create_dir_all(dir.join("queue")).expect("mkdir");
        fs::create_dir_all(dir.join("holders")).expect("mkdir");
        fs::write(dir.join("queue/logical_block_size"), "4096\n").expect("write");
        fs::write(dir.join("queue/nr_requests"), "64\n").expect("write");
        for (part, dev) in partitions {
            let part_dir = dir.join(part);
            fs::create_dir_all(&part_dir).expect("mkdir");
            fs::write(part_dir.join("partition"), "1\n").expect("write");
            fs::write(part_dir.join("dev"), format!("{dev}\n")).expect("write");
        }
        for holder in holders {
            fs::create_dir_all(dir.join("holders").join(holder)).expect("mkdir");
        }
        SysfsDevice::at(dir)
    }

    fn check(
        devno: (u32, u32),
        sys: Option<&SysfsDevice>,
        image: &tempfile::NamedTempFile,
    ) -> Option<String> {
        let file = File::open(image.path()).expect("open image");
        refusal("/dev/test", devno, sys, MOUNTINFO, &file)
    }

    #[test]
    fn a_blank_unmounted_device_is_not_refused() {
        let blank = image(1 << 20, &[]);
        let root = tempfile::tempdir().expect("temp dir");
        let sys = fake_sysfs(root.path(), "sdx", &[], &[]);
        assert_eq!(check((8, 96), Some(&sys), &blank), None);
        assert_eq!(check((8, 96), None, &blank), None);
    }

    #[test]
    fn a_mounted_device_or_partition_is_refused() {
        let blank = image(1 << 20, &[]);
        let why = check((253, 0), None, &blank).expect("the root device is mounted");
        assert!(why.contains("/dev/test: it is mounted on /"), "{why}");
        assert!(why.contains("--allow-mounted-write"), "{why}");
        assert!(!why.contains('\n'));

        let root = tempfile::tempdir().expect("temp dir");
        let sys = fake_sysfs(root.path(), "sdb", &[("sdb1", "8:17")], &[]);
        let why = check((8, 16), Some(&sys), &blank).expect("sdb1 is mounted");
        assert!(
            why.contains("its partition sdb1 (8:17) is mounted on /mnt/my disk"),
            "{why}"
        );

        // btrfs shows an anonymous device number; the source path gives it away.
        let sys = fake_sysfs(root.path(), "sdc", &[("sdc2", "8:34")], &[]);
        let why = check((8, 32), Some(&sys), &blank).expect("sdc2 is mounted");
        assert!(why.contains("mounted on /srv"), "{why}");
    }

    #[test]
    fn partitions_and_holders_are_refused() {
        let blank = image(1 << 20, &[]);
        let root = tempfile::tempdir().expect("temp dir");
        let sys = fake_sysfs(
            root.path(),
            "sdd",
            &[("sdd1", "8:49"), ("sdd2", "8:50")],
            &[],
        );
        let why = check((8, 48), Some(&sys), &blank).expect("partitioned");
        assert!(why.contains("it has partitions (sdd1, sdd2)"), "{why}");

        let sys = fake_sysfs(root.path(), "sde", &[], &["dm-3"]);
        let why = check((8, 64), Some(&sys), &blank).expect("held");
        assert!(why.contains("in use by dm-3"), "{why}");
    }

    #[test]
    fn signatures_are_recognised() {
        let cases: &[(usize, &[u8], &str)] = &[
            (1080, b"\x53\xef", "ext2/3/4"),
            (0, b"XFSB", "XFS"),
            (65600, b"_BHRfS_M", "btrfs"),
            (4086, b"SWAPSPACE2", "swap"),
            (0, b"LUKS\xba\xbe", "LUKS"),
            (512, b"LABELONE", "LVM"),
            (3, b"NTFS    ", "NTFS"),
            (82, b"FAT32   ", "FAT"),
            (4096, b"\xfc\x4e\x2b\xa9", "RAID"),
            (510, b"\x55\xaa", "MBR"),
        ];
        for (offset, magic, what) in cases {
            let crafted = image(1 << 20, &[(*offset, magic)]);
            let why = check((7, 0), None, &crafted)
                .unwrap_or_else(|| panic!("{what} at {offset} not recognised"));
            assert!(why.contains(what), "{what}: {why}");
        }
        // GPT: the protective MBR is there too; the GPT header names it.
        let gpt = image(1 << 20, &[(510, b"\x55\xaa"), (512, b"EFI PART")]);
        let why = check((7, 0), None, &gpt).expect("GPT");
        assert!(why.contains("GPT partition table"), "{why}");
    }

    #[test]
    fn raid_superblocks_at_the_end_zfs_labels_and_bcache_are_recognised() {
        // A device of 1 MiB + 12 KiB: md 0.90 sits at the last 64 KiB boundary less 64 KiB,
        // md 1.0 8 KiB before the end rounded down to 4 KiB.
        let size = (1 << 20) + 12 * 1024;
        let v090 = (size & !65535) - 65536;
        let v10 = (size - 8192) & !4095;
        for offset in [v090, v10] {
            let crafted = image(size, &[(offset, MD_MAGIC)]);
            let why = check((7, 0), None, &crafted)
                .unwrap_or_else(|| panic!("md superblock at {offset} not recognised"));
            assert!(why.contains("Linux RAID (md) superblock"), "{why}");
        }
        let bcache: &[u8] = b"\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81";
        let why = check((7, 0), None, &image(size, &[(4096 + 24, bcache)])).expect("bcache");
        assert!(why.contains("bcache"), "{why}");
        // ZFS: an uberblock in label 0's ring, or (little-endian pool) in label 1's.
        for (offset, magic) in [
            (128 * 1024 + 5 * 1024, ZFS_MAGIC_BE),
            (384 * 1024, ZFS_MAGIC_LE),
        ] {
            let why = check((7, 0), None, &image(size, &[(offset, magic)])).expect("ZFS");
            assert!(why.contains("ZFS pool member"), "{why}");
        }
        // The magic elsewhere in a ring slot's middle is not a label.
        assert_eq!(
            check(
                (7, 0),
                None,
                &image(size, &[(128 * 1024 + 8, ZFS_MAGIC_LE)])
            ),
            None
        );
    }

    #[test]
    fn a_device_smaller_than_the_probe_is_read_as_far_as_it_goes() {
        let tiny = image(2048, &[(1080, b"\x53\xef")]);
        let why = check((7, 0), None, &tiny).expect("ext on a tiny device");
        assert!(why.contains("ext2/3/4"), "{why}");
        let empty = image(0, &[]);
        assert_eq!(check((7, 0), None, &empty), None);
    }

    #[test]
    fn sysfs_geometry_of_a_disk_and_of_a_partition() {
        let root = tempfile::tempdir().expect("temp dir");
        let sys = fake_sysfs(root.path(), "sdf", &[("sdf1", "8:81")], &[]);
        assert_eq!(sys.logical_block_size(), Some(4096));
        assert_eq!(sys.queue_depth(), Some(64), "nr_requests without device/");
        fs::create_dir_all(sys.dir.join("device")).expect("mkdir");
        fs::write(sys.dir.join("device/queue_depth"), "31\n").expect("write");
        assert_eq!(sys.queue_depth(), Some(31), "device/queue_depth first");
        let part = SysfsDevice::at(sys.dir.join("sdf1"));
        assert_eq!(part.name(), "sdf1");
        assert_eq!(part.logical_block_size(), Some(4096), "from the disk");
        assert_eq!(part.queue_depth(), Some(31), "from the disk");
        // Resolution through dev/block/MAJ:MIN.
        fs::create_dir_all(root.path().join("dev/block")).expect("mkdir");
        std::os::unix::fs::symlink(&sys.dir, root.path().join("dev/block/8:80")).expect("symlink");
        let found = SysfsDevice::find(root.path(), (8, 80)).expect("found");
        assert_eq!(found.name(), "sdf");
    }

    #[test]
    fn device_numbers_decode_like_glibc() {
        assert_eq!(dev_major_minor(0x0811), (8, 17));
        assert_eq!(dev_major_minor((259 << 8) | 3), (259, 3));
        // Large numbers: minor bits 8.. at 20.., major bits 12.. at 44..
        let dev = (0x345u64 << 20) | (8 << 8) | 0x12;
        assert_eq!(dev_major_minor(dev), (8, 0x34512));
        let dev = (0x2u64 << 44) | (0x123 << 8) | 0x4;
        assert_eq!(dev_major_minor(dev), (0x2123, 4));
    }

    #[test]
    fn regular_files_open_create_and_are_never_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("data");
        let missing = Target::open(&path, &OpenOptions::default()).expect_err("missing");
        assert!(matches!(missing, DeviceError::NotFound { .. }), "{missing}");
        assert!(
            missing.to_string().contains("data: no such file"),
            "{missing}"
        );

        let options = OpenOptions {
            write: true,
            create_len: Some(3 << 20),
            ..OpenOptions::default()
        };
        let target = Target::open(&path, &options).expect("create");
        assert_eq!(target.kind(), TargetKind::RegularFile);
        assert_eq!(target.size_bytes(), 3 << 20);
        assert_eq!(target.queue_depth(), DEFAULT_QUEUE_DEPTH);
        assert_eq!(target.logical_block_size(), REGULAR_FILE_BUFFERED_ALIGN);
        assert!(!target.direct());
        assert_eq!(target.path(), path);
        assert_eq!(write_refusal(&target), None);
        // Laid out with written blocks, not a hole.
        let metadata = fs::metadata(&path).expect("stat");
        assert!(
            metadata.blocks() * 512 >= 3 << 20,
            "{} blocks",
            metadata.blocks()
        );

        // A shorter size leaves it alone; a longer one extends it.
        let options = OpenOptions {
            create_len: Some(1 << 20),
            ..OpenOptions::default()
        };
        assert_eq!(
            Target::open(&path, &options).expect("open").size_bytes(),
            3 << 20
        );
        let options = OpenOptions {
            create_len: Some(4 << 20),
            ..OpenOptions::default()
        };
        assert_eq!(
            Target::open(&path, &options).expect("open").size_bytes(),
            4 << 20
        );

        let direct = OpenOptions {
            direct: true,
            ..OpenOptions::default()
        };
        match Target::open(&path, &direct) {
            Ok(target) => {
                assert!(target.direct());
                assert_eq!(target.logical_block_size(), REGULAR_FILE_DIRECT_ALIGN);
            }
            Err(DeviceError::DirectUnsupported { .. }) => {
                eprintln!("skipping the O_DIRECT open: the temp dir's filesystem refuses it");
            }
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn directories_and_character_devices_are_not_targets() {
        let dir = tempfile::tempdir().expect("temp dir");
        let err = Target::open(dir.path(), &OpenOptions::default()).expect_err("dir");
        assert!(
            err.to_string().contains("is a directory; expected"),
            "{err}"
        );
        let err = Target::open("/dev/null", &OpenOptions::default()).expect_err("chr");
        assert!(err.to_string().contains("character device"), "{err}");
    }
}
