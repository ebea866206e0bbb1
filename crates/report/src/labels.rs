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
