//! Scheduler specifications (`deadline:read_expire=250,fifo_batch=1`) and tunables.
//!
//! Tunables keep the kernel's names and units, so what a user knows from
//! `/sys/block/<dev>/queue/iosched/` carries over one to one.

use std::fmt;
use std::str::FromStr;

use crate::spec::{Spec, SpecError};

/// A scheduler named with its tunable settings, as `--sched` takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedSpec {
    /// The scheduler's name or alias.
    pub name: String,
    /// `name=value` settings in the order given.
    pub settings: Vec<(String, String)>,
}

/// A scheduler specification or tunable that cannot be accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TunableError {
    /// The text is not `NAME[:tunable=value,...]`.
    #[error(
        "invalid scheduler specification '{spec}': {reason}: expected NAME[:tunable=value,...]"
    )]
    Syntax {
        /// The whole specification.
        spec: String,
        /// What is wrong with it.
        reason: SpecError,
    },
    /// No scheduler has this name.
    #[error("unknown scheduler '{name}': expected one of {valid}")]
    UnknownScheduler {
        /// The name given.
        name: String,
        /// The valid names, comma-separated.
        valid: String,
    },
    /// The scheduler has no tunable of this name.
    #[error("unknown tunable '{name}' for scheduler {scheduler}: expected one of {valid}")]
    UnknownTunable {
        /// The scheduler.
        scheduler: String,
        /// The tunable given.
        name: String,
        /// The valid tunables, comma-separated.
        valid: String,
    },
    /// The value is not a number (or release) in range.
    #[error("invalid value '{value}' for {scheduler} tunable {name}: expected {expected}")]
    BadValue {
        /// The scheduler.
        scheduler: String,
        /// The tunable.
        name: String,
        /// The value given.
        value: String,
        /// What the tunable accepts, in words (its range and unit).
        expected: String,
    },
    /// Tunables that each make sense alone but not together.
    #[error("conflicting {scheduler} tunables: {why}")]
    Conflict {
        /// The scheduler.
        scheduler: String,
        /// What conflicts and what is expected.
        why: String,
    },
    /// A group weight outside the range this scheduler takes.
    #[error("group weight {weight} for '{group}' is out of range for {scheduler}: expected {min}..={max}")]
    GroupWeight {
        /// The scheduler.
        scheduler: String,
        /// The group's path.
        group: String,
        /// The weight given.
        weight: u32,
        /// Smallest accepted weight.
        min: u32,
        /// Largest accepted weight.
        max: u32,
    },
}

impl FromStr for SchedSpec {
    type Err = TunableError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let spec: Spec = text.parse().map_err(|reason| TunableError::Syntax {
            spec: text.to_string(),
            reason,
        })?;
        Ok(Self {
            name: spec.name,
            settings: spec.settings,
        })
    }
}

impl fmt::Display for SchedSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::spec::write_spec(f, &self.name, &self.settings)
    }
}

/// One tunable: its kernel name, default, accepted range and unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TunableDef {
    /// The kernel's sysfs name.
    pub name: &'static str,
    /// The kernel's default.
    pub default: i64,
    /// Smallest accepted value.
    pub min: i64,
    /// Largest accepted value.
    pub max: i64,
    /// The unit ("ms", "requests", "KiB", "bool", …).
    pub unit: &'static str,
    /// What it does, in a few words.
    pub help: &'static str,
}

impl TunableDef {
    /// A value of this tunable as text: a kernel release as the kernel writes it
    /// (`2.6.28`) for a tunable of unit [`crate::kernel::UNIT`], else the number.
    pub fn format_value(&self, value: i64) -> String {
        if self.unit == crate::kernel::UNIT {
            crate::kernel::format(value)
        } else {
            value.to_string()
        }
    }

    /// What the tunable accepts, in words: `an integer in 0..=2 (requests)`, or for a
    /// release `a kernel release from 2.6.10 on (such as 2.6.28)`.
    pub fn expected(&self) -> String {
        if self.unit == crate::kernel::UNIT {
            format!(
                "a kernel release from {} on (such as {}; {} and later run the newest model, {})",
                self.format_value(self.min),
                self.format_value(self.min),
                self.format_value(self.max),
                self.format_value(self.max)
            )
        } else {
            format!("an integer in {}..={} ({})", self.min, self.max, self.unit)
        }
    }

    /// The value in force for a value given: a kernel release after the newest one the
    /// policy models is that newest one (a policy behaves as the newest release it models
    /// that is not after the value); any other value is itself.
    fn in_force(&self, value: i64) -> i64 {
        if self.unit == crate::kernel::UNIT {
            value.min(self.max)
        } else {
            value
        }
    }

    /// The value `text` gives this tunable: a number, `true`/`false` (`on`/`off`,
    /// `yes`/`no`), or for a tunable of unit [`crate::kernel::UNIT`] also a release
    /// (`2.6.28`). The range is checked by the caller.
    fn parse_value(&self, text: &str) -> Option<i64> {
        if self.unit == crate::kernel::UNIT {
            if let Some(release) = crate::kernel::parse(text) {
                return Some(release);
            }
        }
        parse_value(text)
    }
}

/// Resolved tunable values for one scheduler: the defaults overridden by the settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tunables {
    defs: &'static [TunableDef],
    values: Vec<i64>,
    /// Which tunables the settings named (the rest hold their defaults).
    set: Vec<bool>,
}

