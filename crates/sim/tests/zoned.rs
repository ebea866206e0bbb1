//! A host-managed SMR drive (`sim:smr`) under fio's zone mode: mq-deadline's zone write
//! locking keeps each sequential zone's writes in order, one at a time at the drive, so no
//! write fails and every zone's write pointer advances; noop (the kernel's none) hands the
//! drive several writes of a zone at once, its NCQ serves them in positioning order, and
//! writes off the write pointer fail with `EIO`. Zones here are 16 MiB (`zone_mib=16`) so
//! that the runs are short; the layout is otherwise the preset's (524 conventional zones).

mod common;

use std::collections::BTreeMap;

use ioslice_core::errno::EIO;
use ioslice_core::trace::{TraceEvent, TraceLog};
use ioslice_core::Direction;
use ioslice_sim::device::{Command, DeviceModel};
use ioslice_sim::preset::build;
use ioslice_sim::simulation::SimOutcome;

const DEVICE: &str = "sim:smr:zone_mib=16";
const ZONE_SECTORS: u64 = 16 * 2048;
const FIRST_SEQUENTIAL: u64 = 524;

/// Four sequential writers, each from the start of a sequential zone of its own, 512 KiB
/// O_DIRECT writes eight deep.
const FOUR_WRITERS: &str = "\
[global]
zonemode=zbd
zonesize=16M
direct=1
ioengine=libaio
iodepth=8
bs=512k
rw=write
filename=/dev/sdb
size=1z
[w0]
offset=524z
[w1]
offset=530z
[w2]
offset=536z
[w3]
offset=542z
";

fn run(job: &str, sched: &str) -> (SimOutcome, TraceLog) {
    let job_file =
        ioslice_fio::jobfile::parse_str(job, "zoned.fio", &Default::default()).expect("job parses");
    let config = common::config(sched, DEVICE, 1);
    let mut log = TraceLog::default();
    let outcome =
        ioslice_sim::simulation::run_traced(&job_file, &config, &mut log).expect("job runs");
    assert_eq!(
        outcome.submitted, outcome.completed,
        "{sched}: lost requests"
    );
    (outcome, log)
}

fn errors(outcome: &SimOutcome) -> u64 {
    outcome
        .report
        .jobs
        .iter()
        .map(|job| job.stats.total_errors())
        .sum()
}

/// Per sequential zone: the writes dispatched, as (start, end) sectors in dispatch order, and
/// the most of them at the device at once.
fn zone_writes(log: &TraceLog) -> BTreeMap<u64, (Vec<(u64, u64)>, usize)> {
    let mut zones: BTreeMap<u64, (Vec<(u64, u64)>, usize)> = BTreeMap::new();
    let mut in_flight: BTreeMap<u64, usize> = BTreeMap::new();
    for (_, event) in &log.events {
        match event {
            TraceEvent::Dispatch { request, .. } if request.direction == Direction::Write => {
                let zone = request.sector / ZONE_SECTORS;
                let entry = zones.entry(zone).or_default();
                let end = request.sector + u64::from(request.sectors);
                entry.0.push((request.sector, end));
                let now = in_flight.entry(zone).or_default();
                *now += 1;
                entry.1 = entry.1.max(*now);
            }
            TraceEvent::Complete { request, .. } if request.direction == Direction::Write => {
                let zone = request.sector / ZONE_SECTORS;
                *in_flight.entry(zone).or_default() -= 1;
            }
            _ => {}
        }
    }
    zones
}

#[test]
fn mq_deadline_writes_each_zone_in_order_one_at_a_time() {
    let (outcome, log) = run(FOUR_WRITERS, "mq-deadline");
    assert_eq!(errors(&outcome), 0);
    let zones = zone_writes(&log);
    assert_eq!(
        zones.keys().copied().collect::<Vec<_>>(),
        [524, 530, 536, 542]
    );
    for (zone, (writes, most)) in &zones {
        assert_eq!(*most, 1, "zone {zone}: one write at the device at a time");
        let mut pointer = zone * ZONE_SECTORS;
        for &(start, end) in writes {
            assert_eq!(
                start, pointer,
                "zone {zone}: each write at the write pointer"
            );
            pointer = end;
        }
        assert_eq!(
            pointer,
            (zone + 1) * ZONE_SECTORS,
            "zone {zone} written full"
        );
    }
    for job in &outcome.report.jobs {
        assert_eq!(
            job.stats.directions[1].io_bytes,
            16 << 20,
            "{}",
            job.description.name
        );
    }
}

