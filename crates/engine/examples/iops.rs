//! How many 4 KiB random reads per second the engine moves, against its own backend driven
//! bare (no policy, no dispatcher thread, no client handles), side by side in one run.
//!
//!     cargo run --release -p ioslice-engine --example iops -- PATH [--sched noop,bfq]
//!         [--depth 32] [--clients 4] [--seconds 3] [--rounds 3] [--direct]
//!
//! PATH is a regular file or a block device; it is only read. A missing regular file is
//! created (64 MiB, laid out as fio does). Each round runs the bare backend, then every
//! scheduler, for `--seconds` each, so load from elsewhere moves all of them alike; the
//! table gives each one's median over the rounds and its ratio to the bare backend.
//! `IOSLICE_BACKEND=psync` measures the thread-pool backend instead of io_uring.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ioslice_engine::backend::{open_backend, Backend, IoDone, IoOp};
use ioslice_engine::device::{OpenOptions, Target};
use ioslice_engine::{AlignedBuffer, Direction, Engine, Geometry, IoPriority, PriorityClass};

const BLOCK: usize = 4096;
const CREATED_FILE_BYTES: u64 = 64 << 20;

struct Options {
    path: String,
    scheds: Vec<String>,
    depth: usize,
    clients: usize,
    seconds: f64,
    rounds: usize,
    direct: bool,
}

fn parse() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut options = Options {
        path: String::new(),
        scheds: vec!["noop".into(), "bfq".into()],
        depth: 32,
        clients: 4,
        seconds: 3.0,
        rounds: 3,
        direct: false,
    };
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--sched" => {
                options.scheds = value("--sched")?.split(',').map(str::to_string).collect()
            }
            "--depth" => options.depth = number(&value("--depth")?, "--depth")?,
            "--clients" => options.clients = number(&value("--clients")?, "--clients")?,
            "--rounds" => options.rounds = number(&value("--rounds")?, "--rounds")?,
            "--seconds" => {
                options.seconds = value("--seconds")?
                    .parse()
                    .map_err(|_| "--seconds expects a number".to_string())?
            }
            "--direct" => options.direct = true,
            path if !path.starts_with("--") && options.path.is_empty() => {
                options.path = path.to_string()
            }
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    if options.path.is_empty() {
        return Err("usage: iops PATH [--sched noop,bfq] [--depth 32] [--clients 4] [--seconds 3] [--rounds 3] [--direct]".into());
    }
    if options.depth == 0 || options.clients == 0 || options.rounds == 0 {
        return Err("--depth, --clients and --rounds must be at least 1".into());
    }
    Ok(options)
}

fn number(text: &str, name: &str) -> Result<usize, String> {
    text.parse()
        .map_err(|_| format!("{name} expects a whole number, not '{text}'"))
}

/// A block-aligned random offset (xorshift; the benchmark needs speed, not quality).
fn next_offset(state: &mut u64, blocks: u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state % blocks) * BLOCK as u64
}

