//! `--cgroup`: a cgroup's weight and limits from the command line, overriding the job
//! file's `cgroup_weight=`. Two spellings are accepted:
//!
//! - `NAME:weight=W,rbps=8M,wbps=…,riops=…,wiops=…,burst=…,throttle=…`, any subset of the keys;
//! - cgroup v2's `io.max` line with the group's name in place of `MAJ:MIN`:
//!   `"NAME rbps=8388608 wbps=max riops=max wiops=max"` (one argument, space separated).
//!
//! `rbps`/`wbps` are bytes per second, plain or with a `k`, `M`, `G` or `T` suffix in base
//! 1024 (`8M` is 8388608); `riops`/`wiops` are requests per second; `max` is unlimited, as in
//! `io.max`. `burst` is how much of each rate a bucket holds, as a duration (`100ms`, the
//! default, `1s`, `500us`). Sizes and durations are read by `ioslice_core::spec`, which
//! also splits the `NAME:` spelling; a key given twice in one value is refused. `throttle` says where the limit holds the group's requests:
//! `priority` (the default: released in priority order), `above` (above the elevator, in
//! arrival order, with blk-throttle's slices) or `io-throttle` (above the elevator, in
//! arrival order, paced by token buckets as io-throttle was; `ioslice_core::limit::Throttle`). Each
//! `--cgroup` changes only the settings it names, and a later one wins, as writes to `io.max`
//! do.
//!
//! `latency` is the group's io.latency target, a duration (`latency=75ms`; `max` removes it,
//! as `target=max` does in the kernel's `io.latency` file): while the group misses it, its
//! sibling groups with looser targets or none have their depth cut
//! (`ioslice_core::iolatency`). It is a setting of the group, as `io.latency` is a file of
//! each cgroup, not a `--controller`: it works beside any of them.
//!
//! Weights are checked against what the group tree accepts, 1..=10000 (cgroup v2's
//! `io.weight` range); a policy with a narrower range (the kernel's CFQ took
//! `blkio.weight` 10..=1000) decides itself what it does with the rest. Names follow the group tree's rules: components of
//! letters, digits, `-`, `_` and `.`, nested with `/` (`a/b`).

use std::fmt;

use ioslice_core::group::WEIGHT_RANGE;
use ioslice_core::limit::{Limits, Throttle};
use ioslice_core::spec::{
    parse_duration, parse_items, parse_size, Spec, SpecError, DURATION_UNITS,
};
use ioslice_core::{GroupTree, Nanos};
use ioslice_fio::JobFile;

/// What `--cgroup` expects, for error messages.
const EXPECTED: &str = "expected NAME:weight=N with N in 1..=10000 and/or limits rbps=, wbps=, riops=, wiops=, burst=, throttle=, latency= (comma-separated), or io.max's 'NAME rbps=B wbps=B riops=N wiops=N'; e.g. grp1:weight=500, grp1:rbps=8M,burst=1s,throttle=above";

/// What a byte rate may be.
const EXPECTED_BYTES: &str = "expected a positive number of bytes per second, plain or with a k, M, G or T suffix (base 1024, 8M = 8388608), or max";

/// What a request rate may be.
const EXPECTED_IOPS: &str = "expected a positive whole number of requests per second, or max";

/// What a throttle may be.
const EXPECTED_THROTTLE: &str =
    "expected priority (held requests leave in priority order, the default), above (above the elevator, in arrival order, with blk-throttle's slices) or io-throttle (above the elevator, in arrival order, each request as soon as its tokens are there)";

/// One limit setting of a `--cgroup` value; `None` is `max` (unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitSetting {
    /// `rbps=`: read bytes per second.
    ReadBps(Option<u64>),
    /// `wbps=`: write bytes per second.
    WriteBps(Option<u64>),
    /// `riops=`: read requests per second.
    ReadIops(Option<u64>),
    /// `wiops=`: write requests per second.
    WriteIops(Option<u64>),
    /// `burst=`: how much of each rate a bucket holds.
    Burst(Nanos),
    /// `throttle=`: where the limit holds requests, and so their order.
    Throttle(Throttle),
    /// `latency=`: the io.latency target; `None` is `max` (none).
    Latency(Option<Nanos>),
}

