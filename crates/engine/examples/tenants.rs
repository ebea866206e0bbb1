//! Tenants sharing one file or block device under a policy, as a storage engine would run
//! them: a latency-sensitive reader and a bulk writer in groups weighted 300 and 100, the
//! writer also capped in bandwidth. Halfway through, the writer's weight and cap are changed
//! while requests are in flight (`Handle::set_group`, as writing its cgroup files would):
//! its weight to `--writer-weight-after` (600 unless given), its cap to `--cap-mib-after`
//! (half the first unless given). A third tenant comes and goes: a group `batch` weighted
//! 200 is added a third of the way through (`Handle::add_group`, as `mkdir` would), reads
//! until two thirds, and is removed once its client is gone (`Handle::remove_group`, as
//! `rmdir`). Prints each group's throughput in each half, and latency.
//!
//!     cargo run --release -p ioslice-engine --example tenants -- [PATH] [--sched bfq]
//!         [--depth 32] [--seconds 2] [--direct] [--cap-mib 64] [--writer-weight-after 600]
//!         [--cap-mib-after 32] [--allow-mounted-write]
//!
//! PATH defaults to a 64 MiB file in the temporary directory (created, then removed); a
//! missing regular file is created at 64 MiB. A block device holding a filesystem is refused
//! unless `--allow-mounted-write` is given: the writer overwrites the second half.
//! Only `ioslice-engine` is needed.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ioslice_engine::{
    AlignedBuffer, BackendChoice, DirectIo, Engine, IoPriority, Limits, PriorityClass,
};

const BLOCK: usize = 4096;
const FILE_BYTES: u64 = 64 << 20;

struct Options {
    path: Option<PathBuf>,
    sched: String,
    depth: usize,
    seconds: f64,
    direct: bool,
    cap_mib: u64,
    writer_weight_after: u32,
    cap_mib_after: Option<u64>,
    allow_mounted_write: bool,
}

