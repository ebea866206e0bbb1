//! `Engine::on_path`, the entry point for a file or block device: every option that cannot
//! work is a typed error naming the path (never a panic), checked before anything is created;
//! what works round-trips data through each backend choice; a block device holding a
//! filesystem is refused for writing unless allowed (on a loop device, where one can be made).

mod common;

use std::path::Path;

use ioslice_engine::device::DeviceError;
use ioslice_engine::{
    AlignedBuffer, BackendChoice, DirectIo, Engine, EngineError, IoErrorKind, IoPriority,
    OpenError, TargetKind,
};

const BLOCK: usize = 4096;

fn start_err(builder: ioslice_engine::OpenBuilder) -> OpenError {
    match builder.start() {
        Ok(engine) => panic!("started on {:?}", engine.target()),
        Err(error) => error,
    }
}

/// The message is one line and names the path.
fn names(error: &OpenError, path: &Path) -> String {
    let message = error.to_string();
    assert!(
        message.contains(&path.display().to_string()),
        "the message does not name {}: {message}",
        path.display()
    );
    assert!(!message.contains('\n'), "{message}");
    assert_eq!(error.path(), path);
    message
}

#[test]
fn a_missing_path_without_create_is_not_found() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("missing");
    let error = start_err(Engine::on_path(&path));
    assert!(
        matches!(error, OpenError::Device(DeviceError::NotFound { .. })),
        "{error:?}"
    );
    let message = names(&error, &path);
    assert!(
        message.contains("no such file or block device"),
        "{message}"
    );
    assert!(!path.exists());
}

#[test]
fn a_directory_is_not_a_target() {
    let dir = tempfile::tempdir().expect("temp dir");
    for builder in [
        Engine::on_path(dir.path()),
        Engine::on_path(dir.path()).read_only(),
        Engine::on_path(dir.path()).create(1 << 20),
        Engine::on_path(dir.path()).direct(DirectIo::IfSupported),
    ] {
        let error = start_err(builder);
        assert!(
            matches!(
                error,
                OpenError::Device(DeviceError::NotFileOrBlockDevice {
                    what: "directory",
                    ..
                })
            ),
            "{error:?}"
        );
        let message = names(&error, dir.path());
        assert!(
            message.contains("is a directory; expected a regular file or a block device"),
            "{message}"
        );
    }
}

#[test]
fn a_character_device_is_not_a_target() {
    let error = start_err(Engine::on_path("/dev/null").read_only());
    let message = names(&error, Path::new("/dev/null"));
    assert!(message.contains("character device"), "{message}");
}

#[test]
fn a_bad_scheduler_spec_is_refused_before_the_file_is_created() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("data");
    for spec in [
        "",
        "nosuch",
        "bfq:slice_idle",
        "bfq:nonsense=1",
        "bfq:slice_idle=x",
    ] {
        let error = start_err(Engine::on_path(&path).create(1 << 20).scheduler(spec));
        match &error {
            OpenError::Engine {
                source: EngineError::Scheduler { spec: given, .. },
                ..
            } => assert_eq!(given, spec),
            other => panic!("{spec:?}: {other:?}"),
        }
        let message = names(&error, &path);
        assert!(message.contains("scheduler '"), "{message}");
        assert!(!path.exists(), "{spec:?} left a file behind");
    }
}

#[test]
fn a_zero_queue_depth_is_refused_before_the_file_is_created() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("data");
    let error = start_err(Engine::on_path(&path).create(1 << 20).queue_depth(0));
    assert!(
        matches!(
            error,
            OpenError::InvalidOption {
                option: "queue_depth",
                ..
            }
        ),
        "{error:?}"
    );
    let message = names(&error, &path);
    assert!(
        message.contains("queue_depth must be at least 1"),
        "{message}"
    );
    assert!(!path.exists());
}

