//! What tells runs apart: the label each run of an overlay takes, made of the settings
//! whose values differ between the runs drawn together.
//!
//! Every run's settings are flattened into named values, in this order: the scheduler,
//! the device, the scheduler's tunables (compared only when every run has the same
//! scheduler, whose spec otherwise says the tunables that were set), the device's
//! parameters (likewise only under one device spec), the controller, the host's settings,
//! the seed, fio's global options and each job's options (but those that only name a file,
//! a log or the job: `name`, `filename`, `write_bw_log` …). A value that only says the
//! source did not record it (`not recorded`) is left out. A name that takes two values or
//! more among the runs that have it goes into the label of every run that has it,
//! `name=value`, the scheduler and device by their value alone. A run whose label is then
//! empty is named by its source, last resort: its job file's name (for fio's JSON and logs,
//! the file read). Labels still alike are told apart by their position (`#2`).

use crate::model::RunRecord;
use crate::settings::Settings;

/// How a value is written in a label: alone, or after its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Show {
    Value,
    Named,
}

/// One named value of a run's settings.
struct Entry {
    key: String,
    shown_as: String,
    value: String,
    show: Show,
}

/// The label of every run of `runs`, in order (see the module documentation).
pub fn labels(runs: &[&RunRecord]) -> Vec<String> {
    if runs.len() < 2 {
        return runs.iter().map(|run| run.title.clone()).collect();
    }
    let same = |f: fn(&Settings) -> &str| {
        runs.windows(2)
            .all(|pair| f(&pair[0].settings) == f(&pair[1].settings))
    };
    let one_scheduler = same(scheduler_name);
    let one_device = same(|s| &s.device.spec);
    let flat: Vec<Vec<Entry>> = runs
        .iter()
        .map(|run| entries(&run.settings, one_scheduler, one_device))
        .collect();
    let mut keys: Vec<&Entry> = Vec::new();
    for entry in flat.iter().flatten() {
        if !keys.iter().any(|known| known.key == entry.key) {
            keys.push(entry);
        }
    }
    let differs = |key: &str| {
        let mut values: Vec<&str> = flat
            .iter()
            .filter_map(|entries| value_of(entries, key))
            .collect();
        values.sort_unstable();
        values.dedup();
        values.len() > 1
    };
    let differing: Vec<&Entry> = keys.into_iter().filter(|key| differs(&key.key)).collect();
    let labels: Vec<String> = flat
        .iter()
        .zip(runs)
        .map(|(entries, run)| {
            let parts: Vec<String> = differing
                .iter()
                .filter_map(|key| {
                    let value = value_of(entries, &key.key)?;
                    Some(match key.show {
                        Show::Value => value.to_string(),
                        Show::Named => format!("{}={value}", key.shown_as),
                    })
                })
                .collect();
            if parts.is_empty() {
                source_name(run)
            } else {
                parts.join(", ")
            }
        })
        .collect();
    numbered_if_alike(labels)
}

/// A run's source as a label: its job file's name (for fio's JSON and logs, the file
/// read), else its title.
fn source_name(run: &RunRecord) -> String {
    let file = &run.settings.job_file;
    match file.rsplit('/').next() {
        Some(base) if !base.is_empty() => base.to_string(),
        _ => run.title.clone(),
    }
}

/// fio options that name where a job reads, writes or logs rather than how it runs: never
/// what tells runs apart.
const NAMING_OPTIONS: [&str; 9] = [
    "name",
    "filename",
    "directory",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "output",
    "description",
];

/// Whether a value says only that the source did not record the setting.
fn unrecorded(value: &str) -> bool {
    value.starts_with("not recorded")
}

/// The scheduler's canonical name, else its spec.
fn scheduler_name(settings: &Settings) -> &str {
    settings
        .scheduler
        .name
        .as_deref()
        .unwrap_or(&settings.scheduler.spec)
}

/// `entries`' value under `key`.
fn value_of<'a>(entries: &'a [Entry], key: &str) -> Option<&'a str> {
    entries
        .iter()
        .find(|entry| entry.key == key)
        .map(|entry| entry.value.as_str())
}

