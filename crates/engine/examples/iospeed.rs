//! The IOSpeed test on the engine: how many 4 KiB random requests per second the CPU
//! sustains through each policy in front of a device with no latency (the in-memory
//! backend), with the per-group statistics kept ([`Statistics::Detailed`]) and not
//! ([`Statistics::Totals`]), side by side in one run.
//!
//!     cargo run --release -p ioslice-engine --example iospeed -- [--sched noop,mq-deadline,bfq]
//!         [--rw randread,randwrite] [--threads 8] [--depth 1] [--groups 1] [--seconds 2]
//!         [--rounds 5] [--requests N] [--stats on,off]
//!
//! As Algodev's IOSpeed script on `null_blk` with zero latency: `--threads` threads each keep
//! `--depth` requests in flight, every request completes as soon as the engine hands it to
//! the device, so the only limit is the CPU. `--groups N` spreads the threads over N groups
//! of equal weight (1: all in the root group). Each round runs every policy with statistics
//! on and off for `--seconds` each, in an order that alternates between rounds, so load from
//! elsewhere moves every configuration alike. The table gives medians over the rounds: IOPS,
//! IOPS per core (requests over the process's user + system CPU time, from `getrusage`), the
//! ratio to the first policy and the ratio of statistics on to off, each ratio taken within
//! a round.
//!
//! `--requests N` gives each thread a fixed amount of work, N requests, instead of a time, and
//! `--stats on` (or `off`) runs one setting only: what `bench/iospeed-instructions.sh` uses to
//! count the instructions a request costs under `valgrind`, a measure the machine's load does
//! not move.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use ioslice_engine::backend::memory::MemoryBackend;
use ioslice_engine::{
    AlignedBuffer, Client, Engine, Geometry, IoFuture, IoPriority, PriorityClass, Statistics,
};

const BLOCK: usize = 4096;
const DEVICE_BYTES: u64 = 64 << 20;
const ALIGN: usize = 512;

struct Options {
    scheds: Vec<String>,
    rws: Vec<String>,
    threads: usize,
    depth: usize,
    groups: usize,
    seconds: f64,
    rounds: usize,
    /// Requests per thread per run, in place of `seconds`.
    requests: Option<u64>,
    /// The settings each round runs: statistics kept, not, or both.
    stats: Vec<Statistics>,
}

const USAGE: &str = "usage: iospeed [--sched noop,mq-deadline,bfq] [--rw randread,randwrite] \
                     [--threads 8] [--depth 1] [--groups 1] [--seconds 2] [--rounds 5] \
                     [--requests N] [--stats on,off]";

fn parse() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut options = Options {
        scheds: list("noop,mq-deadline,bfq"),
        rws: list("randread,randwrite"),
        threads: 8,
        depth: 1,
        groups: 1,
        seconds: 2.0,
        rounds: 5,
        requests: None,
        stats: vec![Statistics::Detailed, Statistics::Totals],
    };
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--sched" => options.scheds = list(&value("--sched")?),
            "--rw" => options.rws = list(&value("--rw")?),
            "--threads" => options.threads = number(&value("--threads")?, "--threads")?,
            "--depth" => options.depth = number(&value("--depth")?, "--depth")?,
            "--groups" => options.groups = number(&value("--groups")?, "--groups")?,
            "--rounds" => options.rounds = number(&value("--rounds")?, "--rounds")?,
            "--requests" => {
                options.requests = Some(number(&value("--requests")?, "--requests")? as u64)
            }
            "--stats" => options.stats = statistics(&value("--stats")?)?,
            "--seconds" => {
                options.seconds = value("--seconds")?
                    .parse()
                    .map_err(|_| "--seconds expects a number".to_string())?
            }
            other => return Err(format!("unknown argument '{other}'\n{USAGE}")),
        }
    }
    let counts = [
        options.threads,
        options.depth,
        options.groups,
        options.rounds,
        options.requests.map_or(1, |n| n as usize),
    ];
    if counts.contains(&0) || options.scheds.is_empty() {
        return Err(format!("counts must be at least 1\n{USAGE}"));
    }
    if let Some(rw) = options.rws.iter().find(|rw| !is_rw(rw)) {
        return Err(format!("--rw takes randread and randwrite, not '{rw}'"));
    }
    Ok(options)
}

