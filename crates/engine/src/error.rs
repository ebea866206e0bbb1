//! Why an engine could not be built, a client not made, or a shutdown not clean
//! ([`EngineError`], re-exported by the `engine` module).
//!
//! Made by the builder and `Engine::shutdown` on the thread that calls them, and by
//! `Handle::client` on a client's thread.

use std::io;

use ioslice_core::group::GroupError;
use ioslice_core::TunableError;

/// Why an engine could not be built, a client not made, or a shutdown not clean.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The scheduler specification was refused.
    #[error("scheduler '{spec}': {source}")]
    Scheduler {
        /// The specification as given.
        spec: String,
        /// Why.
        source: Box<TunableError>,
    },
    /// A group path or weight was refused.
    #[error(transparent)]
    Group(#[from] GroupError),
    /// A client named a group the engine was not built with.
    #[error("unknown group '{group}': the engine has {known}")]
    UnknownGroup {
        /// The path given.
        group: String,
        /// The groups declared, comma-separated.
        known: String,
    },
    /// A group cannot be removed while a client is in it or a request of it is queued or
    /// in flight (`rmdir` of a cgroup with tasks says `EBUSY`).
    #[error("group '{group}' is busy: {why}")]
    GroupBusy {
        /// The group's path.
        group: String,
        /// What is still in it.
        why: String,
    },
    /// The target's geometry or a size cannot work.
    #[error("invalid engine configuration: {0}")]
    Config(String),
    /// The dispatcher thread could not be spawned.
    #[error("cannot start the dispatcher thread: {0}")]
    Spawn(io::Error),
    /// The backend failed for good; every request it held was failed with its errno.
    #[error("the {backend} backend failed: {source}")]
    Backend {
        /// The backend's name.
        backend: &'static str,
        /// Its error.
        source: io::Error,
    },
    /// The dispatcher thread panicked (a bug); its requests were failed with a shutdown error.
    #[error("the dispatcher thread panicked")]
    DispatcherPanicked,
    /// A thread panicked while running the engine (a bug in a policy, a backend or the
    /// engine), which then stopped: every request it held failed with
    /// [`IoErrorKind::EnginePanicked`](crate::IoErrorKind::EnginePanicked).
    #[error(
        "the engine stopped after a thread panicked while running it; every request it held failed"
    )]
    Panicked,
}
