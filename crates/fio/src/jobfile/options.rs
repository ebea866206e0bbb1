//! The option table: each fio option ioslice understands, turned into a [`JobSpec`] field;
//! the options fio knows that cannot change a scheduling result, accepted silently (each
//! with its reason); everything else is reported as unknown by the caller.

use ioslice_core::{IoPriority, PriorityClass};

use super::ini::Entry;
use super::values;
use super::JobFileError;
use crate::cpuio::CpuMode;
use crate::distribution::{self, RandomGenerator};
use crate::errno::{self, ErrorKind, ErrorKinds};
use crate::file_ops::StatType;
use crate::job::{BlockSize, Extent, Fallocate, IoEngine, JobSpec, Origin, Pattern, ZoneMode};
use crate::logs::options::{LogOptions, MAX_HIST_COARSENESS};
use crate::steady_state::Criterion;
use crate::verify::{self, VerifyKind};

/// What applying one entry did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The option set a field.
    Applied,
    /// A known fio option with no effect on a scheduling simulation.
    Ignored,
    /// Not an option ioslice knows.
    Unknown,
}

/// Options fio knows that do not change which I/O is issued, when, or how it is scheduled,
/// so ioslice accepts them without a warning. The second column is the reason.
pub const IGNORED: &[(&str, &str)] = &[
    ("description", "free text for humans"),
    ("thread", "threads and processes issue the same I/O"),
    (
        "gtod_reduce",
        "reduces fio's clock reads; the simulated clock is free",
    ),
    (
        "disable_lat",
        "fio timing overhead switch; ioslice measures exactly",
    ),
    (
        "disable_clat",
        "fio timing overhead switch; ioslice measures exactly",
    ),
    (
        "disable_slat",
        "fio timing overhead switch; ioslice measures exactly",
    ),
    ("disable_bw_measurement", "fio timing overhead switch"),
    ("clocksource", "the simulator's clock is virtual"),
    ("cpus_allowed", "CPU placement, not I/O order"),
    ("cpus_allowed_policy", "CPU placement, not I/O order"),
    ("cpumask", "CPU placement, not I/O order"),
    ("numa_cpu_nodes", "CPU placement, not I/O order"),
    ("numa_mem_policy", "memory placement, not I/O order"),
    ("invalidate", "drops the page cache; ioslice has none"),
    ("allow_file_create", "whether files may be created"),
    ("create_serialize", "file creation order before the run"),
    ("unlink", "whether files are removed after the run"),
    ("buffer_pattern", "data contents, not placement or timing"),
    (
        "buffer_compress_percentage",
        "data contents, not placement or timing",
    ),
    (
        "buffer_compress_chunk",
        "data contents, not placement or timing",
    ),
    ("scramble_buffers", "data contents, not placement or timing"),
    ("refill_buffers", "data contents, not placement or timing"),
    ("zero_buffers", "data contents, not placement or timing"),
    (
        "dedupe_percentage",
        "data contents, not placement or timing",
    ),
    ("dedupe_mode", "data contents, not placement or timing"),
    (
        "dedupe_working_set_percentage",
        "data contents, not placement or timing",
    ),
    ("dedupe_global", "data contents, not placement or timing"),
    ("mem", "buffer memory allocation"),
    ("iomem", "buffer memory allocation"),
    ("iomem_align", "buffer memory allocation"),
    ("lockmem", "buffer memory allocation"),
    (
        "sqthread_poll",
        "io_uring submission CPU detail; the queue is modelled, not the CPU",
    ),
    ("sqthread_poll_cpu", "io_uring submission CPU detail"),
    ("registerfiles", "io_uring setup detail"),
    ("fixedbufs", "io_uring setup detail"),
    ("nonvectored", "io_uring setup detail"),
    (
        "verify_async",
        "which threads check the data, not the I/O; ioslice checks on the job's thread",
    ),
    ("verify_async_cpus", "CPU placement of verify threads"),
    (
        "verify_state_save",
        "fio's state files for verify triggers; ioslice writes none",
    ),
    (
        "flow_watermark",
        "deprecated in fio 3.33, which ignores it too",
    ),
    (
        "zonecapacity",
        "a zoned device's zone capacity is the device's (the simulated one's zones are all usable); strided zones ignore it, as in fio",
    ),
];

