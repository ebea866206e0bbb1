//! A job as the runner needs it: every option resolved to a typed value.
//! The parser ([`crate::jobfile`]) produces these; the workload ([`crate::workload`]) runs them.

use ioslice_core::group::GroupError;
use ioslice_core::limit::Limits;
use ioslice_core::{GroupTree, IoPriority, Nanos};

/// The access pattern (`rw=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// `read`: sequential reads.
    Read,
    /// `write`: sequential writes.
    Write,
    /// `trim`: sequential trims.
    Trim,
    /// `randread`.
    RandRead,
    /// `randwrite`.
    RandWrite,
    /// `randtrim`.
    RandTrim,
    /// `rw` / `readwrite`: sequential mixed reads and writes.
    ReadWrite,
    /// `randrw`: random mixed reads and writes.
    RandReadWrite,
    /// `trimwrite`: sequential trim then write of each block.
    TrimWrite,
    /// `randtrimwrite`.
    RandTrimWrite,
}

impl Pattern {
    /// fio's name for it.
    pub fn fio_name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Trim => "trim",
            Self::RandRead => "randread",
            Self::RandWrite => "randwrite",
            Self::RandTrim => "randtrim",
            Self::ReadWrite => "rw",
            Self::RandReadWrite => "randrw",
            Self::TrimWrite => "trimwrite",
            Self::RandTrimWrite => "randtrimwrite",
        }
    }

    /// The letter fio's status line shows for a running job of this pattern: `R`/`W`/`M`
    /// (mixed)/`D` (trim), lower case when offsets are random.
    pub fn status_letter(self) -> u8 {
        let letter = match self {
            Self::Read | Self::RandRead => b'R',
            Self::Write | Self::RandWrite | Self::TrimWrite | Self::RandTrimWrite => b'W',
            Self::ReadWrite | Self::RandReadWrite => b'M',
            Self::Trim | Self::RandTrim => b'D',
        };
        if self.is_random() {
            letter.to_ascii_lowercase()
        } else {
            letter
        }
    }

    /// Whether the pattern issues writes.
    pub fn writes(self) -> bool {
        !matches!(
            self,
            Self::Read | Self::RandRead | Self::Trim | Self::RandTrim
        )
    }

    /// Whether the pattern issues trims (`trim`, `randtrim`, `trimwrite`, `randtrimwrite`).
    pub fn trims(self) -> bool {
        matches!(
            self,
            Self::Trim | Self::RandTrim | Self::TrimWrite | Self::RandTrimWrite
        )
    }

    /// Whether offsets are random.
    pub fn is_random(self) -> bool {
        matches!(
            self,
            Self::RandRead
                | Self::RandWrite
                | Self::RandTrim
                | Self::RandReadWrite
                | Self::RandTrimWrite
        )
    }
}

/// A block size setting for one direction (`bs`, `bsrange`, `bssplit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockSize {
    /// Always this many bytes.
    Fixed(u64),
    /// Uniform in `min..=max`, in multiples of `min` (fio's `bs_unaligned=0` behaviour).
    Range {
        /// Smallest size in bytes.
        min: u64,
        /// Largest size in bytes.
        max: u64,
    },
    /// Weighted list of (bytes, percent); percents sum to 100 after fio's filling rule.
    Split(Vec<(u64, u32)>),
}

impl BlockSize {
    /// Smallest size this setting can produce.
    pub fn min(&self) -> u64 {
        match self {
            Self::Fixed(b) => *b,
            Self::Range { min, .. } => *min,
            Self::Split(list) => list.iter().map(|(b, _)| *b).min().unwrap_or(4096),
        }
    }

    /// Largest size this setting can produce.
    pub fn max(&self) -> u64 {
        match self {
            Self::Fixed(b) => *b,
            Self::Range { max, .. } => *max,
            Self::Split(list) => list.iter().map(|(b, _)| *b).max().unwrap_or(4096),
        }
    }
}

