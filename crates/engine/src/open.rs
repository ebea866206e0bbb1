//! Starting an engine on a file or block device by its path, in one step:
//! [`Engine::on_path`] returns an [`OpenBuilder`] that opens the target (with or without
//! O_DIRECT, creating and sizing a regular file when asked), checks that writing to it is
//! safe, picks the backend, and starts the engine with the policy and groups given.
//!
//! It is the lower-level pieces put together: [`Target::open`],
//! [`write_refusal`](crate::device::write_refusal), [`open_backend`] (or
//! [`open_synchronous_backend`]), [`Geometry::of`] and [`Engine::builder`]. The job runner
//! opens every file and block device through it; each piece stays available for a caller
//! that needs something else.
//!
//! Every failure is an [`OpenError`] naming the path and what was expected; options are
//! checked before the filesystem is touched, so a bad scheduler or a zero queue depth does
//! not leave a new file behind.

use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::backend::{
    open_backend, open_synchronous_backend, Backend, ThreadPoolBackend, UringBackend, MAX_THREADS,
};
use crate::buffer::AlignedBuffer;
use crate::device::{refusal_reason, DeviceError, OpenOptions, Target, TargetKind};
use crate::engine::{Engine, EngineError, Geometry};
use crate::settings::{policy_setters, PolicySettings};

/// Whether to open the target with O_DIRECT (bypassing the page cache).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DirectIo {
    /// Buffered I/O through the page cache (the default). Requests still go through the
    /// policy, aligned to 512 bytes for a regular file.
    #[default]
    Off,
    /// O_DIRECT, or an error ([`DeviceError::DirectUnsupported`]) where the filesystem
    /// refuses it (tmpfs, some FUSE filesystems). Offsets, lengths and buffer addresses must
    /// then be multiples of [`Handle::logical_block_size`](crate::Handle::logical_block_size).
    On,
    /// O_DIRECT where the filesystem takes it, else buffered I/O with a line in
    /// [`Engine::notes`]. [`Engine::target`] says which one was used.
    IfSupported,
}

/// What moves the bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BackendChoice {
    /// io_uring when a ring can be created and works, else a thread pool doing
    /// `pread`/`pwrite` (with a line in [`Engine::notes`]); `IOSLICE_BACKEND=psync` or
    /// `io_uring` in the environment forces one ([`open_backend`]). The default.
    #[default]
    Automatic,
    /// io_uring, or an error ([`OpenError::Backend`]) where it is unavailable (old kernels,
    /// seccomp, containers).
    IoUring,
    /// A pool of as many threads as the queue depth (at most 64) doing `pread`/`pwrite`;
    /// works everywhere.
    ThreadPool,
    /// The submitting thread does each transfer itself (`pread`/`pwrite`), as fio's `psync`:
    /// for one client that waits for each request before the next, which then needs no
    /// other thread. `IOSLICE_BACKEND` in the environment forces a backend as for
    /// [`BackendChoice::Automatic`] ([`open_synchronous_backend`]).
    Synchronous,
}

/// Why an engine could not be started on a path. Every message is one line naming the path.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// An option of the [`OpenBuilder`] cannot work.
    #[error("{path}: {option} must be {expected}")]
    InvalidOption {
        /// The path given to [`Engine::on_path`].
        path: PathBuf,
        /// The builder method (`queue_depth`, `submission_queue`, `create`).
        option: &'static str,
        /// What it takes.
        expected: &'static str,
    },
    /// The target could not be opened: missing (and no [`OpenBuilder::create`]), a
    /// directory or another kind of file, permission denied, O_DIRECT refused, …
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// Writing to a block device that is mounted, partitioned, in use or holds a filesystem
    /// (or RAID, LVM, swap, … signature) was refused.
    #[error("refusing to write to {path}: {reason}; call allow_mounted_write(true) to write anyway, or read_only() to only read")]
    WriteRefused {
        /// The block device.
        path: PathBuf,
        /// What is on it (`it holds an ext2/3/4 filesystem`).
        reason: String,
    },
    /// A block device shorter than [`OpenBuilder::min_len`].
    #[error("{path}: {needed} bytes are needed but the device has {has}")]
    TooShort {
        /// The block device.
        path: PathBuf,
        /// The length asked for.
        needed: u64,
        /// The device's length.
        has: u64,
    },
    /// The target has no bytes to read or write.
    #[error("{path}: is empty; expected a file with data, or a size to lay it out to (create)")]
    Empty {
        /// The path.
        path: PathBuf,
    },
    /// The backend asked for ([`BackendChoice::IoUring`]) could not start.
    #[error("{path}: the {backend} backend cannot start: {source}")]
    Backend {
        /// The path.
        path: PathBuf,
        /// The backend's name.
        backend: &'static str,
        /// Why.
        source: io::Error,
    },
    /// The engine refused its configuration: the scheduler specification
    /// ([`EngineError::Scheduler`]), a group or weight ([`EngineError::Group`]), or it could
    /// not start.
    #[error("{path}: {source}")]
    Engine {
        /// The path.
        path: PathBuf,
        /// Why.
        source: EngineError,
    },
}