/// Applies one entry to `spec`, with sizes read in `kb_base` units.
pub fn apply(spec: &mut JobSpec, entry: &Entry) -> Result<Outcome, JobFileError> {
    let lower = entry.key.to_ascii_lowercase();
    let name = canonical(&lower);
    if IGNORED.iter().any(|(ignored, _)| *ignored == name) {
        return Ok(Outcome::Ignored);
    }
    let setting = Setting {
        entry,
        kb_base: spec.kb_base,
    };
    if !apply_known(spec, name, &setting)? {
        return Ok(Outcome::Unknown);
    }
    spec.option_origins
        .insert(name.to_string(), entry.origin.clone());
    Ok(Outcome::Applied)
}

/// fio's aliases, mapped to the canonical option name.
fn canonical(name: &str) -> &str {
    match name {
        "readwrite" => "rw",
        "blocksize" => "bs",
        "blocksize_range" => "bsrange",
        "io_limit" => "io_size",
        "nr_files" => "nrfiles",
        "wait_for_previous" => "stonewall",
        "timeout" => "runtime",
        "ss" => "steadystate",
        "ss_dur" => "steadystate_duration",
        "ss_ramp" => "steadystate_ramp_time",
        other => other,
    }
}

/// Sets the field for `name`; false when the option is not in the table.
fn apply_known(spec: &mut JobSpec, name: &str, s: &Setting) -> Result<bool, JobFileError> {
    match name {
        "name" => spec.name = s.string()?,
        "filename" => spec.filename = Some(s.string()?),
        "directory" => spec.directory = Some(s.string()?),
        "filename_format" => spec.filename_format = Some(s.string()?),
        "ioscheduler" => spec.ioscheduler = Some(s.string()?),
        "cgroup" => spec.cgroup = Some(s.string()?),
        "rw" => (spec.pattern, spec.offset_modifier) = s.rw()?,
        "rwmixread" => spec.rwmixread = s.number(0, 100)? as u32,
        "rwmixwrite" => spec.rwmixread = 100 - s.number(0, 100)? as u32,
        "bs" => s.per_direction(&mut spec.block_size, fixed_size, SIZE)?,
        "bsrange" => s.per_direction(
            &mut spec.block_size,
            size_range,
            "a size range such as 4k-16k",
        )?,
        "bssplit" => s.per_direction(&mut spec.block_size, split, "a split such as 4k/60:8k/40")?,
        "size" => match s.zones()? {
            Some(zones) => spec.zones_given.size = Some(zones),
            None => {
                spec.size = Some(s.extent()?);
                spec.zones_given.size = None;
            }
        },
        "filesize" => spec.filesize = Some(s.size_range()?),
        "io_size" => spec.io_size = Some(s.size()?),
        "offset" => match s.zones()? {
            Some(zones) => spec.zones_given.offset = Some(zones),
            None => {
                spec.offset = s.extent()?;
                spec.zones_given.offset = None;
            }
        },
        "offset_increment" => spec.offset_increment = s.size()?,
        "zonemode" => spec.zone_mode = s.parse(zone_mode, "one of none, strided, zbd")?,
        "zonesize" => spec.zone_size = s.zone_bytes()?,
        "zonerange" => spec.zone_range = s.zone_bytes()?,
        "zoneskip" => spec.zone_skip = s.zone_bytes()?,
        "max_open_zones" => spec.max_open_zones = s.number(0, 1 << 32)?,
        "zone_reset_threshold" => spec.zone_reset_threshold = s.fraction()?,
        "zone_reset_frequency" => spec.zone_reset_frequency = s.fraction()?,
        "nrfiles" => spec.nrfiles = s.number(1, u64::from(u32::MAX))? as u32,
        "direct" => spec.direct = s.flag()?,
        "buffered" => spec.direct = !s.flag()?,
        "sync" => spec.sync_writes = s.parse(sync_mode, "0, 1, none, sync or dsync")?,
        "ioengine" => spec.ioengine = IoEngine::named(&s.string()?),
        "stat_type" => spec.stat_type = s.parse(StatType::parse, "one of stat, lstat, statx")?,
        "iodepth" => spec.iodepth = s.number(1, 65_536)? as u32,
        "numjobs" => spec.numjobs = s.number(1, 1_000_000)? as u32,
        "startdelay" => spec.startdelay = s.parse(|t| values::range(t, seconds), TIME_RANGE)?,
        "runtime" => spec.runtime = Some(s.parse(seconds, TIME)?).filter(|t| *t > 0),
        "time_based" => spec.time_based = s.flag()?,
        "ramp_time" => spec.ramp_time = s.parse(seconds, TIME)?,
        "latency_target" => spec.latency_target = s.parse(micros, TIME_US)?,
        "latency_window" => spec.latency_window = s.parse(micros, TIME_US)?,
        "latency_percentile" => spec.latency_percentile = s.parse(percentile, PERCENTILE)?,
        "latency_run" => spec.latency_run = s.flag()?,
        "steadystate" => {
            let kb_base = s.kb_base;
            let size = |t: &str| values::size(t, kb_base);
            spec.ss_criterion = s.parse_or(|t| Criterion::parse(t, size))?;
        }
        "steadystate_duration" => spec.ss_duration = s.parse(seconds, TIME)?,
        "steadystate_ramp_time" => spec.ss_ramp = s.parse(seconds, TIME)?,
        "thinktime" => {
            spec.thinktime =
                s.parse(|t| values::time(t, 1_000), "a time such as 100 (µs) or 2ms")?
        }
        "thinktime_blocks" => spec.thinktime_blocks = s.number(1, u64::from(u32::MAX))? as u32,
        "cpuload" => spec.cpu.load = s.number(0, u64::from(u32::MAX))? as u32,
        "cpumode" => spec.cpu.mode = s.parse(CpuMode::parse, "one of noop, qsort")?,
        "cpuchunks" => spec.cpu.chunk_us = s.number(0, u64::from(u32::MAX))?,
        "program" => spec.exec.program = Some(s.string()?),
        "arguments" => spec.exec.arguments = Some(s.string()?),
        "grace_time" => spec.exec.grace_time_s = s.number(0, u64::from(u32::MAX >> 1))?,
        "std_redirect" => spec.exec.std_redirect = s.flag()?,
        "rate" => s.per_direction(
            &mut spec.rate,
            rate,
            "a rate in bytes/s such as 1m or 500k,1m",
        )?,
        "rate_iops" => s.per_direction(
            &mut spec.rate_iops,
            rate,
            "a number of I/Os per second such as 100 or 50,100",
        )?,
        "prio" => spec.priority = with_level(spec, s.number(0, 7)? as u8),
        "prioclass" => spec.priority = with_class(spec, s.number(0, 3)? as u32),
        "cgroup_weight" => spec.cgroup_weight = Some(s.number(1, 10_000)? as u32),
        "stonewall" => spec.stonewall = s.flag()?,
        "wait_for" => spec.wait_for = Some(s.string()?),
        "new_group" => spec.new_group = s.flag()?,
        "group_reporting" => spec.group_reporting = s.flag()?,
        "loops" => spec.loops = s.number(1, u64::from(u32::MAX))? as u32,
        "number_ios" => spec.number_ios = Some(s.size()?).filter(|n| *n > 0),
        "kb_base" => spec.kb_base = s.parse(kb_base, "1000 or 1024")?,
        "randseed" => spec.randseed = Some(s.number(0, u64::MAX)?),
        // fio's `randrepeat=1` (its default) repeats the same offsets run after run;
        // `randrepeat=0` asks fio for fresh seeds each run unless `randseed=` is set, which
        // wins either way (`setup_random_seeds`, fio's `init.c`). ioslice's offsets always
        // come from `randseed=` or the run's `--seed`, so both values read alike: the value
        // is checked, and `--seed` varies the offsets.
        "randrepeat" => _ = s.flag()?,
        "norandommap" => spec.norandommap = s.flag()?,
        "flow_id" => spec.flow_id = s.number(0, u64::from(u32::MAX))? as u32,
        "flow" => spec.flow = s.number(0, crate::flow::MAX_WEIGHT)? as u32,
        "flow_sleep" => spec.flow_sleep = s.number(0, u64::from(u32::MAX))? * 1_000,
        "random_distribution" => {
            let kb_base = s.kb_base;
            let bytes_of = |t: &str| values::size(t, kb_base);
            spec.random_distribution = s.parse_or(|t| distribution::parse(t, bytes_of))?;
        }
        "random_generator" => {
            spec.random_generator = s.parse(
                RandomGenerator::parse,
                "one of tausworthe, lfsr, tausworthe64",
            )?
        }
        "continue_on_error" => spec.continue_on_error = s.parse(ErrorKinds::parse, CONTINUE)?,
        "ignore_error" => ignore_error(spec, s.parse(errno::parse_ignore_error, IGNORE)?),
        "fallocate" => spec.fallocate = s.parse(Fallocate::parse, FALLOCATE)?,
        "overwrite" => spec.overwrite = s.flag()?,
        "create_on_open" => spec.create_on_open = s.flag()?,
        "verify" => spec.verify.kind = s.parse(VerifyKind::parse, VERIFY)?,
        "do_verify" => spec.verify.do_verify = s.flag()?,
        "verify_only" => spec.verify.verify_only = s.flag()?,
        "verify_backlog" => spec.verify.backlog = s.number(0, u64::from(u32::MAX))?,
        "verify_backlog_batch" => spec.verify.backlog_batch = s.number(0, u64::from(u32::MAX))?,
        "verify_fatal" => spec.verify.fatal = s.flag()?,
        "verify_dump" => spec.verify.dump = s.flag()?,
        "verify_interval" => spec.verify.interval = s.size()?,
        "verify_pattern" => spec.verify.pattern = s.parse(verify::parse_pattern, PATTERN)?,
        _ => return apply_log(&mut spec.logs, name, s),
    }
    Ok(true)
}

