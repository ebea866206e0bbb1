//! Latency isolation on a device that is the bottleneck: the engine on a timed simulated SSD
//! ([`TimedBackend`]), a high-priority client beside a greedy antagonist.
//!
//! The high-priority client reads random 4 KiB blocks one at a time (real-time class, level
//! 0, in a group of weight 1000); the antagonist is either 4 KiB random reads at depth 32 or
//! 128 KiB sequential writes at depth 8 (best effort, level 4, in a group of weight 100).
//! Each runs alone, then both together, under every policy asked for; a policy spec
//! `limit:riops=N` or `limit:wbps=N` is noop with the antagonist's group limited instead.
//! Prints, per policy and antagonist, the client's p50/p99/p99.9 completion latency beside its
//! figures alone, and the total throughput beside the unscheduled (noop) pair's.
//!
//!     cargo run --release -p ioslice-emulate --example isolation -- \
//!         [--device sim:ssd] [--seconds 5] [--policies noop,mq-deadline,...]

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use ioslice_core::limit::Limits;
use ioslice_core::{IoPriority, PriorityClass};
use ioslice_emulate::timed::TimedBackend;
use ioslice_engine::{AlignedBuffer, Client, Engine, IoFuture};
use ioslice_sim::preset::DeviceSpec;

/// The region both clients work in: 8 GiB from the start of the device.
const REGION: u64 = 8 << 30;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Antagonist {
    RandomReads,
    SequentialWrites,
}

impl Antagonist {
    fn name(self) -> &'static str {
        match self {
            Antagonist::RandomReads => "4k randread qd32",
            Antagonist::SequentialWrites => "128k seqwrite qd8",
        }
    }

    fn depth(self) -> usize {
        match self {
            Antagonist::RandomReads => 32,
            Antagonist::SequentialWrites => 8,
        }
    }
}

/// What one client did.
struct Measured {
    latency: Histogram<u64>,
    bytes: u64,
}

/// xorshift64*: the block picker's own generator, seeded per client.
struct Picker(u64);

impl Picker {
    fn next_block(&mut self, blocks: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % blocks
    }
}

fn high_priority(client: Client, until: Instant) -> Result<Measured, String> {
    let mut picker = Picker(0x9E37_79B9_7F4A_7C15);
    let mut latency = Histogram::new(3).map_err(|e| e.to_string())?;
    let mut bytes = 0;
    while Instant::now() < until {
        let offset = picker.next_block(REGION / 4096) * 4096;
        let done = client
            .read(offset, 4096)
            .wait()
            .map_err(|e| e.to_string())?;
        let _ = latency.record(done.latency.as_micros() as u64);
        bytes += done.bytes as u64;
    }
    client.exit();
    Ok(Measured { latency, bytes })
}

fn antagonist(client: Client, kind: Antagonist, until: Instant) -> Result<Measured, String> {
    let mut picker = Picker(0xD1B5_4A32_D192_ED03);
    let mut latency = Histogram::new(3).map_err(|e| e.to_string())?;
    let mut bytes = 0;
    let mut next_write = REGION;
    let mut issue = |client: &Client| -> IoFuture {
        match kind {
            Antagonist::RandomReads => client.read(picker.next_block(REGION / 4096) * 4096, 4096),
            Antagonist::SequentialWrites => {
                let offset = next_write;
                next_write += 128 << 10;
                if next_write >= 2 * REGION {
                    next_write = REGION;
                }
                client.write(offset, AlignedBuffer::new(128 << 10, 4096))
            }
        }
    };
    let mut outstanding: std::collections::VecDeque<IoFuture> =
        (0..kind.depth()).map(|_| issue(&client)).collect();
    while let Some(oldest) = outstanding.pop_front() {
        let done = oldest.wait().map_err(|e| e.to_string())?;
        let _ = latency.record(done.latency.as_micros() as u64);
        bytes += done.bytes as u64;
        if Instant::now() < until {
            outstanding.push_back(issue(&client));
        }
    }
    client.exit();
    Ok(Measured { latency, bytes })
}

