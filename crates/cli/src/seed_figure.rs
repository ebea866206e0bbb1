//! `; ioslice-seed:` lines: a figure the original experiment reported, written in the job
//! file it was measured with, for `ioslice seeds` to set beside ioslice's and for the report
//! to draw beside it.
//!
//! ```text
//! ; ioslice-seed: SCHED [clients=N] [--OPTION=VALUE...] [--calibration] FIGURE=VALUE...
//! ```
//!
//! - `SCHED` is the scheduler as `--sched` spells it, with its tunables; a line that names no
//!   `version=` stands for the post's own kernel, which the file's `; ioslice-kernel:` names.
//! - `clients=N` replaces every job's numjobs (`compare --clients`).
//! - Options are the command line's for that run: `--device=`, `--host=`, `--kernel=`,
//!   `--cgroup=` (repeatable), `--controller=`, `--seed=`; and `--unit=` for the line's
//!   bandwidths: `KB/s` (1000 bytes, the default, as the 2004 tables print), `KiB/s` or
//!   `MB/s` (10^6 bytes, as dd prints).
//! - `--calibration` says a model parameter was fitted to this line's figures, so they are
//!   not predictions (`ioslice devices` names the line under the parameter's source).
//! - Figures: `aggregate`, `max`, `min` (bandwidth per client), `total`, a job's or a
//!   cgroup's name (its bandwidth), `max_latency_ms`; `JOB.runtime_ms` (how long the job
//!   ran, as dd's seconds do), and `PREFIX*.runtime_max_ms` / `PREFIX*.runtime_min_ms` (the
//!   longest and shortest runtime of the jobs whose names start with PREFIX).
//!
//! Bandwidths are kept in KB/s whatever `--unit` says, so everything downstream compares like
//! with like.

/// Options a line may give its run, as the command line spells them without `--`.
const OPTIONS: &[&str] = &[
    "device",
    "host",
    "kernel",
    "cgroup",
    "controller",
    "seed",
    "unit",
];

/// One run's figures as the original experiment reported them (`; ioslice-seed:`).
#[derive(Debug, Clone, PartialEq)]
pub struct SeedFigure {
    /// The scheduler, as `--sched` spells it (with its tunables).
    pub scheduler: String,
    /// The client count (`compare --clients`), if the run had one.
    pub clients: Option<u32>,
    /// The run's command-line options (`cgroup`, `device`, …) without `--`, in order;
    /// `unit` is not kept (the values are converted).
    pub options: Vec<(String, String)>,
    /// Whether a model parameter was fitted to this line (`--calibration`).
    pub calibration: bool,
    /// Each figure by name: bandwidths in KB/s, times in milliseconds; in the order given.
    pub values: Vec<(String, f64)>,
}

impl SeedFigure {
    /// The directive's text after `ioslice-seed:`, at `at` for errors.
    pub fn parse(text: &str, at: &str) -> Result<Self, String> {
        let mut words = text.split_whitespace();
        let scheduler = words
            .next()
            .ok_or_else(|| format!("{at}: ioslice-seed: expected a scheduler first"))?
            .to_string();
        let mut figure = Self {
            scheduler,
            clients: None,
            options: Vec::new(),
            calibration: false,
            values: Vec::new(),
        };
        let mut unit = 1.0;
        for word in words {
            if word == "--calibration" {
                figure.calibration = true;
                continue;
            }
            if let Some(option) = word.strip_prefix("--") {
                let (key, value) = option_of(option, at)?;
                if key == "unit" {
                    unit = unit_in_kb(value, at)?;
                } else {
                    figure.options.push((key.to_string(), value.to_string()));
                }
                continue;
            }
            figure.take(word, at)?;
        }
        if figure.values.is_empty() {
            return Err(format!(
                "{at}: ioslice-seed: no figure given (such as aggregate=4230)"
            ));
        }
        for (key, value) in &mut figure.values {
            if is_bandwidth(key) {
                *value *= unit;
            }
        }
        Ok(figure)
    }