/// Sets a log option ([`crate::logs::LogOptions`]); false when `name` is none.
fn apply_log(logs: &mut LogOptions, name: &str, s: &Setting) -> Result<bool, JobFileError> {
    let prefix = || s.text().trim().to_string();
    match name {
        "write_bw_log" => logs.bw = Some(prefix()),
        "write_iops_log" => logs.iops = Some(prefix()),
        "write_lat_log" => logs.lat = Some(prefix()),
        "write_hist_log" => logs.hist = Some(prefix()),
        "log_avg_msec" => logs.avg_msec = s.number(0, u64::from(u32::MAX))?,
        "log_hist_msec" => logs.hist_msec = s.number(0, u64::from(u32::MAX))?,
        "log_hist_coarseness" => {
            logs.hist_coarseness = s.number(0, MAX_HIST_COARSENESS)? as u32;
        }
        "per_job_logs" => logs.per_job = s.flag()?,
        "log_offset" => logs.offset = s.flag()?,
        "log_prio" => logs.prio = s.flag()?,
        "log_max_value" => logs.max_value = s.flag()?,
        _ => return Ok(false),
    }
    Ok(true)
}

const SIZE: &str = "a size such as 4k or 1m";
const TIME: &str = "a time such as 10 (seconds), 500ms or 5m";
const TIME_US: &str = "a time such as 500 (µs), 2ms or 1s";
const PERCENTILE: &str = "a percentage from 0 to 100 such as 99.9";
const TIME_RANGE: &str = "a time or time range such as 10 or 0-4 (seconds)";
const CONTINUE: &str = "one of none, read, write, io, verify, all";
const FALLOCATE: &str = "one of none, native, posix, keep, truncate, 0 or 1";
const VERIFY: &str = "one of md5, crc32c, crc32c-intel, sha256, xxhash, pattern or 0";
const PATTERN: &str = "hex numbers (0xdeadbeef), decimal numbers and quoted strings (\"abcd\") one after the other, and %o for the block's offset";
const IGNORE: &str = "up to three lists READ,WRITE,VERIFY separated by commas, each of error names or numbers separated by colons, such as EAGAIN,ENOSPC:122";

