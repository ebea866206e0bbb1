//! BFQ's "interleaved readers" benchmark as a job file: four readers, each reading a
//! 16 KiB zone and skipping the 48 KiB its siblings read, on the simulated SATA disk.
//!
//! The simulation's outcome carries bytes and I/O counts per reader but not offsets, so
//! the offsets are checked on the patterns the simulator builds for each reader (the same
//! `plan_files` and `IoPattern` calls, with the device's capacity); the run itself must
//! show every reader transferring its own `size` in 4 KiB reads, each read reaching the
//! disk as asked.

use std::collections::BTreeMap;

use ioslice_core::request::SECTOR_SIZE;
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_fio::pattern::{plan_files, IoPattern};
use ioslice_fio::JobFile;
use ioslice_sim::preset::{build, DeviceSpec};
use ioslice_sim::simulation::{run, SimConfig};
use rand::SeedableRng;

const DEVICE: &str = "sim:sata-7200";
const READERS: u64 = 4;
const SIZE: u64 = 1 << 20;
const ZONE: u64 = 16 << 10;

const INTERLEAVED: &str = "\
[global]
filename=/dev/sdb
rw=read
bs=4k
direct=1
ioengine=psync
zonemode=strided
zonesize=16k
zoneskip=48k
size=1m
[reader]
numjobs=4
offset_increment=16k
";

fn job_file() -> JobFile {
    parse_str(INTERLEAVED, "interleaved.fio", &ParseOptions::default()).expect("job parses")
}

#[test]
fn interleaved_readers_each_read_their_size_on_the_disk() {
    let job_file = job_file();
    let config = SimConfig::new(
        7,
        "deadline".parse().expect("deadline"),
        DEVICE.parse().expect("device"),
    );
    let outcome = run(&job_file, &config).expect("simulation runs");
    assert_eq!(outcome.report.jobs.len(), READERS as usize);
    for (index, job) in outcome.report.jobs.iter().enumerate() {
        let [read, write, trim] = &job.stats.directions;
        assert_eq!(read.io_bytes, SIZE, "reader {index} reads size= bytes");
        assert_eq!(read.total_ios, SIZE / 4096, "reader {index}: 4 KiB reads");
        assert_eq!((write.total_ios, trim.total_ios), (0, 0));
    }
    let ios = READERS * SIZE / 4096;
    assert_eq!((outcome.submitted, outcome.completed), (ios, ios));
    assert_eq!(
        outcome.readahead.submitted, 0,
        "O_DIRECT reads are read as asked"
    );
    let disk = &outcome.report.disk_util[0];
    assert_eq!(
        disk.ios[0] + disk.merges[0],
        ios,
        "every read reaches the disk"
    );
}

#[test]
fn interleaved_readers_read_only_their_own_zones() {
    let job_file = job_file();
    let spec = &job_file.jobs[0];
    let spec_device: DeviceSpec = DEVICE.parse().expect("device");
    let capacity = build(&spec_device)
        .expect("device builds")
        .info()
        .capacity_sectors
        * SECTOR_SIZE;
    // Which reader read each 4 KiB block of the device.
    let mut owner: BTreeMap<u64, u64> = BTreeMap::new();
    for clone in 0..READERS {
        let files = plan_files(spec, clone as u32, capacity).expect("files");
        let mut pattern = IoPattern::new(spec, &files, clone as u32).expect("pattern");
        let mut rng = rand::rngs::StdRng::seed_from_u64(clone);
        let mut bytes = 0;
        while let Some(unit) = pattern.next(&mut rng) {
            bytes += unit.length;
            assert_eq!(
                (unit.offset / ZONE) % READERS,
                clone,
                "reader {clone} reads {unit:?}, in another reader's zone"
            );
            for block in (unit.offset..unit.offset + unit.length).step_by(4096) {
                let previous = owner.insert(block, clone);
                assert!(previous.is_none(), "block {block} read twice");
            }
        }
        assert_eq!(bytes, SIZE);
    }
    // Together the four tile the first 4 MiB of the disk, 16 KiB zone by zone.
    let expected: Vec<u64> = (0..READERS * SIZE / 4096).map(|b| b * 4096).collect();
    assert_eq!(owner.keys().copied().collect::<Vec<_>>(), expected);
}
