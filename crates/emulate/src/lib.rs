//! ioslice-emulate: a simulated disk served in real time as one file through FUSE.
//!
//! `losetup --direct-io=on` turns the file into a block device that the kernel schedules
//! with its own elevators (bfq, mq-deadline, kyber, none) and that any program can use
//! unmodified: a database against a 2004 IDE disk, a backup job against a 12-disk RAID 5.
//! Every command completes when the device model (the simulator's, unchanged: a pure state
//! machine with time as a parameter) says, on the real clock; its queue depth and caches
//! apply; data written reads back from a sparse backing store.
//!
//! # The arrangement
//!
//! ```text
//! program ─► kernel elevator on /dev/loopN ─► loop (128 tags) ─► FUSE ─► driver queue ─► model
//!                                              (always deep)              (FIFO)         (its own depth)
//! ```
//!
//! The loop device always presents 128 tags (`hw_queue_depth` is fixed when the loop driver
//! loads), so the kernel's elevator sees a deep device and hands over up to 128 requests.
//! Those beyond the model's own queue depth (NCQ 31 for `sata-7200`, 1 for `ide-2004`) wait
//! in the emulator's driver queue, first come first served, where a real disk's host would
//! have kept them in the elevator. FUSE lets up to `max_background` asynchronous requests
//! reach the emulator at once (128 by default, so that the driver queue, not FUSE's own
//! queue, holds them and the summary can say how long they waited); the order is first come
//! first served either way. The simulator can run the same arrangement for a like-for-like
//! comparison.
//!
//! # Modules
//!
//! - `filesystem`: the FUSE filesystem with its one file (the FUSE session thread).
//! - `disk`: the disk thread, which runs the model on the real clock and answers requests.
//! - `store`: the backing store.
//! - [`fault`]: fault plans: failed, torn, slow and stalled commands, from the seed.
//! - [`summary`]: what was served.
//! - [`timed`]: the same disk thread behind the engine's backend interface, inside the
//!   process: the model on the real clock for a program that drives the engine, no FUSE.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod disk;
pub mod fault;
mod filesystem;
mod store;
pub mod summary;
pub mod timed;
pub mod transport;

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use fuser::{BackgroundSession, Config, MountOption, Session, SessionACL};
use ioslice_sim::device::DeviceInfo;
use ioslice_sim::preset::{self, DeviceError, DeviceSpec};

pub use disk::LOG_HEADER;
pub use filesystem::DISK_FILE;
pub use summary::{Latency, Summary};
pub use transport::Transport;

use std::sync::{Arc, Mutex};

use crate::disk::{Buffers, Disk};
use crate::fault::{FaultCounts, FaultPlan, Faults, Stalls};
use crate::filesystem::{DiskFilesystem, Parts};
use crate::store::Store;

