//! The scheduler list of `compare --sched` and the shared tunables of `--set`, resolved
//! and checked before any run starts.
//!
//! `--set k=v,…` applies each tunable to every listed scheduler that has it; a name that
//! no listed scheduler knows is an error. A tunable given for one scheduler in `--sched`
//! (`cfq:slice_idle=0`) wins over the same tunable in `--set` for that scheduler.

use ioslice_core::registry::lookup;
use ioslice_core::spec::parse_setting;
use ioslice_core::tunable::Tunables;
use ioslice_core::{SchedSpec, SchedulerInfo};

/// A scheduler ready to run: canonical name, the settings given, and the values of its
/// tunables split into those set explicitly and those left at their declared default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedScheduler {
    /// Canonical name with the settings given (per-scheduler ones first, then `--set`).
    pub spec: SchedSpec,
    /// Tunables set by `--sched` or `--set`, with their values, in declaration order.
    pub settings: Vec<(String, i64)>,
    /// The other tunables with their declared defaults, in declaration order. A policy
    /// may replace a declared default with one that suits the device.
    pub defaults: Vec<(String, i64)>,
}

/// Split `noop,deadline:read_expire=250,fifo_batch=1` into `noop` and
/// `deadline:read_expire=250,fifo_batch=1`: an item with `=` and no `:` belongs to the
/// scheduler before it.
pub fn split_schedulers(list: &str) -> Vec<String> {
    let mut specs: Vec<String> = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match specs.last_mut() {
            Some(last) if item.contains('=') && !item.contains(':') => {
                last.push(',');
                last.push_str(item);
            }
            _ => specs.push(item.to_string()),
        }
    }
    specs
}

/// Parse `--set` values (each `k=v[,k=v…]`) into settings in order; a later setting of
/// the same tunable replaces an earlier one, so unlike a spec a key may come twice (each
/// item is read by `core::spec`'s `parse_setting`, but the list is not a spec).
pub fn parse_set(values: &[String]) -> Result<Vec<(String, String)>, String> {
    let mut settings: Vec<(String, String)> = Vec::new();
    for item in values.iter().flat_map(|v| v.split(',')) {
        let (key, value) = parse_setting(item).map_err(|e| {
            format!("--set: invalid item '{item}': {e}: expected tunable=value[,tunable=value...]")
        })?;
        settings.retain(|(k, _)| *k != key);
        settings.push((key, value));
    }
    Ok(settings)
}

/// Resolve `--sched LIST` with the `--set` settings, then the kernel release (`version=`
/// for each scheduler that has it and was given none): every name, tunable and value checked.
pub fn resolve(
    list: &str,
    set: &[(String, String)],
    kernel: Option<&str>,
) -> Result<Vec<ResolvedScheduler>, String> {
    let specs = split_schedulers(list);
    if specs.is_empty() {
        return Err(format!(
            "--sched '{list}': no scheduler given: expected a comma-separated list such as noop,deadline"
        ));
    }
    let parsed = specs
        .iter()
        .map(|text| parse_one(text))
        .collect::<Result<Vec<_>, _>>()?;
    check_set_names(&parsed, set)?;
    let mut set = set.to_vec();
    if let Some(kernel) = kernel {
        if !set
            .iter()
            .any(|(name, _)| name == ioslice_core::kernel::TUNABLE)
        {
            set.push((ioslice_core::kernel::TUNABLE.into(), kernel.to_string()));
        }
    }
    parsed
        .into_iter()
        .map(|(spec, info)| resolve_one(spec, info, &set))
        .collect()
}

/// One `--sched` item: syntax, name and its own tunables checked.
fn parse_one(text: &str) -> Result<(SchedSpec, &'static SchedulerInfo), String> {
    let spec: SchedSpec = text.parse().map_err(|e| format!("--sched: {e}"))?;
    let info = lookup(&spec.name).map_err(|e| format!("--sched: {e}"))?;
    Tunables::resolve(info.name, info.tunables, &spec.settings)
        .map_err(|e| format!("--sched: {e}"))?;
    Ok((spec, info))
}

