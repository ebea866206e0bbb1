//! `--cgroup NAME:weight=N`: a cgroup's weight from the command line, overriding the job
//! file's `cgroup_weight=`.
//!
//! Weights are checked against what the group tree accepts, 1..=10000 (cgroup v2's
//! `io.weight` range); a policy with a narrower range (the kernel's CFQ took
//! `blkio.weight` 10..=1000) decides itself what it does with the rest. Names follow the group tree's rules: components of
//! letters, digits, `-`, `_` and `.`, nested with `/` (`a/b`).

use ioslice_core::group::WEIGHT_RANGE;
use ioslice_core::GroupTree;
use ioslice_fio::JobFile;

/// What `--cgroup` expects, for error messages.
const EXPECTED: &str = "expected NAME:weight=N with N in 1..=10000, e.g. grp1:weight=500";

/// One `--cgroup` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupWeight {
    /// Group path without surrounding slashes (`a/b`).
    pub path: String,
    /// The weight to give it.
    pub weight: u32,
}

/// Parse one `--cgroup` value; the error names the value and says what is expected.
pub fn parse(text: &str) -> Result<CgroupWeight, String> {
    let fail = |why: String| format!("--cgroup '{text}': {why}");
    let (name, settings) = text
        .split_once(':')
        .ok_or_else(|| fail(EXPECTED.to_string()))?;
    let path = parse_name(name).map_err(fail)?;
    let mut weight = None;
    for item in settings.split(',') {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| fail(format!("setting '{item}' has no value: {EXPECTED}")))?;
        match key.trim() {
            "weight" => weight = Some(parse_weight(value.trim()).map_err(fail)?),
            other => return Err(fail(format!("unknown setting '{other}': {EXPECTED}"))),
        }
    }
    let weight = weight.ok_or_else(|| fail(EXPECTED.to_string()))?;
    Ok(CgroupWeight { path, weight })
}

/// Every `--cgroup` value, in order.
pub fn parse_all(values: &[String]) -> Result<Vec<CgroupWeight>, String> {
    values.iter().map(|value| parse(value)).collect()
}

/// A group path as the group tree accepts it, the root excluded.
fn parse_name(name: &str) -> Result<String, String> {
    let path = name.trim().trim_matches('/');
    if path.is_empty() {
        return Err(format!(
            "no group name: {EXPECTED} (the root group has no weight)"
        ));
    }
    GroupTree::default()
        .ensure(path)
        .map_err(|e| e.to_string())?;
    Ok(path.to_string())
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
pub fn sim_weights(overrides: &[CgroupWeight]) -> Vec<(String, u32)> {
    overrides
        .iter()
        .map(|o| (o.path.clone(), o.weight))
        .collect()
}

/// The weight every group of the run ends up with: the job file's groups with their
/// `cgroup_weight=` (default 500), then the command line's, later settings winning, as
/// the simulator applies them. Ancestors created on the way are included.
pub fn effective_weights(
    job_file: &JobFile,
    overrides: &[CgroupWeight],
) -> Result<Vec<(String, u32)>, String> {
    let mut tree = GroupTree::default();
    let from_jobs = job_file
        .jobs
        .iter()
        .filter_map(|job| Some((job.cgroup.as_deref()?, job.cgroup_weight)));
    let from_flags = overrides.iter().map(|o| (o.path.as_str(), Some(o.weight)));
    for (path, weight) in from_jobs.chain(from_flags) {
        let id = tree.ensure(path).map_err(|e| e.to_string())?;
        if let Some(weight) = weight {
            tree.set_weight(id, weight).map_err(|e| e.to_string())?;
        }
    }
    Ok(tree
        .iter()
        .skip(1)
        .map(|(_, group)| (group.path.clone(), group.weight))
        .collect())
}

/// A warning for each `--cgroup` naming a group that holds no job, directly or below it:
/// most likely a typo, since the weight then changes nothing.
pub fn unused_warnings(job_file: &JobFile, overrides: &[CgroupWeight]) -> Vec<String> {
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

    #[test]
    fn names_and_weights() {
        assert_eq!(
            parse("grp1:weight=100"),
            Ok(CgroupWeight {
                path: "grp1".into(),
                weight: 100
            })
        );
        assert_eq!(
            parse("/a/b/:weight=10000").map(|c| c.path),
            Ok("a/b".into())
        );
        assert_eq!(parse("a:weight=1").map(|c| c.weight), Ok(1));
    }

    #[test]
    fn flags_override_the_job_file_and_unused_ones_are_reported() {
        let text = "[a]\ncgroup=g1\ncgroup_weight=100\n[b]\ncgroup=p/c\n";
        let job_file = ioslice_fio::jobfile::parse_str(text, "t.fio", &Default::default()).unwrap();
        let flags = parse_all(&["g1:weight=300".into(), "p:weight=50".into()]).unwrap();
        assert_eq!(
            effective_weights(&job_file, &flags),
            Ok(vec![
                ("g1".to_string(), 300),
                ("p".to_string(), 50),
                ("p/c".to_string(), GroupTree::DEFAULT_WEIGHT)
            ])
        );
        assert!(unused_warnings(&job_file, &flags).is_empty(), "p holds p/c");
        let typo = parse_all(&["g11:weight=5".into()]).unwrap();
        let warnings = unused_warnings(&job_file, &typo);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("g11") && warnings[0].contains("g1, p/c"));
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
            ("a b:weight=5", "invalid group name"),
            ("a/../b:weight=5", "invalid group name"),
        ] {
            let message = parse(bad).unwrap_err();
            assert!(message.contains(&format!("'{bad}'")), "{message}");
            assert!(message.contains(needle), "{bad}: {message}");
            assert!(!message.contains('\n'), "{message}");
        }
    }
}