impl OpenError {
    /// The path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            OpenError::InvalidOption { path, .. }
            | OpenError::WriteRefused { path, .. }
            | OpenError::TooShort { path, .. }
            | OpenError::Empty { path }
            | OpenError::Backend { path, .. }
            | OpenError::Engine { path, .. } => path,
            OpenError::Device(error) => match error {
                DeviceError::NotFound { path }
                | DeviceError::PermissionDenied { path }
                | DeviceError::NotFileOrBlockDevice { path, .. }
                | DeviceError::DirectUnsupported { path }
                | DeviceError::LayOut { path, .. }
                | DeviceError::Io { path, .. } => path,
            },
        }
    }
}

/// Configures an engine on a file or block device; see [`Engine::on_path`].
///
/// Defaults: read and write, buffered I/O ([`DirectIo::Off`]), the file must exist, the
/// device's own queue depth (sysfs, else 32), [`BackendChoice::Automatic`], policy `bfq`,
/// only the root group `/`.
pub struct OpenBuilder {
    path: PathBuf,
    direct: DirectIo,
    write: bool,
    create_len: Option<u64>,
    min_len: u64,
    allow_mounted_write: bool,
    /// How the note of an allowed write names the override.
    allowed_as: &'static str,
    queue_depth: Option<usize>,
    backend: BackendChoice,
    settings: PolicySettings,
}

impl std::fmt::Debug for OpenBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenBuilder")
            .field("path", &self.path)
            .field("direct", &self.direct)
            .field("write", &self.write)
            .field("create_len", &self.create_len)
            .field("min_len", &self.min_len)
            .field("allow_mounted_write", &self.allow_mounted_write)
            .field("allowed_as", &self.allowed_as)
            .field("queue_depth", &self.queue_depth)
            .field("backend", &self.backend)
            .field("settings", &self.settings)
            .finish()
    }
}

impl Engine {
    /// Start configuring an engine on the regular file or block device at `path`; nothing is
    /// opened until [`OpenBuilder::start`]. See the [crate documentation](crate) for
    /// examples.
    pub fn on_path(path: impl AsRef<Path>) -> OpenBuilder {
        OpenBuilder {
            path: path.as_ref().to_path_buf(),
            direct: DirectIo::default(),
            write: true,
            create_len: None,
            min_len: 0,
            allow_mounted_write: false,
            allowed_as: "allow_mounted_write",
            queue_depth: None,
            backend: BackendChoice::default(),
            settings: PolicySettings::default(),
        }
    }
}

impl OpenBuilder {
    /// O_DIRECT on, off, or on where the filesystem takes it (default off). With it on,
    /// requests must be aligned to [`Handle::logical_block_size`](crate::Handle::logical_block_size):
    /// the block device's logical block size, or 4096 for a regular file. Opening with
    /// O_DIRECT also reads the first block once, to find a filesystem that takes the flag
    /// but refuses the I/O.
    pub fn direct(mut self, direct: DirectIo) -> Self {
        self.direct = direct;
        self
    }

    /// Open for reading only: writes fail with `EBADF`, and a block device holding a
    /// filesystem is not refused (reading it is safe).
    pub fn read_only(mut self) -> Self {
        self.write = false;
        self
    }

    /// For a regular file: create it, or extend it, to `len` bytes by writing zeros (so
    /// reads hit real blocks rather than holes), then `fsync`; a longer file is left alone.
    /// Without it a missing path is an error. Ignored for a block device.
    pub fn create(mut self, len: u64) -> Self {
        self.create_len = Some(len);
        self
    }

    /// For a block device: refuse one shorter than `len` bytes ([`OpenError::TooShort`])
    /// rather than let requests past its end fail. A regular file is laid out by
    /// [`Self::create`] instead.
    pub fn min_len(mut self, len: u64) -> Self {
        self.min_len = len;
        self
    }

    /// Write to a block device even when it is mounted, partitioned, in use by device
    /// mapper or md, or holds a filesystem or other signature (default: refused with
    /// [`OpenError::WriteRefused`]). The override is told in [`Engine::notes`]:
    /// `PATH: allow_mounted_write given: writing anyway (REASON)`.
    pub fn allow_mounted_write(mut self, allow: bool) -> Self {
        self.allow_mounted_write = allow;
        self
    }

    /// Allow writing as [`Self::allow_mounted_write`] does, with the note naming the
    /// override as the caller's user gave it (a command-line flag, a setting):
    /// `PATH: --allow-mounted-write given: writing anyway (REASON)`.
    pub fn allow_mounted_write_as(mut self, allow: bool, given_as: &'static str) -> Self {
        self.allow_mounted_write = allow;
        self.allowed_as = given_as;
        self
    }

    /// Operations at the device at once (at least 1): the backend's ring or thread pool is
    /// sized for it and the policy dispatches up to it. Default: what the device reports
    /// (sysfs `device/queue_depth`, else `queue/nr_requests`), 32 for a regular file.
    pub fn queue_depth(mut self, depth: usize) -> Self {
        self.queue_depth = Some(depth);
        self
    }