#[test]
fn noop_lets_the_drive_reorder_a_zones_writes_and_they_fail() {
    let (outcome, log) = run(FOUR_WRITERS, "noop");
    let failed: Vec<u64> = log
        .events
        .iter()
        .filter_map(|(_, event)| match event {
            TraceEvent::Complete {
                request,
                error: Some(errno),
                ..
            } => {
                assert_eq!(*errno, EIO);
                Some(request.sector)
            }
            _ => None,
        })
        .collect();
    assert!(!failed.is_empty(), "no write failed");
    assert_eq!(errors(&outcome), failed.len() as u64);
    let (_, most) = &zone_writes(&log)[&524];
    assert!(*most > 1, "noop sends a zone several writes at once");
    // fio stops a job at its first error (no continue_on_error): each job reports EIO and
    // wrote far less than its zone.
    for job in &outcome.report.jobs {
        assert_eq!(job.stats.error, EIO, "{}", job.description.name);
        assert!(job.stats.directions[1].io_bytes < 16 << 20);
    }
}

#[test]
fn other_elevators_are_refused_on_a_zoned_drive() {
    let job_file = ioslice_fio::jobfile::parse_str(FOUR_WRITERS, "zoned.fio", &Default::default())
        .expect("job parses");
    for sched in ["bfq", "kyber", "cfq", "deadline"] {
        let config = common::config(sched, DEVICE, 1);
        let error = ioslice_sim::simulation::run(&job_file, &config)
            .expect_err("refused")
            .to_string();
        assert!(error.contains("expected mq-deadline or noop"), "{error}");
    }
    let config = common::config("mq-deadline", "sim:sata-7200", 1);
    let error = ioslice_sim::simulation::run(&job_file, &config)
        .expect_err("refused")
        .to_string();
    assert!(
        error.starts_with("zoned.fio:2: job w0: zonemode=zbd needs a zoned device"),
        "{error}"
    );
}

#[test]
fn a_write_off_the_pointer_fails_without_zone_mode() {
    // Plain fio (no zonemode=zbd) writing 4 KiB at 4 KiB into empty sequential zone 524.
    let job = "[w]\nfilename=/dev/sdb\ndirect=1\nrw=write\nbs=4k\nsize=64k\noffset=8791265280\n";
    let (outcome, _) = run(job, "mq-deadline");
    assert_eq!(outcome.report.jobs[0].stats.error, EIO);
    assert_eq!(outcome.report.jobs[0].stats.directions[1].io_bytes, 0);
}

/// A writer eight deep that wraps its zone: fio waits for its writes at the device before
/// resetting the zone, so no write of the old pass lands after the reset.
#[test]
fn a_wrapping_writer_resets_its_zone() {
    let job = "\
[w]
zonemode=zbd
zonesize=16M
direct=1
ioengine=libaio
iodepth=8
bs=1m
rw=write
filename=/dev/sdb
offset=524z
size=1z
io_size=40m
";
    let (outcome, _) = run(job, "mq-deadline");
    let stats = &outcome.report.jobs[0].stats;
    assert_eq!(stats.total_errors(), 0);
    assert_eq!(stats.zone_resets, 2, "40 MiB in a 16 MiB zone: two wraps");
    assert_eq!(stats.directions[1].io_bytes, 40 << 20);
}

#[test]
fn random_writes_go_to_write_pointers_of_at_most_max_open_zones() {
    let job = "\
[w]
zonemode=zbd
zonesize=16M
max_open_zones=3
direct=1
ioengine=psync
bs=256k
rw=randwrite
filename=/dev/sdb
offset=524z
size=64z
io_size=32m
";
    let (outcome, log) = run(job, "mq-deadline");
    assert_eq!(errors(&outcome), 0);
    let zones = zone_writes(&log);
    assert_eq!(zones.len(), 3, "{:?}", zones.keys().collect::<Vec<_>>());
    for (zone, (writes, _)) in &zones {
        let mut pointer = zone * ZONE_SECTORS;
        for &(start, end) in writes {
            assert_eq!(start, pointer, "zone {zone}");
            pointer = end;
        }
    }
}

