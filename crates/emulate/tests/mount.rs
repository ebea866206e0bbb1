//! The emulator mounted for real: data written through a loop device over the disk file
//! reads back, a busy file is not unmounted, reads take the model's time, and bad
//! mountpoints or stores are refused with one line. Tests that mount need root, /dev/fuse and
//! losetup; they skip with a printed reason where those are missing.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ioslice_emulate::{EmulateError, Emulator, EmulatorConfig};

fn config(device: &str) -> EmulatorConfig {
    EmulatorConfig::new(device.parse().expect("a device spec"))
}

/// Why the mounting tests cannot run here, if they cannot.
fn cannot_mount() -> Option<&'static str> {
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    if !root {
        return Some("not root");
    }
    if !Path::new("/dev/fuse").exists() {
        return Some("no /dev/fuse");
    }
    None
}

/// A buffer of `len` bytes aligned for O_DIRECT, inside `storage`.
fn aligned(storage: &mut Vec<u8>, len: usize) -> &mut [u8] {
    storage.resize(len + 4096, 0);
    let skip = storage.as_ptr().align_offset(4096);
    &mut storage[skip..skip + len]
}

fn open_direct(path: &Path) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .expect("open with O_DIRECT")
}

/// A loop device over `file`, detached when dropped.
struct Loop(PathBuf);

impl Loop {
    fn attach(file: &Path) -> Option<Self> {
        let output = Command::new("losetup")
            .args(["--direct-io=on", "--find", "--show"])
            .arg(file)
            .output()
            .ok()?;
        if !output.status.success() {
            eprintln!(
                "skipping: losetup failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
            return None;
        }
        let device = String::from_utf8_lossy(&output.stdout).trim().to_string();
        Some(Self(PathBuf::from(device)))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
    }
}

#[test]
fn data_written_through_a_loop_device_reads_back_and_a_busy_disk_stays_mounted() {
    if let Some(reason) = cannot_mount() {
        eprintln!("skipping: {reason}");
        return;
    }
    let dir = tempfile::tempdir().expect("a mountpoint");
    let mut emulator = Emulator::mount(dir.path(), &config("sim:null")).expect("mounts");
    assert_eq!(emulator.info().capacity_sectors * 512, 1 << 40);
    let Some(device) = Loop::attach(&emulator.disk_path()) else {
        return;
    };
    let mut storage = Vec::new();
    let block = aligned(&mut storage, 1 << 20);
    for (index, byte) in block.iter_mut().enumerate() {
        *byte = (index % 251) as u8;
    }
    let file = open_direct(&device.0);
    let offset = 7 << 30;
    file.write_all_at(block, offset)
        .expect("write through the loop device");
    let mut back = Vec::new();
    let back = aligned(&mut back, 1 << 20);
    file.read_exact_at(back, offset).expect("read back");
    assert!(back.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
    drop(file);

    // Still in use by the loop device: refused, and still serving.
    assert!(matches!(emulator.unmount(), Err(EmulateError::Busy { .. })));
    let file = open_direct(&device.0);
    file.read_exact_at(back, offset).expect("read again");
    drop(file);
    drop(device);
    let summary = emulator.unmount().expect("unmounts once detached");
    // The loop device may send the megabyte in pieces.
    assert_eq!(summary.bytes_written, 1 << 20, "{summary}");
    assert!(summary.writes >= 1, "{summary}");
    assert!(summary.bytes_read >= 2 << 20, "{summary}");
    assert!(!dir.path().join("disk").exists(), "unmounted");
}

#[test]
fn a_read_is_answered_no_sooner_than_the_model_completes_it() {
    if let Some(reason) = cannot_mount() {
        eprintln!("skipping: {reason}");
        return;
    }
    let dir = tempfile::tempdir().expect("a mountpoint");
    // No command queueing, 7200 rpm: each random read takes milliseconds.
    let log = tempfile::NamedTempFile::new().expect("a log file");
    let config = EmulatorConfig {
        log: Some(log.path().to_path_buf()),
        ..config("sim:ide-2004")
    };
    let mut emulator = Emulator::mount(dir.path(), &config).expect("mounts");
    let file = open_direct(&emulator.disk_path());
    let mut storage = Vec::new();
    let buffer = aligned(&mut storage, 4096);
    let reads = 20u64;
    let mut waited = Duration::ZERO;
    for i in 0..reads {
        let offset = (i * 2_654_435_761 % (60 << 30)) & !4095;
        let started = Instant::now();
        file.read_exact_at(buffer, offset).expect("read");
        waited += started.elapsed();
    }
    drop(file);
    let summary = emulator.unmount().expect("unmounts");
    assert_eq!((summary.reads, summary.bytes_read), (reads, reads * 4096));
    let mean_waited = waited.as_secs_f64() * 1e6 / reads as f64;
    assert!(summary.service.mean > 1000.0, "{summary}");
    assert!(
        mean_waited >= summary.service.mean,
        "answered before the model: {mean_waited:.0} µs against {summary}"
    );
    // The command log: its header, then one line per read, in order, with its place.
    let text = std::fs::read_to_string(log.path()).expect("the log");
    let mut lines = text.lines();
    assert_eq!(lines.next(), ioslice_emulate::LOG_HEADER.lines().next());
    let commands: Vec<Vec<&str>> = lines.map(|line| line.split(' ').collect()).collect();
    assert_eq!(commands.len() as u64, reads);
    for (i, fields) in commands.iter().enumerate() {
        let offset = (i as u64 * 2_654_435_761 % (60 << 30)) & !4095;
        assert_eq!(fields[3..6], ["R", &(offset / 512).to_string(), "8"]);
        let times: Vec<f64> = fields[..3].iter().map(|t| t.parse().expect("µs")).collect();
        assert!(times[0] <= times[1] && times[1] < times[2], "{fields:?}");
    }
}

#[test]
fn bad_mountpoints_and_stores_are_refused_with_one_line() {
    let dir = tempfile::tempdir().expect("a directory");
    let file = dir.path().join("plain");
    std::fs::write(&file, b"x").expect("a file");
    let empty = tempfile::tempdir().expect("an empty directory");
    let cases = [
        (dir.path().join("missing"), None, "no such directory"),
        (file.clone(), None, "not a directory"),
        (dir.path().to_path_buf(), None, "not empty"),
        (
            empty.path().to_path_buf(),
            Some(dir.path().to_path_buf()),
            "not a regular file",
        ),
    ];
    for (mountpoint, store, expected) in cases {
        let config = EmulatorConfig {
            store,
            ..config("sim:null")
        };
        match Emulator::mount(&mountpoint, &config) {
            Err(EmulateError::NoFuse) => {
                eprintln!("skipping: no /dev/fuse");
                return;
            }
            Err(error) => {
                let message = error.to_string();
                assert!(message.contains(expected), "{message}");
                assert!(!message.contains('\n'), "{message}");
            }
            Ok(_) => panic!("{mountpoint:?} was accepted"),
        }
    }
    let error = Emulator::mount(empty.path(), &config("sim:nosuch")).expect_err("refused");
    assert!(error.to_string().contains("nosuch"), "{error}");
}
