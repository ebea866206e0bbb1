//! The safety check before writing to a block device: a device (or one of its partitions)
//! that is mounted, held by another device, or carries a filesystem, RAID, LVM, ZFS or other
//! signature is refused, with the reason.
//!
//! Run once, by the thread that opens a target for writing (`ioslice run`'s setup).

use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::sysfs::{SysfsDevice, SYSFS};
use super::{Target, TargetKind};
use crate::buffer::AlignedBuffer;

/// Bytes read from the start of a block device to look for signatures: up to the end of the
/// second ZFS label's uberblock ring (512 KiB), which also covers the btrfs superblock at
/// 64 KiB + 64 and bcache's at 4 KiB.
pub(crate) const HEAD_LEN: usize = 512 * 1024;

/// Bytes read from the end of a block device: md's 0.90 superblock lies in the last 64 KiB
/// block and its 1.0 superblock 8 KiB before the end, both within the last 128 KiB.
pub(crate) const TAIL_LEN: u64 = 128 * 1024;

/// md's superblock magic, 0xa92b4efc, little-endian, for every metadata version.
pub(crate) const MD_MAGIC: &[u8] = b"\xfc\x4e\x2b\xa9";

/// A ZFS uberblock's magic, 0x00bab10c, as a 64-bit word in either byte order.
pub(crate) const ZFS_MAGIC_LE: &[u8] = b"\x0c\xb1\xba\x00\x00\x00\x00\x00";

pub(crate) const ZFS_MAGIC_BE: &[u8] = b"\x00\x00\x00\x00\x00\xba\xb1\x0c";

/// Why writing to `target` would be dangerous, or `None` if it is safe: a block device that
/// is (or has a partition) mounted, is held by device mapper or md, has partitions or a
/// partition table, or carries a filesystem, swap, LUKS, LVM, ZFS, bcache or RAID signature
/// (md superblocks at the start, at 4 KiB, or near the end for metadata 0.90 and 1.0). Regular
/// files are never refused. The reason is one line naming the device and `--allow-mounted-write`.
pub fn write_refusal(target: &Target) -> Option<String> {
    refusal_reason(target).map(|why| refusal_line(&target.path.display().to_string(), &why))
}

/// Why [`write_refusal`] refuses `target`, without the device's name or the command-line
/// advice: `it is mounted on /`, `it holds an ext2/3/4 filesystem`, …
pub(crate) fn refusal_reason(target: &Target) -> Option<String> {
    let devno = match (target.kind, target.devno) {
        (TargetKind::BlockDevice, Some(devno)) => devno,
        _ => return None,
    };
    let sys = SysfsDevice::find(Path::new(SYSFS), devno);
    // Unreadable mount table: nothing is known to be mounted; the other checks still run.
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    reason(devno, sys.as_ref(), &mountinfo, &target.file)
}

/// The one-line refusal of [`write_refusal`] for the device `name` and the reason `why` (as
/// [`OpenError::WriteRefused`](crate::OpenError::WriteRefused) carries them), naming
/// `--allow-mounted-write`.
pub fn refusal_line(name: &str, why: &str) -> String {
    format!("refusing to write to {name}: {why}; pass --allow-mounted-write to write anyway")
}

/// [`write_refusal`] from its inputs: the device's name, its numbers, its sysfs directory, the
/// mount table, and the device itself (only its first [`HEAD_LEN`] bytes are read).
#[cfg(test)]
pub(crate) fn refusal(
    name: &str,
    devno: (u32, u32),
    sys: Option<&SysfsDevice>,
    mountinfo: &str,
    device: &File,
) -> Option<String> {
    reason(devno, sys, mountinfo, device).map(|why| refusal_line(name, &why))
}