#[test]
fn other_options_that_cannot_work_are_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("data");

    let error = start_err(Engine::on_path(&path).create(1 << 20).submission_queue(0));
    assert!(
        matches!(
            error,
            OpenError::InvalidOption {
                option: "submission_queue",
                ..
            }
        ),
        "{error:?}"
    );
    let error = start_err(Engine::on_path(&path).create(0));
    assert!(
        matches!(
            error,
            OpenError::InvalidOption {
                option: "create",
                ..
            }
        ),
        "{error:?}"
    );
    let error = start_err(Engine::on_path(&path).create(1 << 20).group("a", 0));
    assert!(
        matches!(
            error,
            OpenError::Engine {
                source: EngineError::Group(_),
                ..
            }
        ),
        "{error:?}"
    );
    names(&error, &path);
    let error = start_err(Engine::on_path(&path).create(1 << 20).group("../a", 100));
    assert!(matches!(error, OpenError::Engine { .. }), "{error:?}");
    assert!(!path.exists());

    // An empty file has nothing to read or write.
    std::fs::write(&path, b"").expect("empty file");
    let error = start_err(Engine::on_path(&path));
    assert!(matches!(error, OpenError::Empty { .. }), "{error:?}");
    names(&error, &path);
}

/// Write a block at each of a few offsets, read them back, check every byte.
fn round_trip(engine: Engine) -> Engine {
    let handle = engine.handle();
    let align = handle.logical_block_size() as usize;
    let client = handle
        .client(1, "a", IoPriority::default())
        .expect("client");
    for block in 0..8u64 {
        let mut buffer = AlignedBuffer::new(BLOCK, align);
        buffer.as_mut_slice().fill(block as u8 + 1);
        client
            .write(block * BLOCK as u64, buffer)
            .wait()
            .expect("write");
    }
    for block in 0..8u64 {
        let done = client
            .read(block * BLOCK as u64, BLOCK)
            .wait()
            .expect("read");
        assert!(done.buffer.as_slice().iter().all(|&b| b == block as u8 + 1));
    }
    engine
}

#[test]
fn a_created_file_round_trips_through_every_backend_choice() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (index, backend) in [
        BackendChoice::Automatic,
        BackendChoice::ThreadPool,
        BackendChoice::IoUring,
        BackendChoice::Synchronous,
    ]
    .into_iter()
    .enumerate()
    {
        for direct in [DirectIo::Off, DirectIo::IfSupported] {
            let path = dir.path().join(format!("data-{index}-{direct:?}"));
            let started = Engine::on_path(&path)
                .create(2 << 20)
                .direct(direct)
                .backend(backend)
                .queue_depth(8)
                .scheduler("bfq:slice_idle=0")
                .group("a", 200)
                .start();
            let engine = match (backend, started) {
                (_, Ok(engine)) => engine,
                (BackendChoice::IoUring, Err(OpenError::Backend { backend, .. })) => {
                    assert_eq!(backend, "io_uring");
                    eprintln!("skipped: io_uring is not available here");
                    continue;
                }
                (_, Err(error)) => panic!("{backend:?} {direct:?}: {error}"),
            };
            let target = engine.target().expect("opened from a path");
            assert_eq!(target.kind(), TargetKind::RegularFile);
            assert_eq!(target.size_bytes(), 2 << 20);
            assert_eq!(target.path(), path);
            if direct == DirectIo::Off {
                assert!(!target.direct());
            }
            let alignment = u64::from(target.logical_block_size());
            assert_eq!(engine.handle().logical_block_size(), alignment);
            match backend {
                BackendChoice::ThreadPool => assert_eq!(engine.backend_name(), "psync"),
                BackendChoice::IoUring => assert_eq!(engine.backend_name(), "io_uring"),
                BackendChoice::Synchronous if std::env::var_os("IOSLICE_BACKEND").is_none() => {
                    assert_eq!(engine.backend_name(), "psync-inline");
                }
                BackendChoice::Synchronous => {}
                BackendChoice::Automatic => {}
            }
            let engine = round_trip(engine);
            let last = engine.shutdown().expect("clean shutdown");
            assert_eq!(last.totals.requests, 16);
            assert_eq!(last.totals.errors, 0);
            assert_eq!(last.groups["a"].bytes_written, 8 * BLOCK as u64);
        }
    }
}

#[test]
fn direct_on_either_opens_with_o_direct_or_says_it_is_unsupported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("data");
    match Engine::on_path(&path)
        .create(1 << 20)
        .direct(DirectIo::On)
        .group("a", 100)
        .start()
    {
        Ok(engine) => {
            assert!(engine.target().expect("target").direct());
            assert_eq!(engine.handle().logical_block_size(), 4096);
            // Misaligned for O_DIRECT: refused before the device sees it.
            let client = engine
                .handle()
                .client(2, "a", IoPriority::default())
                .expect("client");
            let error = client.read(512, 512).wait().expect_err("misaligned");
            assert!(error.to_string().contains("EINVAL"), "{error}");
            round_trip(engine).shutdown().expect("shutdown");
        }
        Err(error) => {
            assert!(
                matches!(
                    error,
                    OpenError::Device(DeviceError::DirectUnsupported { .. })
                ),
                "{error:?}"
            );
            names(&error, &path);
            // IfSupported falls back and says so.
            let engine = Engine::on_path(&path)
                .direct(DirectIo::IfSupported)
                .start()
                .expect("buffered fallback");
            assert!(!engine.target().expect("target").direct());
            assert!(engine.notes().iter().any(|note| note.contains("O_DIRECT")));
        }
    }
}