/// `size=` and `offset=` in zones (fio's `z` suffix), until `zonesize` turns them into bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ZonesGiven {
    /// `size=Nz`.
    pub size: Option<u64>,
    /// `offset=Nz`.
    pub offset: Option<u64>,
}

/// A size or offset given in bytes or as a percentage of the file or device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// Absolute bytes.
    Bytes(u64),
    /// Percent (1–100) of the target's size.
    Percent(u32),
}

/// The I/O engine (`ioengine=`), which decides how many requests a job keeps in flight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IoEngine {
    /// `sync`: read/write, one request in flight.
    Sync,
    /// `psync`: pread/pwrite, one in flight.
    Psync,
    /// `vsync`.
    Vsync,
    /// `pvsync`: preadv/pwritev, one in flight.
    Pvsync,
    /// `pvsync2`: preadv2/pwritev2, one in flight.
    Pvsync2,
    /// `mmap`: copies to and from the file mapped in memory, one in flight.
    Mmap,
    /// `libaio`: up to iodepth in flight.
    Libaio,
    /// `io_uring`: up to iodepth in flight.
    IoUring,
    /// `posixaio`: up to iodepth in flight.
    PosixAio,
    /// `null`: completes at once (no device).
    Null,
    /// `cpuio`: no data; each I/O burns CPU for a cycle ([`crate::cpuio`]), one in flight.
    CpuIo,
    /// `exec`: no data; runs a program for the job's runtime ([`crate::exec`]), one in
    /// flight. Real runs only.
    Exec,
    /// `filecreate`, `filestat`, `filedelete`, `dircreate`, `dirstat`, `dirdelete`: each I/O
    /// of a file is one operation on its name, one in flight.
    Namespace(crate::file_ops::FileOp),
    /// `ftruncate`, `falloc`: each request is that system call on its range, one in flight.
    Range(crate::file_ops::RangeOp),
    /// Any other engine: parses, but cannot be run.
    Unsupported(String),
}

impl IoEngine {
    /// The engine fio names `name` ([`IoEngine::fio_name`] read back); a name ioslice does
    /// not run is [`IoEngine::Unsupported`].
    pub fn named(name: &str) -> Self {
        use crate::file_ops::{FileOp, RangeOp};
        match name {
            "sync" => Self::Sync,
            "psync" => Self::Psync,
            "vsync" => Self::Vsync,
            "pvsync" => Self::Pvsync,
            "pvsync2" => Self::Pvsync2,
            "mmap" => Self::Mmap,
            "ftruncate" => Self::Range(RangeOp::Ftruncate),
            "falloc" => Self::Range(RangeOp::Falloc),
            "libaio" => Self::Libaio,
            "io_uring" => Self::IoUring,
            "posixaio" => Self::PosixAio,
            "null" => Self::Null,
            "cpuio" => Self::CpuIo,
            "exec" => Self::Exec,
            other => FileOp::named(other)
                .map_or_else(|| Self::Unsupported(other.to_string()), Self::Namespace),
        }
    }

    /// fio's name for it.
    pub fn fio_name(&self) -> &str {
        match self {
            Self::Sync => "sync",
            Self::Psync => "psync",
            Self::Vsync => "vsync",
            Self::Pvsync => "pvsync",
            Self::Pvsync2 => "pvsync2",
            Self::Mmap => "mmap",
            Self::Namespace(op) => op.fio_name(),
            Self::Range(crate::file_ops::RangeOp::Ftruncate) => "ftruncate",
            Self::Range(crate::file_ops::RangeOp::Falloc) => "falloc",
            Self::Libaio => "libaio",
            Self::IoUring => "io_uring",
            Self::PosixAio => "posixaio",
            Self::Null => "null",
            Self::CpuIo => "cpuio",
            Self::Exec => "exec",
            Self::Unsupported(name) => name,
        }
    }