/// Every `--set` name must be a tunable of at least one listed scheduler.
fn check_set_names(
    parsed: &[(SchedSpec, &'static SchedulerInfo)],
    set: &[(String, String)],
) -> Result<(), String> {
    let knows = |name: &str| {
        parsed
            .iter()
            .any(|(_, info)| info.tunables.iter().any(|d| d.name == name))
    };
    let Some((unknown, _)) = set.iter().find(|(name, _)| !knows(name)) else {
        return Ok(());
    };
    let mut known: Vec<&str> = Vec::new();
    for def in parsed.iter().flat_map(|(_, info)| info.tunables) {
        if !known.contains(&def.name) {
            known.push(def.name);
        }
    }
    let listed: Vec<&str> = parsed.iter().map(|(spec, _)| spec.name.as_str()).collect();
    let known = if known.is_empty() {
        "none".to_string()
    } else {
        known.join(", ")
    };
    Err(format!(
        "--set: unknown tunable '{unknown}': no listed scheduler ({}) has it; their tunables: {known}",
        listed.join(", ")
    ))
}

/// Merge the `--set` settings the scheduler has (unless it sets them itself) and resolve.
fn resolve_one(
    spec: SchedSpec,
    info: &'static SchedulerInfo,
    set: &[(String, String)],
) -> Result<ResolvedScheduler, String> {
    let mut settings = spec.settings;
    for (name, value) in set {
        let has = info.tunables.iter().any(|d| d.name == name);
        let own = settings.iter().any(|(k, _)| k == name);
        if has && !own {
            settings.push((name.clone(), value.clone()));
        }
    }
    let tunables = Tunables::resolve(info.name, info.tunables, &settings)
        .map_err(|e| format!("--set: {e}"))?;
    let (explicit, defaults): (Vec<_>, Vec<_>) = tunables
        .iter()
        .map(|(def, value)| (def.name.to_string(), value))
        .partition(|(name, _)| settings.iter().any(|(k, _)| k == name));
    Ok(ResolvedScheduler {
        spec: SchedSpec {
            name: info.name.to_string(),
            settings,
        },
        settings: explicit,
        defaults,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn scheduler_lists_keep_tunables_with_their_scheduler() {
        assert_eq!(
            split_schedulers("noop, deadline:read_expire=250,fifo_batch=1,noop:nomerges=1"),
            vec![
                "noop",
                "deadline:read_expire=250,fifo_batch=1",
                "noop:nomerges=1"
            ]
        );
    }

    #[test]
    fn set_parses_lists_and_later_settings_win() {
        let values = vec!["a=1,b=2".to_string(), "a=3".to_string()];
        assert_eq!(parse_set(&values), Ok(set(&[("b", "2"), ("a", "3")])));
        for bad in ["a", "=1", "a=", "a=1,,b=2"] {
            let message = parse_set(&[bad.to_string()]).unwrap_err();
            assert!(message.contains("expected tunable=value"), "{message}");
        }
    }

    #[test]
    fn set_applies_where_known_and_per_scheduler_settings_win() {
        let resolved = resolve(
            "noop,deadline:fifo_batch=1",
            &set(&[("fifo_batch", "4"), ("read_expire", "250")]),
            Some("2.6.10"),
        )
        .unwrap();
        assert_eq!(resolved[0].spec.to_string(), "noop");
        assert_eq!(
            resolved[1].spec.to_string(),
            "deadline:fifo_batch=1,read_expire=250"
        );
        let names = |pairs: &[(String, i64)]| -> Vec<String> {
            pairs.iter().map(|(n, _)| n.clone()).collect()
        };
        assert_eq!(
            resolved[1].settings,
            [
                ("read_expire".to_string(), 250),
                ("fifo_batch".to_string(), 1)
            ],
            "declaration order"
        );
        assert_eq!(
            names(&resolved[1].defaults),
            ["write_expire", "writes_starved", "front_merges"]
        );
    }

    #[test]
    fn aliases_resolve_to_canonical_names() {
        let resolved = resolve("none", &[], None).unwrap();
        assert_eq!(resolved[0].spec.name, "noop");
    }

    #[test]
    fn unknown_and_bad_tunables_are_named() {
        let message = resolve("noop,deadline", &set(&[("slice_idlee", "0")]), None).unwrap_err();
        assert!(message.contains("'slice_idlee'"), "{message}");
        assert!(message.contains("read_expire"), "{message}");
        assert!(message.contains("noop, deadline"), "{message}");
        let message = resolve("deadline", &set(&[("fifo_batch", "-1")]), None).unwrap_err();
        assert!(
            message.starts_with("--set:") && message.contains("-1"),
            "{message}"
        );
        let message = resolve("deadline:nonsense=1", &[], None).unwrap_err();
        assert!(message.contains("nonsense"), "{message}");
        let message = resolve("elevator9", &[], None).unwrap_err();
        assert!(message.contains("elevator9"), "{message}");
        assert!(resolve(" , ", &[], None)
            .unwrap_err()
            .contains("no scheduler"));
    }
}
