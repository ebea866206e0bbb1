//! The presets' parameter tables: every device's parameters with their values, units and
//! sources, in the order `ioslice devices` lists them ([`table`]).

use super::ParamInfo;

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
pub(super) type PresetRow = (&'static str, &'static str, fn() -> Vec<ParamInfo>);

/// The presets, in display order, with their summaries.
pub(super) fn table() -> Vec<PresetRow> {
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