/// One entry being applied, with the helpers that parse its value or name what was expected.
struct Setting<'a> {
    entry: &'a Entry,
    kb_base: u32,
}

impl Setting<'_> {
    fn text(&self) -> &str {
        self.entry.value.as_deref().unwrap_or("")
    }

    fn invalid(&self, expected: &str) -> JobFileError {
        JobFileError::InvalidValue {
            origin: self.entry.origin.clone(),
            option: self.entry.key.clone(),
            value: self.text().to_string(),
            expected: expected.to_string(),
        }
    }

    fn parse<T>(
        &self,
        item: impl Fn(&str) -> Option<T>,
        expected: &str,
    ) -> Result<T, JobFileError> {
        item(self.text()).ok_or_else(|| self.invalid(expected))
    }

    /// Like [`Self::parse`], for an item that says itself what it expected.
    fn parse_or<T>(&self, item: impl Fn(&str) -> Result<T, String>) -> Result<T, JobFileError> {
        item(self.text()).map_err(|expected| self.invalid(&expected))
    }

    fn string(&self) -> Result<String, JobFileError> {
        match self.text() {
            "" => Err(self.invalid("a non-empty value")),
            text => Ok(text.to_string()),
        }
    }

    /// A boolean; a bare key means true.
    fn flag(&self) -> Result<bool, JobFileError> {
        match &self.entry.value {
            None => Ok(true),
            Some(text) => values::boolean(text).ok_or_else(|| self.invalid("a boolean (0 or 1)")),
        }
    }

    fn size(&self) -> Result<u64, JobFileError> {
        let kb_base = self.kb_base;
        self.parse(|t| values::size(t, kb_base), SIZE)
    }

    fn size_range(&self) -> Result<(u64, u64), JobFileError> {
        let kb_base = self.kb_base;
        let expected = "a size or size range such as 1m-4m";
        self.parse(|t| values::range(t, |x| values::size(x, kb_base)), expected)
    }

    fn extent(&self) -> Result<Extent, JobFileError> {
        let kb_base = self.kb_base;
        self.parse(
            |t| values::extent(t, kb_base),
            "a size or percentage such as 1g or 50%",
        )
    }

    /// A number from 0 to 1 (`0.7`).
    fn fraction(&self) -> Result<f64, JobFileError> {
        self.parse(
            |t| {
                t.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| (0.0..=1.0).contains(v))
            },
            "a number from 0 to 1 such as 0.7",
        )
    }

    /// A count of zones (fio's `z` suffix: `4z`), or `None` for a value without it.
    fn zones(&self) -> Result<Option<u64>, JobFileError> {
        let Some(count) = self.text().trim().strip_suffix(['z', 'Z']) else {
            return Ok(None);
        };
        let expected = "a whole number of zones such as 4z";
        count
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| self.invalid(expected))
    }

    /// `zonesize`, `zonerange`, `zoneskip`: bytes (fio's 'z' zone units are not taken).
    fn zone_bytes(&self) -> Result<u64, JobFileError> {
        let kb_base = self.kb_base;
        let expected = if self.text().trim_end().ends_with(['z', 'Z']) {
            "a size such as 16k or 256m (zone units, 'z', are not supported)"
        } else {
            "a size such as 16k or 256m"
        };
        self.parse(|t| values::size(t, kb_base), expected)
    }

    fn number(&self, min: u64, max: u64) -> Result<u64, JobFileError> {
        let kb_base = self.kb_base;
        let expected = format!("an integer from {min} to {max}");
        self.parse(
            |t| values::integer(t, kb_base).filter(|n| (min..=max).contains(n)),
            &expected,
        )
    }

    fn rw(&self) -> Result<(Pattern, i64), JobFileError> {
        let kb_base = self.kb_base;
        self.parse(|t| rw(t, kb_base), "one of read, write, trim, randread, randwrite, randtrim, rw, readwrite, randrw, trimwrite, randtrimwrite, optionally with :N")
    }

    /// Parses a read,write,trim list and stores each given item.
    fn per_direction<T: Clone>(
        &self,
        slots: &mut [T; 3],
        item: fn(&str, u32) -> Option<T>,
        expected: &str,
    ) -> Result<(), JobFileError> {
        let kb_base = self.kb_base;
        let parsed = self.parse(|t| values::per_direction(t, |x| item(x, kb_base)), expected)?;
        for (slot, value) in slots.iter_mut().zip(parsed) {
            if let Some(value) = value {
                *slot = value;
            }
        }
        Ok(())
    }
}

