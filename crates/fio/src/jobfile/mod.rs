//! fio job files: the INI format ([`ini`]), variable expansion ([`expand`]), fio's value
//! syntax ([`values`]), fio's check of each value's type and bounds ([`value_check`]), the option table ([`options`]) that fills [`JobSpec`]s, and fio's own
//! table of option names ([`fio_table`]), which tells a misspelling from an option ioslice
//! does not act on.
//!
//! A `[global]` section sets defaults for the jobs *below* it; several `[global]`s
//! accumulate. Within a section `kb_base` is applied first, so it governs every size in
//! that section whatever the order; other options apply in order (the last one wins).

pub mod error;
pub mod expand;
pub mod fio_table;
pub mod ini;
pub mod options;
pub mod showcmd;
pub mod source;
pub mod value_check;
pub mod values;

use std::collections::BTreeMap;
use std::path::Path;

pub use error::JobFileError;

use crate::job::{IoEngine, JobFile, JobSpec, Origin, Warning, ZoneMode};
use crate::verify::VerifyKind;
use ini::{Entry, Section};
use options::Outcome;

/// How to parse: strictness and the inputs fio would read from the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseOptions {
    /// Refuse unknown options instead of warning about them.
    pub strict: bool,
    /// The environment `${NAME}` reads from.
    pub env: BTreeMap<String, String>,
    /// Value of `$ncpus`.
    pub ncpus: u32,
    /// Value of `$mb_memory` (MiB of memory).
    pub mb_memory: u64,
    /// Options given on the command line outside any job (before the first `--name`, or
    /// after `--name=global`): fio's defaults for every job, applied beneath each file's own
    /// `[global]` sections and jobs, which override them.
    pub globals: Vec<Entry>,
    /// `--section NAME`s: when any is given, only the sections of these names run (and
    /// every `[global]`), as fio's `--section`.
    pub sections: Vec<String>,
}

impl Default for ParseOptions {
    /// Not strict, an empty environment, 1 CPU and 1024 MiB of memory.
    fn default() -> Self {
        Self {
            strict: false,
            env: BTreeMap::new(),
            ncpus: 1,
            mb_memory: 1024,
            globals: Vec::new(),
            sections: Vec::new(),
        }
    }
}

/// Reads and parses the job file at `path`.
pub fn parse_file(path: &Path, options: &ParseOptions) -> Result<JobFile, JobFileError> {
    let shown = path.display().to_string();
    let text = source::read_job_text(path, source::JOB_TEXT_LIMIT).map_err(|reason| {
        JobFileError::Read {
            file: shown.clone(),
            reason,
        }
    })?;
    parse_str(&text, &shown, options)
}

/// Parses job-file `text` as if read from `path` (used in messages and to resolve includes).
pub fn parse_str(text: &str, path: &str, options: &ParseOptions) -> Result<JobFile, JobFileError> {
    let sections = ini::read_sections(text, path, options)?;
    parse_sections(&sections, path, options)
}

/// Parses sections already read (a job file's, or the jobs given on the command line) as
/// the job file `path`: the command line's globals first, then the sections `--section`
/// keeps, in order.
pub fn parse_sections(
    sections: &[Section],
    path: &str,
    options: &ParseOptions,
) -> Result<JobFile, JobFileError> {
    let mut builder = Builder::new(path, options.strict);
    builder.section(&Section {
        name: "global".to_string(),
        origin: crate::job::Origin {
            file: path.to_string(),
            line: 0,
        },
        entries: options.globals.clone(),
    })?;
    for section in sections.iter().filter(|s| runs(s, &options.sections)) {
        builder.section(section)?;
    }
    builder.finish()
}

/// Whether `section` runs under `--section`s `only` (fio's `skip_this_section`: a
/// `[global]` always does, a job when no `--section` is given or one names it).
pub fn runs(section: &Section, only: &[String]) -> bool {
    only.is_empty() || section.is_global() || only.contains(&section.name)
}

/// Refuses what ioslice cannot run yet: unsupported engines, and in zoned block device mode
/// (`zonemode=zbd`) buffered writes (fio's own refusal: a zoned device is written with
/// O_DIRECT).
pub fn check_supported(file: &JobFile) -> Result<(), JobFileError> {
    file.jobs.iter().try_for_each(check_job)
}