    /// One `KEY=VALUE` word: the client count or a figure.
    fn take(&mut self, word: &str, at: &str) -> Result<(), String> {
        let (key, value) = word.split_once('=').ok_or_else(|| {
            format!("{at}: ioslice-seed: '{word}' is not KEY=VALUE (such as aggregate=4230)")
        })?;
        if key == "clients" {
            let clients = value.parse().ok().filter(|&n: &u32| n > 0);
            self.clients = Some(clients.ok_or_else(|| {
                format!("{at}: ioslice-seed: clients={value}: expected a count of at least 1")
            })?);
            return Ok(());
        }
        let number = value
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                format!("{at}: ioslice-seed: {key}={value}: expected a number (KB/s or ms)")
            })?;
        self.values.push((key.to_string(), number));
        Ok(())
    }

    /// The value of figure `key`, if the line gives it.
    pub fn value(&self, key: &str) -> Option<f64> {
        self.values
            .iter()
            .find(|(name, _)| name == key)
            .map(|&(_, value)| value)
    }

    /// Every value of option `key`, in order.
    pub fn option_values<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.options
            .iter()
            .filter(move |(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }
}

/// Whether figure `key` is a bandwidth (as opposed to a time).
pub fn is_bandwidth(key: &str) -> bool {
    !(key == "max_latency_ms" || key.ends_with("_ms"))
}

/// `--KEY=VALUE` (without the dashes), with KEY one of [`OPTIONS`].
fn option_of<'a>(option: &'a str, at: &str) -> Result<(&'a str, &'a str), String> {
    let (key, value) = option
        .split_once('=')
        .filter(|(_, value)| !value.is_empty())
        .ok_or_else(|| {
            format!("{at}: ioslice-seed: '--{option}' is not --OPTION=VALUE (such as --cgroup=test1:rbps=8M)")
        })?;
    if !OPTIONS.contains(&key) {
        return Err(format!(
            "{at}: ioslice-seed: unknown option '--{key}': expected --calibration or one of --{}",
            OPTIONS.join(", --")
        ));
    }
    Ok((key, value))
}

/// How many KB/s one of `unit` is.
fn unit_in_kb(unit: &str, at: &str) -> Result<f64, String> {
    match unit {
        "KB/s" => Ok(1.0),
        "KiB/s" => Ok(1.024),
        "MB/s" => Ok(1000.0),
        _ => Err(format!(
            "{at}: ioslice-seed: --unit={unit}: expected KB/s, KiB/s or MB/s"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_options_and_units() {
        let line = "cfq --unit=KiB/s --host=direct_writes=async --calibration reader=1000 writer=10 reader.runtime_ms=30000";
        let figure = SeedFigure::parse(line, "s.fio:3").expect("valid");
        assert_eq!(figure.scheduler, "cfq");
        assert!(figure.calibration);
        assert_eq!(
            figure.options,
            [("host".to_string(), "direct_writes=async".to_string())]
        );
        assert_eq!(figure.value("reader"), Some(1024.0));
        assert_eq!(figure.value("writer"), Some(10.24));
        assert_eq!(figure.value("reader.runtime_ms"), Some(30000.0));
        let cgroups = SeedFigure::parse(
            "cfq --cgroup=a:rbps=8M --cgroup=b:weight=200 total=1",
            "s.fio:1",
        )
        .expect("valid");
        assert_eq!(
            cgroups.option_values("cgroup").collect::<Vec<_>>(),
            ["a:rbps=8M", "b:weight=200"]
        );
    }

    #[test]
    fn bad_options_are_named() {
        for (line, says) in [
            ("cfq --cgroup total=1", "'--cgroup' is not --OPTION=VALUE"),
            ("cfq --colour=red total=1", "unknown option '--colour'"),
            ("cfq --unit=GB/s total=1", "--unit=GB/s: expected KB/s"),
        ] {
            let error = SeedFigure::parse(line, "s.fio:9").expect_err(line);
            assert!(error.starts_with("s.fio:9: ioslice-seed: "), "{error}");
            assert!(error.contains(says), "{error}");
        }
    }
}