    /// Whether the engine waits for each request before issuing the next (fio's
    /// `FIO_SYNCIO` engines, whose queue depth fio caps at 1 whatever `iodepth` says).
    pub fn is_synchronous(&self) -> bool {
        matches!(
            self,
            Self::Sync
                | Self::Psync
                | Self::Vsync
                | Self::Pvsync
                | Self::Pvsync2
                | Self::Mmap
                | Self::CpuIo
                | Self::Exec
                | Self::Namespace(_)
                | Self::Range(_)
        )
    }

    /// Whether the engine has no file (fio's `FIO_DISKLESSIO`: `cpuio`, `exec`).
    pub fn is_diskless(&self) -> bool {
        matches!(self, Self::CpuIo | Self::Exec)
    }
}

/// `zonemode=`: whether `zonesize`, `zonerange` and `zoneskip` divide the job's region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZoneMode {
    /// Not written: strided when `zonesize` is set, else none (fio's rule, which keeps
    /// job files from before `zonemode` existed working).
    #[default]
    Unspecified,
    /// `none`: no zones.
    None,
    /// `strided`: I/O stays in one zone until `zonesize` bytes are done, then moves on.
    Strided,
    /// `zbd`: zoned block device mode: writes go to zones' write pointers (the simulator
    /// runs it on a zoned device model).
    Zbd,
}

impl ZoneMode {
    /// fio's name for it (`unspecified` when none was written).
    pub fn fio_name(self) -> &'static str {
        match self {
            Self::Unspecified => "unspecified",
            Self::None => "none",
            Self::Strided => "strided",
            Self::Zbd => "zbd",
        }
    }
}

/// Strided zones as a job walks them (fio's `zonemode=strided`), all in bytes.
///
/// The job's first zone starts where its region does (`offset`, plus `offset_increment`
/// per clone). It issues `size` bytes in a zone, at positions within `range` bytes of
/// the zone's start, then moves `range + skip` bytes on; past the end of the file it
/// wraps back to the first zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StridedZones {
    /// `zonesize`: bytes transferred in a zone before moving to the next. Above `range`,
    /// the zone is gone over again; below it, only part of the zone is touched.
    pub size: u64,
    /// `zonerange`: the span of a zone, from its start (defaults to `zonesize`).
    pub range: u64,
    /// `zoneskip`: bytes skipped after each zone's span.
    pub skip: u64,
}

/// Where a setting came from, for messages: the file and the 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Origin {
    /// The job file (or an included file).
    pub file: String,
    /// 1-based line number.
    pub line: usize,
}

/// `fallocate=`: how fio reserves the space of a file a job writes but does not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fallocate {
    /// `none` (or `0`): nothing reserved; the writes extend the file.
    None,
    /// `native`, `posix`, `keep` (or `1`), fio's default on Linux: the space is allocated.
    #[default]
    Allocate,
    /// `truncate`: the file is set to its size without allocating (sparse).
    Truncate,
}

impl Fallocate {
    /// `fallocate=`'s value.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "none" | "0" => Some(Self::None),
            "native" | "posix" | "keep" | "1" => Some(Self::Allocate),
            "truncate" => Some(Self::Truncate),
            _ => None,
        }
    }
}

