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
use ioslice_engine::backend::memory::{LoggedOp, MemoryBackend, MemoryProbe};
use ioslice_engine::{AlignedBuffer, Client, Engine, EngineBuilder, Geometry, Handle, IoFuture};

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

/// How many reads each tenant of a share test sends while the device is held.
pub const BACKLOG: u64 = 240;

/// An engine over an 8 MiB in-memory device taking one command, under bfq without idling,
/// weight raising or large budgets (so that shares show within a few hundred requests), with
/// `groups` at their weights; and the probe that holds its completions.
pub fn bfq_tenants(groups: &[(&str, u32)]) -> (EngineBuilder, MemoryProbe) {
    let backend = MemoryBackend::new(MIB as usize * 8);
    let probe = backend.probe();
    let mut builder =
        engine_on(backend, 8 * MIB, 1).scheduler("bfq:slice_idle=0,low_latency=0,max_budget=64");
    for &(path, weight) in groups {
        builder = builder.group(path, weight);
    }
    (builder, probe)
}

/// [`BACKLOG`] 4 KiB reads by each of `tenants` from its offset, 8 KiB apart (gaps: no
/// merging), the tenants' reads taking turns.
pub fn spaced_reads(tenants: &[(&Client, u64)]) -> Vec<IoFuture> {
    (0..BACKLOG)
        .flat_map(|i| {
            tenants
                .iter()
                .map(move |(client, base)| client.read(base + i * 8192, 4096))
        })
        .collect()
}

/// The device held behind one read of `blocker`'s at 7 MiB, `submit` sends its reads; once
/// the engine has them all (`sent` of them), `then` runs, the device is released and every
/// read is waited for. The device's log after the blocker: the order it served them in.
pub fn served_once_backlogged(
    probe: &MemoryProbe,
    handle: &Handle,
    blocker: &Client,
    submit: impl FnOnce() -> Vec<IoFuture>,
    sent: u64,
    then: impl FnOnce(),
) -> Vec<LoggedOp> {
    probe.hold();
    let first = blocker.read(7 * MIB, 512);
    wait_until(|| handle.stats().in_flight == 1);
    let futures = submit();
    wait_until(|| handle.stats().submitted == sent + 1);
    then();
    probe.release();
    first.wait().expect("blocker");
    for future in futures {
        future.wait().expect("read");
    }
    probe.log().split_off(1)
}

/// The share of the first [`BACKLOG`] of `served` at or above 4 MiB: while two tenants are
/// both backlogged, the one reading there.
pub fn upper_share(served: &[LoggedOp]) -> f64 {
    let window = &served[..BACKLOG as usize];
    window.iter().filter(|op| op.offset >= 4 * MIB).count() as f64 / window.len() as f64
}
