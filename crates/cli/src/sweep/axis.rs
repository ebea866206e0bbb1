//! A sweep's axes: `--axis NAME=V1,V2,...`, each a setting of the run and the values it
//! takes. A name says what it sets: `sched` (the scheduler), `sched.TUNABLE` (a tunable of
//! it), `device.KEY` (a `--device sim:PRESET:KEY=V` parameter), `host.KEY` (a `--host` key),
//! `cgroup.NAME.KEY` (a `--cgroup NAME:KEY=V` setting, e.g. the weight), `numjobs`, or any
//! other fio job option (`iodepth`, `bs`, `rw`, …), set in every job.

use serde::{Deserialize, Serialize};

/// What an axis sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    /// The scheduler, as `--sched` takes one.
    Scheduler,
    /// A scheduler tunable, as `--set TUNABLE=V`.
    Tunable(String),
    /// A device parameter.
    Device(String),
    /// A host setting.
    Host(String),
    /// A cgroup's setting: the group's path and the key.
    Cgroup(String, String),
    /// Every job's numjobs.
    Numjobs,
    /// A fio option set in every job.
    JobOption(String),
}

/// One axis: its name as given and its values in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axis {
    /// The name as given (`sched.slice_idle`).
    pub name: String,
    /// The values in the order given.
    pub values: Vec<String>,
}

const EXPECTED: &str = "expected sched, sched.TUNABLE, device.KEY, host.KEY, cgroup.NAME.KEY, numjobs or a fio job option (iodepth, bs, rw, ...)";

/// What the axis `name` sets; an unknown name is an error naming it.
pub fn setting(name: &str) -> Result<Setting, String> {
    let unknown = || format!("--axis: unknown axis name `{name}`: {EXPECTED}");
    let nonempty = |text: &str| (!text.is_empty()).then(|| text.to_string());
    if name == "sched" {
        return Ok(Setting::Scheduler);
    }
    if name == "numjobs" {
        return Ok(Setting::Numjobs);
    }
    if let Some((prefix, rest)) = name.split_once('.') {
        return match prefix {
            "sched" => nonempty(rest).map(Setting::Tunable).ok_or_else(unknown),
            "device" => nonempty(rest).map(Setting::Device).ok_or_else(unknown),
            "host" => nonempty(rest).map(Setting::Host).ok_or_else(unknown),
            "cgroup" => match rest.rsplit_once('.') {
                Some((group, key)) if !group.is_empty() && !key.is_empty() => {
                    Ok(Setting::Cgroup(group.to_string(), key.to_string()))
                }
                _ => Err(unknown()),
            },
            "job" => nonempty(rest)
                .filter(|o| ioslice_fio::jobfile::fio_table::knows(o))
                .map(Setting::JobOption)
                .ok_or_else(unknown),
            _ => Err(unknown()),
        };
    }
    if ioslice_fio::jobfile::fio_table::knows(name) {
        return Ok(Setting::JobOption(name.to_string()));
    }
    Err(unknown())
}

/// `NAME=V1,V2,...`, checked for its form; the values are checked by running the plan.
pub fn parse(text: &str) -> Result<Axis, String> {
    let (name, values) = text
        .split_once('=')
        .ok_or_else(|| format!("--axis `{text}`: expected NAME=V1,V2,... (e.g. iodepth=1,4,16)"))?;
    let name = name.trim();
    setting(name)?;
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
    if let Some(bad) = values.iter().position(|v| v.is_empty()) {
        return Err(format!(
            "--axis {name}: value {} of `{text}` is empty: expected V1,V2,... with no empty value",
            bad + 1
        ));
    }
    if let Some(twice) = values
        .iter()
        .enumerate()
        .find(|(i, v)| values[..*i].contains(v))
    {
        return Err(format!(
            "--axis {name}: value `{}` is listed twice: expected each value once",
            twice.1
        ));
    }
    Ok(Axis {
        name: name.to_string(),
        values,
    })
}

/// Every `--axis`, with no name given twice.
pub fn parse_all(texts: &[String]) -> Result<Vec<Axis>, String> {
    let mut axes: Vec<Axis> = Vec::new();
    for text in texts {
        let axis = parse(text)?;
        if axes.iter().any(|a| a.name == axis.name) {
            return Err(format!(
                "--axis {}: given twice: expected each axis once",
                axis.name
            ));
        }
        axes.push(axis);
    }
    Ok(axes)
}

/// `--seeds N` (seeds 1..=N) or `--seed-list A,B,...`; neither gives `default`.
pub fn seeds(count: Option<u32>, list: &[String], default: u64) -> Result<Vec<u64>, String> {
    match (count, list.is_empty()) {
        (Some(_), false) => Err("--seeds and --seed-list: give one of them, not both".into()),
        (Some(0), _) => Err("--seeds 0: expected a count of at least 1".into()),
        (Some(n), true) => Ok((1..=u64::from(n)).collect()),
        (None, true) => Ok(vec![default]),
        (None, false) => {
            let mut seeds = Vec::new();
            for text in list {
                let seed: u64 = text.trim().parse().map_err(|_| {
                    format!("--seed-list: invalid seed `{text}`: expected whole numbers, comma-separated")
                })?;
                if seeds.contains(&seed) {
                    return Err(format!("--seed-list: seed {seed} is listed twice"));
                }
                seeds.push(seed);
            }
            Ok(seeds)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_what_they_set() {
        assert_eq!(setting("sched"), Ok(Setting::Scheduler));
        assert_eq!(
            setting("sched.slice_idle"),
            Ok(Setting::Tunable("slice_idle".into()))
        );
        assert_eq!(
            setting("device.seek_ms"),
            Ok(Setting::Device("seek_ms".into()))
        );
        assert_eq!(
            setting("host.nr_requests"),
            Ok(Setting::Host("nr_requests".into()))
        );
        assert_eq!(
            setting("cgroup.a/b.weight"),
            Ok(Setting::Cgroup("a/b".into(), "weight".into()))
        );
        assert_eq!(setting("iodepth"), Ok(Setting::JobOption("iodepth".into())));
        assert_eq!(setting("job.bs"), Ok(Setting::JobOption("bs".into())));
        assert_eq!(setting("numjobs"), Ok(Setting::Numjobs));
        for bad in ["iodpeth", "sched.", "cgroup.weight", "disk.x", "job.nope"] {
            let message = setting(bad).unwrap_err();
            assert!(message.contains(&format!("`{bad}`")), "{message}");
        }
    }

    #[test]
    fn axes_and_seeds_are_checked() {
        let axis = parse("iodepth=1, 4,16").unwrap();
        assert_eq!(axis.values, ["1", "4", "16"]);
        assert!(parse("iodepth").unwrap_err().contains("NAME=V1"));
        assert!(parse("iodepth=1,,2").unwrap_err().contains("value 2"));
        assert!(parse("iodepth=1,1").unwrap_err().contains("`1`"));
        let twice = parse_all(&["bs=4k".into(), "bs=8k".into()]).unwrap_err();
        assert!(twice.contains("bs"), "{twice}");
        assert_eq!(seeds(Some(3), &[], 7), Ok(vec![1, 2, 3]));
        assert_eq!(seeds(None, &[], 7), Ok(vec![7]));
        assert_eq!(seeds(None, &["5".into(), "9".into()], 7), Ok(vec![5, 9]));
        assert!(seeds(None, &["x".into()], 7).unwrap_err().contains("`x`"));
        assert!(seeds(Some(2), &["1".into()], 7).is_err());
    }
}
