//! What each fuzz target does with its input, shared by the AFL++ binaries in
//! `fuzz/fuzz_targets/` and by the regression test that replays `fuzz/regressions/` under
//! `cargo test` (`crates/cli/tests/fuzz_regressions.rs`).
//!
//! Every function takes any bytes and must return without panicking: a bad input is refused
//! with an error, which is dropped. The command-line parsers live in the `ioslice` binary
//! crate; the very files it compiles are compiled here too (`#[path]` modules below), so the
//! fuzzer exercises the code the binary runs without the binary exposing a library.

use ioslice_core::registry::build_scheduler;
use ioslice_core::{SchedSpec, SchedulerContext};
use ioslice_fio::jobfile::{check_supported, parse_str, ParseOptions};
use ioslice_fio::{Extent, JobFile};
use ioslice_sim::preset::{build as build_device, DeviceSpec};
use ioslice_sim::simulation::{run, SimConfig};

#[allow(dead_code)]
#[path = "../../crates/cli/src/cgroup_arg.rs"]
mod cgroup_arg;
#[allow(dead_code)]
#[path = "../../crates/cli/src/controller_arg.rs"]
mod controller_arg;
#[allow(dead_code)]
#[path = "../../crates/cli/src/compare/sched.rs"]
mod sched;

/// What a fuzz target runs on its input.
pub type Target = fn(&[u8]);

/// The fuzz targets by name, for the replay test.
pub const TARGETS: &[(&str, Target)] = &[
    ("jobfile", jobfile),
    ("simulate", simulate),
    ("sched", sched_spec),
    ("device", device),
    ("cgroup", cgroup),
    ("controller", controller),
    ("host", host),
];

/// Largest `size`, `filesize` and `io_size` of a simulated job, in bytes.
pub const MAX_BYTES: u64 = 1 << 20;
/// Most I/Os a simulated job issues.
pub const MAX_IOS: u64 = 256;
/// Longest `runtime`, `ramp_time` and `startdelay` of a simulated job, in nanoseconds.
pub const MAX_TIME: u64 = 50_000_000;
/// Most clones (`numjobs`) and files (`nrfiles`) per job.
pub const MAX_COPIES: u32 = 4;

fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

fn parse_job_file(text: &str) -> Option<JobFile> {
    let mut options = ParseOptions::default();
    options.env.insert("FIO_BS".into(), "4k".into());
    let file = parse_str(text, "fuzz.fio", &options).ok()?;
    check_supported(&file).ok()?;
    Some(file)
}

/// The job-file parser: `parse_str`, then `check_supported`.
pub fn jobfile(data: &[u8]) {
    let _ = parse_job_file(&text(data));
}

/// `--sched LIST`: the first line is the list, each further line one `--set` value; every
/// scheduler resolved is then built.
pub fn sched_spec(data: &[u8]) {
    let text = text(data);
    let mut lines = text.split('\n');
    let list = lines.next().unwrap_or_default();
    let _ = list.parse::<SchedSpec>();
    let set: Vec<String> = lines.map(str::to_string).collect();
    let Ok(set) = sched::parse_set(&set) else {
        return;
    };
    let Ok(resolved) = sched::resolve(list, &set, None) else {
        return;
    };
    for scheduler in resolved {
        let _ = build_scheduler(&scheduler.spec, &SchedulerContext::default());
    }
}

/// `--device sim:PRESET[:key=value,...]`, parsed then built.
pub fn device(data: &[u8]) {
    if let Ok(spec) = text(data).parse::<DeviceSpec>() {
        let _ = build_device(&spec);
    }
}

/// `--cgroup`: each line one value; the weights and limits are then merged and applied to a
/// group tree as a run would.
pub fn cgroup(data: &[u8]) {
    let values: Vec<String> = text(data).split('\n').map(str::to_string).collect();
    let Ok(overrides) = cgroup_arg::parse_all(&values) else {
        return;
    };
    let file = JobFile {
        path: "fuzz.fio".into(),
        global_options: Vec::new(),
        jobs: Vec::new(),
        warnings: Vec::new(),
    };
    let _ = file.group_tree(
        &cgroup_arg::sim_weights(&overrides),
        &cgroup_arg::sim_limits(&overrides),
    );
}

/// `--controller`.
pub fn controller(data: &[u8]) {
    let _ = controller_arg::parse(&text(data));
}

/// `--host key=value,...`: each line one value.
pub fn host(data: &[u8]) {
    let mut config = probe_config();
    for line in text(data).split('\n') {
        if ioslice_sim::host::apply(&mut config, line).is_err() {
            return;
        }
    }
}

fn probe_config() -> SimConfig {
    let device = DeviceSpec {
        preset: "ssd".into(),
        overrides: Vec::new(),
    };
    let noop = SchedSpec {
        name: "noop".into(),
        settings: Vec::new(),
    };
    SimConfig::new(1, noop, device)
}

