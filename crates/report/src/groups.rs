//! The groups a run was given on the command line (`--cgroup NAME:weight=…,rbps=…,latency=…`,
//! applied over the job file's `cgroup_weight=`, which the report's job options show): one
//! settings row per group, in the order they were named, with the weight, the limits and the
//! io.latency target as `--cgroup` writes them.

use ioslice_core::limit::{Limits, Throttle};
use ioslice_fio::run_spec::RunSpec;

/// One `(path, settings)` per group with a weight, a limit or a latency target.
pub fn group_settings(run: &RunSpec) -> Vec<(String, String)> {
    let mut paths: Vec<&str> = Vec::new();
    let named = run
        .group_weights
        .iter()
        .map(|(path, _)| path.as_str())
        .chain(run.group_limits.iter().map(|(path, _)| path.as_str()));
    for path in named {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
        .into_iter()
        .map(|path| {
            let weight = run
                .group_weights
                .iter()
                .rev()
                .find(|(p, _)| p == path)
                .map(|(_, w)| *w);
            let limits = run
                .group_limits
                .iter()
                .rev()
                .find(|(p, _)| p == path)
                .map(|(_, l)| l);
            (
                format!("/{}", path.trim_start_matches('/')),
                group_text(weight, limits),
            )
        })
        .collect()
}

/// `weight=300,rbps=10485760,latency=250us`, as `--cgroup` takes it.
fn group_text(weight: Option<u32>, limits: Option<&Limits>) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(weight) = weight {
        parts.push(format!("weight={weight}"));
    }
    if let Some(limits) = limits {
        let rates = [
            ("rbps", limits.read_bps),
            ("wbps", limits.write_bps),
            ("riops", limits.read_iops),
            ("wiops", limits.write_iops),
        ];
        for (key, rate) in rates {
            if let Some(rate) = rate {
                parts.push(format!("{key}={rate}"));
            }
        }
        if let Some(burst) = limits.burst {
            parts.push(format!("burst={}", duration_text(burst)));
        }
        if limits.throttle == Throttle::Above {
            parts.push(format!("throttle={}", limits.throttle.name()));
        }
        if let Some(latency) = limits.latency.filter(|&l| l > 0) {
            parts.push(format!("latency={}", duration_text(latency)));
        }
    }
    if parts.is_empty() {
        "as the policy's default".to_string()
    } else {
        parts.join(",")
    }
}

/// Nanoseconds in the largest unit that keeps them whole: `250us`, `75ms`, `2s`, `1500ns`.
fn duration_text(ns: u64) -> String {
    match ns {
        0 => "0".to_string(),
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_group_once_with_its_weight_limits_and_target() {
        let mut run = RunSpec::new(1, "bfq".parse().expect("spec"));
        run.group_weights = vec![("a".into(), 300), ("b".into(), 100)];
        run.group_limits = vec![
            (
                "a".into(),
                Limits {
                    read_bps: Some(10 << 20),
                    throttle: Throttle::Above,
                    burst: Some(100_000_000),
                    ..Limits::default()
                },
            ),
            (
                "c/d".into(),
                Limits {
                    latency: Some(250_000),
                    ..Limits::default()
                },
            ),
        ];
        let rows = group_settings(&run);
        assert_eq!(
            rows,
            [
                (
                    "/a".to_string(),
                    "weight=300,rbps=10485760,burst=100ms,throttle=above".to_string()
                ),
                ("/b".to_string(), "weight=100".to_string()),
                ("/c/d".to_string(), "latency=250us".to_string()),
            ]
        );
        assert_eq!(duration_text(1_500), "1500ns");
        assert_eq!(duration_text(2_000_000_000), "2s");
    }
}