fn seconds(text: &str) -> Option<u64> {
    values::time(text, 1_000_000_000)
}

fn micros(text: &str) -> Option<u64> {
    values::time(text, 1_000)
}

fn percentile(text: &str) -> Option<f64> {
    let text = text.trim();
    let number = text.strip_suffix('%').unwrap_or(text).trim();
    number
        .parse::<f64>()
        .ok()
        .filter(|p| (0.0..=100.0).contains(p))
}

fn fixed_size(text: &str, kb_base: u32) -> Option<BlockSize> {
    values::size(text, kb_base)
        .filter(|b| *b > 0)
        .map(BlockSize::Fixed)
}

fn size_range(text: &str, kb_base: u32) -> Option<BlockSize> {
    let (min, max) = values::range(text, |t| values::size(t, kb_base))?;
    (min > 0).then_some(if min == max {
        BlockSize::Fixed(min)
    } else {
        BlockSize::Range { min, max }
    })
}

fn rate(text: &str, kb_base: u32) -> Option<Option<u64>> {
    values::size(text, kb_base).map(|r| Some(r).filter(|r| *r > 0))
}

/// `bssplit` for one direction: `size/percent` items separated by ':'. Items without a
/// percent share what the others leave of 100 equally; more than 100 in all is refused.
fn split(text: &str, kb_base: u32) -> Option<BlockSize> {
    let mut items = Vec::new();
    for item in text.split(':') {
        let (bytes, pct) = match item.split_once('/') {
            Some((bytes, pct)) if !pct.trim().is_empty() => {
                (bytes, Some(pct.trim().parse::<u32>().ok()?))
            }
            Some((bytes, _)) => (bytes, None),
            None => (item, None),
        };
        let bytes = values::size(bytes, kb_base).filter(|b| *b > 0)?;
        items.push((bytes, pct));
    }
    fill_percentages(items).map(BlockSize::Split)
}

