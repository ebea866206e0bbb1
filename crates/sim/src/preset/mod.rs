//! Device presets and the `sim:PRESET[:key=value,...]` device syntax.
//!
//! Each preset is a table of parameters with a value, a unit and the source the value comes
//! from (a drive's datasheet, one of DiskSim's validated disk files, a seed thread, or
//! "calibrated: …" for values set to reproduce a published one-client figure). Any parameter
//! can be overridden on the command line; [`presets`] lists them all.
//!
//! `ioslice_core::spec` splits the text; the values are plain numbers in the unit the
//! parameter's name ends with (`seek_avg_ms=8.5`, `cache_mib=64`), as sysfs names carry
//! theirs, so they are read here as numbers rather than as sizes or durations with units.

use std::fmt;
use std::str::FromStr;

use ioslice_core::spec::{write_spec, Spec, SpecError};
use ioslice_core::Nanos;

use crate::device::controller_cache::{ControllerCache, ControllerCacheConfig};
use crate::device::hdd::geometry::GeometryConfig;
use crate::device::hdd::{Hdd, HddConfig};
use crate::device::null::NullDevice;
use crate::device::raid::{Raid, RaidConfig, RaidLevel};
use crate::device::ssd::{Ssd, SsdConfig};
use crate::device::{DeviceModel, ZoneGeometry};

mod catalogue;

use catalogue::table;

/// A device named on the command line: a preset and parameter overrides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceSpec {
    /// Preset name, without the `sim:` prefix.
    pub preset: String,
    /// `key=value` overrides, in the order given.
    pub overrides: Vec<(String, String)>,
}

/// Why a device could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// The text is not `sim:PRESET[:key=value,...]`.
    #[error("bad device `{spec}`: {reason}: expected sim:PRESET[:key=value,...]")]
    Syntax {
        /// The text given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No preset of that name.
    #[error("unknown device preset `{name}`; valid presets: {valid}")]
    UnknownPreset {
        /// The name given.
        name: String,
        /// The presets there are.
        valid: String,
    },
    /// The preset has no such parameter.
    #[error("unknown parameter `{name}` for preset `{preset}`; valid parameters: {valid}")]
    UnknownParameter {
        /// The preset.
        preset: String,
        /// The parameter given.
        name: String,
        /// The preset's parameters.
        valid: String,
    },
    /// A value of the wrong form or out of range.
    #[error("bad value `{value}` for `{name}`: expected {expected}")]
    BadValue {
        /// The parameter.
        name: String,
        /// The value given.
        value: String,
        /// The form and range expected.
        expected: String,
    },
    /// Values that are each valid but do not fit together.
    #[error("inconsistent parameters for `{preset}`: {reason}")]
    Inconsistent {
        /// The preset.
        preset: String,
        /// What does not fit.
        reason: String,
    },
}

/// One parameter of a preset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    /// Name, as used in overrides.
    pub name: &'static str,
    /// Value (the preset's default, or the override).
    pub value: String,
    /// Unit.
    pub unit: &'static str,
    /// Where the value comes from.
    pub source: &'static str,
}

/// A preset and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresetInfo {
    /// Name, without the `sim:` prefix.
    pub name: &'static str,
    /// One line on what it models.
    pub summary: String,
    /// Every parameter with its default value and source.
    pub params: Vec<ParamInfo>,
}

impl FromStr for DeviceSpec {
    type Err = DeviceError;

    fn from_str(text: &str) -> Result<Self, DeviceError> {
        let syntax = |reason: String| DeviceError::Syntax {
            spec: text.to_string(),
            reason,
        };
        let rest = text
            .strip_prefix("sim:")
            .ok_or_else(|| syntax("no `sim:` prefix".to_string()))?;
        let spec: Spec = rest.parse().map_err(|e: SpecError| syntax(e.to_string()))?;
        Ok(Self {
            preset: spec.name,
            overrides: spec.settings,
        })
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sim:")?;
        write_spec(f, &self.preset, &self.overrides)
    }
}

/// Every preset with every parameter, its default value, unit and source.
pub fn presets() -> Vec<PresetInfo> {
    table()
        .into_iter()
        .map(|(name, summary, params)| PresetInfo {
            name,
            summary: summary.to_string(),
            params: params(),
        })
        .collect()
}