/// Reads per second through the backend alone: keep `depth` reads in flight for `seconds`.
fn bare(target: &Target, options: &Options) -> Result<f64, String> {
    let (mut backend, _) = open_backend(Arc::clone(target.file()), options.depth as u32);
    let blocks = target.size_bytes() / BLOCK as u64;
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let align = target.logical_block_size() as usize;
    let mut token = 0u64;
    let mut push = |backend: &mut Box<dyn Backend>, buffer: AlignedBuffer, state: &mut u64| {
        token += 1;
        backend.push(IoOp {
            token,
            direction: Direction::Read,
            offset: next_offset(state, blocks),
            buffers: vec![buffer],
            lane: 0,
        });
    };
    for _ in 0..options.depth {
        push(&mut backend, AlignedBuffer::new(BLOCK, align), &mut state);
    }
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(options.seconds);
    let mut done: Vec<IoDone> = Vec::new();
    let mut completed = 0u64;
    while Instant::now() < end {
        backend
            .wait(Some(end), &mut done)
            .map_err(|e| format!("{}: {e}", backend.name()))?;
        for mut finished in done.drain(..) {
            finished.result.map_err(|e| format!("read failed: {e}"))?;
            completed += 1;
            let buffer = finished
                .buffers
                .pop()
                .ok_or("an operation came back without its buffer")?;
            push(&mut backend, buffer, &mut state);
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    while backend.in_flight() > 0 {
        backend
            .wait(None, &mut done)
            .map_err(|e| format!("{}: {e}", backend.name()))?;
        done.clear();
    }
    Ok(completed as f64 / elapsed)
}

/// Reads per second through the engine under `sched`: `clients` threads, each keeping its
/// share of `depth` reads outstanding.
fn through_engine(target: &Target, sched: &str, options: &Options) -> Result<f64, String> {
    let (backend, _) = open_backend(Arc::clone(target.file()), options.depth as u32);
    let mut geometry = Geometry::of(target);
    geometry.queue_depth = options.depth;
    let engine = Engine::builder(backend, geometry)
        .scheduler(sched)
        .start()
        .map_err(|e| e.to_string())?;
    let handle = engine.handle();
    let priority = IoPriority::new(PriorityClass::BestEffort, 4).ok_or("level 4")?;
    let blocks = target.size_bytes() / BLOCK as u64;
    let per_client = options.depth.div_ceil(options.clients);
    let seconds = options.seconds;
    let start = Instant::now();
    let workers: Vec<_> = (0..options.clients)
        .map(|index| {
            let client = handle.client(index as u32 + 1, "/", priority);
            std::thread::spawn(move || -> Result<u64, String> {
                let client = client.map_err(|e| e.to_string())?;
                let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ (index as u64 + 1);
                let end = Instant::now() + Duration::from_secs_f64(seconds);
                let mut outstanding = VecDeque::new();
                for _ in 0..per_client {
                    outstanding.push_back(client.read(next_offset(&mut state, blocks), BLOCK));
                }
                let mut completed = 0u64;
                while let Some(oldest) = outstanding.pop_front() {
                    oldest.wait().map_err(|e| e.to_string())?;
                    completed += 1;
                    if Instant::now() < end {
                        outstanding.push_back(client.read(next_offset(&mut state, blocks), BLOCK));
                    }
                }
                Ok(completed)
            })
        })
        .collect();
    let mut completed = 0;
    for worker in workers {
        completed += worker.join().map_err(|_| "a client thread panicked")??;
    }
    let elapsed = start.elapsed().as_secs_f64();
    engine.shutdown().map_err(|e| e.to_string())?;
    Ok(completed as f64 / elapsed)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    if let Err(error) = run() {
        eprintln!("iops: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let options = parse()?;
    let create = std::path::Path::new(&options.path)
        .metadata()
        .is_err()
        .then_some(CREATED_FILE_BYTES);
    let open = OpenOptions {
        direct: options.direct,
        write: create.is_some(),
        create_len: create,
    };
    let target = Target::open(&options.path, &open).map_err(|e| e.to_string())?;
    let (probe, note) = open_backend(Arc::clone(target.file()), 1);
    eprintln!(
        "{}: {} MiB, backend {}{}",
        options.path,
        target.size_bytes() >> 20,
        probe.name(),
        note.map(|n| format!(" ({n})")).unwrap_or_default()
    );
    drop(probe);
    let mut bare_rates = Vec::new();
    let mut rates = vec![Vec::new(); options.scheds.len()];
    let mut ratios = vec![Vec::new(); options.scheds.len()];
    for _ in 0..options.rounds {
        let baseline = bare(&target, &options)?;
        bare_rates.push(baseline);
        for (index, sched) in options.scheds.iter().enumerate() {
            let rate = through_engine(&target, sched, &options)?;
            rates[index].push(rate);
            ratios[index].push(rate / baseline);
        }
    }
    println!(
        "4 KiB random reads, depth {}, {} client threads, median of {} rounds of {} s",
        options.depth, options.clients, options.rounds, options.seconds
    );
    println!("{:<24} {:>12} {:>10}", "path", "IOPS", "× bare");
    println!(
        "{:<24} {:>12.0} {:>10.2}",
        "bare backend",
        median(&mut bare_rates),
        1.0
    );
    for (index, sched) in options.scheds.iter().enumerate() {
        println!(
            "{:<24} {:>12.0} {:>10.2}",
            format!("engine, {sched}"),
            median(&mut rates[index]),
            median(&mut ratios[index])
        );
    }
    Ok(())
}