/// One job section, resolved. `numjobs` clones are expanded by the runner, not here.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// Section name.
    pub name: String,
    /// Where the section starts.
    pub origin: Origin,
    /// The options written in this job's own section, in order, as fio's JSON `job options` shows them.
    pub options: Vec<(String, String)>,
    /// `filename=` (may hold several names separated by ':'), if given.
    pub filename: Option<String>,
    /// `directory=`, if given.
    pub directory: Option<String>,
    /// `filename_format=`: how files are named without `filename=` (`$jobname`, `$jobnum`,
    /// `$filenum`, `$clientuid`); `None` is fio's `$jobname.$jobnum.$filenum`.
    pub filename_format: Option<String>,
    /// `rw=`.
    pub pattern: Pattern,
    /// The `rw=...:N` modifier: for sequential patterns, bytes added to each offset
    /// (negative reads backwards); for random ones, how many sequential I/Os follow each random offset.
    pub offset_modifier: i64,
    /// Percentage of reads in mixed patterns (`rwmixread`, default 50).
    pub rwmixread: u32,
    /// Block size per direction: [read, write, trim].
    pub block_size: [BlockSize; 3],
    /// `size=`: bytes of the region this job does I/O to (None: the whole file/device).
    pub size: Option<Extent>,
    /// `filesize=`: (min, max) size of each file, when given.
    pub filesize: Option<(u64, u64)>,
    /// `io_size=`/`io_limit=`: bytes to transfer, when not `size`.
    pub io_size: Option<u64>,
    /// `offset=`: where the region starts.
    pub offset: Extent,
    /// `offset_increment=`: added to `offset` for each numjobs clone.
    pub offset_increment: u64,
    /// `zonemode=`.
    pub zone_mode: ZoneMode,
    /// `zonesize=`: bytes per zone (0: not set).
    pub zone_size: u64,
    /// `zonerange=`: span of each zone (0: not set, the same as `zonesize`).
    pub zone_range: u64,
    /// `zoneskip=`: bytes skipped after each zone.
    pub zone_skip: u64,
    /// `size=` and `offset=` given in zones (fio's `z` suffix, `size=4z`), turned into bytes
    /// with `zonesize` once the job is read.
    pub zones_given: ZonesGiven,
    /// `max_open_zones=`: with `zonemode=zbd`, the zones random writes go to at most (0:
    /// the device's limit).
    pub max_open_zones: u64,
    /// `zone_reset_threshold=`: with `zonemode=zbd`, the share of the job's range holding
    /// data (0 to 1) above which writes reset their zone now and then.
    pub zone_reset_threshold: f64,
    /// `zone_reset_frequency=`: the share of writes (0 to 1; 0: none) that reset their zone
    /// once `zone_reset_threshold` is passed: one every `1 / frequency` writes.
    pub zone_reset_frequency: f64,
    /// `nrfiles=`: files per job.
    pub nrfiles: u32,
    /// `direct=1`: O_DIRECT (sync I/O that bypasses the page cache).
    pub direct: bool,
    /// `buffered=` inverse of direct is folded into `direct`. `sync=1`: writes are synchronous.
    pub sync_writes: bool,
    /// `ioengine=`.
    pub ioengine: IoEngine,
    /// `stat_type=` of `ioengine=filestat` and `dirstat`.
    pub stat_type: crate::file_ops::StatType,
    /// `iodepth=`.
    pub iodepth: u32,
    /// `numjobs=`.
    pub numjobs: u32,
    /// `startdelay=`: (min, max) delay before the job starts; equal when not a range.
    pub startdelay: (Nanos, Nanos),
    /// `runtime=`: cap on run time.
    pub runtime: Option<Nanos>,
    /// `time_based`: keep going until `runtime`, wrapping around the region.
    pub time_based: bool,
    /// `ramp_time=`: time before statistics start.
    pub ramp_time: Nanos,
    /// `latency_target=`: the total latency the depth search holds to (0: no search).
    pub latency_target: Nanos,
    /// `latency_window=`: how long each window of the depth search lasts at least.
    pub latency_window: Nanos,
    /// `latency_percentile=`: the share of a window's I/Os, in percent, that must meet the
    /// target (default 100).
    pub latency_percentile: f64,
    /// `latency_run=`: keep searching for the whole run.
    pub latency_run: bool,
    /// `steadystate=` (`ss`): the steady-state criterion (default `iops_slope:0.01%`).
    pub ss_criterion: crate::steady_state::Criterion,
    /// `steadystate_duration=` (`ss_dur`): the window judged for steady state; 0 turns
    /// steady-state detection off.
    pub ss_duration: Nanos,
    /// `steadystate_ramp_time=` (`ss_ramp`): how long sampling waits after the start.
    pub ss_ramp: Nanos,
    /// `thinktime=`: stall after `thinktime_blocks` completions.
    pub thinktime: Nanos,
    /// `thinktime_blocks=` (default 1).
    pub thinktime_blocks: u32,
    /// `cpuload=`, `cpumode=`, `cpuchunks=`: the `cpuio` engine's settings.
    pub cpu: crate::cpuio::CpuBurn,
    /// `program=`, `arguments=`, `grace_time=`, `std_redirect=`: the `exec` engine's.
    pub exec: crate::exec::ExecProgram,
    /// `rate=`: bytes per second cap, per direction [read, write, trim].
    pub rate: [Option<u64>; 3],
    /// `rate_iops=`: I/Os per second cap, per direction.
    pub rate_iops: [Option<u64>; 3],
    /// `prioclass=`/`prio=` as ionice would set them; None leaves the default (BE 4).
    pub priority: Option<IoPriority>,
    /// `cgroup=`: the group path.
    pub cgroup: Option<String>,
    /// `cgroup_weight=`.
    pub cgroup_weight: Option<u32>,
    /// `stonewall`/`wait_for_previous`: wait for earlier jobs to finish; starts a new reporting group.
    pub stonewall: bool,
    /// `new_group`: start a new reporting group.
    pub new_group: bool,
    /// `wait_for=NAME`: start only once every process of the job named NAME (defined earlier
    /// in the file) is done.
    pub wait_for: Option<String>,
    /// `group_reporting`: report this job's reporting group as one.
    pub group_reporting: bool,
    /// `ioscheduler=`: the scheduler to use, unless `--sched` overrides it.
    pub ioscheduler: Option<String>,
    /// `loops=`: passes over the region.
    pub loops: u32,
    /// `number_ios=`: stop after this many I/Os.
    pub number_ios: Option<u64>,
    /// `kb_base=`: 1024 (default) or 1000.
    pub kb_base: u32,
    /// `randseed`: a fixed seed for this job's random offsets, if set (whatever `randrepeat`
    /// says, as in fio).
    pub randseed: Option<u64>,
    /// `flow_id=`: the flow group the job's `flow` weight counts in (0 by default).
    pub flow_id: u32,
    /// `flow=`: the job's weight in its flow group; 0 (the default) leaves it out.
    pub flow: u32,
    /// `flow_sleep=`: how long a job held back by its flow group sleeps; 0 retries at once.
    pub flow_sleep: Nanos,
    /// `norandommap`: random offsets drawn with replacement instead of each block once a pass.
    pub norandommap: bool,
    /// `random_distribution=`: how random offsets are spread.
    pub random_distribution: crate::distribution::RandomDistribution,
    /// `random_generator=`: the generator fio would use; `lfsr` keeps each block once a pass.
    pub random_generator: crate::distribution::RandomGenerator,
    /// The kinds of error a job goes on after: those `continue_on_error=` names (none by
    /// default), with those `ignore_error=` gives a list added, as in fio.
    pub continue_on_error: crate::errno::ErrorKinds,
    /// `ignore_error=READ,WRITE,VERIFY` (fio's syntax: errors within a kind separated by `:`):
    /// per kind, the errors a job goes on after; an empty list means fio's default, `EIO` and
    /// `EILSEQ` ([`crate::errno::goes_on`]).
    pub ignore_error: [Vec<i32>; 3],
    /// `fallocate=`: how a missing file a job only writes is laid out.
    pub fallocate: Fallocate,
    /// `overwrite=1`: a file a job writes is written out in full before the job starts.
    pub overwrite: bool,
    /// `create_on_open=1`: a missing file is created when the job opens it, not laid out.
    pub create_on_open: bool,
    /// `verify=` and its companions (`do_verify`, `verify_only`, `verify_backlog`, …).
    pub verify: crate::verify::VerifySpec,
    /// The log files it writes (`write_bw_log`, `write_lat_log`, …) and their shape.
    pub logs: crate::logs::LogOptions,
    /// Where each option that set a field came from (last setting wins), keyed by fio's
    /// canonical option name (`ioengine`, `rw`, `bs`, …), for messages such as
    /// `jobs.fio:7: ioengine=rbd is not supported`. Options inherited from `[global]` point
    /// into the global section.
    pub option_origins: std::collections::BTreeMap<String, Origin>,
}