fn check_job(job: &JobSpec) -> Result<(), JobFileError> {
    let origin_of = |option: &str| {
        job.option_origins
            .get(option)
            .cloned()
            .unwrap_or_else(|| job.origin.clone())
    };
    if let Some(refusal) = engine_refusal(job) {
        return Err(refusal);
    }
    if let Some(what) = cpuio_refusal(job).or_else(|| exec_refusal(job)) {
        return Err(JobFileError::Unsupported {
            origin: origin_of("ioengine"),
            what,
        });
    }
    if job.zone_mode == ZoneMode::Zbd && !job.direct && job.pattern.writes() {
        return Err(JobFileError::Conflict {
            origin: origin_of("zonemode"),
            what: "zonemode=zbd writes need direct=1, as fio requires for zoned block devices"
                .to_string(),
        });
    }
    Ok(())
}

/// An `exec` job fio would not start (no `program`: "no program is defined, it is mandatory
/// to define one", `engines/exec.c`) or whose end its runtime does not set (it moves no data,
/// so only `time_based` with `runtime=` bounds it).
fn exec_refusal(job: &JobSpec) -> Option<String> {
    if job.ioengine != IoEngine::Exec {
        return None;
    }
    if job.exec.program.as_deref().is_none_or(str::is_empty) {
        return Some(format!(
            "job {}: ioengine=exec needs program= (fio: \"no program is defined, it is mandatory to define one\"): expected program=PATH",
            job.name
        ));
    }
    without_end(job, "exec", "has no end (it moves no data)")
}

/// A `cpuio` job fio would not start (no `cpuload`: "cpu thread needs rate") or would run
/// until stopped (without `time_based` it never runs out of I/O to do, having no size).
fn cpuio_refusal(job: &JobSpec) -> Option<String> {
    if job.ioengine != IoEngine::CpuIo {
        return None;
    }
    if job.cpu.load == 0 {
        return Some(format!(
            "job {}: ioengine=cpuio needs cpuload= (fio: \"cpu thread needs rate\"): expected a percentage such as cpuload=50",
            job.name
        ));
    }
    without_end(
        job,
        "cpuio",
        "never ends (it moves no data, so fio runs it until stopped)",
    )
}

/// The refusal of a job of an `engine` that moves no data and so ends only by its runtime,
/// when it has none: it `never` ends, in the refusal's words.
fn without_end(job: &JobSpec, engine: &str, never: &str) -> Option<String> {
    (!job.time_based || job.runtime.is_none()).then(|| {
        format!(
            "job {}: ioengine={engine} without time_based and runtime= {never}: expected time_based and runtime=",
            job.name
        )
    })
}

/// The refusal of a job whose engine ioslice does not run, if it is one.
fn engine_refusal(job: &JobSpec) -> Option<JobFileError> {
    let IoEngine::Unsupported(name) = &job.ioengine else {
        return None;
    };
    Some(JobFileError::Unsupported {
        origin: job
            .option_origins
            .get("ioengine")
            .cloned()
            .unwrap_or_else(|| job.origin.clone()),
        what: format!(
            "ioengine={name} is not supported: expected one of sync, psync, vsync, pvsync, pvsync2, libaio, io_uring, posixaio, mmap, null, cpuio, exec, filecreate, filestat, filedelete, dircreate, dirstat, dirdelete, ftruncate, falloc"
        ),
    })
}

/// Refuses, for the simulator, the engines whose I/O is not a transfer the device models
/// (`filecreate`, `filestat`, `filedelete`, the directory engines, `ftruncate`, `falloc`):
/// what a create, a stat, a truncate or an allocation costs is the filesystem's work, which
/// the device model cannot say. Real runs carry them out. `exec` too: it runs a program,
/// and there is nothing of it to simulate.
pub fn check_simulable(file: &JobFile) -> Result<(), JobFileError> {
    let Some(job) = file.jobs.iter().find(|job| {
        matches!(
            job.ioengine,
            IoEngine::Namespace(_) | IoEngine::Range(_) | IoEngine::Exec
        )
    }) else {
        return Ok(());
    };
    let (why, expected) = if job.ioengine == IoEngine::Exec {
        ("it runs a program, which a simulation cannot", "PATH")
    } else {
        (
            "the device model has no cost for a filesystem operation",
            "DIR",
        )
    };
    Err(JobFileError::Unsupported {
        origin: job
            .option_origins
            .get("ioengine")
            .cloned()
            .unwrap_or_else(|| job.origin.clone()),
        what: format!(
            "ioengine={} cannot be simulated ({why}): expected a real --device {expected}",
            job.ioengine.fio_name()
        ),
    })
}