fn list(text: &str) -> Vec<String> {
    text.split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// `on`, `off` or both, comma-separated: the statistics settings to run.
fn statistics(text: &str) -> Result<Vec<Statistics>, String> {
    let mut settings = Vec::new();
    for word in list(text) {
        settings.push(match word.as_str() {
            "on" => Statistics::Detailed,
            "off" => Statistics::Totals,
            _ => return Err(format!("--stats takes on and off, not '{word}'")),
        });
    }
    if settings.is_empty() {
        return Err("--stats needs on, off or both".to_string());
    }
    Ok(settings)
}

fn is_rw(rw: &str) -> bool {
    matches!(rw, "randread" | "randwrite")
}

fn number(text: &str, name: &str) -> Result<usize, String> {
    text.parse()
        .map_err(|_| format!("{name} expects a whole number, not '{text}'"))
}

/// A block-aligned random offset (xorshift; the benchmark needs speed, not quality).
fn next_offset(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state % (DEVICE_BYTES / BLOCK as u64)) * BLOCK as u64
}

/// User + system CPU time of the whole process so far.
fn cpu_time() -> Duration {
    // SAFETY: `getrusage` fills the zeroed struct it is given and keeps no pointer to it.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// One configuration: a policy, a workload, statistics on or off.
#[derive(Clone)]
struct Config {
    sched: String,
    rw: String,
    statistics: Statistics,
}

/// One run's figures.
#[derive(Clone, Copy)]
struct Rate {
    iops: f64,
    per_core: f64,
}

/// Issue one request of the workload: a read into, or a write of, a buffer from `spare` (or a
/// fresh one): every thread reuses its `--depth` buffers, as a job's loop does.
fn issue(
    client: &Client,
    write: bool,
    state: &mut u64,
    spare: &mut Vec<AlignedBuffer>,
) -> IoFuture {
    let offset = next_offset(state);
    let buffer = spare
        .pop()
        .unwrap_or_else(|| AlignedBuffer::new(BLOCK, ALIGN));
    if write {
        client.write(offset, buffer)
    } else {
        client.read_into(offset, buffer)
    }
}

/// When a thread stops issuing: at a time, or after a number of requests.
#[derive(Clone, Copy)]
enum Stop {
    At(Instant),
    After(u64),
}

impl Stop {
    fn more(self, issued: u64) -> bool {
        match self {
            Stop::At(end) => Instant::now() < end,
            Stop::After(requests) => issued < requests,
        }
    }
}

/// One thread's loop: keep `depth` requests in flight until `stop`; returns how many completed.
fn worker(client: Client, write: bool, depth: usize, stop: Stop) -> Result<u64, String> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ (u64::from(client.process()) << 17);
    let mut spare = Vec::new();
    let mut issued = 0u64;
    let mut outstanding = VecDeque::new();
    while outstanding.len() < depth && stop.more(issued) {
        outstanding.push_back(issue(&client, write, &mut state, &mut spare));
        issued += 1;
    }
    let mut completed = 0u64;
    while let Some(oldest) = outstanding.pop_front() {
        let result = oldest.wait().map_err(|e| e.to_string())?;
        spare.push(result.buffer);
        completed += 1;
        if stop.more(issued) {
            outstanding.push_back(issue(&client, write, &mut state, &mut spare));
            issued += 1;
        }
    }
    client.exit();
    Ok(completed)
}

/// The group of thread `index`: the root, or one of `groups` groups `g1`…
fn group_of(index: usize, groups: usize) -> String {
    if groups == 1 {
        "/".to_string()
    } else {
        format!("g{}", index % groups + 1)
    }
}

