//! The log files of a run: each opened once, when the run starts, and written through a
//! buffered writer as entries come, so a log costs a buffer however long the run is.
//!
//! A `per_job_logs=1` file (fio's default) is created empty, one per job process. A
//! `per_job_logs=0` file is shared by every process of the job and, as fio opens it, appended
//! to if it exists; its processes' entries come in the order they are logged, where fio
//! writes each process's entries in one block when the process ends. A file that cannot be
//! opened or written is a [`LogError`] naming it.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// A log file that could not be opened or written.
#[derive(Debug)]
pub struct LogError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub source: io::Error,
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot write log file {}: {}",
            self.path.display(),
            self.source
        )
    }
}

impl std::error::Error for LogError {}

type Shared = Arc<Mutex<BufWriter<File>>>;

/// The files of a run's logs, by path, with where relative names are taken from.
#[derive(Debug, Default)]
pub struct LogFiles {
    /// The directory relative names are taken from (empty: the current directory).
    base: PathBuf,
    /// Every file opened so far.
    open: BTreeMap<PathBuf, Shared>,
}

impl LogFiles {
    /// The log files of a run, their relative names taken from `base` (an empty path is
    /// the current directory, as fio has it).
    pub fn new(base: impl Into<PathBuf>) -> Self {
        Self {
            base: base.into(),
            open: BTreeMap::new(),
        }
    }

    /// The file `name`: created empty, or with `append` opened for appending (and shared by
    /// every process that asks for it).
    pub(crate) fn open(&mut self, name: &str, append: bool) -> Result<LogFile, LogError> {
        let path = self.base.join(name);
        if let Some(shared) = self.open.get(&path) {
            return Ok(LogFile::new(path, Arc::clone(shared)));
        }
        let file = open_file(&path, append).map_err(|source| LogError {
            path: path.clone(),
            source,
        })?;
        let shared = Arc::new(Mutex::new(BufWriter::new(file)));
        self.open.insert(path.clone(), Arc::clone(&shared));
        Ok(LogFile::new(path, shared))
    }
}

fn open_file(path: &Path, append: bool) -> io::Result<File> {
    if append {
        OpenOptions::new().create(true).append(true).open(path)
    } else {
        File::create(path)
    }
}

/// One log file as a job process writes it: the first error is kept, and the writes after
/// it are dropped, until [`LogFile::finish`] reports it.
pub(crate) struct LogFile {
    path: PathBuf,
    writer: Shared,
    error: Option<io::Error>,
}

impl LogFile {
    fn new(path: PathBuf, writer: Shared) -> Self {
        Self {
            path,
            writer,
            error: None,
        }
    }

    /// Write with `write`, unless an earlier write failed.
    pub(crate) fn write(&mut self, write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>) {
        if self.error.is_some() {
            return;
        }
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(error) = write(&mut writer) {
            self.error = Some(error);
        }
    }

    /// Flush what is buffered, and report the first error.
    pub(crate) fn finish(mut self) -> Result<(), LogError> {
        self.write(|writer| writer.flush());
        match self.error {
            None => Ok(()),
            Some(source) => Err(LogError {
                path: self.path,
                source,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ioslice-logs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        dir
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_file() {
        let dir = scratch("missing");
        let mut files = LogFiles::new(&dir);
        let error = files
            .open("nowhere/x_bw.1.log", false)
            .err()
            .expect("no such directory");
        let text = error.to_string();
        assert!(text.contains("nowhere/x_bw.1.log"), "{text}");
        assert!(!text.contains('\n'));
    }

    #[test]
    fn a_shared_file_is_appended_to_and_opened_once() {
        let dir = scratch("shared");
        std::fs::write(dir.join("x_bw.log"), "old\n").expect("seed file");
        let mut files = LogFiles::new(&dir);
        let mut first = files.open("x_bw.log", true).expect("open");
        let mut second = files.open("x_bw.log", true).expect("open again");
        first.write(|w| w.write_all(b"one\n"));
        second.write(|w| w.write_all(b"two\n"));
        first.finish().expect("flush");
        second.finish().expect("flush");
        let text = std::fs::read_to_string(dir.join("x_bw.log")).expect("read");
        assert_eq!(text, "old\none\ntwo\n");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