/// Why an emulator could not start or stop. Each message is one line naming what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum EmulateError {
    /// No FUSE device: the kernel module is not loaded, or a container hides it.
    #[error("cannot emulate: /dev/fuse is missing or not a character device (load the fuse module, or give the container /dev/fuse)")]
    NoFuse,
    /// The mountpoint is not an existing directory.
    #[error("mountpoint {path}: {reason}")]
    Mountpoint {
        /// The path given.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The device specification was refused.
    #[error("--device: {0}")]
    Device(#[from] DeviceError),
    /// The backing store could not be made.
    #[error("store {path}: {source}")]
    Store {
        /// Where.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The backing store's path is not a regular file.
    #[error("store {path}: {reason}; expected a regular file (it is created if missing)")]
    StoreNotRegular {
        /// The path given.
        path: PathBuf,
        /// What it is.
        reason: String,
    },
    /// Mounting failed.
    #[error(
        "cannot mount at {path}: {source} (mounting a FUSE filesystem needs root, or fusermount3)"
    )]
    Mount {
        /// The mountpoint.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is still in use (a loop device over it): detach it first.
    #[error("{path} is busy: detach the loop device over it first (losetup -d /dev/loopN)")]
    Busy {
        /// The mountpoint.
        path: PathBuf,
    },
    /// Unmounting failed for another reason.
    #[error("cannot unmount {path}: {source}")]
    Unmount {
        /// The mountpoint.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The command log could not be made.
    #[error("--log {path}: {source}")]
    Log {
        /// The path given.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A thread could not be started.
    #[error("cannot start the emulator's threads: {0}")]
    Spawn(io::Error),
}

/// What to emulate, and how.
#[derive(Debug, Clone)]
pub struct EmulatorConfig {
    /// The simulated device: a preset and its overrides.
    pub device: DeviceSpec,
    /// Where to keep the disk's bytes: a regular file (created sparse if missing), or an
    /// unnamed temporary file when `None`.
    pub store: Option<PathBuf>,
    /// Most asynchronous requests FUSE lets reach the emulator at once (the rest wait in
    /// FUSE's own queue, first come first served, as they would in the driver queue).
    pub max_background: u16,
    /// The emulator's own round trip, taken out of what the model sees (see [`transport`];
    /// [`Transport::NONE`] by default).
    pub transport: Transport,
    /// Write one line per command here as it completes: when it arrived, was handed to the
    /// model and completed, its direction, place and length, and how many commands the model
    /// held then.
    pub log: Option<PathBuf>,
    /// Faults to inject (see [`fault`]); `None` serves every command as the model says.
    pub faults: Option<FaultPlan>,
    /// Where the fault plan's random draws come from: the same seed gives the same faults
    /// for the same commands.
    pub seed: u64,
}

impl EmulatorConfig {
    /// The loop device's tag count: every request the loop device sends reaches the emulator.
    pub const DEFAULT_MAX_BACKGROUND: u16 = 128;

    /// Emulate `device`, with a temporary store.
    pub fn new(device: DeviceSpec) -> Self {
        Self {
            device,
            store: None,
            max_background: Self::DEFAULT_MAX_BACKGROUND,
            transport: Transport::NONE,
            log: None,
            faults: None,
            seed: 1,
        }
    }
}

/// A mounted emulator: the file `MOUNTPOINT/disk` is the emulated disk.
pub struct Emulator {
    mountpoint: PathBuf,
    info: DeviceInfo,
    transport: Transport,
    session: Option<BackgroundSession>,
    disk: Option<Disk>,
    /// The fault plan's faults as written, and what each injected.
    faults: (Vec<String>, Arc<FaultCounts>),
}

impl std::fmt::Debug for Emulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emulator")
            .field("mountpoint", &self.mountpoint)
            .field("device", &self.info.name)
            .finish_non_exhaustive()
    }
}

impl Emulator {
    /// Build the device, make its store, mount the filesystem at `mountpoint` (an existing
    /// directory) and start serving.
    pub fn mount(mountpoint: &Path, config: &EmulatorConfig) -> Result<Self, EmulateError> {
        check_fuse()?;
        check_mountpoint(mountpoint)?;
        let model = preset::build(&config.device)?;
        let info = model.info();
        let capacity = info.capacity_sectors * 512;
        let store = Store::open(config.store.as_deref(), capacity)?;
        let buffers = Arc::new(Buffers::default());
        let log = match &config.log {
            Some(path) => Some(File::create(path).map_err(|source| EmulateError::Log {
                path: path.clone(),
                source,
            })?),
            None => None,
        };
        let started = Instant::now();
        let plan = config.faults.clone().unwrap_or_default();
        let texts: Vec<String> = plan.faults.iter().map(|f| f.text.clone()).collect();
        let counts = Arc::new(FaultCounts::new(plan.faults.len()));
        let stalls = Stalls::new(fault::timed_stalls(&plan));
        let faults = (!plan.faults.is_empty()).then(|| Mutex::new(Faults::new(plan, config.seed)));
        let disk = Disk::start(
            model,
            started,
            Arc::clone(&buffers),
            log,
            (stalls, Arc::clone(&counts)),
        )
        .map_err(EmulateError::Spawn)?;
        let owner = std::fs::metadata(mountpoint)
            .map(|metadata| (metadata.uid(), metadata.gid()))
            .unwrap_or((0, 0));
        let filesystem = DiskFilesystem::new(Parts {
            store,
            capacity,
            requests: disk.sender(),
            max_background: config.max_background.max(1),
            owner,
            transport: config.transport,
            buffers,
            faults,
            fault_counts: Arc::clone(&counts),
            started,
        });
        let session = Session::new(filesystem, mountpoint, &mount_config())
            .and_then(Session::spawn)
            .map_err(|source| EmulateError::Mount {
                path: mountpoint.to_path_buf(),
                source,
            });
        let session = match session {
            Ok(session) => session,
            Err(error) => {
                disk.stop();
                return Err(error);
            }
        };
        Ok(Self {
            mountpoint: mountpoint.to_path_buf(),
            info,
            transport: config.transport,
            session: Some(session),
            disk: Some(disk),
            faults: (texts, counts),
        })
    }

    /// The round trip taken out of what the model sees.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// The emulated device: name, capacity, queue depth, rotational.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The file that is the emulated disk.
    pub fn disk_path(&self) -> PathBuf {
        self.mountpoint.join(DISK_FILE)
    }

    /// Unmount and stop, once nothing uses the file; returns what was served. If the file is
    /// still in use (a loop device over it), returns [`EmulateError::Busy`] and keeps
    /// serving: detach it and try again.
    pub fn unmount(&mut self) -> Result<Summary, EmulateError> {
        if self.session.is_some() {
            unmount(&self.mountpoint)?;
        }
        if let Some(session) = self.session.take() {
            // The session ends once the kernel says the filesystem is gone.
            let _ = session.join();
        }
        let mut summary = self.disk.take().map(Disk::stop).unwrap_or_default();
        let (texts, counts) = &self.faults;
        summary.faults = texts.iter().cloned().zip(counts.values()).collect();
        Ok(summary)
    }
}

impl Drop for Emulator {
    /// Unmounts (lazily if the file is still in use) and stops.
    fn drop(&mut self) {
        if self.session.is_some() && unmount(&self.mountpoint).is_err() {
            let _ = lazy_unmount(&self.mountpoint);
        }
        if let Some(session) = self.session.take() {
            let _ = session.join();
        }
        if let Some(disk) = self.disk.take() {
            disk.stop();
        }
    }
}

/// Mount options: named after the project; other users (root's loop device, for a user's
/// mount) may use the file when the mounter is root.
fn mount_config() -> Config {
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName("ioslice".into()),
        MountOption::Subtype("ioslice".into()),
        MountOption::NoAtime,
    ];
    if running_as_root() {
        config.acl = SessionACL::All;
    }
    config
}