/// One run of `config` for `options.seconds`.
fn run_once(config: &Config, options: &Options) -> Result<Rate, String> {
    let backend = MemoryBackend::new(DEVICE_BYTES as usize);
    let mut geometry = Geometry::new(DEVICE_BYTES);
    geometry.queue_depth = 32;
    let mut builder = Engine::builder(Box::new(backend), geometry)
        .scheduler(&config.sched)
        .statistics(config.statistics);
    if options.groups > 1 {
        for group in 0..options.groups {
            builder = builder.group(&group_of(group, options.groups), 100);
        }
    }
    let engine = builder.start().map_err(|e| e.to_string())?;
    let handle = engine.handle();
    let priority = IoPriority::new(PriorityClass::BestEffort, 4).ok_or("level 4")?;
    let write = config.rw == "randwrite";
    let cpu_before = cpu_time();
    let start = Instant::now();
    let stop = match options.requests {
        Some(requests) => Stop::After(requests),
        None => Stop::At(start + Duration::from_secs_f64(options.seconds)),
    };
    let workers: Vec<_> = (0..options.threads)
        .map(|index| {
            let client =
                handle.client(index as u32 + 1, &group_of(index, options.groups), priority);
            let depth = options.depth;
            std::thread::spawn(move || {
                worker(client.map_err(|e| e.to_string())?, write, depth, stop)
            })
        })
        .collect();
    let mut completed = 0;
    for worker in workers {
        completed += worker.join().map_err(|_| "a client thread panicked")??;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let stats = engine.shutdown().map_err(|e| e.to_string())?;
    let cpu = (cpu_time() - cpu_before).as_secs_f64();
    if stats.totals.requests != completed {
        return Err(format!(
            "statistics counted {} requests, the threads {completed}",
            stats.totals.requests
        ));
    }
    Ok(Rate {
        iops: completed as f64 / elapsed,
        per_core: completed as f64 / cpu.max(f64::EPSILON),
    })
}

/// Every configuration of a round, statistics on and off in the order the round's parity
/// gives (so neither always runs first).
fn round_configs(options: &Options, round: usize) -> Vec<Config> {
    let mut modes = options.stats.clone();
    if round % 2 == 1 {
        modes.reverse();
    }
    let mut configs = Vec::new();
    for rw in &options.rws {
        for sched in &options.scheds {
            for &statistics in &modes {
                configs.push(Config {
                    sched: sched.clone(),
                    rw: rw.clone(),
                    statistics,
                });
            }
        }
    }
    configs
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

fn key(config: &Config) -> (String, String, bool) {
    let on = config.statistics == Statistics::Detailed;
    (config.rw.clone(), config.sched.clone(), on)
}

type Rounds = std::collections::BTreeMap<(String, String, bool), Vec<Rate>>;

/// The run's length, as the table's heading gives it.
fn length(options: &Options) -> String {
    match options.requests {
        Some(requests) => format!("{requests} requests per thread"),
        None => format!("{} s", options.seconds),
    }
}

/// The median over the rounds of `a`'s IOPS over `b`'s, taken within each round.
fn ratio(a: &[Rate], b: &[Rate]) -> f64 {
    median(
        &a.iter()
            .zip(b)
            .map(|(a, b)| a.iops / b.iops)
            .collect::<Vec<_>>(),
    )
}

/// The table: medians over the rounds, ratios taken within each round (on/off where both
/// settings ran).
fn print(options: &Options, rounds: &Rounds) {
    println!(
        "{} threads, depth {} each, {} group(s), in-memory device; median of {} rounds of {}",
        options.threads,
        options.depth,
        options.groups,
        options.rounds,
        length(options)
    );
    println!(
        "{:<10} {:<12} {:<6} {:>10} {:>14} {:>10} {:>8}",
        "workload", "policy", "stats", "IOPS", "IOPS per core", "× first", "on/off"
    );
    let first = &options.scheds[0];
    for rw in &options.rws {
        for sched in &options.scheds {
            for on in [true, false] {
                let Some(runs) = rounds.get(&(rw.clone(), sched.clone(), on)) else {
                    continue;
                };
                let base = &rounds[&(rw.clone(), first.clone(), on)];
                let on_off = match rounds.get(&(rw.clone(), sched.clone(), false)) {
                    Some(off) if on => format!("{:.3}", ratio(runs, off)),
                    _ => String::new(),
                };
                println!(
                    "{:<10} {:<12} {:<6} {:>10.0} {:>14.0} {:>10.3} {:>8}",
                    rw,
                    sched,
                    if on { "on" } else { "off" },
                    median(&runs.iter().map(|r| r.iops).collect::<Vec<_>>()),
                    median(&runs.iter().map(|r| r.per_core).collect::<Vec<_>>()),
                    ratio(runs, base),
                    on_off
                );
            }
        }
    }
}

fn main() {
    if let Err(error) = run() {
        eprintln!("iospeed: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let options = parse()?;
    let mut rounds = Rounds::new();
    for round in 0..options.rounds {
        for config in round_configs(&options, round) {
            let rate = run_once(&config, &options)?;
            rounds.entry(key(&config)).or_default().push(rate);
        }
        eprintln!("round {} of {} done", round + 1, options.rounds);
    }
    print(&options, &rounds);
    Ok(())
}