impl Default for JobSpec {
    fn default() -> Self {
        Self {
            name: String::new(),
            origin: Origin::default(),
            options: Vec::new(),
            filename: None,
            directory: None,
            filename_format: None,
            pattern: Pattern::Read,
            offset_modifier: 0,
            rwmixread: 50,
            block_size: [
                BlockSize::Fixed(4096),
                BlockSize::Fixed(4096),
                BlockSize::Fixed(4096),
            ],
            size: None,
            filesize: None,
            io_size: None,
            offset: Extent::Bytes(0),
            offset_increment: 0,
            zone_mode: ZoneMode::Unspecified,
            zone_size: 0,
            zone_range: 0,
            zone_skip: 0,
            zones_given: ZonesGiven::default(),
            max_open_zones: 0,
            zone_reset_threshold: 0.0,
            zone_reset_frequency: 0.0,
            nrfiles: 1,
            direct: false,
            sync_writes: false,
            ioengine: IoEngine::Psync,
            stat_type: crate::file_ops::StatType::Stat,
            iodepth: 1,
            numjobs: 1,
            startdelay: (0, 0),
            runtime: None,
            time_based: false,
            ramp_time: 0,
            latency_target: 0,
            latency_window: 0,
            latency_percentile: 100.0,
            latency_run: false,
            ss_criterion: crate::steady_state::Criterion::default(),
            ss_duration: 0,
            ss_ramp: 0,
            thinktime: 0,
            thinktime_blocks: 1,
            cpu: crate::cpuio::CpuBurn::default(),
            exec: crate::exec::ExecProgram::default(),
            rate: [None; 3],
            rate_iops: [None; 3],
            priority: None,
            cgroup: None,
            cgroup_weight: None,
            stonewall: false,
            wait_for: None,
            new_group: false,
            group_reporting: false,
            ioscheduler: None,
            loops: 1,
            number_ios: None,
            kb_base: 1024,
            randseed: None,
            flow_id: 0,
            flow: 0,
            flow_sleep: 0,
            norandommap: false,
            random_distribution: Default::default(),
            random_generator: Default::default(),
            continue_on_error: crate::errno::ErrorKinds::NONE,
            ignore_error: Default::default(),
            fallocate: Fallocate::default(),
            overwrite: false,
            create_on_open: false,
            verify: crate::verify::VerifySpec::default(),
            logs: crate::logs::LogOptions::default(),
            option_origins: std::collections::BTreeMap::new(),
        }
    }
}