/// Build the device a spec names.
pub fn build(spec: &DeviceSpec) -> Result<Box<dyn DeviceModel>, DeviceError> {
    let values = Values::resolve(spec)?;
    let name = spec.to_string();
    let inconsistent = |reason: String| DeviceError::Inconsistent {
        preset: spec.preset.clone(),
        reason,
    };
    match spec.preset.as_str() {
        "sata-7200" | "sata-2009" | "ide-2004" => {
            let segments = write_segments(&values)?;
            let hdd = Hdd::new(&hdd_config(&values, name)?).map_err(inconsistent)?;
            Ok(Box::new(limit_write_segments(hdd, segments)))
        }
        "smr" => {
            let segments = write_segments(&values)?;
            let hdd = Hdd::new(&hdd_config(&values, name)?).map_err(inconsistent)?;
            let geometry =
                zone_geometry(&values, hdd.geometry().capacity()).map_err(|e| match e {
                    ZoneParamError::Param(e) => e,
                    ZoneParamError::Layout(reason) => inconsistent(reason),
                })?;
            Ok(Box::new(
                limit_write_segments(hdd, segments).with_zones(geometry),
            ))
        }
        "raid5-12" | "eva-4400" => build_raid(&values, name).map_err(|e| match e {
            RaidBuildError::Param(e) => e,
            RaidBuildError::Model(reason) => inconsistent(reason),
        }),
        "ssd" | "nvme" => Ok(Box::new(Ssd::new(ssd_config(&values, name)?))),
        _ => {
            let latency = values.integer("latency_ns", 0, 10_000_000_000)?;
            let parallelism = values.integer("parallelism", 1, 1_000_000)? as usize;
            let capacity = values.capacity()?;
            Ok(Box::new(NullDevice::new(
                name,
                latency,
                parallelism,
                capacity,
            )))
        }
    }
}

/// A preset's parameter values after overrides.
struct Values {
    params: Vec<ParamInfo>,
}

impl Values {
    fn resolve(spec: &DeviceSpec) -> Result<Self, DeviceError> {
        let table = table();
        let Some((_, _, defaults)) = table.iter().find(|(name, _, _)| *name == spec.preset) else {
            let valid = table
                .iter()
                .map(|(name, _, _)| *name)
                .collect::<Vec<_>>()
                .join(", ");
            return Err(DeviceError::UnknownPreset {
                name: spec.preset.clone(),
                valid,
            });
        };
        let mut params = defaults();
        for (key, value) in &spec.overrides {
            match params.iter_mut().find(|p| p.name == key) {
                Some(p) => p.value = value.clone(),
                None => {
                    let valid = params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ");
                    return Err(DeviceError::UnknownParameter {
                        preset: spec.preset.clone(),
                        name: key.clone(),
                        valid,
                    });
                }
            }
        }
        Ok(Self { params })
    }

    fn raw(&self, name: &str) -> &str {
        let param = self.params.iter().find(|p| p.name == name);
        &param
            .expect("preset code asks only for its own parameters")
            .value
    }

    fn bad(&self, name: &str, expected: String) -> DeviceError {
        DeviceError::BadValue {
            name: name.to_string(),
            value: self.raw(name).to_string(),
            expected,
        }
    }

    fn number(&self, name: &str, min: f64, max: f64) -> Result<f64, DeviceError> {
        match self.raw(name).parse::<f64>() {
            Ok(v) if v.is_finite() && (min..=max).contains(&v) => Ok(v),
            _ => Err(self.bad(name, format!("a number from {min} to {max}"))),
        }
    }

    fn integer(&self, name: &str, min: u64, max: u64) -> Result<u64, DeviceError> {
        match self.raw(name).parse::<u64>() {
            Ok(v) if (min..=max).contains(&v) => Ok(v),
            _ => Err(self.bad(name, format!("an integer from {min} to {max}"))),
        }
    }

    fn flag(&self, name: &str) -> Result<bool, DeviceError> {
        match self.raw(name) {
            "on" | "1" | "true" | "yes" => Ok(true),
            "off" | "0" | "false" | "no" => Ok(false),
            _ => Err(self.bad(name, "on or off (also 1/0, true/false, yes/no)".into())),
        }
    }