impl Tunables {
    /// The defaults of `defs` with `settings` applied; names and values are checked.
    pub fn resolve(
        scheduler: &str,
        defs: &'static [TunableDef],
        settings: &[(String, String)],
    ) -> Result<Self, TunableError> {
        let mut values: Vec<i64> = defs.iter().map(|d| d.default).collect();
        let mut set = vec![false; defs.len()];
        for (name, value) in settings {
            let index = defs.iter().position(|d| d.name == name).ok_or_else(|| {
                TunableError::UnknownTunable {
                    scheduler: scheduler.to_string(),
                    name: name.clone(),
                    valid: if defs.is_empty() {
                        "none (this scheduler has no tunables)".to_string()
                    } else {
                        defs.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
                    },
                }
            })?;
            let def = &defs[index];
            values[index] = def
                .parse_value(value)
                .map(|v| def.in_force(v))
                .filter(|v| (def.min..=def.max).contains(v))
                .ok_or_else(|| TunableError::BadValue {
                    scheduler: scheduler.to_string(),
                    name: name.clone(),
                    value: value.clone(),
                    expected: def.expected(),
                })?;
            set[index] = true;
        }
        Ok(Self { defs, values, set })
    }

    /// The value of a tunable. Panics if the policy asks for a name it did not declare
    /// (a programming error caught by every policy's tests).
    pub fn get(&self, name: &str) -> i64 {
        let index = self
            .defs
            .iter()
            .position(|d| d.name == name)
            .unwrap_or_else(|| panic!("tunable {name} is not declared"));
        self.values[index]
    }

    /// A non-negative tunable as `u64`.
    pub fn get_u64(&self, name: &str) -> u64 {
        self.get(name).max(0) as u64
    }

    /// A boolean tunable.
    pub fn get_bool(&self, name: &str) -> bool {
        self.get(name) != 0
    }

    /// Whether the settings named this tunable explicitly, as opposed to it holding its
    /// default (a policy may pick a device-dependent default, as CFQ does for `slice_idle`).
    pub fn is_set(&self, name: &str) -> bool {
        self.defs
            .iter()
            .position(|d| d.name == name)
            .is_some_and(|index| self.set[index])
    }

    /// Every tunable with its value, in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static TunableDef, i64)> + '_ {
        self.defs.iter().zip(self.values.iter().copied())
    }
}

fn parse_value(text: &str) -> Option<i64> {
    match text {
        "true" | "on" | "yes" => Some(1),
        "false" | "off" | "no" => Some(0),
        _ => text.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFS: &[TunableDef] = &[TunableDef {
        name: "fifo_batch",
        default: 16,
        min: 0,
        max: i32::MAX as i64,
        unit: "requests",
        help: "",
    }];

    #[test]
    fn spec_parses_name_and_settings() {
        let spec: SchedSpec = "deadline:read_expire=250,fifo_batch=1".parse().unwrap();
        assert_eq!(spec.name, "deadline");
        assert_eq!(spec.settings.len(), 2);
        assert_eq!(spec.to_string(), "deadline:read_expire=250,fifo_batch=1");
        assert!("deadline:read_expire".parse::<SchedSpec>().is_err());
        assert!(":x=1".parse::<SchedSpec>().is_err());
        assert_eq!(
            "cfq:slice_idle=0,slice_idle=8"
                .parse::<SchedSpec>()
                .unwrap_err()
                .to_string(),
            "invalid scheduler specification 'cfq:slice_idle=0,slice_idle=8': setting 'slice_idle' is given twice: expected NAME[:tunable=value,...]"
        );
    }

    #[test]
    fn a_spec_parses_back_from_its_text() {
        for text in [
            "noop",
            "cfq:slice_idle=0,group_isolation=1",
            "cfq:version=2.6.28",
        ] {
            let spec: SchedSpec = text.parse().unwrap();
            assert_eq!(spec.to_string(), text);
            assert_eq!(spec.to_string().parse::<SchedSpec>(), Ok(spec));
        }
    }

    #[test]
    fn values_are_checked() {
        let ok = Tunables::resolve("deadline", DEFS, &[("fifo_batch".into(), "1".into())]);
        assert_eq!(ok.unwrap().get("fifo_batch"), 1);
        let bad = Tunables::resolve("deadline", DEFS, &[("fifo_batch".into(), "-1".into())]);
        assert!(bad.unwrap_err().to_string().contains("fifo_batch"));
        let unknown = Tunables::resolve("deadline", DEFS, &[("nope".into(), "1".into())]);
        assert!(unknown.unwrap_err().to_string().contains("fifo_batch"));
    }

    const RELEASE: &[TunableDef] = &[TunableDef {
        name: "version",
        default: 40400,
        min: 20610,
        max: 40400,
        unit: crate::kernel::UNIT,
        help: "",
    }];

    #[test]
    fn releases_are_read_as_the_kernel_writes_them() {
        let given = |text: &str| {
            Tunables::resolve("cfq", RELEASE, &[("version".into(), text.into())])
                .map(|t| t.get("version"))
        };
        assert_eq!(given("2.6.28"), Ok(20628));
        assert_eq!(given("20635"), Ok(20635));
        assert_eq!(
            given("6.18"),
            Ok(40400),
            "the newest model for a later release"
        );
        assert_eq!(
            given("2.6.9").unwrap_err().to_string(),
            "invalid value '2.6.9' for cfq tunable version: expected a kernel release from 2.6.10 on (such as 2.6.10; 4.4 and later run the newest model, 4.4)"
        );
        assert_eq!(RELEASE[0].format_value(20628), "2.6.28");
        assert_eq!(DEFS[0].format_value(16), "16");
    }

    #[test]
    fn explicit_settings_are_told_apart_from_defaults() {
        let defaults = Tunables::resolve("deadline", DEFS, &[]).unwrap();
        assert!(!defaults.is_set("fifo_batch"));
        let same_value = [("fifo_batch".to_string(), "16".to_string())];
        let explicit = Tunables::resolve("deadline", DEFS, &same_value).unwrap();
        assert!(explicit.is_set("fifo_batch"));
        assert!(!explicit.is_set("undeclared"));
    }
}
