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

fn param(name: &'static str, value: &str, unit: &'static str, source: &'static str) -> ParamInfo {
    ParamInfo {
        name,
        value: value.to_string(),
        unit,
        source,
    }
}

const DATASHEET_SYNTHESIS: &str =
    "7200 rpm synthesis of WD HC310, HGST 7K4000, Seagate ES.3, Hitachi 7K320/7K500 datasheets";
const DATASHEET_ROTATION: &str =
    "WD Ultrastar DC HC310 and Seagate Constellation ES.3 datasheets: 7200 rpm";
const ASSUMED: &str = "assumption: affects only head switches and cylinder count";
const RA_MIN: &str = "assumption: DiskSim's minimum read-ahead; not fitted to any result";
const WSEG_ANY: &str =
    "assumption: dirty data in any number of extents (DiskSim's maximum number of write segments unbounded)";
const AGE: &str =
    "assumption: starvation guard of the on-drive SPTF (DiskSim ioqueue timeout scheme)";

/// The modern 7200 rpm SATA disk (the tool's default device).
fn sata_7200() -> Vec<ParamInfo> {
    vec![
        param(
            "capacity_gib",
            "931.5",
            "GiB",
            "1 TB class, as Seagate Constellation ES.3 ST1000NM0033 (product manual)",
        ),
        param("rpm", "7200", "rpm", DATASHEET_ROTATION),
        param("heads", "4", "surfaces", ASSUMED),
        param("zones", "24", "zones", DATASHEET_SYNTHESIS),
        param("outer_mbps", "200", "MB/s", DATASHEET_SYNTHESIS),
        param("inner_mbps", "100", "MB/s", DATASHEET_SYNTHESIS),
        param("seek_track_ms", "0.8", "ms", DATASHEET_SYNTHESIS),
        param("seek_avg_ms", "8.5", "ms", DATASHEET_SYNTHESIS),
        param("seek_full_ms", "18", "ms", DATASHEET_SYNTHESIS),
        param(
            "write_settle_ms",
            "0.8",
            "ms",
            "WD Ultrastar DC HC310 datasheet: average seek 8.2 ms write, 7.4 ms read",
        ),
        param("head_switch_ms", "0.3", "ms", DATASHEET_SYNTHESIS),
        param(
            "read_overhead_us",
            "150",
            "µs",
            "DiskSim maxtor300g.diskspecs (Maxtor Atlas 10K V): overheads 0.1–0.34 ms",
        ),
        param(
            "read_miss_overhead_us",
            "300",
            "µs",
            "DiskSim maxtor300g.diskspecs (Maxtor Atlas 10K V): overheads 0.1–0.34 ms",
        ),
        param(
            "write_overhead_us",
            "200",
            "µs",
            "DiskSim maxtor300g.diskspecs (Maxtor Atlas 10K V): overheads 0.1–0.34 ms",
        ),
        param(
            "bus_mbps",
            "600",
            "MB/s",
            "SATA 3.0 link: 6 Gb/s with 8b/10b coding",
        ),
        param(
            "cache_mib",
            "64",
            "MiB",
            "Seagate Barracuda XT and BarraCuda ST1000DM010 specifications: 64 MB cache",
        ),
        param(
            "segments",
            "16",
            "segments",
            "assumption: DiskSim-style segmented buffer",
        ),
        param(
            "readahead_kib",
            "1024",
            "KiB",
            "assumption: read-ahead up to a quarter of a segment",
        ),
        param("readahead_min_kib", "64", "KiB", RA_MIN),
        param(
            "wce",
            "on",
            "on/off",
            "drives ship with the write cache enabled (write-back: DiskSim's fast write level)",
        ),
        param(
            "wcache_mib",
            "16",
            "MiB",
            "assumption: a quarter of the buffer for dirty data",
        ),
        param(
            "write_segments",
            "unlimited",
            "segments or unlimited",
            WSEG_ANY,
        ),
        param("ncq", "31", "commands", "SATA NCQ: 32 tags, Linux uses 31"),
        param("age_limit_ms", "500", "ms", AGE),
    ]
}