    /// Milliseconds as [`Nanos`].
    fn millis(&self, name: &str, max: f64) -> Result<Nanos, DeviceError> {
        Ok((self.number(name, 0.0, max)? * 1e6).round() as Nanos)
    }

    /// Microseconds as [`Nanos`].
    fn micros(&self, name: &str, max: f64) -> Result<Nanos, DeviceError> {
        Ok((self.number(name, 0.0, max)? * 1e3).round() as Nanos)
    }

    /// `capacity_gib` in sectors.
    fn capacity(&self) -> Result<u64, DeviceError> {
        Ok((self.number("capacity_gib", 0.001, 1_048_576.0)? * 2_097_152.0) as u64)
    }

    /// A size in KiB or MiB as sectors.
    fn sectors(&self, name: &str, kib_per_unit: u64, max: u64) -> Result<u64, DeviceError> {
        Ok(self.integer(name, 0, max)? * kib_per_unit * 2)
    }
}

/// `write_segments`: a count, or `unlimited` (`None`).
fn write_segments(values: &Values) -> Result<Option<usize>, DeviceError> {
    if values.raw("write_segments") == "unlimited" {
        return Ok(None);
    }
    match values.integer("write_segments", 1, 1 << 20) {
        Ok(n) => Ok(Some(n as usize)),
        Err(_) => Err(values.bad(
            "write_segments",
            "an integer from 1 to 1048576, or unlimited".into(),
        )),
    }
}

/// `hdd` with its write-back cache limited to `segments` write segments, if given.
fn limit_write_segments(hdd: Hdd, segments: Option<usize>) -> Hdd {
    match segments {
        Some(n) => hdd.with_write_segments(n),
        None => hdd,
    }
}

fn hdd_config(values: &Values, name: String) -> Result<HddConfig, DeviceError> {
    let cache = values.sectors("cache_mib", 1024, 65_536)?;
    let segments = values.integer("segments", 1, 1024)? as usize;
    Ok(HddConfig {
        name,
        geometry: GeometryConfig {
            capacity_sectors: values.capacity()?,
            rpm: values.integer("rpm", 1000, 20_000)? as u32,
            heads: values.integer("heads", 1, 64)? as u32,
            zones: values.integer("zones", 1, 1000)? as u32,
            outer_mbps: values.number("outer_mbps", 1.0, 10_000.0)?,
            inner_mbps: values.number("inner_mbps", 1.0, 10_000.0)?,
            head_switch: values.millis("head_switch_ms", 100.0)?,
        },
        seek_track_ms: values.number("seek_track_ms", 0.01, 1000.0)?,
        seek_avg_ms: values.number("seek_avg_ms", 0.01, 1000.0)?,
        seek_full_ms: values.number("seek_full_ms", 0.01, 1000.0)?,
        write_settle: values.millis("write_settle_ms", 100.0)?,
        read_overhead: values.micros("read_overhead_us", 100_000.0)?,
        read_miss_overhead: values.micros("read_miss_overhead_us", 100_000.0)?,
        write_overhead: values.micros("write_overhead_us", 100_000.0)?,
        bus_mbps: values.number("bus_mbps", 1.0, 100_000.0)?,
        segments,
        segment_sectors: cache / segments as u64,
        readahead_sectors: values.sectors("readahead_kib", 1, 1 << 26)?,
        readahead_min_sectors: values.sectors("readahead_min_kib", 1, 1 << 26)?,
        write_cache: values.flag("wce")?,
        write_cache_sectors: values.sectors("wcache_mib", 1024, 65_536)?,
        queue_depth: values.integer("ncq", 1, 256)? as usize,
        age_limit: values.millis("age_limit_ms", 1e9)?,
    })
}

enum ZoneParamError {
    Param(DeviceError),
    Layout(String),
}

