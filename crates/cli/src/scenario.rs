//! What a job file says about the machine it was written for, in comment lines fio ignores:
//! `; ioslice-device: sim:ide-2004` (the simulated device when `--device` is not given),
//! `; ioslice-host: direct_writes=async` (host settings, applied before any `--host`, so the
//! command line wins) and `; ioslice-kernel: 2.6.10` (the release whose elevators run when
//! `--kernel` is not given: `version=` for every scheduler that has it, [`ioslice_core::kernel`]).
//! A seed's scenario thereby brings its era's disk and kernel to a user who runs it without
//! knowing either. `#` starts a comment as well as `;`.
//!
//! `; ioslice-at: 10s cgroup NAME weight=800` changes a group's weight or limits at that
//! simulated time ([`crate::group_change`]).
//!
//! `; ioslice-seed: SCHED ...` states a figure the original experiment reported, for
//! `ioslice seeds` and the report to set beside ioslice's ([`crate::seed_figure`]).

use std::path::Path;

/// The defaults a job file declares.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScenarioDefaults {
    /// The device, if the file names one.
    pub device: Option<String>,
    /// Host settings, `key=value,...` each, in file order.
    pub host: Vec<String>,
    /// Where the first host setting was written (`file:line`), for a run that refuses it.
    pub host_origin: Option<String>,
    /// The kernel release, if the file names one.
    pub kernel: Option<String>,
    /// What the original experiment reported, run by run.
    pub seed_figures: Vec<SeedFigure>,
    /// Changes to groups' weights and limits during the run, in file order.
    pub group_changes: Vec<ScheduledChange>,
}

use crate::group_change::ScheduledChange;

pub use crate::seed_figure::SeedFigure;

const DEVICE: &str = "ioslice-device:";
const HOST: &str = "ioslice-host:";
const KERNEL: &str = "ioslice-kernel:";
const SEED: &str = "ioslice-seed:";
const AT: &str = "ioslice-at:";

impl ScenarioDefaults {
    /// Read the directives of the job file at `path` (its own lines, not its includes). A
    /// file that cannot be read declares nothing: the job-file loader reports why.
    pub fn read(path: &Path) -> Result<Self, String> {
        let limit = ioslice_fio::jobfile::source::JOB_TEXT_LIMIT;
        match ioslice_fio::jobfile::source::read_job_text(path, limit) {
            Ok(text) => Self::parse(&text, &path.display().to_string()),
            Err(_) => Ok(Self::default()),
        }
    }

    /// The directives of several job files run as one: their host lines in order, and the
    /// device and kernel they declare, each of which must be the same wherever more than
    /// one file declares it.
    pub fn read_all(paths: &[std::path::PathBuf]) -> Result<Self, String> {
        let mut whole = Self::default();
        let mut device_by: Option<&std::path::PathBuf> = None;
        let mut kernel_by: Option<&std::path::PathBuf> = None;
        for path in paths {
            let defaults = Self::read(path)?;
            let one_of =
                |what: &str, flag: &str| format!("one run has one {what} (choose with {flag})");
            agree(
                (&mut whole.device, &mut device_by),
                (defaults.device, path),
                (DEVICE, &one_of("device", "--device")),
            )?;
            agree(
                (&mut whole.kernel, &mut kernel_by),
                (defaults.kernel, path),
                (KERNEL, &one_of("kernel", "--kernel")),
            )?;
            whole.host.extend(defaults.host);
            whole.host_origin = whole.host_origin.or(defaults.host_origin);
            whole.seed_figures.extend(defaults.seed_figures);
            whole.group_changes.extend(defaults.group_changes);
        }
        Ok(whole)
    }

    /// The directives in `text`, a job file named `name` in errors.
    pub fn parse(text: &str, name: &str) -> Result<Self, String> {
        let mut defaults = Self::default();
        for (index, line) in text.lines().enumerate() {
            let Some(comment) = line.trim().strip_prefix([';', '#']) else {
                continue;
            };
            let comment = comment.trim();
            if !comment.starts_with("ioslice-") {
                continue;
            }
            let at = || format!("{name}:{}", index + 1);
            if let Some(value) = comment.strip_prefix(DEVICE) {
                if defaults.device.is_some() {
                    return Err(format!("{}: a second ioslice-device line", at()));
                }
                defaults.device = Some(non_empty(value, &at)?);
            } else if let Some(value) = comment.strip_prefix(KERNEL) {
                if defaults.kernel.is_some() {
                    return Err(format!("{}: a second ioslice-kernel line", at()));
                }
                let value = non_empty(value, &at)?;
                ioslice_core::kernel::check(&value)
                    .map_err(|e| format!("{}: ioslice-kernel: {e}", at()))?;
                defaults.kernel = Some(value);
            } else if let Some(value) = comment.strip_prefix(HOST) {
                defaults.host.push(non_empty(value, &at)?);
                defaults.host_origin.get_or_insert_with(at);
            } else if let Some(value) = comment.strip_prefix(SEED) {
                let value = non_empty(value, &at)?;
                defaults
                    .seed_figures
                    .push(SeedFigure::parse(&value, &at())?);
            } else if let Some(value) = comment.strip_prefix(AT) {
                let value = non_empty(value, &at)?;
                let change = crate::group_change::parse(&value, &at())
                    .map_err(|e| format!("{}: ioslice-at: {e}", at()))?;
                defaults.group_changes.push(change);
            } else {
                let word = comment.split([':', ' ']).next().unwrap_or(comment);
                return Err(format!(
                    "{}: unknown directive '{word}' (expected ioslice-device:, ioslice-host:, ioslice-kernel:, ioslice-seed: or ioslice-at:)",
                    at()
                ));
            }
        }
        Ok(defaults)
    }
}