impl JobSpec {
    /// Requests in flight at most: 1 for synchronous engines, else `iodepth`.
    pub fn effective_depth(&self) -> u32 {
        if self.ioengine.is_synchronous() {
            1
        } else {
            self.iodepth.max(1)
        }
    }

    /// Whether fio's report counts this job's depth otherwise than by what is in flight
    /// ([`JobSpec::reported_depth`]): the `vsync` engine's.
    pub fn reaps_in_batches(&self) -> bool {
        self.ioengine == IoEngine::Vsync
    }

    /// The depth fio's report counts a submission at (`iodepth_level`), `in_flight` being the
    /// requests outstanding with it and `issued` tells those the job issued before it. For every
    /// engine but `vsync`, what is in flight. fio 3.33's `vsync` sends each request alone
    /// (one `readv` of one iovec, with the default `iodepth_batch`; strace on a file) yet
    /// reaps them in batches, so its report counts up to `iodepth` in flight: with
    /// `iodepth=8` over 1024 requests, 1=0.1 %, 2=0.2 %, 4=0.4 %, 8=99.3 %, the first request
    /// at depth 1 and the n-th at n until `iodepth`.
    #[inline]
    pub fn reported_depth(&self, in_flight: u32, issued: impl FnOnce() -> u64) -> u32 {
        if self.reaps_in_batches() {
            let nth = u32::try_from(issued().saturating_add(1)).unwrap_or(u32::MAX);
            nth.min(self.iodepth.max(1))
        } else {
            in_flight
        }
    }