/// The zone layout of a zoned preset on a disk of `capacity` sectors.
fn zone_geometry(values: &Values, capacity: u64) -> Result<ZoneGeometry, ZoneParamError> {
    let zone_sectors = values
        .sectors("zone_mib", 1024, 1 << 20)
        .map_err(ZoneParamError::Param)?;
    if zone_sectors == 0 {
        return Err(ZoneParamError::Param(
            values.bad("zone_mib", "an integer from 1 to 1048576".into()),
        ));
    }
    let count = capacity.div_ceil(zone_sectors);
    let conventional = values
        .integer("conventional_zones", 0, u64::MAX)
        .map_err(ZoneParamError::Param)?;
    if conventional > count {
        return Err(ZoneParamError::Layout(format!(
            "conventional_zones={conventional} but the disk has {count} zones of {} MiB",
            zone_sectors / 2048
        )));
    }
    let max_open = values
        .integer("max_open_zones", 0, 1 << 32)
        .map_err(ZoneParamError::Param)?;
    Ok(ZoneGeometry {
        zone_sectors,
        conventional,
        count,
        max_open,
    })
}

fn ssd_config(values: &Values, name: String) -> Result<SsdConfig, DeviceError> {
    Ok(SsdConfig {
        name,
        capacity_sectors: values.capacity()?,
        queue_depth: values.integer("queue_depth", 1, 65_536)? as usize,
        channels: values.integer("channels", 1, 1024)? as usize,
        overhead: values.micros("overhead_us", 1e6)?,
        read_latency: values.micros("read_us", 1e6)?,
        write_latency: values.micros("write_us", 1e6)?,
        discard_latency: values.micros("discard_us", 1e6)?,
        channel_mbps: values.number("channel_mbps", 1.0, 1e6)?,
        link_mbps: values.number("link_mbps", 1.0, 1e6)?,
    })
}

enum RaidBuildError {
    Param(DeviceError),
    Model(String),
}

impl From<DeviceError> for RaidBuildError {
    fn from(e: DeviceError) -> Self {
        Self::Param(e)
    }
}

fn build_raid(values: &Values, name: String) -> Result<Box<dyn DeviceModel>, RaidBuildError> {
    let level = match values.integer("level", 0, 5)? {
        0 => RaidLevel::Raid0,
        5 => RaidLevel::Raid5,
        _ => return Err(values.bad("level", "0 or 5".into()).into()),
    };
    let count = values.integer("members", 2, 256)? as usize;
    let member = hdd_config(values, format!("{name} member"))?;
    let segments = write_segments(values)?;
    let members = (0..count)
        .map(|_| {
            Hdd::new(&member)
                .map(|hdd| Box::new(limit_write_segments(hdd, segments)) as Box<dyn DeviceModel>)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(RaidBuildError::Model)?;
    let config = RaidConfig {
        name,
        level,
        chunk_sectors: values.integer("chunk_kib", 1, 1 << 20)? * 2,
        queue_depth: values.integer("queue_depth", 1, 1 << 20)? as usize,
    };
    let chunk = config.chunk_sectors;
    let raid = Raid::new(config, members).map_err(RaidBuildError::Model)?;
    let cache_mib = values.integer("ctrl_cache_mib", 0, 1 << 24)?;
    if cache_mib == 0 {
        return Ok(Box::new(raid));
    }
    let stripe = raid.stripe_sectors();
    let (first, ahead) = match values.raw("ctrl_readahead") {
        "stripe" => (chunk, stripe),
        "chunk" => (chunk, chunk),
        "off" => (0, 0),
        text => match text.strip_suffix("stripes").map(str::parse::<u64>) {
            Some(Ok(n)) if (1..=64).contains(&n) => (chunk, stripe * n),
            _ => {
                let expected = "stripe, Nstripes (N from 1 to 64), chunk or off".to_string();
                return Err(values.bad("ctrl_readahead", expected).into());
            }
        },
    };
    let cache = ControllerCacheConfig {
        capacity_lines: usize::try_from(cache_mib * 2048 / chunk).unwrap_or(usize::MAX),
        line_sectors: chunk,
        first_readahead_sectors: first,
        readahead_sectors: ahead,
        link_mbps: values.number("ctrl_link_mbps", 1.0, 1e6)?,
        streams: values.integer("ctrl_streams", 1, 1 << 20)? as usize,
    };
    Ok(Box::new(
        ControllerCache::new(cache, Box::new(raid)).map_err(RaidBuildError::Model)?,
    ))
}
