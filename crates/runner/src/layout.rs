//! Missing files, created and laid out before a run as fio lays them out.
//!
//! A regular file a run needs and that does not exist is created, and then:
//! - if a job reads it, or writes it with `overwrite=1`: written out to its size (fio writes
//!   it so that reads hit real blocks, not holes);
//! - if jobs only write it: with `fallocate=` native, posix or keep (fio's default) its
//!   space is allocated with `fallocate(2)` (written with zeros where the filesystem refuses
//!   it); with `fallocate=none` or `truncate` it is set to its size, sparse;
//! - with `create_on_open=1` (and no job reading it): created sparse, without a message, as
//!   fio creates it when the job opens it.
//!
//! Each laid-out file gets fio's line, `JOB: Laying out IO file (1 file / 1MiB)`, and so does
//! an existing file shorter than the jobs need (opening it extends it with zeros). Nothing is
//! ever created under `/dev`, and a missing parent directory is an error (fio 3.33 would
//! create the directories).
//!
//! Run by the thread that runs the job file, before any engine starts.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use ioslice_engine::DeviceError;
use ioslice_fio::Fallocate;

use crate::RunError;

/// What decides how a missing file is laid out: how the jobs on it use it.
#[derive(Debug, Clone)]
pub(crate) struct FileLayout {
    /// A job reads it.
    pub(crate) reads: bool,
    /// A job writing it asks for `overwrite=1`.
    pub(crate) overwrite: bool,
    /// The first job's `fallocate=`.
    pub(crate) fallocate: Fallocate,
    /// The first job's `create_on_open=`.
    pub(crate) create_on_open: bool,
    /// The first job using it, named in the layout line.
    pub(crate) job: String,
}

/// How to lay out a file no job has yet.
enum How {
    /// Written to its size.
    Written,
    /// Its blocks allocated (`fallocate`), written where the filesystem cannot.
    Allocated,
    /// Created at its size without writing (sparse).
    Sparse,
}

/// Refuse a path under `/dev` or in a directory that does not exist (before anything is
/// planned), so that the error is one line naming the path.
pub(crate) fn check_creatable(path: &Path) -> Result<(), RunError> {
    if path.starts_with("/dev") {
        return Err(RunError::Job(format!(
            "{}: no such block device (ioslice creates regular files, never under /dev)",
            path.display()
        )));
    }
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(RunError::Job(format!(
            "{}: cannot create the file: directory {} does not exist",
            path.display(),
            parent.display()
        )));
    }
    Ok(())
}

/// Create the file at `path`, `len` bytes, if it is missing; fio's line saying so, if it
/// says one (also for an existing file shorter than `len`, which opening it extends).
pub(crate) fn create_missing(
    path: &Path,
    len: u64,
    target: &FileLayout,
) -> Result<Option<String>, RunError> {
    if let Ok(metadata) = fs::metadata(path) {
        // An existing regular file shorter than the jobs need is extended with zeros when
        // it is opened (`Target::open`); fio says so with the same line.
        let short = metadata.is_file() && metadata.len() < len;
        return Ok(short.then(|| laying_out(target, len)));
    }
    check_creatable(path)?;
    let how = if target.reads || target.overwrite {
        How::Written
    } else if target.create_on_open {
        create(path, len, &How::Sparse)?;
        return Ok(None);
    } else {
        match target.fallocate {
            Fallocate::Allocate => How::Allocated,
            Fallocate::None | Fallocate::Truncate => How::Sparse,
        }
    };
    create(path, len, &how)?;
    Ok(Some(laying_out(target, len)))
}

/// fio's line for a file laid out to `len` bytes.
fn laying_out(target: &FileLayout, len: u64) -> String {
    format!(
        "{}: Laying out IO file (1 file / {})",
        target.job,
        size_text(len)
    )
}

/// Create the file at `len` bytes, written or sparse, and `fsync` it.
fn create(path: &Path, len: u64, how: &How) -> Result<(), RunError> {
    let fail = |source: io::Error| match source.kind() {
        io::ErrorKind::PermissionDenied => RunError::Device(DeviceError::PermissionDenied {
            path: path.to_path_buf(),
        }),
        _ => RunError::Device(DeviceError::LayOut {
            path: path.to_path_buf(),
            len,
            source,
        }),
    };
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(fail)?;
    let allocated = matches!(how, How::Allocated)
        && len > 0
        && rustix::fs::fallocate(&file, rustix::fs::FallocateFlags::empty(), 0, len).is_ok();
    match how {
        How::Sparse => file.set_len(len).map_err(fail)?,
        How::Allocated if allocated => {}
        How::Written | How::Allocated => write_zeros(&mut file, len).map_err(fail)?,
    }
    file.sync_all().map_err(fail)
}

/// Write `len` zeros from the start of `file`.
fn write_zeros(file: &mut fs::File, len: u64) -> io::Result<()> {
    let zeros = vec![0u8; 1 << 20];
    let mut at = 0;
    while at < len {
        let chunk = (len - at).min(zeros.len() as u64) as usize;
        file.write_all(&zeros[..chunk])?;
        at += chunk as u64;
    }
    Ok(())
}

/// A size as fio prints it in the layout line: in the largest binary unit that divides it.
fn size_text(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["TiB", "GiB", "MiB", "KiB", "B"];
    for (index, unit) in UNITS.iter().enumerate() {
        let scale = 1u64 << (10 * (4 - index));
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{}{unit}", bytes / scale);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_fio_prints_them() {
        assert_eq!(size_text(1 << 20), "1MiB");
        assert_eq!(size_text(64 << 10), "64KiB");
        assert_eq!(size_text(1536 << 10), "1536KiB");
        assert_eq!(size_text(3 << 30), "3GiB");
        assert_eq!(size_text(1000), "1000B");
    }

    #[test]
    fn nothing_is_created_under_dev_or_in_a_missing_directory() {
        let dev = check_creatable(Path::new("/dev/ioslice-missing")).expect_err("refused");
        assert!(dev.to_string().contains("never under /dev"), "{dev}");
        let dir = tempfile::tempdir().expect("temporary directory");
        let missing = dir.path().join("no/such/file");
        let error = check_creatable(&missing).expect_err("refused").to_string();
        assert!(error.ends_with("/no/such does not exist"), "{error}");
        assert!(check_creatable(&dir.path().join("file")).is_ok());
    }
}