/// One run: the engine on a fresh timed device under `policy`, with the clients asked for.
fn run(
    device: &DeviceSpec,
    policy: &str,
    hp: bool,
    against: Option<Antagonist>,
    seconds: f64,
) -> Result<(Option<Measured>, Option<Measured>), String> {
    let backend = TimedBackend::new(device)
        .map_err(|e| e.to_string())?
        .dropping_data();
    let geometry = backend.geometry();
    let (scheduler, limits) = match policy.strip_prefix("limit:") {
        Some(limit) => ("noop", Some(parse_limit(limit)?)),
        None => (policy, None),
    };
    let mut builder = Engine::builder(Box::new(backend), geometry)
        .scheduler(scheduler)
        .group("hp", 1000)
        .group("bulk", 100);
    if let Some(limits) = limits {
        builder = builder.group_limits("bulk", limits);
    }
    let engine = builder.start().map_err(|e| e.to_string())?;
    let handle = engine.handle();
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let rt = IoPriority::new(PriorityClass::RealTime, 0).ok_or("RT 0")?;
    let be = IoPriority::new(PriorityClass::BestEffort, 4).ok_or("BE 4")?;
    let hp_thread = match hp {
        true => {
            let client = handle.client(1, "hp", rt).map_err(|e| e.to_string())?;
            Some(std::thread::spawn(move || high_priority(client, until)))
        }
        false => None,
    };
    let bulk_thread = match against {
        Some(kind) => {
            let client = handle.client(2, "bulk", be).map_err(|e| e.to_string())?;
            Some(std::thread::spawn(move || antagonist(client, kind, until)))
        }
        None => None,
    };
    let join = |thread: Option<std::thread::JoinHandle<Result<Measured, String>>>| {
        thread
            .map(|t| t.join().map_err(|_| "a client panicked".to_string())?)
            .transpose()
    };
    let measured = (join(hp_thread)?, join(bulk_thread)?);
    engine.shutdown().map_err(|e| e.to_string())?;
    Ok(measured)
}

fn parse_limit(text: &str) -> Result<Limits, String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("{text}: expected riops=N or wbps=N"))?;
    let value: u64 = value
        .parse()
        .map_err(|_| format!("{text}: expected a number after '='"))?;
    let mut limits = Limits::default();
    match key {
        "riops" => limits.read_iops = Some(value),
        "wbps" => limits.write_bps = Some(value),
        _ => return Err(format!("{key}: expected riops or wbps")),
    }
    Ok(limits)
}

fn percentiles(h: &Histogram<u64>) -> String {
    format!(
        "{:>6} {:>6} {:>7}",
        h.value_at_quantile(0.5),
        h.value_at_quantile(0.99),
        h.value_at_quantile(0.999)
    )
}

fn mbps(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 / seconds / 1e6
}

fn main() -> Result<(), String> {
    let mut device = "sim:ssd".to_string();
    let mut seconds = 5.0;
    let mut policies =
        "noop,mq-deadline,bfq:parallel=0,bfq:parallel=1,limit:riops=20000".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| format!("{arg}: expected a value"))?;
        match arg.as_str() {
            "--device" => device = value,
            "--seconds" => {
                seconds = value
                    .parse()
                    .map_err(|_| format!("{value}: expected seconds"))?
            }
            "--policies" => policies = value,
            other => {
                return Err(format!(
                    "{other}: expected --device, --seconds or --policies"
                ))
            }
        }
    }
    let spec: DeviceSpec = device.parse().map_err(|e| format!("{e}"))?;
    println!("latency isolation on {device}, engine on the timed device, {seconds} s a run");
    println!(
        "high-priority client: 4k random reads at depth 1 (RT 0, weight 1000); latencies in µs"
    );
    let solo = run(&spec, "noop", true, None, seconds)?
        .0
        .ok_or("the client's figures")?;
    println!(
        "  alone: p50/p99/p99.9 {}, {:.1} MB/s",
        percentiles(&solo.latency),
        mbps(solo.bytes, seconds)
    );
    for kind in [Antagonist::RandomReads, Antagonist::SequentialWrites] {
        let alone = run(&spec, "noop", false, Some(kind), seconds)?
            .1
            .ok_or("antagonist")?;
        let (_, unscheduled) = {
            let (hp, bulk) = run(&spec, "noop", true, Some(kind), seconds)?;
            let total = hp.as_ref().map_or(0, |m| m.bytes) + bulk.as_ref().map_or(0, |m| m.bytes);
            ((), total)
        };
        println!(
            "antagonist {} (BE 4, weight 100): alone {:.1} MB/s; both under noop {:.1} MB/s",
            kind.name(),
            mbps(alone.bytes, seconds),
            mbps(unscheduled, seconds)
        );
        println!(
            "  {:<22} {:>22} {:>9} {:>12} {:>10}",
            "policy", "p50 / p99 / p99.9", "p99 × solo", "total MB/s", "× noop"
        );
        for policy in policies.split(',') {
            let (hp, bulk) = run(&spec, policy, true, Some(kind), seconds)?;
            let hp = hp.ok_or("the client's figures")?;
            let total = hp.bytes + bulk.map_or(0, |m| m.bytes);
            println!(
                "  {:<22} {:>22} {:>9.2} {:>12.1} {:>10.2}",
                policy,
                percentiles(&hp.latency),
                hp.latency.value_at_quantile(0.99) as f64
                    / solo.latency.value_at_quantile(0.99).max(1) as f64,
                mbps(total, seconds),
                total as f64 / unscheduled.max(1) as f64
            );
        }
    }
    Ok(())
}