/// A run's settings as named values, in the order labels name them.
fn entries(settings: &Settings, one_scheduler: bool, one_device: bool) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut push = |key: String, shown_as: &str, value: &str, show: Show| {
        if unrecorded(value) {
            return;
        }
        out.push(Entry {
            key,
            shown_as: shown_as.to_string(),
            value: value.to_string(),
            show,
        });
    };
    let scheduler = if one_scheduler {
        scheduler_name(settings)
    } else {
        &settings.scheduler.spec
    };
    push("scheduler".into(), "", scheduler, Show::Value);
    push("device".into(), "", &settings.device.spec, Show::Value);
    if one_scheduler {
        for t in &settings.scheduler.tunables {
            push(
                format!("tunable {}", t.name),
                &t.name,
                &t.value,
                Show::Named,
            );
        }
    }
    if one_device {
        for p in &settings.device.params {
            push(format!("device {}", p.name), &p.name, &p.value, Show::Named);
        }
    }
    if let Some(controller) = &settings.controller {
        push("controller".into(), "controller", controller, Show::Named);
    }
    for h in &settings.host {
        push(format!("host {}", h.name), &h.name, &h.value, Show::Named);
    }
    if let Some(seed) = settings.seed {
        push("seed".into(), "seed", &seed.to_string(), Show::Named);
    }
    let shown = |name: &str| {
        let option = name.rsplit(':').next().unwrap_or(name);
        !NAMING_OPTIONS.contains(&option)
    };
    for (name, value) in settings.options.iter().filter(|(name, _)| shown(name)) {
        push(format!("option {name}"), name, value, Show::Named);
    }
    for (name, value) in settings.job_options.iter().filter(|(name, _)| shown(name)) {
        push(format!("job option {name}"), name, value, Show::Named);
    }
    out
}

/// `labels`, each followed by ` #N` (its position from 1) when two are the same.
fn numbered_if_alike(labels: Vec<String>) -> Vec<String> {
    let alike = labels
        .iter()
        .enumerate()
        .any(|(i, label)| labels[..i].contains(label));
    if !alike {
        return labels;
    }
    labels
        .into_iter()
        .enumerate()
        .map(|(i, label)| format!("{label} #{}", i + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{DeviceSettings, SchedulerSettings, Setting};

    fn setting(name: &str, value: &str) -> Setting {
        Setting {
            name: name.into(),
            value: value.into(),
            ..Setting::default()
        }
    }

    /// A run of `job_file` under `scheduler` (its tunables `tunables`) on `device`.
    fn run(job_file: &str, scheduler: &str, tunables: &[(&str, &str)], device: &str) -> RunRecord {
        RunRecord {
            title: format!("{job_file} under {scheduler}"),
            settings: Settings {
                job_file: job_file.into(),
                device: DeviceSettings {
                    spec: device.into(),
                    summary: String::new(),
                    params: vec![setting("rpm", "7200")],
                },
                scheduler: SchedulerSettings {
                    spec: scheduler.into(),
                    name: Some(scheduler.split(':').next().unwrap_or_default().into()),
                    tunables: tunables.iter().map(|(n, v)| setting(n, v)).collect(),
                },
                controller: Some("elevator".into()),
                host: vec![setting("dirty_ratio", "20")],
                seed: Some(7),
                version: None,
                options: Vec::new(),
                job_options: Vec::new(),
                groups: Vec::new(),
            },
            jobs: Vec::new(),
            bandwidth: None,
            requests: None,
            timeline: None,
        }
    }

    fn of(runs: &[RunRecord]) -> Vec<String> {
        labels(&runs.iter().collect::<Vec<_>>())
    }

    #[test]
    fn schedulers_apart_are_named_alone_and_their_tunables_not_compared() {
        let runs = [
            run("j.fio", "deadline", &[("fifo_batch", "16")], "sim:ssd"),
            run("j.fio", "cfq", &[("slice_idle", "8")], "sim:ssd"),
        ];
        assert_eq!(of(&runs), ["deadline", "cfq"]);
    }

    #[test]
    fn one_scheduler_is_told_apart_by_its_tunables_and_the_device() {
        let runs = [
            run(
                "j.fio",
                "cfq",
                &[("slice_idle", "8"), ("quantum", "4")],
                "sim:ssd",
            ),
            run(
                "j.fio",
                "cfq:slice_idle=0",
                &[("slice_idle", "0"), ("quantum", "4")],
                "sim:sata-7200",
            ),
        ];
        assert_eq!(
            of(&runs),
            ["sim:ssd, slice_idle=8", "sim:sata-7200, slice_idle=0"]
        );
    }

    #[test]
    fn job_options_differ_but_not_those_that_name_files() {
        let mut runs = [
            run("a.json", "cfq", &[], "sda"),
            run("b.json", "cfq", &[], "sda"),
        ];
        for (run, depth) in runs.iter_mut().zip(["1", "32"]) {
            run.settings.job_options = vec![
                ("filename".into(), run.settings.job_file.clone()),
                ("iodepth".into(), depth.into()),
            ];
        }
        assert_eq!(of(&runs), ["iodepth=1", "iodepth=32"]);
    }

    #[test]
    fn the_file_is_the_last_resort_then_the_position() {
        let mut runs = [
            run("out/a.json", "not recorded", &[], "not recorded"),
            run("out/b.json", "not recorded", &[], "not recorded"),
        ];
        assert_eq!(of(&runs), ["a.json", "b.json"]);
        runs[1].settings.job_file = "other/a.json".into();
        assert_eq!(of(&runs), ["a.json #1", "a.json #2"]);
        // A setting only one run records tells nothing apart.
        runs[0].settings.seed = None;
        assert_eq!(of(&runs), ["a.json #1", "a.json #2"]);
    }
}