/// The reason of [`refusal`], from the same inputs but the name.
fn reason(
    (major, minor): (u32, u32),
    sys: Option<&SysfsDevice>,
    mountinfo: &str,
    device: &File,
) -> Option<String> {
    let refuse = Some;
    let partitions = sys.map(SysfsDevice::partitions).unwrap_or_default();

    // Mounted, itself or a partition: by device number, and by source path (btrfs mounts
    // show an anonymous device number).
    let mut devices = vec![(
        sys.map(SysfsDevice::name).unwrap_or_default(),
        format!("{major}:{minor}"),
    )];
    devices.extend(partitions.iter().cloned());
    for (part_name, devno) in &devices {
        if let Some(mount_point) = mounted(mountinfo, devno, part_name) {
            let which = if devno == &devices[0].1 {
                "it".to_string()
            } else {
                format!("its partition {part_name} ({devno})")
            };
            return refuse(format!("{which} is mounted on {mount_point}"));
        }
    }
    if let Some(sys) = sys {
        let holders = sys.holders();
        if !holders.is_empty() {
            return refuse(format!(
                "it is in use by {} (device mapper or md: LVM, dm-crypt, RAID)",
                holders.join(", ")
            ));
        }
        for (part_name, _) in &partitions {
            let part = SysfsDevice::at(sys.dir.join(part_name));
            let holders = part.holders();
            if !holders.is_empty() {
                return refuse(format!(
                    "its partition {part_name} is in use by {}",
                    holders.join(", ")
                ));
            }
        }
    }
    if !partitions.is_empty() {
        let names: Vec<&str> = partitions.iter().map(|(n, _)| n.as_str()).collect();
        return refuse(format!("it has partitions ({})", names.join(", ")));
    }
    let head = match read_head(device) {
        Ok(head) => head,
        Err(e) => {
            return refuse(format!(
                "cannot read its first {} KiB to look for a filesystem ({e})",
                HEAD_LEN / 1024
            ))
        }
    };
    if let Some(what) = signature(&head) {
        return refuse(format!("it holds {what}"));
    }
    match read_tail(device) {
        Ok((tail, start, size)) => {
            tail_signature(&tail, start, size).and_then(|what| refuse(format!("it holds {what}")))
        }
        Err(e) => refuse(format!(
            "cannot read its last {} KiB to look for a RAID superblock ({e})",
            TAIL_LEN / 1024
        )),
    }
}

/// The last bytes of the device (up to [`TAIL_LEN`], from a 4 KiB boundary so O_DIRECT works),
/// with where they start and the device's size.
pub(crate) fn read_tail(device: &File) -> io::Result<(Vec<u8>, u64, u64)> {
    let size = {
        let mut handle = device;
        handle.seek(SeekFrom::End(0))?
    };
    let start = size.saturating_sub(TAIL_LEN) & !4095;
    let len = usize::try_from(size - start).unwrap_or(0);
    Ok((read_up_to(device, start, len)?, start, size))
}

/// A signature found near the end of a device of `size` bytes, from `tail`, its bytes from
/// `start` on: md's 0.90 superblock (at the last 64 KiB boundary, less 64 KiB) and 1.0
/// superblock (8 KiB before the end, on a 4 KiB boundary).
pub(crate) fn tail_signature(tail: &[u8], start: u64, size: u64) -> Option<&'static str> {
    let at = |offset: u64| {
        offset
            .checked_sub(start)
            .and_then(|within| usize::try_from(within).ok())
            .is_some_and(|within| has(tail, within, MD_MAGIC))
    };
    let v090 = (size & !65535).checked_sub(65536);
    let v10 = size.checked_sub(8192).map(|offset| offset & !4095);
    [v090, v10]
        .into_iter()
        .flatten()
        .any(at)
        .then_some("a Linux RAID (md) superblock")
}

/// The mount point of the device `devno` ("MAJ:MIN") or kernel name `name`, if mounted.
pub(crate) fn mounted(mountinfo: &str, devno: &str, name: &str) -> Option<String> {
    for line in mountinfo.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let (Some(&line_devno), Some(&mount_point)) = (fields.get(2), fields.get(4)) else {
            continue;
        };
        // After the optional fields: "-", the filesystem type, the mount source.
        let source = fields
            .iter()
            .position(|&field| field == "-")
            .and_then(|dash| fields.get(dash + 2))
            .copied()
            .unwrap_or("");
        let by_source = !name.is_empty() && source.strip_prefix("/dev/") == Some(name);
        if line_devno == devno || by_source {
            return Some(unescape_mount_field(mount_point));
        }
    }
    None
}

