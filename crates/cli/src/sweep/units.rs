//! How the sweep's page writes an axis's values: with the unit the setting's own type gives.
//! A scheduler tunable takes its [`TunableDef`]'s unit from the registry (`slice_idle` is in
//! ms: `0 ms`, `8 ms`; a `KiB` tunable is a size, `bool` is off/on, a release is written as
//! the kernel writes it), a fio job option its value type from fio's option table (a size,
//! `bs`'s `ull` among them, in B, KiB, MiB or GiB; a `time` in µs and a `time_s` in s as
//! durations), and a cgroup's key what `--cgroup` reads it as (a weight plain, `rbps` a
//! size per second, `riops` IOPS, `burst` a duration). Everything else, and any value its
//! type does not read, is written as given.

use ioslice_core::registry;
use ioslice_core::spec::{parse_duration, parse_size};
use ioslice_core::tunable::{SchedSpec, TunableDef, Tunables};
use ioslice_fio::jobfile::{fio_table, values};

use super::axis::{setting, Axis, Setting};

/// The page's label of each of `axis`'s values, in order; `schedulers` are the schedulers
/// the points run (`--sched` and a `sched` axis's values), where a tunable is looked up.
pub fn labels(axis: &Axis, schedulers: &[String]) -> Vec<String> {
    let Ok(what) = setting(&axis.name) else {
        return axis.values.clone();
    };
    axis.values
        .iter()
        .map(|value| label(&what, value, schedulers).unwrap_or_else(|| value.clone()))
        .collect()
}

/// `value` with its unit, or `None` to write it as given.
fn label(what: &Setting, value: &str, schedulers: &[String]) -> Option<String> {
    match what {
        Setting::Tunable(name) => tunable_label(name, value, schedulers),
        Setting::JobOption(option) => option_label(option, value),
        Setting::Cgroup(_, key) => match key.as_str() {
            "rbps" | "wbps" => Some(format!("{}/s", size(parse_size(value)?))),
            "riops" | "wiops" => Some(format!("{} IOPS", value.parse::<u64>().ok()?)),
            "burst" => Some(duration(parse_duration(value, None)?)),
            _ => None,
        },
        Setting::Scheduler | Setting::Device(_) | Setting::Host(_) | Setting::Numjobs => None,
    }
}

/// The definition of tunable `name` in the first of `schedulers` that has it, with the
/// scheduler's name.
fn tunable_def(name: &str, schedulers: &[String]) -> Option<(String, &'static TunableDef)> {
    schedulers.iter().find_map(|text| {
        let spec: SchedSpec = text.parse().ok()?;
        let info = registry::lookup(&spec.name).ok()?;
        let def = info.tunables.iter().find(|def| def.name == name)?;
        Some((info.name.to_string(), def))
    })
}

fn tunable_label(name: &str, value: &str, schedulers: &[String]) -> Option<String> {
    let (scheduler, def) = tunable_def(name, schedulers)?;
    let defs: &'static [TunableDef] = std::slice::from_ref(def);
    let resolved = Tunables::resolve(&scheduler, defs, &[(name.to_string(), value.to_string())])
        .ok()?
        .get(name);
    Some(match def.unit {
        unit if unit == ioslice_core::kernel::UNIT => def.format_value(resolved),
        "bool" => if resolved == 0 { "off" } else { "on" }.to_string(),
        "KiB" => size(u64::try_from(resolved).ok()?.checked_mul(1024)?),
        // A unit of one word ("ms", "requests"); a description (nomerges') is not one.
        unit if !unit.is_empty() && !unit.contains(' ') && !matches!(unit, "count" | "factor") => {
            format!("{resolved} {unit}")
        }
        _ => resolved.to_string(),
    })
}

fn option_label(option: &str, value: &str) -> Option<String> {
    let row = fio_table::lookup(option)?;
    match row.kind {
        "size" | "size_zone" | "ull" => Some(size(values::size(value, 1024)?)),
        "time" => Some(duration(values::time(value, 1_000)?)),
        "time_s" => Some(duration(values::time(value, 1_000_000_000)?)),
        _ => None,
    }
}

/// Bytes in the largest binary unit that leaves a whole or short number: `4 KiB`,
/// `1.5 MiB`, `512 B`.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut unit = 0;
    while unit + 1 < UNITS.len() && bytes >> (10 * (unit + 1)) > 0 {
        unit += 1;
    }
    let value = bytes as f64 / (1u64 << (10 * unit)) as f64;
    format!("{} {}", short(value), UNITS[unit])
}

/// Nanoseconds in the largest unit that divides them: `8 ms`, `250 µs`, `2 s`.
pub fn duration(ns: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs")];
    UNITS
        .iter()
        .find(|(per, _)| ns >= *per && ns.is_multiple_of(*per))
        .map_or_else(
            || format!("{ns} ns"),
            |(per, unit)| format!("{} {unit}", ns / per),
        )
}

/// `value` with at most two decimals and no trailing zeros.
fn short(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(name: &str, values: &[&str]) -> Axis {
        Axis {
            name: name.to_string(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn tunables_take_the_unit_of_their_definition() {
        let cfq = ["cfq".to_string()];
        assert_eq!(
            labels(&axis("sched.slice_idle", &["0", "4", "8"]), &cfq),
            ["0 ms", "4 ms", "8 ms"]
        );
        assert_eq!(
            labels(&axis("sched.group_isolation", &["0", "1"]), &cfq),
            ["off", "on"]
        );
        // Found in whichever scheduler of the sweep has it.
        let both = ["noop".to_string(), "bfq:slice_idle=0".to_string()];
        assert_eq!(
            labels(&axis("sched.timeout_sync", &["125"]), &both),
            ["125 ms"]
        );
        // A value the tunable does not read is written as given (the run refuses it).
        assert_eq!(labels(&axis("sched.slice_idle", &["x"]), &cfq), ["x"]);
        assert_eq!(labels(&axis("sched.nope", &["3"]), &cfq), ["3"]);
    }

    #[test]
    fn job_options_take_the_type_of_fios_table() {
        assert_eq!(
            labels(&axis("bs", &["4k", "64k", "1m", "1536"]), &[]),
            ["4 KiB", "64 KiB", "1 MiB", "1.5 KiB"]
        );
        assert_eq!(labels(&axis("iodepth", &["1", "16"]), &[]), ["1", "16"]);
        assert_eq!(
            labels(&axis("thinktime", &["250", "2ms"]), &[]),
            ["250 µs", "2 ms"]
        );
        assert_eq!(labels(&axis("runtime", &["30"]), &[]), ["30 s"]);
        assert_eq!(labels(&axis("rw", &["read"]), &[]), ["read"]);
    }

    #[test]
    fn cgroup_keys_read_as_cgroup_reads_them() {
        assert_eq!(
            labels(&axis("cgroup.a.weight", &["100", "500"]), &[]),
            ["100", "500"]
        );
        assert_eq!(labels(&axis("cgroup.a.rbps", &["8M"]), &[]), ["8 MiB/s"]);
        assert_eq!(labels(&axis("cgroup.a.riops", &["200"]), &[]), ["200 IOPS"]);
        assert_eq!(labels(&axis("numjobs", &["2"]), &[]), ["2"]);
    }
}