    /// The strided zones this job walks: with `zonemode=strided`, or with a `zonesize`
    /// and no `zonemode` (as fio does). None for `zonemode=none` or `zbd`, or without a
    /// zone size. (fio also turns zones off for a job with more than one file; the
    /// pattern does that, as it knows the files.)
    pub fn strided_zones(&self) -> Option<StridedZones> {
        let strided = match self.zone_mode {
            ZoneMode::Strided | ZoneMode::Unspecified => self.zone_size > 0,
            ZoneMode::None | ZoneMode::Zbd => false,
        };
        strided.then_some(StridedZones {
            size: self.zone_size,
            range: if self.zone_range > 0 {
                self.zone_range
            } else {
                self.zone_size
            },
            skip: self.zone_skip,
        })
    }
}

/// A warning about the job file that does not stop the run (an option the runner ignores).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Where.
    pub origin: Origin,
    /// What, in one line.
    pub message: String,
}

/// For each job, in order, its stonewall phase and its reporting group id, as fio numbers
/// them: `stonewall` starts a new phase and a new group, `new_group` a new group.
pub fn phases_and_groups(jobs: &[JobSpec]) -> Vec<(usize, u32)> {
    let (mut phase, mut groupid) = (0, 0);
    jobs.iter()
        .enumerate()
        .map(|(index, spec)| {
            if index > 0 && spec.stonewall {
                phase += 1;
            }
            if index > 0 && (spec.stonewall || spec.new_group) {
                groupid += 1;
            }
            (phase, groupid)
        })
        .collect()
}

/// A whole parsed job file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobFile {
    /// The path as given.
    pub path: String,
    /// Options of the `[global]` sections in order, for fio's JSON `global options`.
    pub global_options: Vec<(String, String)>,
    /// Jobs in file order.
    pub jobs: Vec<JobSpec>,
    /// Options parsed but not acted on.
    pub warnings: Vec<Warning>,
}

impl JobFile {
    /// Several job files as fio runs them (`fio a.fio b.fio`): their jobs in order, the first
    /// job of each later file a `stonewall` (it waits for the earlier files' jobs and starts
    /// a new reporting group), no `[global]` carried from one file to the next (each was
    /// parsed on its own), and, as fio's JSON shows it, no `global options` for the whole.
    /// One file comes back as it is.
    pub fn concatenate(files: Vec<JobFile>) -> JobFile {
        if files.len() == 1 {
            return files.into_iter().next().unwrap_or_default();
        }
        let paths: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
        let mut whole = JobFile {
            path: paths.join(" "),
            ..JobFile::default()
        };
        for file in files {
            let later = !whole.jobs.is_empty();
            let mut jobs = file.jobs.into_iter();
            if let Some(mut first) = jobs.next() {
                first.stonewall |= later;
                whole.jobs.push(first);
            }
            whole.jobs.extend(jobs);
            whole.warnings.extend(file.warnings);
        }
        whole
    }

    /// The cgroup tree a run uses: every job's `cgroup=` with its `cgroup_weight=`, then the
    /// command line's weights, then its limits; a later setting for a group wins.
    pub fn group_tree(
        &self,
        weights: &[(String, u32)],
        limits: &[(String, Limits)],
    ) -> Result<GroupTree, GroupError> {
        let mut groups = GroupTree::default();
        let from_jobs = self.jobs.iter().filter_map(|spec| {
            let path = spec.cgroup.as_deref()?;
            Some((path, spec.cgroup_weight))
        });
        let from_command_line = weights
            .iter()
            .map(|(path, weight)| (path.as_str(), Some(*weight)));
        for (path, weight) in from_jobs.chain(from_command_line) {
            let id = groups.ensure(path)?;
            if let Some(weight) = weight {
                groups.set_weight(id, weight)?;
            }
        }
        for (path, limits) in limits {
            let id = groups.ensure(path)?;
            groups.set_limits(id, *limits);
        }
        Ok(groups)
    }
}