fn fill_percentages(items: Vec<(u64, Option<u32>)>) -> Option<Vec<(u64, u32)>> {
    let given: u32 = items
        .iter()
        .filter_map(|(_, p)| *p)
        .try_fold(0u32, |a, p| a.checked_add(p))?;
    if given > 100 {
        return None;
    }
    let missing = items.iter().filter(|(_, p)| p.is_none()).count() as u32;
    let share = (100 - given).checked_div(missing).unwrap_or(0);
    let mut leftover = (100 - given) - share * missing;
    let filled = items
        .into_iter()
        .map(|(bytes, pct)| {
            let pct = pct.unwrap_or_else(|| share + std::mem::take(&mut leftover));
            (bytes, pct)
        })
        .collect();
    Some(filled)
}

/// `rw=` with its optional `:N` modifier: a signed byte offset for sequential patterns, a
/// count of sequential I/Os per random offset for random ones.
fn rw(text: &str, kb_base: u32) -> Option<(Pattern, i64)> {
    let (name, modifier) = match text.split_once(':') {
        Some((name, modifier)) => (name.trim(), Some(modifier.trim())),
        None => (text.trim(), None),
    };
    let pattern = pattern(name)?;
    let modifier = match modifier {
        None => 0,
        Some(m) if pattern.is_random() => i64::try_from(values::integer(m, kb_base)?).ok()?,
        Some(m) => signed_size(m, kb_base)?,
    };
    Some((pattern, modifier))
}

fn signed_size(text: &str, kb_base: u32) -> Option<i64> {
    match text.strip_prefix('-') {
        Some(rest) => i64::try_from(values::size(rest, kb_base)?).ok().map(|v| -v),
        None => i64::try_from(values::size(text, kb_base)?).ok(),
    }
}

fn pattern(name: &str) -> Option<Pattern> {
    Some(match name {
        "read" => Pattern::Read,
        "write" => Pattern::Write,
        "trim" => Pattern::Trim,
        "randread" => Pattern::RandRead,
        "randwrite" => Pattern::RandWrite,
        "randtrim" => Pattern::RandTrim,
        "rw" | "readwrite" => Pattern::ReadWrite,
        "randrw" => Pattern::RandReadWrite,
        "trimwrite" => Pattern::TrimWrite,
        "randtrimwrite" => Pattern::RandTrimWrite,
        _ => return None,
    })
}

fn zone_mode(text: &str) -> Option<ZoneMode> {
    match text.trim() {
        "none" => Some(ZoneMode::None),
        "strided" => Some(ZoneMode::Strided),
        "zbd" => Some(ZoneMode::Zbd),
        _ => None,
    }
}