fn parse() -> Result<Options, String> {
    let mut options = Options {
        path: None,
        sched: "bfq".into(),
        depth: 32,
        seconds: 2.0,
        direct: false,
        cap_mib: 64,
        writer_weight_after: 600,
        cap_mib_after: None,
        allow_mounted_write: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--sched" => options.sched = value("--sched")?,
            "--depth" => {
                options.depth = value("--depth")?
                    .parse()
                    .map_err(|_| "--depth expects a whole number")?
            }
            "--seconds" => {
                options.seconds = value("--seconds")?
                    .parse()
                    .map_err(|_| "--seconds expects a number")?
            }
            "--cap-mib" => {
                options.cap_mib = value("--cap-mib")?
                    .parse()
                    .map_err(|_| "--cap-mib expects a whole number")?
            }
            "--writer-weight-after" => {
                options.writer_weight_after = value("--writer-weight-after")?
                    .parse()
                    .map_err(|_| "--writer-weight-after expects a whole number")?
            }
            "--cap-mib-after" => {
                options.cap_mib_after = Some(
                    value("--cap-mib-after")?
                        .parse()
                        .map_err(|_| "--cap-mib-after expects a whole number")?,
                )
            }
            "--direct" => options.direct = true,
            "--allow-mounted-write" => options.allow_mounted_write = true,
            path if !path.starts_with("--") && options.path.is_none() => {
                options.path = Some(PathBuf::from(path))
            }
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    Ok(options)
}

fn main() {
    if let Err(error) = run() {
        eprintln!("tenants: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let options = parse()?;
    let temporary = options.path.is_none();
    let path = options.path.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("ioslice-tenants-{}", std::process::id()))
    });
    let engine = Engine::on_path(&path)
        .create(FILE_BYTES)
        .direct(if options.direct {
            DirectIo::On
        } else {
            DirectIo::Off
        })
        .backend(BackendChoice::Automatic)
        .queue_depth(options.depth)
        .allow_mounted_write(options.allow_mounted_write)
        .scheduler(&options.sched)
        .group("reader", 300)
        .group("writer", 100)
        .group_limits(
            "writer",
            Limits {
                write_bps: Some(options.cap_mib << 20),
                ..Limits::default()
            },
        )
        .start()?;
    for note in engine.notes() {
        eprintln!("tenants: {note}");
    }
    let handle = engine.handle();
    let align = handle.logical_block_size() as usize;
    let half = handle.capacity() / 2 / BLOCK as u64;
    let reader = handle.client(
        1,
        "reader",
        IoPriority::new(PriorityClass::RealTime, 0).ok_or("level")?,
    )?;
    let writer = handle.client(
        2,
        "writer",
        IoPriority::new(PriorityClass::BestEffort, 7).ok_or("level")?,
    )?;
    let started = Instant::now();
    let end = started + Duration::from_secs_f64(options.seconds);
    let halfway = started + Duration::from_secs_f64(options.seconds / 2.0);
    let changer = handle.clone();
    let cap_after = options.cap_mib_after.unwrap_or(options.cap_mib / 2).max(1);
    let third = started + Duration::from_secs_f64(options.seconds / 3.0);
    let two_thirds = started + Duration::from_secs_f64(options.seconds * 2.0 / 3.0);

    let first_half = std::thread::scope(|scope| -> Result<_, String> {
        let read = scope.spawn(move || -> Result<(), String> {
            let mut block = 0u64;
            while Instant::now() < end {
                // A few reads in flight at a time, from the first half.
                let batch: Vec<_> = (0..4)
                    .map(|i| reader.read(((block + i) % half) * BLOCK as u64, BLOCK))
                    .collect();
                for request in batch {
                    request.wait().map_err(|e| e.to_string())?;
                }
                block += 4;
            }
            Ok(())
        });
        let write = scope.spawn(move || -> Result<(), String> {
            let mut block = 0u64;
            while Instant::now() < end {
                let batch: Vec<_> = (0..16)
                    .map(|i| {
                        let mut buffer = AlignedBuffer::new(BLOCK, align);
                        buffer.as_mut_slice().fill(0x5a);
                        writer.write((half + (block + i) % half) * BLOCK as u64, buffer)
                    })
                    .collect();
                for request in batch {
                    request.wait().map_err(|e| e.to_string())?;
                }
                block += 16;
            }
            Ok(())
        });
        // A third of the way: a new tenant, in a group made while the others' requests are
        // in flight, reading the first half until two thirds of the way.
        std::thread::sleep(third.saturating_duration_since(Instant::now()));
        changer
            .add_group("batch", Some(200), None)
            .map_err(|e| e.to_string())?;
        let batch = changer
            .client(3, "batch", IoPriority::default())
            .map_err(|e| e.to_string())?;
        let batch = scope.spawn(move || -> Result<(), String> {
            let mut block = half / 2;
            while Instant::now() < two_thirds {
                let request = batch.read((block % half) * BLOCK as u64, BLOCK);
                request.wait().map_err(|e| e.to_string())?;
                block += 1;
            }
            Ok(())
        });
        // Halfway: the writer's new weight and cap, taken while both tenants have requests
        // in flight; the policy applies them as the kernel does.
        std::thread::sleep(halfway.saturating_duration_since(Instant::now()));
        let first_half = changer.stats();
        changer
            .set_group(
                "writer",
                Some(options.writer_weight_after),
                Some(Limits {
                    write_bps: Some(cap_after << 20),
                    ..Limits::default()
                }),
            )
            .map_err(|e| e.to_string())?;
        // The batch tenant leaves: its client gone with its thread, its group removed.
        batch.join().map_err(|_| "the batch reader panicked")??;
        changer.remove_group("batch").map_err(|e| e.to_string())?;
        read.join().map_err(|_| "the reader panicked")??;
        write.join().map_err(|_| "the writer panicked")??;
        Ok(first_half)
    })?;

    let backend = engine.backend_name();
    let last = engine.shutdown()?;
    let seconds = last.elapsed.as_secs_f64().max(1e-9);
    println!(
        "{} under {} ({backend}), {:.1} s",
        path.display(),
        options.sched,
        seconds
    );
    println!(
        "writer: weight 100 -> {}, cap {} -> {} MiB/s at {:.1} s",
        options.writer_weight_after,
        options.cap_mib,
        cap_after,
        first_half.elapsed.as_secs_f64()
    );
    println!(
        "batch: added at {:.1} s, removed after {:.1} s",
        options.seconds / 3.0,
        options.seconds * 2.0 / 3.0
    );
    println!(
        "{:<8} {:>10} {:>14} {:>14} {:>10} {:>10}",
        "group", "requests", "MiB/s before", "MiB/s after", "p50 µs", "p99 µs"
    );
    let before_seconds = first_half.elapsed.as_secs_f64().max(1e-9);
    let after_seconds = (seconds - before_seconds).max(1e-9);
    for (group, figures) in &last.groups {
        let bytes = figures.bytes_read + figures.bytes_written;
        let before = first_half
            .groups
            .get(group)
            .map_or(0, |f| f.bytes_read + f.bytes_written);
        let mib = f64::from(1 << 20);
        println!(
            "{:<8} {:>10} {:>14.1} {:>14.1} {:>10} {:>10}",
            group,
            figures.requests,
            before as f64 / before_seconds / mib,
            bytes.saturating_sub(before) as f64 / after_seconds / mib,
            figures.latency.p50,
            figures.latency.p99
        );
    }
    if temporary {
        std::fs::remove_file(&path)?;
    }
    Ok(())
}