/// Refuses trim jobs on a device that takes no discards, as the kernel does: a discard to
/// such a device fails with `EOPNOTSUPP` before any request is made (`blkdev_issue_discard`),
/// and fio then stops the job with `fio: io_u error on file F: Operation not supported:
/// trim offset=O, buflen=B` and `err=95`. The simulator says so before the run instead.
/// A trim in zone mode `zbd` is a zone reset, not a discard (fio 3.33 `zbd_do_io_u_trim`),
/// and needs no TRIM.
pub fn check_discard(file: &JobFile, device: &str, discard: bool) -> Result<(), JobFileError> {
    let Some(job) = file
        .jobs
        .iter()
        .find(|job| job.pattern.trims() && job.zone_mode != ZoneMode::Zbd)
    else {
        return Ok(());
    };
    if discard {
        return Ok(());
    }
    Err(JobFileError::Unsupported {
        origin: job
            .option_origins
            .get("rw")
            .cloned()
            .unwrap_or_else(|| job.origin.clone()),
        what: format!(
            "rw={}: {device} takes no discards (EOPNOTSUPP; fio would stop the job at its first trim with \"Operation not supported\"): expected a device with TRIM, such as sim:ssd, sim:nvme or sim:null",
            job.pattern.fio_name()
        ),
    })
}

/// Refuses verify settings a real run cannot carry out: a kind ioslice does not write,
/// `verify=pattern` without a pattern, `verify_only` with `time_based` (fio refuses it too).
/// The simulator does not read blocks back, so only real runs call this.
pub fn check_verify(file: &JobFile) -> Result<(), JobFileError> {
    file.jobs.iter().try_for_each(|job| {
        verify_refusal(job).map_err(|(option, what)| JobFileError::Unsupported {
            origin: job
                .option_origins
                .get(option)
                .cloned()
                .unwrap_or_else(|| job.origin.clone()),
            what,
        })
    })
}

fn verify_refusal(job: &JobSpec) -> Result<(), (&'static str, String)> {
    let verify = &job.verify;
    match &verify.kind {
        Some(VerifyKind::Unsupported(name)) => Err(("verify", format!(
            "verify={name} is not supported: expected one of md5, crc32c, crc32c-intel, sha256, xxhash, pattern"
        ))),
        Some(VerifyKind::Pattern) if verify.pattern.is_empty() => Err((
            "verify",
            "verify=pattern needs verify_pattern=: expected a pattern such as verify_pattern=0xdeadbeef".to_string(),
        )),
        Some(_) if job.ioengine == IoEngine::Null => Err((
            "verify",
            "verify= cannot check a job with ioengine=null (it moves no data): expected one of them".to_string(),
        )),
        Some(_) if verify.verify_only && job.time_based => Err((
            "verify_only",
            "verify_only cannot be used with time_based (fio does not know how much was written): expected one of them".to_string(),
        )),
        _ => Ok(()),
    }
}

/// Turns sections into jobs, carrying `[global]` defaults down the file.
struct Builder {
    file: JobFile,
    defaults: JobSpec,
    strict: bool,
}

impl Builder {
    fn new(path: &str, strict: bool) -> Self {
        Self {
            file: JobFile {
                path: path.to_string(),
                global_options: Vec::new(),
                jobs: Vec::new(),
                warnings: Vec::new(),
            },
            defaults: JobSpec::default(),
            strict,
        }
    }

    fn section(&mut self, section: &Section) -> Result<(), JobFileError> {
        if section.is_global() {
            let mut defaults = std::mem::take(&mut self.defaults);
            self.apply_all(&mut defaults, &section.entries)?;
            self.defaults = defaults;
            self.file
                .global_options
                .extend(as_written(&section.entries));
            return Ok(());
        }
        let mut job = self.defaults.clone();
        job.name = section.name.clone();
        job.origin = section.origin.clone();
        job.options = as_written(&section.entries).collect();
        self.apply_all(&mut job, &section.entries)?;
        // A size in zones is the engine's to resolve (fio asks the zoned device for its zone
        // size when the engine opens it): with an engine ioslice does not run, that is the
        // refusal to give.
        if let Err(zones) = options::resolve_zone_units(&mut job) {
            return Err(engine_refusal(&job).unwrap_or(zones));
        }
        options::check_zones(&job)?;
        if job.ioengine == IoEngine::CpuIo {
            // fio's `fio_cpuio_init`: the duty cycle is a think time after every cycle.
            job.thinktime = job.cpu.think();
            job.thinktime_blocks = 1;
        }
        self.check_waitee(&job)?;
        self.warn_zones_off(&job);
        self.file.jobs.push(job);
        Ok(())
    }

