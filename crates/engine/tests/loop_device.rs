//! A real block device: a loop device over a temporary image. Needs root and `losetup`;
//! skips with a printed reason where either is missing (or loop devices are not available,
//! as in many containers).

mod common;

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ioslice_core::Direction;
use ioslice_engine::backend::open_backend;
use ioslice_engine::device::{write_refusal, OpenOptions, Target, TargetKind};
use ioslice_engine::{AlignedBuffer, IoOp};

#[test]
fn a_loop_device_is_a_block_device_and_guarded_against_writes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let image = dir.path().join("disk.img");
    std::fs::write(&image, vec![0u8; 16 << 20]).expect("image");
    let mut device = match common::attach_loop(&image) {
        Ok(device) => device,
        Err(reason) => {
            eprintln!("skipping the loop-device test: {reason}");
            return;
        }
    };

    let options = OpenOptions {
        direct: true,
        write: true,
        create_len: None,
    };
    let target = Target::open(&device.device, &options).expect("open the loop device");
    assert_eq!(target.kind(), TargetKind::BlockDevice);
    assert_eq!(target.size_bytes(), 16 << 20);
    assert!(target.logical_block_size() >= 512);
    assert!(target.queue_depth() >= 1);
    assert_eq!(
        write_refusal(&target),
        None,
        "a blank device may be written"
    );

    // I/O through whichever backend this machine gives, O_DIRECT-aligned.
    let (mut backend, message) = open_backend(Arc::clone(target.file()), target.queue_depth());
    if let Some(message) = message {
        eprintln!("{message}");
    }
    let align = target.logical_block_size() as usize;
    let mut buffer = AlignedBuffer::new(4096, align.max(4096));
    buffer.as_mut_slice()[..4].copy_from_slice(b"data");
    backend.push(IoOp {
        token: 1,
        direction: Direction::Write,
        offset: 1 << 20,
        buffers: vec![buffer],
        lane: 0,
    });
    let mut done = Vec::new();
    let give_up = Instant::now() + Duration::from_secs(10);
    while backend.in_flight() > 0 && Instant::now() < give_up {
        backend
            .wait(Some(Instant::now() + Duration::from_secs(1)), &mut done)
            .expect("wait");
    }
    assert_eq!(done.len(), 1);
    assert_eq!(
        done[0].result.as_ref().map_err(|e| e.to_string()),
        Ok(&4096)
    );

    // With a filesystem it is refused, and more so once mounted.
    let has_mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&device.device)
        .status()
        .map(|status| status.success())
        .unwrap_or(false);
    if !has_mkfs {
        eprintln!("skipping the filesystem cases: mkfs.ext4 missing or failed");
        return;
    }
    drop(backend);
    let target = Target::open(&device.device, &options).expect("reopen");
    let why = write_refusal(&target).expect("an ext4 device is refused");
    assert!(why.contains("ext2/3/4"), "{why}");
    assert!(why.contains("--allow-mounted-write"), "{why}");

    let mount_point = dir.path().join("mnt");
    std::fs::create_dir(&mount_point).expect("mkdir");
    let mounted = Command::new("mount")
        .arg(&device.device)
        .arg(&mount_point)
        .status()
        .map(|status| status.success())
        .unwrap_or(false);
    if !mounted {
        eprintln!("skipping the mounted case: mount failed");
        return;
    }
    device.mounted_on = Some(mount_point.clone());
    let why = write_refusal(&target).expect("a mounted device is refused");
    eprintln!("{why}");
    assert!(
        why.contains(&format!("it is mounted on {}", mount_point.display())),
        "{why}"
    );
}