/// Turn `size=` and `offset=` given in zones into bytes of `zonesize`; a job that gives
/// them without a `zonesize` is refused (fio takes the zone size of a zoned device; give
/// it as `zonesize=` here).
pub fn resolve_zone_units(spec: &mut JobSpec) -> Result<(), JobFileError> {
    let given = spec.zones_given;
    for (option, zones) in [("size", given.size), ("offset", given.offset)] {
        let Some(zones) = zones else { continue };
        if spec.zone_size == 0 {
            return Err(JobFileError::Conflict {
                origin: spec
                    .option_origins
                    .get(option)
                    .cloned()
                    .unwrap_or_else(|| spec.origin.clone()),
                what: format!(
                    "{option}={zones}z is in zones but the job has no zonesize: expected a zonesize= such as 256m"
                ),
            });
        }
        let bytes = zones.saturating_mul(spec.zone_size);
        match option {
            "size" => spec.size = Some(Extent::Bytes(bytes)),
            _ => spec.offset = Extent::Bytes(bytes),
        }
    }
    spec.zones_given = Default::default();
    Ok(())
}

/// fio's checks on a finished job's zone options: `zonemode=none` refuses a `zonesize`,
/// and `zonemode=strided` needs one above 0.
pub fn check_zones(spec: &JobSpec) -> Result<(), JobFileError> {
    let origin_of = |option: &str| spec.option_origins.get(option).cloned();
    let conflict = |origin: Option<Origin>, what: String| JobFileError::Conflict {
        origin: origin.unwrap_or_else(|| spec.origin.clone()),
        what,
    };
    match spec.zone_mode {
        ZoneMode::None if spec.zone_size > 0 => {
            let at = origin_of("zonesize")
                .map(|o| format!(" (set at {}:{})", o.file, o.line))
                .unwrap_or_default();
            Err(conflict(
                origin_of("zonemode"),
                format!("zonemode=none cannot be used with zonesize{at}: expected zonemode=strided, or no zonesize"),
            ))
        }
        ZoneMode::Strided if spec.zone_size == 0 => Err(match origin_of("zonesize") {
            Some(origin) => conflict(
                Some(origin),
                "zonesize=0 with zonemode=strided: expected a zone size above 0 such as 16k"
                    .to_string(),
            ),
            None => conflict(
                origin_of("zonemode"),
                "zonemode=strided without zonesize: expected a zonesize= such as 16k".to_string(),
            ),
        }),
        _ => Ok(()),
    }
}

fn sync_mode(text: &str) -> Option<bool> {
    match text.trim() {
        "sync" | "dsync" => Some(true),
        "none" => Some(false),
        other => values::boolean(other),
    }
}

fn kb_base(text: &str) -> Option<u32> {
    match text.trim() {
        "1000" => Some(1000),
        "1024" => Some(1024),
        _ => None,
    }
}

/// `ignore_error=`'s lists, as fio's `ignore_error_type` applies them: each kind the value names
/// takes its list, a kind given errors is added to the kinds `continue_on_error` covers, and
/// kinds the value does not name keep what they had. An empty list brings back the default
/// (`EIO`, `EILSEQ`); fio's code does so too unless an earlier `ignore_error=` gave that kind a
/// list, when it keeps no error at all for it, which ioslice does not copy.
fn ignore_error(spec: &mut JobSpec, lists: Vec<Vec<i32>>) {
    for (kind, list) in ErrorKind::ALL.into_iter().zip(lists) {
        if !list.is_empty() {
            spec.continue_on_error = spec.continue_on_error.with(kind);
        }
        spec.ignore_error[kind as usize] = list;
    }
}

/// `prio=N`: level N in the class `prioclass` chose, or best effort when none did.
fn with_level(spec: &JobSpec, level: u8) -> Option<IoPriority> {
    let class = match spec.priority {
        Some(p) if spec.option_origins.contains_key("prioclass") => p.class,
        _ => PriorityClass::BestEffort,
    };
    IoPriority::new(class, level)
}

/// `prioclass=C`: class C at the level `prio` chose, or level 0 (fio's default) when none
/// did. Class 0 ("none") without `prio` leaves the default priority.
fn with_class(spec: &JobSpec, number: u32) -> Option<IoPriority> {
    let level = match spec.priority {
        Some(p) if spec.option_origins.contains_key("prio") => Some(p.level),
        _ => None,
    };
    if number == 0 && level.is_none() {
        return None;
    }
    let class = PriorityClass::from_number(number)?;
    IoPriority::new(class, level.unwrap_or(0))
}
