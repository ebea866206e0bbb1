//! What a job file says about the machine it was written for, in comment lines fio ignores:
//! `; ioslice-device: sim:ide-2004` (the simulated device when `--device` is not given) and
//! `; ioslice-host: direct_writes=async` (host settings, applied before any `--host`, so the
//! command line wins). A seed's scenario thereby brings its era's disk and kernel to a user
//! who runs it without knowing either. `#` starts a comment as well as `;`.

use std::path::Path;

/// The defaults a job file declares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScenarioDefaults {
    /// The device, if the file names one.
    pub device: Option<String>,
    /// Host settings, `key=value,...` each, in file order.
    pub host: Vec<String>,
}

const DEVICE: &str = "ioslice-device:";
const HOST: &str = "ioslice-host:";

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
    /// device they declare, which must be the same wherever more than one declares it.
    pub fn read_all(paths: &[std::path::PathBuf]) -> Result<Self, String> {
        let mut whole = Self::default();
        let mut declared_by: Option<&std::path::PathBuf> = None;
        for path in paths {
            let defaults = Self::read(path)?;
            if let Some(device) = defaults.device {
                match (&whole.device, declared_by) {
                    (Some(earlier), Some(by)) if *earlier != device => {
                        return Err(format!(
                            "{} declares ioslice-device: {device} but {} declared {earlier}: one run has one device (choose with --device)",
                            path.display(),
                            by.display()
                        ));
                    }
                    _ => {
                        whole.device = Some(device);
                        declared_by = Some(path);
                    }
                }
            }
            whole.host.extend(defaults.host);
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
            } else if let Some(value) = comment.strip_prefix(HOST) {
                defaults.host.push(non_empty(value, &at)?);
            } else {
                let word = comment.split([':', ' ']).next().unwrap_or(comment);
                return Err(format!(
                    "{}: unknown directive '{word}' (expected ioslice-device: or ioslice-host:)",
                    at()
                ));
            }
        }
        Ok(defaults)
    }
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
    }

    #[test]
    fn bad_directives_name_the_line() {
        let unknown = ScenarioDefaults::parse("[a]\n; ioslice-sched: cfq\n", "s.fio");
        assert_eq!(
            unknown,
            Err("s.fio:2: unknown directive 'ioslice-sched' (expected ioslice-device: or ioslice-host:)".into())
        );
        let empty = ScenarioDefaults::parse("; ioslice-host:  \n", "s.fio");
        assert_eq!(empty, Err("s.fio:1: the directive has no value".into()));
        let twice = ScenarioDefaults::parse(
            "; ioslice-device: sim:ssd\n; ioslice-device: sim:null\n",
            "s.fio",
        );
        assert_eq!(twice, Err("s.fio:2: a second ioslice-device line".into()));
    }

    #[test]
    fn a_file_without_directives_has_no_defaults() {
        let defaults = ScenarioDefaults::parse("; plain comment\n[job]\nrw=read\n", "j.fio");
        assert_eq!(defaults, Ok(ScenarioDefaults::default()));
    }
}
