//! Discards on a real file or device, done in the calling thread as fio does them: fio's
//! `do_io_u_trim` (`io_u.c`, fio 3.x) issues each trim synchronously through `os_trim`,
//! even under its io_uring and libaio engines, which complete a trim at queue time.
//!
//! On a block device a discard is the `BLKDISCARD` ioctl (fio's `os_trim` on Linux, which
//! also calls it on a regular file and fails there with `ENOTTY`). On a regular file ioslice
//! punches the range out instead (`fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)`),
//! which is what a loop device does with a discard it is sent (`lo_fallocate` in
//! `drivers/block/loop.c`), so a job runs alike on a file and on a loop device over it. A
//! device or file system that takes no discards answers `EOPNOTSUPP`.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;

/// The kernel's `BLKDISCARD`: `_IO(0x12, 119)` (`include/uapi/linux/fs.h`).
const BLKDISCARD: libc::c_ulong = 0x1277;

/// Discard `len` bytes at `offset`; `Ok(len)` once done.
pub fn discard(file: &File, offset: u64, len: usize) -> io::Result<usize> {
    let fd = file.as_raw_fd();
    let block_device = file.metadata()?.file_type().is_block_device();
    let too_far = || io::Error::from_raw_os_error(libc::EINVAL);
    loop {
        let result = if block_device {
            let range: [u64; 2] = [offset, len as u64];
            // SAFETY: BLKDISCARD reads two u64s (start, length) from the pointer, which
            // points at `range`, alive for the call.
            unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) }
        } else {
            let start = libc::off_t::try_from(offset).map_err(|_| too_far())?;
            let length = libc::off_t::try_from(len).map_err(|_| too_far())?;
            // SAFETY: fallocate takes the descriptor and plain integers.
            unsafe {
                libc::fallocate(
                    fd,
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    start,
                    length,
                )
            }
        };
        if result == 0 {
            return Ok(len);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom, Write};

    #[test]
    fn a_discarded_range_of_a_file_reads_back_as_zeroes_and_keeps_the_size() {
        let mut file = tempfile::tempfile().expect("temporary file");
        file.write_all(&[0xAB; 16384]).expect("write");
        match discard(&file, 4096, 8192) {
            Ok(n) => assert_eq!(n, 8192),
            Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
                eprintln!("skipped: the temporary directory's file system cannot punch holes");
                return;
            }
            Err(e) => panic!("discard: {e}"),
        }
        let mut back = Vec::new();
        file.seek(SeekFrom::Start(0)).expect("seek");
        file.read_to_end(&mut back).expect("read");
        assert_eq!(back.len(), 16384);
        assert!(back[..4096].iter().all(|&b| b == 0xAB));
        assert!(back[4096..12288].iter().all(|&b| b == 0));
        assert!(back[12288..].iter().all(|&b| b == 0xAB));
    }
}