/// Take what one more file declares (`value`, from `path`) into what the files before it
/// declared (`whole`, from `by`): the same value or a first one; a different one is an error
/// naming both files, the directive and `why` one is enough.
fn agree<'a>(
    (whole, by): (&mut Option<String>, &mut Option<&'a std::path::PathBuf>),
    (value, path): (Option<String>, &'a std::path::PathBuf),
    (directive, why): (&str, &str),
) -> Result<(), String> {
    let Some(value) = value else {
        return Ok(());
    };
    if let (Some(earlier), Some(earlier_path)) = (whole.as_ref(), *by) {
        if *earlier != value {
            return Err(format!(
                "{} declares {directive} {value} but {} declared {earlier}: {why}",
                path.display(),
                earlier_path.display()
            ));
        }
    }
    *whole = Some(value);
    *by = Some(path);
    Ok(())
}

fn non_empty(value: &str, at: &dyn Fn() -> String) -> Result<String, String> {
    let value = value.trim();
    if value.is_empty() {
        return Err(format!("{}: the directive has no value", at()));
    }
    Ok(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_are_read_from_comments() {
        let text = "; a seed\n; ioslice-device: sim:ide-2004\n# ioslice-host: direct_writes=async\n[global]\nbs=4k ; ioslice-host: not a comment line\n;ioslice-host:read_ahead_kb=0\n";
        let defaults = ScenarioDefaults::parse(text, "s.fio").expect("valid");
        assert_eq!(defaults.device.as_deref(), Some("sim:ide-2004"));
        assert_eq!(defaults.host, ["direct_writes=async", "read_ahead_kb=0"]);
        let kernel = ScenarioDefaults::parse("# ioslice-kernel: 2.6.10\n[a]\n", "s.fio");
        assert_eq!(kernel.expect("valid").kernel.as_deref(), Some("2.6.10"));
    }

    #[test]
    fn bad_directives_name_the_line() {
        let unknown = ScenarioDefaults::parse("[a]\n; ioslice-sched: cfq\n", "s.fio");
        assert_eq!(
            unknown,
            Err("s.fio:2: unknown directive 'ioslice-sched' (expected ioslice-device:, ioslice-host:, ioslice-kernel:, ioslice-seed: or ioslice-at:)".into())
        );
        let empty = ScenarioDefaults::parse("; ioslice-host:  \n", "s.fio");
        assert_eq!(empty, Err("s.fio:1: the directive has no value".into()));
        let twice = ScenarioDefaults::parse(
            "; ioslice-device: sim:ssd\n; ioslice-device: sim:null\n",
            "s.fio",
        );
        assert_eq!(twice, Err("s.fio:2: a second ioslice-device line".into()));
        let release = ScenarioDefaults::parse("; ioslice-kernel: 2.6.x\n", "s.fio");
        assert_eq!(
            release,
            Err("s.fio:1: ioslice-kernel: kernel release '2.6.x': expected one as the kernel writes it, such as 2.6.28 or 4.4".into())
        );
    }

    #[test]
    fn seed_figures_are_read_and_bad_ones_named() {
        let text = "# ioslice-seed: deadline clients=2 max=2116 min=2114 aggregate=4230 max_latency_ms=22\n# ioslice-seed: cfq:slice_idle=0 cgrp1=6548 total=214815\n";
        let defaults = ScenarioDefaults::parse(text, "s.fio").expect("valid");
        assert_eq!(defaults.seed_figures.len(), 2);
        let first = &defaults.seed_figures[0];
        assert_eq!(first.scheduler, "deadline");
        assert_eq!(first.clients, Some(2));
        assert_eq!(first.values[2], ("aggregate".to_string(), 4230.0));
        assert_eq!(first.values[3], ("max_latency_ms".to_string(), 22.0));
        assert_eq!(defaults.seed_figures[1].clients, None);
        for (bad, says) in [
            ("; ioslice-seed:\n", "the directive has no value"),
            ("; ioslice-seed: cfq clients=0 total=1\n", "clients=0"),
            ("; ioslice-seed: cfq total\n", "'total' is not KEY=VALUE"),
            (
                "; ioslice-seed: cfq total=lots\n",
                "total=lots: expected a number",
            ),
            ("; ioslice-seed: cfq clients=2\n", "no figure given"),
        ] {
            let error = ScenarioDefaults::parse(bad, "s.fio").expect_err(bad);
            assert!(error.starts_with("s.fio:1: "), "{error}");
            assert!(error.contains(says), "{error}");
        }
    }

    #[test]
    fn scheduled_changes_are_read_and_bad_ones_named() {
        let text = "[a]\n; ioslice-at: 10s cgroup grp1 weight=800\n# ioslice-at: 20s cgroup grp2 rbps=4M\n";
        let defaults = ScenarioDefaults::parse(text, "s.fio").expect("valid");
        assert_eq!(defaults.group_changes.len(), 2);
        assert_eq!(defaults.group_changes[0].origin, "s.fio:2");
        assert_eq!(defaults.group_changes[1].change.path, "grp2");
        let bad = ScenarioDefaults::parse("; ioslice-at: 10s cgroup grp1 weight=lots\n", "s.fio");
        assert_eq!(
            bad,
            Err("s.fio:1: ioslice-at: weight 'lots' is not an integer in 1..=10000".into())
        );
    }

    #[test]
    fn a_file_without_directives_has_no_defaults() {
        let defaults = ScenarioDefaults::parse("; plain comment\n[job]\nrw=read\n", "j.fio");
        assert_eq!(defaults, Ok(ScenarioDefaults::default()));
    }
}
