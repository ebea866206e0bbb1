//! Reading a job file's text from disk within bounds: only regular files, outside `/proc`
//! and `/sys`, and no more than [`JOB_FILE_LIMIT`] bytes each and [`JOB_TEXT_LIMIT`] in all
//! with every include, so a job file naming `/dev/zero`, a FIFO or a huge file is refused
//! in one line instead of read until memory runs out. [`read_bounded`] is the same guard
//! for any text file a command reads whole (the report's JSON files).

use std::io::Read;
use std::path::Path;

/// The most one job file (or included file) may hold: 16 MiB, far beyond any real one.
pub const JOB_FILE_LIMIT: u64 = 16 << 20;

/// The most text one parse reads across a file and everything it includes: 64 MiB.
pub const JOB_TEXT_LIMIT: u64 = 64 << 20;

/// Why a file was not read ([`read_bounded`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not a regular file: what it is (`directory`, `character device`, …).
    Kind(&'static str),
    /// A file of the kernel's `/proc` or `/sys`.
    PseudoFilesystem(&'static str),
    /// More than the limit: at least this many bytes.
    TooLarge(u64),
    /// Not UTF-8 text.
    NotText,
    /// It could not be read: the system's reason.
    Unreadable(String),
}

/// Reads the file at `path` whole, if it is a regular file outside `/proc` and `/sys` of at
/// most `limit` bytes; never reads past the limit, even when the file grows meanwhile. Each
/// caller words the refusal for the file it expects.
pub fn read_bounded(path: &Path, limit: u64) -> Result<String, Refusal> {
    let unreadable = |e: std::io::Error| Refusal::Unreadable(e.to_string());
    let metadata = std::fs::metadata(path).map_err(unreadable)?;
    if !metadata.is_file() {
        return Err(Refusal::Kind(ioslice_core::file_kind::kind_name(
            &metadata.file_type(),
        )));
    }
    if let Some(area) = pseudo_filesystem(path) {
        return Err(Refusal::PseudoFilesystem(area));
    }
    if metadata.len() > limit {
        return Err(Refusal::TooLarge(metadata.len()));
    }
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    // The size can change between the look and the read: never read past the limit.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > limit {
        return Err(Refusal::TooLarge(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|_| Refusal::NotText)
}

/// Reads the job file at `path` whole, if it is a regular file of at most `budget` bytes
/// (and [`JOB_FILE_LIMIT`]). The error is the reason alone; callers name the file.
pub fn read_job_text(path: &Path, budget: u64) -> Result<String, String> {
    let limit = budget.min(JOB_FILE_LIMIT);
    read_bounded(path, limit).map_err(|refusal| match refusal {
        Refusal::Kind(kind) => format!("a {kind}: expected a regular file"),
        Refusal::PseudoFilesystem(area) => {
            format!("a file of the kernel's {area}: expected a job file")
        }
        Refusal::TooLarge(bytes) => too_large(bytes, limit),
        Refusal::NotText => "not UTF-8 text: expected a job file".to_string(),
        Refusal::Unreadable(reason) => reason,
    })
}

fn too_large(bytes: u64, limit: u64) -> String {
    if limit < JOB_FILE_LIMIT {
        format!(
            "the job file and its includes exceed {} MiB in all",
            JOB_TEXT_LIMIT >> 20
        )
    } else {
        format!(
            "{bytes} bytes or more: expected a job file of at most {} MiB",
            JOB_FILE_LIMIT >> 20
        )
    }
}

/// `/proc` or `/sys` when `path` resolves into them (their files claim sizes they do not
/// have, and some never end).
fn pseudo_filesystem(path: &Path) -> Option<&'static str> {
    let real = std::fs::canonicalize(path).ok()?;
    if real.starts_with("/proc") {
        Some("/proc")
    } else if real.starts_with("/sys") {
        Some("/sys")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_directories_are_refused_by_kind() {
        let zero = read_job_text(Path::new("/dev/zero"), JOB_TEXT_LIMIT);
        assert_eq!(
            zero.unwrap_err(),
            "a character device: expected a regular file"
        );
        let dir = read_job_text(Path::new("/"), JOB_TEXT_LIMIT);
        assert_eq!(dir.unwrap_err(), "a directory: expected a regular file");
    }

    #[test]
    fn proc_files_are_refused() {
        let status = read_job_text(Path::new("/proc/self/status"), JOB_TEXT_LIMIT);
        assert_eq!(
            status.unwrap_err(),
            "a file of the kernel's /proc: expected a job file"
        );
    }

    #[test]
    fn a_file_over_the_budget_is_refused_without_reading_it() {
        let file = tempfile::NamedTempFile::new().expect("temp file");
        file.as_file().set_len(JOB_FILE_LIMIT + 1).expect("sparse");
        let error = read_job_text(file.path(), JOB_TEXT_LIMIT).unwrap_err();
        assert_eq!(
            error,
            format!(
                "{} bytes or more: expected a job file of at most 16 MiB",
                JOB_FILE_LIMIT + 1
            )
        );
        std::fs::write(file.path(), "[j]\nrw=read\n").expect("write");
        assert_eq!(
            read_job_text(file.path(), 5).unwrap_err(),
            "the job file and its includes exceed 64 MiB in all"
        );
        assert_eq!(
            read_job_text(file.path(), JOB_TEXT_LIMIT).as_deref(),
            Ok("[j]\nrw=read\n")
        );
    }
}