impl LimitSetting {
    /// Set this in `limits`, leaving the other fields alone.
    pub fn apply(self, limits: &mut Limits) {
        match self {
            Self::ReadBps(rate) => limits.read_bps = rate,
            Self::WriteBps(rate) => limits.write_bps = rate,
            Self::ReadIops(rate) => limits.read_iops = rate,
            Self::WriteIops(rate) => limits.write_iops = rate,
            Self::Burst(burst) => limits.burst = Some(burst),
            Self::Throttle(throttle) => limits.throttle = throttle,
            Self::Latency(target) => limits.latency = target,
        }
    }
}

/// One `--cgroup` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupArg {
    /// Group path without surrounding slashes (`a/b`).
    pub path: String,
    /// The weight to give it, if set.
    pub weight: Option<u32>,
    /// The limit settings given, in order.
    pub limits: Vec<LimitSetting>,
}

impl fmt::Display for LimitSetting {
    /// `key=value` as `--cgroup` takes it back: rates in bytes or requests, the burst in
    /// nanoseconds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rate = |rate: &Option<u64>| rate.map_or("max".to_string(), |n| n.to_string());
        match self {
            Self::ReadBps(r) => write!(f, "rbps={}", rate(r)),
            Self::WriteBps(r) => write!(f, "wbps={}", rate(r)),
            Self::ReadIops(r) => write!(f, "riops={}", rate(r)),
            Self::WriteIops(r) => write!(f, "wiops={}", rate(r)),
            Self::Burst(burst) => write!(f, "burst={burst}ns"),
            Self::Throttle(throttle) => write!(f, "throttle={}", throttle.name()),
            Self::Latency(None) => write!(f, "latency=max"),
            Self::Latency(Some(target)) => write!(f, "latency={target}ns"),
        }
    }
}

impl fmt::Display for CgroupArg {
    /// `PATH:weight=W,key=value,...`, the limits in the order given.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path)?;
        let weight = self.weight.map(|w| format!("weight={w}"));
        let limits = self.limits.iter().map(LimitSetting::to_string);
        for (i, item) in weight.into_iter().chain(limits).enumerate() {
            write!(f, "{}{item}", if i == 0 { ':' } else { ',' })?;
        }
        Ok(())
    }
}

/// Parse one `--cgroup` value; the error names the value and says what is expected.
pub fn parse(text: &str) -> Result<CgroupArg, String> {
    parse_value(text).map_err(|why| format!("--cgroup '{text}': {why}"))
}

/// Parse a group's settings in `--cgroup`'s syntax; the error says what is wrong and what
/// is expected, for the caller to say where the text came from.
pub fn parse_value(text: &str) -> Result<CgroupArg, String> {
    let (path, settings) = split_spelling(text)?;
    let mut arg = CgroupArg {
        path,
        weight: None,
        limits: Vec::new(),
    };
    for (key, value) in &settings {
        parse_setting(&mut arg, key, value)?;
    }
    if arg.weight.is_none() && arg.limits.is_empty() {
        return Err(EXPECTED.to_string());
    }
    Ok(arg)
}

/// The group's path and the settings: `NAME:k=v,k=v`, read by the shared grammar, or
/// io.max's `NAME k=v k=v`, which the grammar does not cover (no `:`, items apart at spaces)
/// and is split here, its items then read as the grammar reads them. Either way the name is
/// a group path, checked by [`parse_name`], so an empty one says there is no group name.
fn split_spelling(text: &str) -> Result<(String, Vec<(String, String)>), String> {
    let syntax = |e: SpecError| format!("{e}: {EXPECTED}");
    if text.contains(':') {
        return match text.parse::<Spec>() {
            Ok(spec) => Ok((parse_name(&spec.name)?, spec.settings)),
            Err(SpecError::EmptyName) => Err(no_group_name()),
            Err(e) => Err(syntax(e)),
        };
    }
    let mut words = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty());
    let name = words.next().ok_or_else(|| EXPECTED.to_string())?;
    let items: Vec<&str> = words.collect();
    if items.is_empty() {
        return Err(EXPECTED.to_string());
    }
    let path = parse_name(name)?;
    Ok((path, parse_items(items).map_err(syntax)?))
}