    /// Which backend moves the bytes (default [`BackendChoice::Automatic`]).
    pub fn backend(mut self, backend: BackendChoice) -> Self {
        self.backend = backend;
        self
    }

    policy_setters!();

    /// Check the options, open the target, check that writing to it is safe, start the
    /// backend and the engine.
    ///
    /// # Errors
    /// An [`OpenError`] naming the path: an option that cannot work, a target that cannot
    /// be opened or is empty, a refused write, a backend that cannot start, a policy or
    /// group the engine refuses.
    pub fn start(self) -> Result<Engine, OpenError> {
        let path = self.path.clone();
        let invalid = |option, expected| OpenError::InvalidOption {
            path: path.clone(),
            option,
            expected,
        };
        let engine_error = |source| OpenError::Engine {
            path: path.clone(),
            source,
        };

        // Everything that needs no file first, so a mistake leaves nothing behind.
        if self.queue_depth == Some(0) {
            return Err(invalid("queue_depth", "at least 1"));
        }
        if self.settings.submission_queue == 0 {
            return Err(invalid("submission_queue", "at least 1"));
        }
        if self.create_len == Some(0) {
            return Err(invalid("create", "a size of at least one block"));
        }
        let groups = self.settings.group_tree().map_err(engine_error)?;
        self.settings.check(&groups).map_err(engine_error)?;

        let mut notes = Vec::new();
        let target = self.open_target(&mut notes)?;
        if self.write {
            if let Some(reason) = refusal_reason(&target) {
                if !self.allow_mounted_write {
                    return Err(OpenError::WriteRefused { path, reason });
                }
                notes.push(format!(
                    "{}: {} given: writing anyway ({reason})",
                    path.display(),
                    self.allowed_as
                ));
            }
        }
        if target.kind() == TargetKind::BlockDevice && target.size_bytes() < self.min_len {
            return Err(OpenError::TooShort {
                path,
                needed: self.min_len,
                has: target.size_bytes(),
            });
        }
        if target.size_bytes() == 0 {
            return Err(OpenError::Empty { path });
        }

        let mut geometry = Geometry::of(&target);
        if let Some(depth) = self.queue_depth {
            geometry.queue_depth = depth;
        }
        let depth = u32::try_from(geometry.queue_depth).unwrap_or(u32::MAX);
        let file = Arc::clone(target.file());
        let backend: Box<dyn Backend> = match self.backend {
            BackendChoice::Automatic => {
                let (backend, note) = open_backend(file, depth);
                notes.extend(note.map(|note| format!("{}: {note}", path.display())));
                backend
            }
            BackendChoice::IoUring => match UringBackend::new(file, depth) {
                Ok(ring) => Box::new(ring),
                Err(source) => {
                    return Err(OpenError::Backend {
                        path,
                        backend: "io_uring",
                        source,
                    })
                }
            },
            BackendChoice::ThreadPool => Box::new(ThreadPoolBackend::new(
                file,
                depth.clamp(1, MAX_THREADS) as usize,
            )),
            BackendChoice::Synchronous => {
                let (backend, note) = open_synchronous_backend(file, depth);
                notes.extend(note.map(|note| format!("{}: {note}", path.display())));
                backend
            }
        };

        let mut engine = Engine::builder(backend, geometry)
            .settings(self.settings)
            .start()
            .map_err(engine_error)?;
        engine.target = Some(target);
        engine.notes = notes;
        Ok(engine)
    }

    /// Open the target as asked, falling back to buffered I/O where O_DIRECT is refused and
    /// [`DirectIo::IfSupported`] allows it.
    fn open_target(&self, notes: &mut Vec<String>) -> Result<Target, OpenError> {
        let options = |direct| OpenOptions {
            direct,
            write: self.write,
            create_len: self.create_len,
        };
        if self.direct == DirectIo::Off {
            return Ok(Target::open(&self.path, &options(false))?);
        }
        let refused = match Target::open(&self.path, &options(true)).and_then(probe_direct) {
            Ok(target) => return Ok(target),
            Err(refused @ DeviceError::DirectUnsupported { .. }) => refused,
            Err(other) => return Err(other.into()),
        };
        if self.direct == DirectIo::On {
            return Err(refused.into());
        }
        notes.push(format!(
            "{}: O_DIRECT is not supported here: using buffered I/O",
            self.path.display()
        ));
        Ok(Target::open(&self.path, &options(false))?)
    }
}

/// Read the first logical block of a target opened with O_DIRECT: a filesystem that takes
/// the flag at open but refuses aligned direct I/O (`EINVAL`) is found here rather than at
/// the first request. Other errors are left to the requests that meet them.
fn probe_direct(target: Target) -> Result<Target, DeviceError> {
    let block = target.logical_block_size() as usize;
    let mut buffer = AlignedBuffer::new(block, block);
    match target.file().read_at(buffer.as_mut_slice(), 0) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Err(DeviceError::DirectUnsupported {
            path: target.path().to_path_buf(),
        }),
        _ => Ok(target),
    }
}