/// fio's simulated garbage collection: once the job's range holds half its size in data,
/// every fourth write resets its zone first (`zone_reset_threshold=0.5`,
/// `zone_reset_frequency=0.25`), with no error.
#[test]
fn zone_reset_threshold_and_frequency_reset_zones_as_writes_go_on() {
    let job = "\
[w]
zonemode=zbd
zonesize=16M
direct=1
ioengine=psync
bs=4m
rw=randwrite
filename=/dev/sdb
offset=524z
size=4z
io_size=128m
zone_reset_threshold=0.5
zone_reset_frequency=0.25
";
    let (outcome, _) = run(job, "mq-deadline");
    let stats = &outcome.report.jobs[0].stats;
    assert_eq!(stats.total_errors(), 0);
    assert_eq!(stats.directions[1].io_bytes, 128 << 20);
    // Without collection 32 writes of 4 MiB into four 16 MiB zones need 4 resets once
    // the zones are full; collection resets more often.
    assert!(stats.zone_resets > 4, "{} resets", stats.zone_resets);
}

fn command(tag: u64, direction: Direction, sector: u64, sectors: u32) -> Command {
    Command {
        tag,
        direction,
        sector,
        sectors,
        fua: false,
    }
}

/// Run a device until it has nothing in flight; the tags in completion order.
fn drain(device: &mut dyn DeviceModel) -> Vec<u64> {
    let mut done = Vec::new();
    while let Some(at) = device.next_event() {
        device.advance(at, &mut done);
    }
    done
}

#[test]
fn the_drive_advances_pointers_reads_anywhere_and_resets() {
    let mut device = build(&DEVICE.parse().expect("device")).expect("builds");
    let info = device.info();
    let zones = info.zones.expect("zoned");
    assert_eq!(
        (zones.zone_sectors, zones.conventional, zones.max_open),
        (ZONE_SECTORS, FIRST_SEQUENTIAL, 128)
    );
    let start = FIRST_SEQUENTIAL * ZONE_SECTORS;
    assert_eq!(device.write_pointer(FIRST_SEQUENTIAL), Some(start));
    assert_eq!(device.write_pointer(0), None, "conventional");
    device.submit(command(1, Direction::Write, start, 256), 0);
    drain(device.as_mut());
    assert_eq!(device.take_error(1), None);
    assert_eq!(device.write_pointer(FIRST_SEQUENTIAL), Some(start + 256));
    // Past the write pointer: a read succeeds (fill data), a write fails.
    device.submit(command(2, Direction::Read, start + 1024, 8), 0);
    device.submit(command(3, Direction::Write, start + 1024, 8), 0);
    assert_eq!(drain(device.as_mut()).len(), 2);
    assert_eq!(device.take_error(2), None);
    assert_eq!(device.take_error(3), Some(EIO));
    assert_eq!(device.take_error(3), None, "taken once");
    // Conventional zones take writes anywhere.
    device.submit(command(4, Direction::Write, 4096, 8), 0);
    drain(device.as_mut());
    assert_eq!(device.take_error(4), None);
    device.reset_zones(start, start + ZONE_SECTORS);
    assert_eq!(device.write_pointer(FIRST_SEQUENTIAL), Some(start));
}