fn parse_setting(arg: &mut CgroupArg, key: &str, value: &str) -> Result<(), String> {
    let limit = match key {
        "weight" => {
            arg.weight = Some(parse_weight(value)?);
            return Ok(());
        }
        "rbps" => LimitSetting::ReadBps(parse_rate(key, value, parse_size, EXPECTED_BYTES)?),
        "wbps" => LimitSetting::WriteBps(parse_rate(key, value, parse_size, EXPECTED_BYTES)?),
        "riops" => LimitSetting::ReadIops(parse_rate(key, value, parse_count, EXPECTED_IOPS)?),
        "wiops" => LimitSetting::WriteIops(parse_rate(key, value, parse_count, EXPECTED_IOPS)?),
        "burst" => LimitSetting::Burst(parse_duration(value, None).ok_or_else(|| {
            format!(
                "burst '{value}': expected a duration with a unit: {DURATION_UNITS} (e.g. 100ms, 1s)"
            )
        })?),
        "latency" => LimitSetting::Latency(parse_latency(value)?),
        "throttle" => LimitSetting::Throttle(match value {
            "priority" => Throttle::Priority,
            "above" => Throttle::Above,
            "io-throttle" => Throttle::IoThrottle,
            _ => return Err(format!("throttle '{value}': {EXPECTED_THROTTLE}")),
        }),
        other => return Err(format!("unknown setting '{other}': {EXPECTED}")),
    };
    arg.limits.push(limit);
    Ok(())
}

/// `max` (unlimited) or a positive number read by `number`.
fn parse_rate(
    key: &str,
    value: &str,
    number: fn(&str) -> Option<u64>,
    expected: &str,
) -> Result<Option<u64>, String> {
    if value == "max" {
        return Ok(None);
    }
    match number(value).filter(|&n| n > 0) {
        Some(n) => Ok(Some(n)),
        None => Err(format!("{key} '{value}': {expected}")),
    }
}

/// A latency target: `max` (none) or a positive duration with a unit.
fn parse_latency(value: &str) -> Result<Option<Nanos>, String> {
    if value == "max" {
        return Ok(None);
    }
    match parse_duration(value, None).filter(|&t| t > 0) {
        Some(target) => Ok(Some(target)),
        None => Err(format!(
            "latency '{value}': expected a positive duration with a unit: {DURATION_UNITS} (e.g. 75ms, 500us), or max"
        )),
    }
}

/// A plain whole number: digits only (no sign, point or suffix).
fn parse_count(value: &str) -> Option<u64> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

/// Every `--cgroup` value, in order.
pub fn parse_all(values: &[String]) -> Result<Vec<CgroupArg>, String> {
    values.iter().map(|value| parse(value)).collect()
}

/// A group path as the group tree accepts it, the root excluded.
pub(crate) fn parse_name(name: &str) -> Result<String, String> {
    let path = name.trim().trim_matches('/');
    if path.is_empty() {
        return Err(no_group_name());
    }
    GroupTree::default()
        .ensure(path)
        .map_err(|e| e.to_string())?;
    Ok(path.to_string())
}

fn no_group_name() -> String {
    format!("no group name: {EXPECTED} (the root group takes no weight or limit)")
}

fn parse_weight(value: &str) -> Result<u32, String> {
    value
        .parse::<u32>()
        .ok()
        .filter(|w| WEIGHT_RANGE.contains(w))
        .ok_or_else(|| {
            format!(
                "weight '{value}' is not an integer in {}..={}",
                WEIGHT_RANGE.start(),
                WEIGHT_RANGE.end()
            )
        })
}

