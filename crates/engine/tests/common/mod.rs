//! What the engine's test files share: an engine over the in-memory backend, filled buffers,
//! bounded waits that fail instead of hanging, and a loop device over an image. Each test file is its own crate and uses
//! only part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use ioslice_core::limit::Limits;
use ioslice_core::IoPriority;
use ioslice_engine::backend::memory::{MemoryBackend, MemoryProbe};
use ioslice_engine::{AlignedBuffer, Engine, EngineBuilder, Geometry};

pub const MIB: u64 = 1 << 20;

/// Best effort at the default level.
pub fn be() -> IoPriority {
    IoPriority::default()
}

/// An engine builder over `backend`, a device of `capacity` bytes taking `depth` commands.
pub fn engine_on(backend: MemoryBackend, capacity: u64, depth: usize) -> EngineBuilder {
    let target = Geometry {
        queue_depth: depth,
        ..Geometry::new(capacity)
    };
    Engine::builder(Box::new(backend), target)
}

/// An engine builder over a 1 MiB in-memory device taking `depth` commands, and the probe
/// that holds and releases its completions.
pub fn probed_engine(depth: usize) -> (EngineBuilder, MemoryProbe) {
    let backend = MemoryBackend::new(MIB as usize);
    let probe = backend.probe();
    (engine_on(backend, MIB, depth), probe)
}

/// An engine under deadline over `backend` (1 MiB, depth 4) whose group "slow" may read 20
/// requests a second: its requests wait for the limit's timer.
pub fn slow_group_engine(backend: MemoryBackend) -> Engine {
    engine_on(backend, MIB, 4)
        .scheduler("deadline")
        .group_limits(
            "slow",
            Limits {
                read_iops: Some(20),
                ..Default::default()
            },
        )
        .start()
        .expect("engine starts")
}

/// `len` bytes of `byte`, aligned to 4 KiB (so to any logical block size).
pub fn filled(len: usize, byte: u8) -> AlignedBuffer {
    let mut buffer = AlignedBuffer::new(len, 4096);
    buffer.as_mut_slice().fill(byte);
    buffer
}

/// Wait (at most 10 s, then fail) until `condition` holds.
pub fn wait_until(condition: impl Fn() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "condition not met in 10 s"
        );
        thread::sleep(Duration::from_millis(1));
    }
}

/// Join `thread`, failing (instead of hanging) if it has not finished within 10 s.
pub fn join_within<T>(thread: thread::JoinHandle<T>) -> T {
    wait_until(|| thread.is_finished());
    thread.join().expect("thread")
}

/// A loop device over an image; unmounted (if mounted) and detached when the test ends, pass
/// or fail.
pub struct LoopDevice {
    pub device: PathBuf,
    pub mounted_on: Option<PathBuf>,
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        if let Some(mount_point) = &self.mounted_on {
            let _ = Command::new("umount").arg(mount_point).status();
        }
        let _ = Command::new("losetup").arg("-d").arg(&self.device).status();
    }
}

/// Whether the test runs as root (loop devices and mounts need it).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("Uid:"))
                .and_then(|line| line.split_whitespace().nth(2).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// Attach `image` to a free loop device; why not, where that cannot be done here.
pub fn attach_loop(image: &Path) -> Result<LoopDevice, String> {
    if !is_root() {
        return Err("not root".into());
    }
    let output = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(image)
        .output()
        .map_err(|e| format!("cannot run losetup ({e})"))?;
    if !output.status.success() {
        return Err(format!(
            "losetup failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let device = String::from_utf8_lossy(&output.stdout).trim().to_string();
    Ok(LoopDevice {
        device: PathBuf::from(device),
        mounted_on: None,
    })
}