/// fio's own zoned examples (read from the shared corpus, never copied) run on `sim:smr`
/// under mq-deadline without an error, cut to half a second of virtual time each; the one
/// whose garbage-collection job trims (fio resets zones for trims) is refused.
#[test]
fn fios_zbd_examples_run_on_the_smr_preset() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/fio-examples");
    if !dir.is_dir() {
        println!("skipped: no corpus at {}", dir.display());
        return;
    }
    let options = ioslice_fio::jobfile::ParseOptions::default();
    for name in [
        "zbd-rand-write.fio",
        "zbd-rand-write-zone-reset-gc.fio",
        "zbd-seq-read.fio",
    ] {
        let mut job_file =
            ioslice_fio::jobfile::parse_file(&dir.join(name), &options).expect("parses");
        for job in &mut job_file.jobs {
            job.runtime = Some(500_000_000);
            job.time_based = true;
        }
        let config = common::config("mq-deadline", "sim:smr", 1);
        let outcome = ioslice_sim::simulation::run(&job_file, &config).expect("runs");
        assert_eq!(errors(&outcome), 0, "{name}");
        let bytes: u64 = outcome.report.jobs[0]
            .stats
            .directions
            .iter()
            .map(|d| d.io_bytes)
            .sum();
        assert!(bytes > 0, "{name}");
    }
    // The garbage collector's trims are zone resets, one a trim, 256 MiB each, alongside
    // the writer they follow (flow=128 against its flow=1).
    let mut trims =
        ioslice_fio::jobfile::parse_file(&dir.join("zbd-rand-write-trim-gc.fio"), &options)
            .expect("parses");
    for job in &mut trims.jobs {
        job.runtime = Some(500_000_000);
    }
    let config = common::config("mq-deadline", "sim:smr", 1);
    let outcome = ioslice_sim::simulation::run(&trims, &config).expect("runs");
    assert_eq!(errors(&outcome), 0);
    let trimjob = &outcome.report.jobs[2].stats;
    let trim = &trimjob.directions[2];
    assert!(trim.total_ios > 0, "no trims");
    assert_eq!(trim.io_bytes, trim.total_ios << 28);
    assert_eq!(trimjob.zone_resets, trim.total_ios);
    assert!(outcome.report.jobs[1].stats.directions[1].io_bytes > 0);
}

/// A trim in zone mode resets its zone, which the next write then fills from its start; a
/// random trim of an empty zone goes to the nearest zone with data, and where none has
/// any, resets nothing.
#[test]
fn a_trim_in_zone_mode_resets_its_zone() {
    let job = "\
[global]
zonemode=zbd
zonesize=16M
direct=1
filename=/dev/sdb
offset=524z
size=2z
[fill]
rw=write
bs=1m
[reset]
stonewall
rw=trim
bs=16m
[refill]
stonewall
rw=write
bs=1m
size=1z
[random]
stonewall
rw=randtrim
bs=16m
[empty]
stonewall
rw=randtrim
bs=16m
";
    let (outcome, _) = run(job, "mq-deadline");
    let jobs = &outcome.report.jobs;
    assert!(jobs.iter().all(|job| job.stats.total_errors() == 0));
    assert_eq!(jobs[0].stats.directions[1].io_bytes, 32 << 20);
    let resets: Vec<u64> = jobs.iter().map(|job| job.stats.zone_resets).collect();
    // Both zones reset; refilling one from its start needs no reset (it would, had the
    // first pass's pointer stayed at its end); the random trims find that one zone with
    // data twice over, once directly and once as the nearest, but only while it holds
    // data: the second trim finds none.
    assert_eq!(resets, [0, 2, 0, 1, 0]);
    for (index, trims) in [(1, 2), (3, 2), (4, 2)] {
        let trim = &jobs[index].stats.directions[2];
        assert_eq!(trim.total_ios, trims, "job {index}");
        assert_eq!(trim.io_bytes, trims << 24, "job {index}");
    }
}

/// fio resets one whole zone per trim, and refuses another trim size (`zbd_verify_bs`).
#[test]
fn a_zone_mode_trim_must_be_one_zone() {
    let job = "[t]\nzonemode=zbd\nzonesize=16M\ndirect=1\nfilename=/dev/sdb\noffset=524z\nsize=1z\nrw=trim\nbs=1m\n";
    let job_file =
        ioslice_fio::jobfile::parse_str(job, "zoned.fio", &Default::default()).expect("job parses");
    let config = common::config("mq-deadline", DEVICE, 1);
    let error = ioslice_sim::simulation::run(&job_file, &config)
        .expect_err("refused")
        .to_string();
    assert!(
        error.contains("job t: a trim with zonemode=zbd resets one zone, so its block size must be the zone size of sim:smr:zone_mib=16, 16777216 bytes"),
        "{error}"
    );
}