/// The `(path, weight)` pairs for the simulator's `SimConfig::group_weights`.
pub fn sim_weights(overrides: &[CgroupArg]) -> Vec<(String, u32)> {
    overrides
        .iter()
        .filter_map(|o| Some((o.path.clone(), o.weight?)))
        .collect()
}

/// The limits of each group some `--cgroup` limits, for the simulator's
/// `SimConfig::group_limits`: one entry per group in order of first mention, each
/// `--cgroup` changing only the settings it names.
pub fn sim_limits(overrides: &[CgroupArg]) -> Vec<(String, Limits)> {
    let mut merged: Vec<(String, Limits)> = Vec::new();
    for o in overrides.iter().filter(|o| !o.limits.is_empty()) {
        let index = match merged.iter().position(|(path, _)| *path == o.path) {
            Some(index) => index,
            None => {
                merged.push((o.path.clone(), Limits::default()));
                merged.len() - 1
            }
        };
        for setting in &o.limits {
            setting.apply(&mut merged[index].1);
        }
    }
    merged
}

/// Check that the group tree of the run can be built: every job's `cgroup=` path and
/// `cgroup_weight=`, then the command line's, as the simulator applies them. `compare`
/// calls it so that a bad path fails before the first run rather than in each.
pub fn check_groups(job_file: &JobFile, overrides: &[CgroupArg]) -> Result<(), String> {
    let mut tree = GroupTree::default();
    let from_jobs = job_file
        .jobs
        .iter()
        .filter_map(|job| Some((job.cgroup.as_deref()?, job.cgroup_weight)));
    let from_flags = overrides.iter().map(|o| (o.path.as_str(), o.weight));
    for (path, weight) in from_jobs.chain(from_flags) {
        let id = tree.ensure(path).map_err(|e| e.to_string())?;
        if let Some(weight) = weight {
            tree.set_weight(id, weight).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// A warning for each `--cgroup` naming a group that holds no job, directly or below it:
/// most likely a typo, since the weight or limit then changes nothing.
pub fn unused_warnings(job_file: &JobFile, overrides: &[CgroupArg]) -> Vec<String> {
    let named = job_cgroups(job_file);
    overrides
        .iter()
        .filter(|o| {
            !named
                .iter()
                .any(|g| g == &o.path || g.starts_with(&format!("{}/", o.path)))
        })
        .map(|o| {
            let known = if named.is_empty() {
                "the job file names no cgroup".to_string()
            } else {
                format!("the job file's cgroups are {}", named.join(", "))
            };
            format!(
                "--cgroup {}: no job is in cgroup {} or below it ({known})",
                o.path, o.path
            )
        })
        .collect()
}

/// The cgroups the job file's jobs name, in order of first appearance, without slashes
/// around them; the root (no `cgroup=`) is not included.
pub fn job_cgroups(job_file: &JobFile) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for job in &job_file.jobs {
        let Some(path) = job.cgroup.as_deref().map(|p| p.trim_matches('/')) else {
            continue;
        };
        if !path.is_empty() && !names.iter().any(|n| n == path) {
            names.push(path.to_string());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use ioslice_core::time::{ms, SECOND};

    #[test]
    fn names_and_weights() {
        assert_eq!(
            parse("grp1:weight=100"),
            Ok(CgroupArg {
                path: "grp1".into(),
                weight: Some(100),
                limits: Vec::new(),
            })
        );
        assert_eq!(
            parse("/a/b/:weight=10000").map(|c| c.path),
            Ok("a/b".into())
        );
        assert_eq!(parse("a:weight=1").map(|c| c.weight), Ok(Some(1)));
    }

    fn limits_of(values: &[&str]) -> Vec<(String, Limits)> {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        sim_limits(&parse_all(&values).expect("valid"))
    }

    #[test]
    fn both_spellings_give_the_same_limits() {
        let expected = vec![(
            "g".to_string(),
            Limits {
                read_bps: Some(8 << 20),
                write_iops: Some(120),
                ..Limits::default()
            },
        )];
        assert_eq!(limits_of(&["g:rbps=8M,wiops=120"]), expected);
        assert_eq!(
            limits_of(&["g rbps=8388608 wbps=max riops=max wiops=120"]),
            expected
        );
        assert_eq!(limits_of(&["  g  rbps=8MiB,  wiops=120 "]), expected);
        let with_weight = parse("g:weight=300, rbps=1k, burst=1s").expect("valid");
        assert_eq!(with_weight.weight, Some(300));
        assert_eq!(
            with_weight.limits,
            vec![
                LimitSetting::ReadBps(Some(1024)),
                LimitSetting::Burst(SECOND)
            ]
        );
    }

    #[test]
    fn throttle_says_where_the_limit_holds_requests() {
        assert_eq!(
            limits_of(&["g:rbps=8M,throttle=above"])[0].1,
            Limits {
                read_bps: Some(8 << 20),
                throttle: Throttle::Above,
                ..Limits::default()
            }
        );
        let back = limits_of(&["g:rbps=8M,throttle=above", "g:throttle=priority"]);
        assert_eq!(back[0].1.throttle, Throttle::Priority);
        let paced = limits_of(&["g:rbps=8M,throttle=io-throttle"]);
        assert_eq!(paced[0].1.throttle, Throttle::IoThrottle);
        let error = parse("g:rbps=8M,throttle=below").expect_err("unknown throttle");
        assert_eq!(
            error,
            format!("--cgroup 'g:rbps=8M,throttle=below': throttle 'below': {EXPECTED_THROTTLE}")
        );
    }

    /// The sizes and durations the flag took before it read them with `core::spec`, as
    /// the flag's own values.
    #[test]
    fn sizes_and_durations() {
        let limit = |text: &str| parse(text).map(|arg| arg.limits[0]);
        for (text, bytes) in [
            ("1", 1),
            ("4k", 4096),
            ("8M", 8 << 20),
            ("2G", 2 << 30),
            ("1T", 1 << 40),
        ] {
            let value = format!("g:rbps={text}");
            assert_eq!(limit(&value), Ok(LimitSetting::ReadBps(Some(bytes))));
        }
        assert!(parse("g:rbps=99999999999T").is_err());
        for (text, nanos) in [
            ("0", 0),
            ("500ms", ms(500)),
            ("2s", 2 * SECOND),
            ("250us", 250_000),
        ] {
            let value = format!("g:burst={text}");
            assert_eq!(limit(&value), Ok(LimitSetting::Burst(nanos)));
        }
        assert!(parse("g:burst=5").is_err());
    }

    /// What [`CgroupArg`] prints is a `--cgroup` value that gives it back.
    #[test]
    fn an_arg_parses_back_from_its_text() {
        for text in [
            "grp1:weight=100",
            "a/b:weight=300,rbps=8M,wbps=max,riops=100,wiops=max,burst=250ms,throttle=above",
            "g rbps=8388608 wbps=max riops=max wiops=120",
            "g:throttle=priority,burst=1s",
            "g:latency=75ms",
            "g:latency=max,weight=50",
        ] {
            let arg = parse(text).expect("valid");
            assert_eq!(parse(&arg.to_string()), Ok(arg.clone()), "{text} -> {arg}");
        }
        assert_eq!(
            parse("g:rbps=1M,rbps=2M"),
            Err(format!(
                "--cgroup 'g:rbps=1M,rbps=2M': setting 'rbps' is given twice: {EXPECTED}"
            ))
        );
    }

    #[test]
    fn latency_is_a_target_kept_with_the_limits() {
        let merged = limits_of(&["g:latency=75ms", "h:latency=500us,rbps=1M", "h:latency=max"]);
        assert_eq!(merged[0].1.latency, Some(ms(75)));
        assert!(
            merged[0].1.is_unlimited(),
            "a target limits nothing of its own"
        );
        assert_eq!(merged[1].1.latency, None);
        assert_eq!(merged[1].1.read_bps, Some(1 << 20));
    }

    #[test]
    fn later_settings_win_field_by_field() {
        let merged = limits_of(&[
            "g:rbps=8M,riops=100",
            "h:wbps=1M",
            "g rbps=max wbps=2M",
            "g:burst=250ms",
        ]);
        assert_eq!(merged.len(), 2);
        assert_eq!(
            merged[0].1,
            Limits {
                write_bps: Some(2 << 20),
                read_iops: Some(100),
                burst: Some(ms(250)),
                ..Limits::default()
            }
        );
        assert_eq!(merged[1].0, "h");
        let values = ["g:weight=100".to_string(), "g rbps=1M".to_string()];
        let args = parse_all(&values).expect("valid");
        assert_eq!(sim_weights(&args), vec![("g".to_string(), 100)]);
    }

    #[test]
    fn job_file_and_flag_groups_are_checked_and_unused_ones_reported() {
        let text = "[a]\ncgroup=g1\ncgroup_weight=100\n[b]\ncgroup=p/c\n";
        let job_file = ioslice_fio::jobfile::parse_str(text, "t.fio", &Default::default()).unwrap();
        let flags = parse_all(&[
            "g1:weight=300".into(),
            "p:weight=50".into(),
            "g1:rbps=1M".into(),
        ])
        .unwrap();
        assert_eq!(check_groups(&job_file, &flags), Ok(()));
        let bad =
            ioslice_fio::jobfile::parse_str("[a]\ncgroup=a//b\n", "t.fio", &Default::default())
                .unwrap();
        let message = check_groups(&bad, &[]).unwrap_err();
        assert!(message.contains("invalid group name 'a//b'"), "{message}");
        assert!(unused_warnings(&job_file, &flags).is_empty(), "p holds p/c");
        let typo = parse_all(&["g11:weight=5".into(), "g12 rbps=1M".into()]).unwrap();
        let warnings = unused_warnings(&job_file, &typo);
        assert_eq!(warnings.len(), 2);
        assert!(warnings[0].contains("g11") && warnings[0].contains("g1, p/c"));
        assert!(warnings[1].contains("g12"));
    }

    #[test]
    fn errors_name_the_value_and_what_is_expected() {
        for (bad, needle) in [
            ("x", "expected NAME:weight=N"),
            ("x:weight=0", "weight '0' is not an integer in 1..=10000"),
            ("x:weight=10001", "1..=10000"),
            ("x:weight=abc", "weight 'abc'"),
            ("x:weight=-5", "weight '-5'"),
            ("x:prio=3", "unknown setting 'prio'"),
            ("x:weight", "setting 'weight' has no value"),
            (":weight=5", "no group name"),
            ("/:weight=5", "no group name"),
            ("/ rbps=1M", "no group name"),
            ("a b:weight=5", "invalid group name"),
            ("a/../b:weight=5", "invalid group name"),
            ("x:rbps=0", "rbps '0': expected a positive number of bytes"),
            ("x:wbps=8X", "wbps '8X'"),
            ("x:rbps=-1", "k, M, G or T suffix"),
            (
                "x:riops=1.5",
                "riops '1.5': expected a positive whole number",
            ),
            ("x:wiops=2k", "wiops '2k'"),
            ("x:burst=5", "burst '5': expected a duration"),
            ("x:burst=max", "burst 'max'"),
            ("x:latency=5", "latency '5': expected a positive duration"),
            ("x:latency=0ms", "latency '0ms'"),
            ("x rbps", "setting 'rbps' has no value"),
            ("x rbps=8M iops=5", "unknown setting 'iops'"),
            ("x:", "setting '' has no value"),
            ("x ", "expected NAME:weight=N"),
        ] {
            let message = parse(bad).unwrap_err();
            assert!(message.contains(&format!("'{bad}'")), "{message}");
            assert!(message.contains(needle), "{bad}: {message}");
            assert!(!message.contains('\n'), "{message}");
        }
    }
}