#[test]
fn a_read_only_engine_refuses_writes_with_an_errno() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("data");
    std::fs::write(&path, vec![7u8; 1 << 20]).expect("file");
    let engine = Engine::on_path(&path)
        .read_only()
        .group("a", 100)
        .start()
        .expect("opens");
    let handle = engine.handle();
    let client = handle
        .client(1, "a", IoPriority::default())
        .expect("client");
    let read = client.read(0, BLOCK).wait().expect("read");
    assert!(read.buffer.as_slice().iter().all(|&b| b == 7));
    let error = client
        .write(0, AlignedBuffer::new(BLOCK, BLOCK))
        .wait()
        .expect_err("read-only");
    assert!(matches!(error.kind, IoErrorKind::Os { .. }), "{error}");
    engine.shutdown().expect("shutdown");
    assert_eq!(std::fs::read(&path).expect("read")[0], 7);
}

#[test]
fn engines_built_on_a_backend_have_no_target() {
    let backend = ioslice_engine::backend::memory::MemoryBackend::new(1 << 20);
    let engine = Engine::builder(Box::new(backend), ioslice_engine::Geometry::new(1 << 20))
        .start()
        .expect("starts");
    assert!(engine.target().is_none());
    assert!(engine.notes().is_empty());
}

#[test]
fn a_block_device_holding_a_filesystem_is_refused_for_writing_unless_allowed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let image = dir.path().join("image");
    let mut bytes = vec![0u8; 4 << 20];
    bytes[1080..1082].copy_from_slice(b"\x53\xef"); // an ext2/3/4 superblock's magic
    std::fs::write(&image, &bytes).expect("image");
    let device = match common::attach_loop(&image) {
        Ok(device) => device,
        Err(why) => {
            eprintln!("skipped: no loop device ({why})");
            return;
        }
    };
    let path = device.device.clone();

    let error = start_err(Engine::on_path(&path));
    assert!(matches!(error, OpenError::WriteRefused { .. }), "{error:?}");
    let message = names(&error, &path);
    assert!(message.contains("ext2/3/4"), "{message}");
    assert!(message.contains("allow_mounted_write(true)"), "{message}");

    // A device shorter than asked for is refused, naming both lengths.
    let error = start_err(Engine::on_path(&path).read_only().min_len(8 << 20));
    assert!(
        matches!(
            error,
            OpenError::TooShort {
                needed: 8_388_608,
                has: 4_194_304,
                ..
            }
        ),
        "{error:?}"
    );
    let message = names(&error, &path);
    assert!(
        message.ends_with(": 8388608 bytes are needed but the device has 4194304"),
        "{message}"
    );

    let engine = Engine::on_path(&path)
        .read_only()
        .min_len(4 << 20)
        .start()
        .expect("reading is safe");
    assert_eq!(
        engine.target().expect("target").kind(),
        TargetKind::BlockDevice
    );
    engine.shutdown().expect("shutdown");

    // A caller's own name for the override goes into the note.
    let engine = Engine::on_path(&path)
        .allow_mounted_write_as(true, "--allow-mounted-write")
        .start()
        .expect("allowed");
    let note = format!(
        "{}: --allow-mounted-write given: writing anyway (it holds an ext2/3/4 filesystem)",
        path.display()
    );
    assert_eq!(engine.notes().first(), Some(&note), "{:?}", engine.notes());
    engine.shutdown().expect("shutdown");

    // Its writes overwrite the superblock: last.
    let engine = Engine::on_path(&path)
        .allow_mounted_write(true)
        .direct(DirectIo::IfSupported)
        .group("a", 100)
        .start()
        .expect("allowed");
    assert!(engine
        .notes()
        .iter()
        .any(|note| note.contains("allow_mounted_write given: writing anyway")));
    let engine = round_trip(engine);
    engine.shutdown().expect("shutdown");
}
