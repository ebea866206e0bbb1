//! fio's trim workloads in simulation: `randtrim` on the SSD presets at the cost the device
//! model gives a discard, `trimwrite`'s trim-then-write order, and a disk without TRIM
//! refusing the job as the kernel's `EOPNOTSUPP`.

mod common;

use common::{config, run_text, trace};
use ioslice_core::{Direction, TraceEvent};
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_sim::simulation::run;

/// 4 KiB random trims over 16 MiB: 4096 of them, one at a time.
const RANDTRIM: &str = "[t]\nrw=randtrim\nbs=4k\nsize=16m\nioengine=psync\n";

#[test]
fn randtrim_on_sim_ssd_costs_the_overhead_and_the_mapping_update() {
    let outcome = run_text(RANDTRIM, &config("mq-deadline", "sim:ssd", 1));
    let stats = &outcome.report.jobs[0].stats;
    assert_eq!(stats.issued, [0, 0, 4096]);
    let trims = &stats.directions[2];
    assert_eq!((trims.total_ios, trims.io_bytes), (4096, 16 << 20));
    assert_eq!(
        stats.directions[0].total_ios + stats.directions[1].total_ios,
        0
    );
    // Every trim: 10 µs of command overhead, then 25 µs of mapping-table work (the preset's
    // overhead_us and discard_us); no flash, no link.
    assert_eq!((trims.clat.min(), trims.clat.max()), (35_000, 35_000));
    // fio's disk statistics read only the read and write fields: discards are in neither.
    let disk = &outcome.report.disk_util[0];
    assert_eq!((disk.ios, disk.merges), ([0, 0], [0, 0]));
}

#[test]
fn deep_randtrim_is_held_to_one_mapping_update_at_a_time() {
    let job = "[t]\nrw=randtrim\nbs=4k\nsize=16m\nioengine=libaio\niodepth=32\n";
    let outcome = run_text(job, &config("none", "sim:ssd", 1));
    let stats = &outcome.report.jobs[0].stats;
    assert_eq!(stats.directions[2].total_ios, 4096);
    // 32 in flight share the one mapping-table timeline: a trim ends 32 × 25 µs = 800 µs
    // after the completion that freed its slot, and the job took 15 µs of that to submit it
    // (the host's reaction time to a completion), so it waits 785 µs.
    let clat = &stats.directions[2].clat;
    assert_eq!(clat.max(), 785_000);
    // The device does 40000 discards a second: 4096 take 102.4 ms, and the run no less.
    assert!(stats.runtime >= 102_400_000, "{} ns", stats.runtime);
    assert!(stats.runtime < 103_400_000, "{} ns", stats.runtime);
}

#[test]
fn randtrim_on_sim_null_is_instant() {
    let outcome = run_text(RANDTRIM, &config("noop", "sim:null", 1));
    let trims = &outcome.report.jobs[0].stats.directions[2];
    assert_eq!(trims.total_ios, 4096);
    assert_eq!(trims.clat.max(), 0);
}

#[test]
fn trimwrite_trims_each_block_then_writes_it() {
    let job = "[t]\nrw=trimwrite\nbs=4k\nsize=32k\nioengine=psync\ndirect=1\n";
    let log = trace(job, "noop", "sim:ssd", 1, None);
    let inserted: Vec<(Direction, u64, u32)> = log
        .events
        .iter()
        .filter_map(|(_, event)| match event {
            TraceEvent::Insert { request } => {
                Some((request.direction, request.sector, request.sectors))
            }
            _ => None,
        })
        .collect();
    let expected: Vec<(Direction, u64, u32)> = (0..8u64)
        .flat_map(|block| {
            [
                (Direction::Discard, block * 8, 8),
                (Direction::Write, block * 8, 8),
            ]
        })
        .collect();
    assert_eq!(inserted, expected);
    let outcome = run_text(job, &config("noop", "sim:ssd", 1));
    let stats = &outcome.report.jobs[0].stats;
    assert_eq!(stats.issued, [0, 8, 8]);
    assert_eq!(stats.directions[1].io_bytes, 32 << 10);
    assert_eq!(stats.directions[2].io_bytes, 32 << 10);
}

#[test]
fn a_disk_without_trim_refuses_the_job_in_one_line() {
    let job_file = parse_str(RANDTRIM, "trim.fio", &ParseOptions::default()).expect("parses");
    for device in ["sim:sata-7200", "sim:raid5-12"] {
        let error = run(&job_file, &config("cfq", device, 1))
            .err()
            .unwrap_or_else(|| panic!("{device}: ran"))
            .to_string();
        assert_eq!(
            error,
            format!("trim.fio:2: rw=randtrim: {device} takes no discards (EOPNOTSUPP; fio would stop the job at its first trim with \"Operation not supported\"): expected a device with TRIM, such as sim:ssd, sim:nvme or sim:null")
        );
    }
}