/// The 2009 SATA disk of seed 002: the modern disk with the media rate the seed's own `dd`
/// runs show (both 234 MB files read in 5.28 s), the zones keeping sata-7200's 2 : 1.
fn sata_2009() -> Vec<ParamInfo> {
    overridden(
        sata_7200(),
        &[
            ("outer_mbps", "90", "calibrated: seed 002 test 3 without io-throttle, the BE7 dd's 5.28 s for both 234 MB files (89 MB/s; `ioslice seeds scenarios/seed-002/rt-vs-be7-unlimited.fio`, its calibration line)"),
            ("inner_mbps", "45", "assumption: half the outer zone's rate, as sata-7200's zones"),
        ],
    )
}

/// `params` with some values replaced, each with where its new value comes from.
fn overridden(
    mut params: Vec<ParamInfo>,
    changes: &[(&str, &str, &'static str)],
) -> Vec<ParamInfo> {
    for param in &mut params {
        if let Some((_, value, source)) = changes.iter().find(|(name, _, _)| *name == param.name) {
            param.value = (*value).to_string();
            param.source = source;
        }
    }
    params
}

const SEED3: &str = "seed 003 (2004 time-sliced CFQ tests on an IDE drive)";

/// The single ~2004 7200 rpm IDE disk of seed 003.
fn ide_2004() -> Vec<ParamInfo> {
    vec![
        param("capacity_gib", "74.5", "GiB", "80 GB, a common 2004 size; seed 003's test partition hdc1 is 30.7 GB"),
        param("rpm", "7200", "rpm", SEED3),
        param("heads", "4", "surfaces", ASSUMED),
        param("zones", "16", "zones", "DiskSim valid/barracuda.model: 11 zones; Hitachi Deskstar 7K500 spec: zones up to 29"),
        param("outer_mbps", "58", "MB/s", "assumption: a 2004 platter a little below the Hitachi Deskstar 7K500 spec's zone 0 (64.8 MB/s, 2005)"),
        param("inner_mbps", "31", "MB/s", "Hitachi Deskstar 7K500 spec, table 10: zone 29 at 31.0 MB/s"),
        param("seek_track_ms", "2.0", "ms", "calibrated: seed 003 random 64 KiB reads; DiskSim valid/barracuda.seek (ST32171W) 1-cylinder seek 1.94 ms"),
        param("seek_avg_ms", "8.5", "ms", DATASHEET_SYNTHESIS),
        param("seek_full_ms", "17", "ms", "DiskSim valid/barracuda.seek (ST32171W) full stroke 16.68 ms; Hitachi Travelstar 7K320 spec 20 ms"),
        param("write_settle_ms", "0.2", "ms", "calibrated: seed 003 random 4 KiB writes; Hitachi Travelstar 7K320 spec single-track write−read 0.1 ms"),
        param("head_switch_ms", "0.5", "ms", DATASHEET_SYNTHESIS),
        param("read_overhead_us", "140", "µs", "calibrated: seed 003 sequential 4 KiB O_DIRECT reads, 19837 KB/s (with the simulator's 20 µs host latency)"),
        param("read_miss_overhead_us", "600", "µs", "DiskSim valid/barracuda.diskspecs (ST32171W): read-miss overhead ≈0.6 ms"),
        param("write_overhead_us", "240", "µs", "calibrated: seed 003 sequential 4 KiB O_DIRECT writes, 13406 KB/s (with the simulator's 20 µs host latency)"),
        param("bus_mbps", "100", "MB/s", "ATA-100 (UDMA mode 5)"),
        param("cache_mib", "8", "MiB", "assumption: 8 MB buffer of 2004 7200 rpm ATA drives (2–8 MB were sold)"),
        param("segments", "4", "segments", "assumption: DiskSim-style segmented buffer"),
        param("readahead_kib", "512", "KiB", "assumption: read-ahead up to a quarter of the buffer"),
        param("readahead_min_kib", "0", "KiB", "DiskSim validated ST32171W (barracuda.diskspecs): minimum read-ahead 0 blocks, so the next command stops read-ahead at once"),
        param("wce", "on", "on/off", "seed 003: 13 MB/s sequential O_DIRECT 4 KiB writes need it; IDE drives shipped with it on"),
        param("wcache_mib", "6", "MiB", "calibrated: seed 003 random 4 KiB O_DIRECT writes, 4493 KB/s (6 of the 8 MB buffer)"),
        param("write_segments", "unlimited", "segments or unlimited", WSEG_ANY),
        param("ncq", "1", "commands", "parallel ATA has no command queueing in practice"),
        param("age_limit_ms", "500", "ms", AGE),
    ]
}

const ARRAY_SEED: &str = "seed 000 (HP EVA, 12 SATA disks in RAID 5)";

/// The 12-disk RAID 5 array of seed 000: sata-7200 members plus array parameters.
fn raid5_12() -> Vec<ParamInfo> {
    let mut params = vec![
        param("members", "12", "disks", ARRAY_SEED),
        param("level", "5", "0 or 5", ARRAY_SEED),
        param(
            "chunk_kib",
            "64",
            "KiB",
            "Linux md's default chunk before mdadm 3.1 (the seed's 2010 era)",
        ),
        param(
            "queue_depth",
            "372",
            "commands",
            "members × member NCQ depth (12 × 31)",
        ),
        param(
            "ctrl_cache_mib",
            "4096",
            "MiB",
            "the EVA4400's cache per controller pair (4 GB); 0 is a software array (Linux md) with no controller cache",
        ),
        param(
            "ctrl_readahead",
            "stripe",
            "stripe/Nstripes/chunk/off",
            "DDN EF2800 guide §6.3.5 default: one chunk at a stream's first read-ahead, one stripe of data after",
        ),
        param(
            "ctrl_link_mbps",
            "400",
            "MB/s",
            "a 4 Gb/s Fibre Channel host port (the EVA4400's HSV300 controllers)",
        ),
        param(
            "ctrl_streams",
            "1024",
            "streams",
            "assumption: enough that stream detection never limits the workloads here",
        ),
    ];
    params.extend(overridden(
        sata_7200(),
        &[(
            "capacity_gib",
            "465.8",
            "500 GB members, the common 7200 rpm SATA size in 2010 (assumption)",
        )],
    ));
    params
}

/// Seed 000's array as the post's figures show it: raid5-12 with a deeper prefetch and a
/// smaller read cache, each fitted to one of the post's totals (the EVA publishes neither).
fn eva_4400() -> Vec<ParamInfo> {
    overridden(
        raid5_12(),
        &[
            ("ctrl_readahead", "8stripes", "calibrated: seed 000 in IOPS mode (slice_idle=0) with 2 readers a group, total 324022 KB/s (`ioslice seeds scenarios/seed-000/eight-groups.fio`, a calibration line); the EVA's prefetch depth is not published"),
            ("ctrl_cache_mib", "1024", "calibrated: seed 000 with idling (slice_idle=8) and 8 readers a group, total 164517 KB/s (a calibration line): how much prefetched data outlives 63 other readers' turns; within the EVA4400's 4 GB per controller pair (assumption: a controller's 2 GB, half of it for reads)"),
        ],
    )
}

/// Where the SSD presets' discard cost comes from: no published model gives one (MQSim
/// has no TRIM), so it is an assumption.
const DISCARD: &str = "assumption: a mapping-table update in controller memory, one discard at a time, no flash or link work; the buffered write's service time";

/// A SATA-class flash SSD.
fn ssd() -> Vec<ParamInfo> {
    const MQSIM: &str =
        "assumption in the range of the SATA/NVMe configurations of MQSim (ssdconfig.xml)";
    vec![
        param(
            "capacity_gib",
            "476.9",
            "GiB",
            "512 GB, a common SATA SSD size",
        ),
        param("queue_depth", "32", "commands", "SATA NCQ depth"),
        param("channels", "8", "channels", MQSIM),
        param("overhead_us", "10", "µs", MQSIM),
        param(
            "read_us",
            "70",
            "µs",
            "assumption: MLC/TLC page read plus firmware, typical QD1 4 KiB read latency",
        ),
        param(
            "write_us",
            "25",
            "µs",
            "assumption: write into the drive's buffer, programmed in the background",
        ),
        param("discard_us", "25", "µs", DISCARD),
        param("channel_mbps", "400", "MB/s", MQSIM),
        param("link_mbps", "550", "MB/s", "SATA 3.0 usable payload rate"),
    ]
}

/// An NVMe-class flash SSD.
fn nvme() -> Vec<ParamInfo> {
    const MQSIM: &str =
        "assumption in the range of the NVMe configurations of MQSim (ssdconfig.xml)";
    vec![
        param("capacity_gib", "953.7", "GiB", "1 TB, a common NVMe size"),
        param(
            "queue_depth",
            "256",
            "commands",
            "NVMe: deep queues (one of many submission queues)",
        ),
        param("channels", "16", "channels", MQSIM),
        param("overhead_us", "5", "µs", MQSIM),
        param(
            "read_us",
            "60",
            "µs",
            "assumption: TLC page read, typical QD1 4 KiB read latency",
        ),
        param(
            "write_us",
            "15",
            "µs",
            "assumption: write into the drive's buffer, programmed in the background",
        ),
        param("discard_us", "15", "µs", DISCARD),
        param("channel_mbps", "800", "MB/s", MQSIM),
        param("link_mbps", "3500", "MB/s", "PCIe 3.0 ×4 usable rate"),
    ]
}

const ZBD_EXAMPLES: &str =
    "fio's zbd examples (examples/zbd-*.fio, zonesize=256M) and zonedstorage.io, run on a 15 TB ZAC host-managed SATA disk (WD/HGST Ultrastar DC HC620 class)";

/// A host-managed SMR disk of the WD/HGST Ultrastar DC HC620 class: the 7200 rpm mechanics of
/// `sata-7200`, 15 TB in 256 MiB zones, the first 524 conventional.
fn smr() -> Vec<ParamInfo> {
    let mut params = sata_7200();
    for param in &mut params {
        match param.name {
            "capacity_gib" => {
                param.value = "13969.838".into();
                param.source = "WD Ultrastar DC HC620 datasheet: 15 TB (15×10¹² bytes), the disk of fio's zbd examples";
            }
            "wce" => {
                param.value = "off".into();
                param.source = "assumption: writes checked against the write pointer as the drive executes them, in its NCQ order (the ordering hazard zone write locking guards against); wce=on checks them in arrival order";
            }
            _ => {}
        }
    }
    params.extend([
        param("zone_mib", "256", "MiB", ZBD_EXAMPLES),
        param(
            "conventional_zones",
            "524",
            "zones",
            "fio's zbd examples: their sequential-zone workloads start at offset=524z, the first zone past the disk's conventional ones (inferred)",
        ),
        param(
            "max_open_zones",
            "128",
            "zones",
            "assumption: the open-zone limit a host is advised (queue/max_open_zones); not enforced by the drive",
        ),
    ]);
    params
}

/// The null device.
fn null() -> Vec<ParamInfo> {
    vec![
        param(
            "latency_ns",
            "0",
            "ns",
            "measures scheduler and simulator overhead only",
        ),
        param(
            "parallelism",
            "32",
            "commands",
            "as deep as a SATA NCQ queue",
        ),
        param(
            "capacity_gib",
            "1024",
            "GiB",
            "large enough for any scenario",
        ),
    ]
}

/// A preset's name, summary and parameter table.
type PresetRow = (&'static str, &'static str, fn() -> Vec<ParamInfo>);

/// The presets, in display order, with their summaries.
fn table() -> Vec<PresetRow> {
    vec![
        (
            "sata-7200",
            "modern 7200 rpm SATA disk, NCQ 31 with SPTF, 64 MB buffer, write cache on",
            sata_7200,
        ),
        (
            "sata-2009",
            "the 2009 SATA disk of seed 002: sata-7200 at the seed's media rate (90 MB/s outer zone)",
            sata_2009,
        ),
        (
            "ide-2004",
            "~2004 7200 rpm IDE/ATA-100 disk of seed 003: no queueing, read-ahead, write cache on",
            ide_2004,
        ),
        (
            "raid5-12",
            "12 sata-7200 disks in RAID 5 (left-symmetric, 64 KiB chunks), like seed 000's array",
            raid5_12,
        ),
        (
            "eva-4400",
            "seed 000's HP EVA4400 as its figures show it: raid5-12 with 8 stripes of prefetch and a 1 GiB read cache",
            eva_4400,
        ),
        ("ssd", "SATA flash SSD: 8 channels, NCQ 32", ssd),
        ("nvme", "NVMe flash SSD: 16 channels, queue depth 256", nvme),
        ("null", "null device: fixed latency, no seeks", null),
        (
            "smr",
            "host-managed SMR disk (Ultrastar DC HC620 class): sata-7200 mechanics, 15 TB in 256 MiB zones, 524 conventional, write cache off",
            smr,
        ),
    ]
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