/// Undo mountinfo's octal escapes (`\040` for a space).
pub(crate) fn unescape_mount_field(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = bytes.get(i + 1..i + 4).filter(|_| bytes[i] == b'\\');
        let code = escape
            .and_then(|digits| std::str::from_utf8(digits).ok())
            .and_then(|digits| u8::from_str_radix(digits, 8).ok());
        match code {
            Some(code) => {
                out.push(code);
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The first [`HEAD_LEN`] bytes (fewer on a smaller device), read into an aligned buffer so
/// it works under O_DIRECT too.
pub(crate) fn read_head(device: &File) -> io::Result<Vec<u8>> {
    read_up_to(device, 0, HEAD_LEN)
}

/// Up to `len` bytes from `offset` (a multiple of 4 KiB), fewer at the end of the device. The
/// buffer and each read are 4 KiB-aligned, so this works under O_DIRECT too.
pub(crate) fn read_up_to(device: &File, offset: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buffer = AlignedBuffer::new(len.div_ceil(4096).max(1) * 4096, 4096);
    let mut filled = 0;
    while filled < len {
        match device.read_at(&mut buffer.as_mut_slice()[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // A short O_DIRECT read leaves `filled` unaligned: what was read is enough.
            Err(_) if filled > 0 => break,
            Err(e) => return Err(e),
        }
    }
    Ok(buffer.as_slice()[..filled.min(len)].to_vec())
}

/// Whether `head` holds `magic` at `offset`.
pub(crate) fn has(head: &[u8], offset: usize, magic: &[u8]) -> bool {
    head.get(offset..offset + magic.len()) == Some(magic)
}

/// A well-known signature in the first bytes of a device: what it says is there.
pub(crate) fn signature(head: &[u8]) -> Option<&'static str> {
    const SIGNATURES: &[(usize, &[u8], &str)] = &[
        (0, b"LUKS\xba\xbe", "a LUKS encryption header"),
        (0, b"XFSB", "an XFS filesystem"),
        (0, b"LABELONE", "an LVM physical volume label"),
        (512, b"LABELONE", "an LVM physical volume label"),
        (1024, b"LABELONE", "an LVM physical volume label"),
        (1536, b"LABELONE", "an LVM physical volume label"),
        (0, MD_MAGIC, "a Linux RAID (md) superblock"),
        (4096, MD_MAGIC, "a Linux RAID (md) superblock"),
        (
            4096 + 24,
            b"\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81",
            "a bcache superblock",
        ),
        (1024 + 56, b"\x53\xef", "an ext2/3/4 filesystem"),
        (1024, b"\x10\x20\xf5\xf2", "an F2FS filesystem"),
        (65536 + 64, b"_BHRfS_M", "a btrfs filesystem"),
        (4096 - 10, b"SWAPSPACE2", "a swap area"),
        (4096 - 10, b"SWAP-SPACE", "a swap area"),
        (16384 - 10, b"SWAPSPACE2", "a swap area"),
        (65536 - 10, b"SWAPSPACE2", "a swap area"),
        (3, b"NTFS    ", "an NTFS filesystem"),
        (3, b"EXFAT   ", "an exFAT filesystem"),
        (82, b"FAT32   ", "a FAT filesystem"),
        (54, b"FAT12   ", "a FAT filesystem"),
        (54, b"FAT16   ", "a FAT filesystem"),
        (54, b"FAT     ", "a FAT filesystem"),
        (32769, b"CD001", "an ISO 9660 filesystem"),
        // A GPT disk also has a protective MBR: look for GPT first.
        (512, b"EFI PART", "a GPT partition table"),
        (4096, b"EFI PART", "a GPT partition table"),
        (510, b"\x55\xaa", "an MBR partition table or boot sector"),
    ];
    SIGNATURES
        .iter()
        .find(|(offset, magic, _)| has(head, *offset, magic))
        .map(|&(_, _, what)| what)
        .or_else(|| zfs_label(head).then_some("a ZFS pool member (vdev label)"))
}

/// Whether one of the first two ZFS labels (256 KiB each, from the start of the device) has an
/// uberblock: its ring fills the label's second 128 KiB in slots of at least 1 KiB, each
/// starting with the magic.
pub(crate) fn zfs_label(head: &[u8]) -> bool {
    (0..2).any(|label| {
        let ring = label * 256 * 1024 + 128 * 1024;
        (0..128).any(|slot| {
            let offset = ring + slot * 1024;
            has(head, offset, ZFS_MAGIC_LE) || has(head, offset, ZFS_MAGIC_BE)
        })
    })
}
