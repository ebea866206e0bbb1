//! A run's settings as the page lists them: the job file, the device with every parameter
//! (value, unit, whether it was overridden), the scheduler with every tunable (value,
//! default, unit), the controller, the host's settings, the groups and the seed.
//!
//! Each part has a constructor from what the command line already holds: a
//! [`DeviceSpec`] or a path, a [`SchedSpec`], a [`SimConfig`] or a [`Controller`], so the
//! CLI needs one line for each.

use ioslice_core::ioband::Controller;
use ioslice_core::tunable::Tunables;
use ioslice_core::SchedSpec;
use ioslice_fio::run_spec::RunSpec;
use ioslice_sim::host::{BlockLayer, DirectWrites};
use ioslice_sim::preset::{self, DeviceSpec};
use ioslice_sim::simulation::SimConfig;
use serde::{Deserialize, Serialize};

use crate::groups;

/// Everything a run used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// The job file, as given.
    pub job_file: String,
    /// The device.
    pub device: DeviceSettings,
    /// The scheduler.
    pub scheduler: SchedulerSettings,
    /// The controller (`elevator`, `ioband:policy=weight,…`); `None` when unknown.
    pub controller: Option<String>,
    /// The simulated host's settings, every one with its value; empty for a real device
    /// or when unknown.
    pub host: Vec<Setting>,
    /// The seed; `None` when unknown or irrelevant.
    pub seed: Option<u64>,
    /// What wrote the results (`ioslice-0.1.0`, `fio-3.33`).
    pub version: Option<String>,
    /// Further settings the source named (a fio JSON file's `global options`).
    pub options: Vec<(String, String)>,
    /// Each job's own options where the source names them (a fio JSON file's `job
    /// options`, `JOB:name` when it has several jobs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub job_options: Vec<(String, String)>,
    /// The groups given a weight, a limit or a latency target by `--cgroup`, each as it is
    /// written
    /// ([`crate::groups::group_settings`]); empty when there were none or it is unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<Setting>,
}

/// A device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceSettings {
    /// As given: `sim:sata-7200:ncq=1`, a path, or the devices fio's `disk_util` named.
    pub spec: String,
    /// A preset's summary, or what the device is.
    pub summary: String,
    /// Every parameter of a simulated device; empty otherwise.
    pub params: Vec<Setting>,
}

/// A scheduler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedulerSettings {
    /// As given: `cfq:slice_idle=0`.
    pub spec: String,
    /// The policy's canonical name, when the registry knows it.
    pub name: Option<String>,
    /// Every tunable of the policy.
    pub tunables: Vec<Setting>,
}

/// One named setting: value, default, unit, and where the value comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    /// Name, as the command line takes it.
    pub name: String,
    /// The value in force.
    pub value: String,
    /// The default, when there is one.
    pub default: Option<String>,
    /// Unit (may be empty).
    pub unit: String,
    /// Whether it was set (overridden) rather than left at its default.
    pub set: bool,
    /// Where the default comes from, or what it does.
    pub note: String,
}

impl DeviceSettings {
    /// A simulated device: the preset's every parameter, with the overrides applied and
    /// marked. An unknown preset keeps only the spec (the run would have failed).
    pub fn simulated(spec: &DeviceSpec) -> Self {
        let Some(info) = preset::presets()
            .into_iter()
            .find(|p| p.name == spec.preset)
        else {
            return Self {
                spec: spec.to_string(),
                summary: "unknown preset".to_string(),
                params: Vec::new(),
            };
        };
        let params = info
            .params
            .iter()
            .map(|p| {
                let overridden = spec
                    .overrides
                    .iter()
                    .rev()
                    .find(|(key, _)| key == p.name)
                    .map(|(_, value)| value.clone());
                Setting {
                    name: p.name.to_string(),
                    set: overridden.is_some(),
                    value: overridden.unwrap_or_else(|| p.value.clone()),
                    default: Some(p.value.clone()),
                    unit: p.unit.to_string(),
                    note: p.source.to_string(),
                }
            })
            .collect();
        Self {
            spec: spec.to_string(),
            summary: info.summary,
            params,
        }
    }

    /// A real device or file: its path alone.
    pub fn real(path: &str) -> Self {
        Self {
            spec: path.to_string(),
            summary: "real device or file".to_string(),
            params: Vec::new(),
        }
    }
}