/// Whether the process runs as root: the owner of `/proc/self` is its effective user.
fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|metadata| metadata.uid() == 0)
}

fn check_fuse() -> Result<(), EmulateError> {
    match std::fs::metadata("/dev/fuse") {
        Ok(metadata) if metadata.file_type().is_char_device() => Ok(()),
        _ => Err(EmulateError::NoFuse),
    }
}

fn check_mountpoint(path: &Path) -> Result<(), EmulateError> {
    let refuse = |reason: &str| EmulateError::Mountpoint {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    };
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_dir() => match std::fs::read_dir(path) {
            // Mounting over what is there would hide it (or another emulator).
            Ok(entries) => match entries.count() {
                0 => Ok(()),
                _ => Err(refuse("not empty (mounting would hide what is in it)")),
            },
            Err(error) => Err(refuse(&error.to_string())),
        },
        Ok(_) => Err(refuse("not a directory")),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Err(refuse("no such directory")),
        Err(error) => Err(refuse(&error.to_string())),
    }
}

/// Unmount `path` unless it is busy.
fn unmount(path: &Path) -> Result<(), EmulateError> {
    umount2(path, 0).map_err(|source| match source.raw_os_error() {
        Some(libc::EBUSY) => EmulateError::Busy {
            path: path.to_path_buf(),
        },
        _ => EmulateError::Unmount {
            path: path.to_path_buf(),
            source,
        },
    })
}

/// Detach `path` now; the kernel lets it go once nothing uses it.
fn lazy_unmount(path: &Path) -> io::Result<()> {
    umount2(path, libc::MNT_DETACH)
}

fn umount2(path: &Path, flags: libc::c_int) -> io::Result<()> {
    let path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `path` is a NUL-terminated string that lives across the call; umount2 reads it
    // and nothing else of ours.
    let result = unsafe { libc::umount2(path.as_ptr(), flags) };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