/// Schedulers and devices a simulation picks from when its input names none.
const SCHEDULERS: &[&str] = &[
    "noop",
    "deadline",
    "anticipatory",
    "cfq",
    "bfq",
    "mq-deadline",
];
const DEVICES: &[&str] = &["sim:ssd", "sim:hdd", "sim:nvme", "sim:null", "sim:raid5-12"];

/// A job file run through the simulator, cut down to run in milliseconds (see [`shrink`]);
/// a run that finishes must account for every request, write-back and read-ahead.
///
/// A first line `;ioslice|--sched S|--device D|--host H|--cgroup C|--controller K` (any
/// subset, any order, each flag once or more) sets the run as the command line would,
/// through the same parsers; without one the scheduler and device are picked from the
/// input's length.
pub fn simulate(data: &[u8]) {
    let text = text(data);
    let Some(mut file) = parse_job_file(&text) else {
        return;
    };
    let mut flags: Vec<(&str, &str)> = Vec::new();
    if let Some(header) = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix(";ioslice|"))
    {
        for item in header.split('|') {
            let (flag, value) = item.split_once(' ').unwrap_or((item, ""));
            flags.push((flag, value));
        }
    }
    let value = |name: &str| flags.iter().find(|(flag, _)| *flag == name).map(|f| f.1);
    let all = |name: &str| -> Vec<String> {
        flags
            .iter()
            .filter(|(flag, _)| *flag == name)
            .map(|(_, value)| value.to_string())
            .collect()
    };
    let scheduler = value("--sched")
        .or_else(|| file.jobs.iter().find_map(|job| job.ioscheduler.as_deref()))
        .unwrap_or(SCHEDULERS[data.len() % SCHEDULERS.len()]);
    let Ok(scheduler) = scheduler.parse::<SchedSpec>() else {
        return;
    };
    let device = value("--device").unwrap_or(DEVICES[data.len() / 7 % DEVICES.len()]);
    let Ok(device) = device.parse::<DeviceSpec>() else {
        return;
    };
    let Ok(overrides) = cgroup_arg::parse_all(&all("--cgroup")) else {
        return;
    };
    let mut config = SimConfig::new(1, scheduler, device);
    config.run.group_weights = cgroup_arg::sim_weights(&overrides);
    config.run.group_limits = cgroup_arg::sim_limits(&overrides);
    if let Some(text) = value("--controller") {
        let Ok(controller) = controller_arg::parse(text) else {
            return;
        };
        config.run.controller = controller;
    }
    for text in all("--host") {
        if ioslice_sim::host::apply(&mut config, &text).is_err() {
            return;
        }
    }
    shrink(&mut file);
    if let Ok(outcome) = run(&file, &config) {
        // The simulator's own accounting (`SimOutcome`): nothing lost, nothing twice.
        assert_eq!(outcome.submitted, outcome.completed, "lost requests");
        assert_eq!(outcome.duplicate_completions, 0, "duplicate completions");
        let writeback = outcome.writeback;
        assert_eq!(writeback.submitted, writeback.completed, "lost writeback");
        assert_eq!(
            writeback.bytes_dirtied, writeback.bytes_written,
            "dirty data left"
        );
        let readahead = outcome.readahead;
        assert_eq!(readahead.submitted, readahead.completed, "lost read-ahead");
    }
}

/// Cut every job down so a run takes milliseconds: at most [`MAX_BYTES`] per target and
/// transfer, [`MAX_IOS`] I/Os, [`MAX_TIME`] of run, ramp and start delay, [`MAX_COPIES`]
/// clones and files, two loops and 1 ms think time.
pub fn shrink(file: &mut JobFile) {
    for job in &mut file.jobs {
        job.size = Some(match job.size {
            Some(Extent::Bytes(bytes)) => Extent::Bytes(bytes.min(MAX_BYTES)),
            Some(Extent::Percent(_)) | None => Extent::Bytes(MAX_BYTES),
        });
        job.filesize = job
            .filesize
            .map(|(low, high)| (low.min(MAX_BYTES), high.min(MAX_BYTES)));
        job.io_size = job.io_size.map(|bytes| bytes.min(MAX_BYTES));
        job.number_ios = Some(job.number_ios.unwrap_or(MAX_IOS).min(MAX_IOS));
        job.runtime = Some(job.runtime.unwrap_or(MAX_TIME).min(MAX_TIME));
        job.ramp_time = job.ramp_time.min(MAX_TIME);
        job.startdelay = (
            job.startdelay.0.min(MAX_TIME),
            job.startdelay.1.min(MAX_TIME),
        );
        job.thinktime = job.thinktime.min(1_000_000);
        job.numjobs = job.numjobs.min(MAX_COPIES);
        job.nrfiles = job.nrfiles.min(MAX_COPIES);
        job.loops = job.loops.min(2);
    }
}