    /// fio's checks of `wait_for=`: the waitee is one job defined before this one, not itself.
    fn check_waitee(&self, job: &JobSpec) -> Result<(), JobFileError> {
        let Some(waitee) = &job.wait_for else {
            return Ok(());
        };
        let found = self.file.jobs.iter().filter(|j| &j.name == waitee).count();
        let expected = if waitee == &job.name {
            "another job's name: a job cannot wait for itself"
        } else if found == 0 {
            "the name of a job defined before this one"
        } else if found > 1 {
            "the name of one job: several jobs before this one have it"
        } else {
            return Ok(());
        };
        Err(JobFileError::InvalidValue {
            origin: job
                .option_origins
                .get("wait_for")
                .cloned()
                .unwrap_or_else(|| job.origin.clone()),
            option: "wait_for".to_string(),
            value: waitee.clone(),
            expected: expected.to_string(),
        })
    }

    /// Applies a section's entries: `kb_base` first, then all in order.
    fn apply_all(&mut self, spec: &mut JobSpec, entries: &[Entry]) -> Result<(), JobFileError> {
        let kb_base = entries
            .iter()
            .rev()
            .find(|e| e.key.eq_ignore_ascii_case("kb_base"));
        if let Some(entry) = kb_base {
            self.apply(spec, entry)?;
        }
        entries.iter().try_for_each(|entry| self.apply(spec, entry))
    }

    fn apply(&mut self, spec: &mut JobSpec, entry: &Entry) -> Result<(), JobFileError> {
        // fio's check of type and bounds; ioslice's own parser, when it refuses the value
        // too, says more precisely what it expected.
        let checked = value_check::check(entry, spec.kb_base);
        let outcome = options::apply(spec, entry)?;
        checked?;
        if outcome != Outcome::Unknown {
            return Ok(());
        }
        if !fio_table::knows(&entry.key) {
            return Err(JobFileError::BadOption {
                origin: entry.origin.clone(),
                written: match &entry.value {
                    Some(value) => format!("{}={value}", entry.key),
                    None => entry.key.clone(),
                },
                suggestion: fio_table::suggestion(&entry.key)
                    .map(|name| format!("; did you mean {name}?"))
                    .unwrap_or_default(),
            });
        }
        if self.strict {
            return Err(JobFileError::UnknownOption {
                origin: entry.origin.clone(),
                option: entry.key.clone(),
            });
        }
        self.warn(&entry.origin, &entry.key);
        Ok(())
    }

    /// fio turns strided zones off for a job with more than one file: say so.
    fn warn_zones_off(&mut self, job: &JobSpec) {
        if job.strided_zones().is_none() {
            return;
        }
        let files = match &job.filename {
            Some(list) => crate::pattern::split_filenames(list).len(),
            None => job.nrfiles as usize,
        };
        if files > 1 {
            let origin = job
                .option_origins
                .get("zonesize")
                .cloned()
                .unwrap_or_else(|| job.origin.clone());
            let warning = Warning {
                origin,
                message: format!(
                    "job {}: strided zones are ignored with {files} files, as fio ignores them with more than one",
                    job.name
                ),
            };
            if !self.file.warnings.contains(&warning) {
                self.file.warnings.push(warning);
            }
        }
    }

    /// Warns once per written option (a `kb_base` applied twice does not count twice).
    fn warn(&mut self, origin: &Origin, option: &str) {
        let message = format!("option '{option}' is not supported by ioslice yet; ignored");
        let warning = Warning {
            origin: origin.clone(),
            message,
        };
        if !self.file.warnings.contains(&warning) {
            self.file.warnings.push(warning);
        }
    }

    fn finish(self) -> Result<JobFile, JobFileError> {
        if self.file.jobs.is_empty() {
            return Err(JobFileError::NoJobs {
                file: self.file.path,
            });
        }
        Ok(self.file)
    }
}

/// A section's entries as fio's JSON shows them: under fio's names (`blocksize` is `bs`),
/// in fio's parsing order (higher priority first, `kb_base` before sizes), values as written
/// (bare keys with an empty value).
fn as_written(entries: &[Entry]) -> impl Iterator<Item = (String, String)> + '_ {
    let mut ordered: Vec<&Entry> = entries.iter().collect();
    ordered.sort_by_key(|e| std::cmp::Reverse(fio_table::prio(&e.key)));
    ordered.into_iter().map(|e| {
        (
            fio_table::fio_name(&e.key),
            e.value.clone().unwrap_or_default(),
        )
    })
}