impl SchedulerSettings {
    /// A scheduler: every tunable of the policy the spec names, with the value in force,
    /// the default and the unit. A spec the registry refuses keeps only its text.
    pub fn of(spec: &SchedSpec) -> Self {
        let Ok(info) = ioslice_core::registry::lookup(&spec.name) else {
            return Self {
                spec: spec.to_string(),
                name: None,
                tunables: Vec::new(),
            };
        };
        let tunables = match Tunables::resolve(info.name, info.tunables, &spec.settings) {
            Ok(resolved) => resolved
                .iter()
                .map(|(def, value)| Setting {
                    name: def.name.to_string(),
                    value: def.format_value(value),
                    default: Some(def.format_value(def.default)),
                    unit: def.unit.to_string(),
                    set: resolved.is_set(def.name),
                    note: def.help.to_string(),
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        Self {
            spec: spec.to_string(),
            name: Some(info.name.to_string()),
            tunables,
        }
    }

    /// A scheduler known only by name (a fio JSON file's `ioscheduler`, or none).
    pub fn named(spec: &str) -> Self {
        match spec.parse::<SchedSpec>() {
            Ok(parsed) if !spec.is_empty() => Self::of(&parsed),
            _ => Self {
                spec: spec.to_string(),
                name: None,
                tunables: Vec::new(),
            },
        }
    }
}

/// The controller as `--controller` takes it.
pub fn controller_text(controller: &Controller) -> String {
    match controller {
        Controller::Elevator => "elevator".to_string(),
        Controller::Ioband(s) => format!(
            "ioband:policy={},token={},io_throttle={},io_limit={}",
            s.policy.name(),
            s.token,
            s.io_throttle,
            s.io_limit
        ),
        Controller::ElvFq(s) => format!(
            "elv-fq:slice_sync={},slice_async={},group_idle={},fairness={}",
            s.slice_sync / 1_000_000,
            s.slice_async / 1_000_000,
            s.group_idle / 1_000_000,
            u8::from(s.fairness)
        ),
        Controller::Iocost(s) => iocost_text(s),
    }
}

/// iocost as `--controller` takes it: the keys given, in `io.cost.model`'s then
/// `io.cost.qos`'s order (the others are the device kind's defaults).
fn iocost_text(s: &ioslice_core::iocost::IocostSettings) -> String {
    let pct = |ppm: u64| match ppm % 10_000 {
        0 => (ppm / 10_000).to_string(),
        frac => format!("{}.{:02}", ppm / 10_000, frac / 100),
    };
    let (m, q) = (&s.model, &s.qos);
    let keys = [
        ("rbps", m.rbps.map(|v| v.to_string())),
        ("rseqiops", m.rseqiops.map(|v| v.to_string())),
        ("rrandiops", m.rrandiops.map(|v| v.to_string())),
        ("wbps", m.wbps.map(|v| v.to_string())),
        ("wseqiops", m.wseqiops.map(|v| v.to_string())),
        ("wrandiops", m.wrandiops.map(|v| v.to_string())),
        ("rpct", q.rppm.map(pct)),
        ("rlat", q.rlat_us.map(|v| v.to_string())),
        ("wpct", q.wppm.map(pct)),
        ("wlat", q.wlat_us.map(|v| v.to_string())),
        ("min", q.min_ppm.map(pct)),
        ("max", q.max_ppm.map(pct)),
    ];
    let given: Vec<String> = keys
        .iter()
        .filter_map(|(key, value)| value.as_ref().map(|v| format!("{key}={v}")))
        .collect();
    if given.is_empty() {
        "iocost".to_string()
    } else {
        format!("iocost:{}", given.join(","))
    }
}

/// Every `--host` setting of a simulation with its value in force, its default and unit.
pub fn host_settings(config: &SimConfig) -> Vec<Setting> {
    let defaults = SimConfig::new(0, config.run.scheduler.clone(), config.device.clone());
    let row = |name: &str, value: String, default: String, unit: &str, note: &str| Setting {
        name: name.to_string(),
        set: value != default,
        value,
        default: Some(default),
        unit: unit.to_string(),
        note: note.to_string(),
    };
    let layer = |c: &SimConfig| match c.block_layer_for() {
        BlockLayer::SingleQueue => "single-queue".to_string(),
        BlockLayer::BlkMq => "blk-mq".to_string(),
    };
    let writes = |c: &SimConfig| match c.direct_writes {
        DirectWrites::Sync => "sync".to_string(),
        DirectWrites::Async => "async".to_string(),
    };
    let (pc, dc) = (&config.page_cache, &defaults.page_cache);
    vec![
        row(
            "memory_mib",
            (pc.memory_bytes >> 20).to_string(),
            (dc.memory_bytes >> 20).to_string(),
            "MiB",
            "memory the dirty ratios are percentages of",
        ),
        row(
            "dirty_ratio",
            pc.dirty_ratio.to_string(),
            dc.dirty_ratio.to_string(),
            "%",
            "vm.dirty_ratio",
        ),
        row(
            "dirty_background_ratio",
            pc.dirty_background_ratio.to_string(),
            dc.dirty_background_ratio.to_string(),
            "%",
            "vm.dirty_background_ratio",
        ),
        row(
            "nr_requests",
            pc.nr_requests.to_string(),
            dc.nr_requests.to_string(),
            "requests",
            "writeback requests outstanding at most",
        ),
        row(
            "max_sectors_kb",
            (pc.max_write_bytes >> 10).to_string(),
            (dc.max_write_bytes >> 10).to_string(),
            "KiB",
            "largest writeback request",
        ),
        row(
            "read_ahead_kb",
            (pc.read_ahead_bytes >> 10).to_string(),
            (dc.read_ahead_bytes >> 10).to_string(),
            "KiB",
            "read-ahead window of buffered sequential reads",
        ),
        row(
            "host_latency_us",
            (config.host_latency / 1000).to_string(),
            (defaults.host_latency / 1000).to_string(),
            "µs",
            "from a completion to the process's next submission",
        ),
        row(
            "block_layer",
            layer(config),
            layer(&defaults),
            "",
            "the block layer around the elevator",
        ),
        row(
            "queue_run_delay_us",
            (config.queue_run_delay_for() / 1000).to_string(),
            (defaults.queue_run_delay_for() / 1000).to_string(),
            "µs",
            "from a completion to the elevator's next dispatch",
        ),
        row(
            "driver_queue",
            config.driver_queue.to_string(),
            defaults.driver_queue.to_string(),
            "commands",
            "the host driver's queue in front of the device's",
        ),
        row(
            "direct_writes",
            writes(config),
            writes(&defaults),
            "",
            "how O_DIRECT writes reach the elevator",
        ),
    ]
}

/// The groups `--cgroup` set, as settings rows.
fn group_rows(run: &RunSpec) -> Vec<Setting> {
    groups::group_settings(run)
        .into_iter()
        .map(|(name, value)| Setting {
            name,
            value,
            set: true,
            ..Setting::default()
        })
        .collect()
}

impl Settings {
    /// The settings of a simulation of `job_file` with `config`: device, scheduler,
    /// controller, every host setting and the seed.
    pub fn simulated(job_file: &str, config: &SimConfig) -> Self {
        Self {
            job_file: job_file.to_string(),
            device: DeviceSettings::simulated(&config.device),
            scheduler: SchedulerSettings::of(&config.run.scheduler),
            controller: Some(controller_text(&config.run.controller)),
            host: host_settings(config),
            seed: Some(config.run.seed),
            version: Some(ioslice_core::VERSION.to_string()),
            options: Vec::new(),
            job_options: Vec::new(),
            groups: group_rows(&config.run),
        }
    }

    /// The settings of a real run `run` of `job_file` on `path` (no host settings; the
    /// seed of the jobs' random offsets).
    pub fn real(job_file: &str, path: &str, run: &RunSpec) -> Self {
        Self {
            job_file: job_file.to_string(),
            device: DeviceSettings::real(path),
            scheduler: SchedulerSettings::of(&run.scheduler),
            controller: Some(controller_text(&run.controller)),
            host: Vec::new(),
            seed: Some(run.seed),
            version: Some(ioslice_core::VERSION.to_string()),
            options: Vec::new(),
            job_options: Vec::new(),
            groups: group_rows(run),
        }
    }
}
