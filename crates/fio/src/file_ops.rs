//! fio's engines whose "I/O" is an operation on the filesystem rather than a transfer of
//! data: the namespace engines (`filecreate`, `filestat`, `filedelete`, `dircreate`,
//! `dirstat`, `dirdelete`), where each I/O of a file is one create, stat or delete of it,
//! and the engines that turn each request into another system call on the file
//! (`ftruncate`, `falloc`).
//!
//! Learnt from fio 3.33's `engines/fileoperations.c`, `engines/ftruncate.c` and
//! `engines/falloc.c`, and for the directory engines from `engines/fileoperations.c` as
//! fio 3.37 has it (they first appear there). What this module owns is their names and
//! what each does; the real run carries them out (`ioslice-runner`), and the simulator
//! refuses them, having no model of what a create or a stat costs.

/// What a namespace engine does to each of a job's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    /// `filecreate`: `open(O_CREAT|O_RDWR)` of each file, nothing laid out before.
    FileCreate,
    /// `filestat`: `stat`/`lstat`/`statx` of each file, laid out before the run.
    FileStat,
    /// `filedelete`: `unlink` of each file, laid out before the run.
    FileDelete,
    /// `dircreate`: `mkdir` of each name.
    DirCreate,
    /// `dirstat`: `stat` of each directory, made before the run.
    DirStat,
    /// `dirdelete`: `rmdir` of each directory, made before the run.
    DirDelete,
}

impl FileOp {
    /// Every namespace engine, with fio's name for it.
    pub const ALL: [(&'static str, FileOp); 6] = [
        ("filecreate", Self::FileCreate),
        ("filestat", Self::FileStat),
        ("filedelete", Self::FileDelete),
        ("dircreate", Self::DirCreate),
        ("dirstat", Self::DirStat),
        ("dirdelete", Self::DirDelete),
    ];

    /// fio's name for the engine.
    pub fn fio_name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, op)| *op == self)
            .map_or("filecreate", |(name, _)| name)
    }

    /// The engine `name` names, if it is one of these.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, op)| *op)
    }

    /// Whether its names are directories.
    pub fn on_directories(self) -> bool {
        matches!(self, Self::DirCreate | Self::DirStat | Self::DirDelete)
    }

    /// Whether the names must exist before the run (made by the setup, not timed).
    pub fn needs_existing(self) -> bool {
        !matches!(self, Self::FileCreate | Self::DirCreate)
    }
}

/// `stat_type=` of `filestat` (and of `dirstat`, which shares fio's option): which system
/// call looks the name up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatType {
    /// `stat(2)`, fio's default.
    #[default]
    Stat,
    /// `lstat(2)`.
    Lstat,
    /// `statx(2)` of the name's absolute path.
    Statx,
}

impl StatType {
    /// Reads fio's value: `stat`, `lstat` or `statx`.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "stat" => Some(Self::Stat),
            "lstat" => Some(Self::Lstat),
            "statx" => Some(Self::Statx),
            _ => None,
        }
    }
}

/// What an engine that replaces each transfer by another system call does with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeOp {
    /// `ftruncate`: each write truncates the file to the request's offset; reads and trims
    /// fail with `EINVAL`.
    Ftruncate,
    /// `falloc`: each request is a `fallocate` of its range: a read keeps the size
    /// (`FALLOC_FL_KEEP_SIZE`), a write may extend it, a trim punches a hole.
    Falloc,
}
