//! BFQ's hole recovery and preemption as Linux 6.18's bfq does them, on the arrangement of the
//! kernel comparison (`bench/kernel-vs-ioslice.sh`: the loop device's 128-deep queue, blk-mq):
//!
//! - Eight sequential 4 KiB O_DIRECT readers on `ide-2004` (seed 003's read case): a queue
//!   whose turn was cut short comes back with what it had left of its budget and takes the
//!   device back, so the readers preempt each other one request at a time, their budgets
//!   shrinking by one request a turn, until the budgets run out; long turns follow. The
//!   kernel's trace of the same run: 486 preempted turns in 6.3 s, then turns ended by budget
//!   exhaustion and timeout; 5.5–7.1 MB/s over its runs.
//! - One sequential 4 KiB reader in each of eight groups weighted 100…800 on a software
//!   RAID 5 of twelve disks (seed 000's groups): every turn uses up its budget, nothing is
//!   injected, and the shares follow the weights (the kernel's traced run: 17.5 MB/s, shares
//!   2.8/5.5/8.3/11.0/13.9/16.6/19.4/22.2 %, one injected request in 42 827).
//! - Four 64 KiB readers with `low_latency=0` on `sata-7200`: a new queue counts as I/O-bound,
//!   so BFQ idles for it and nobody preempts it (the kernel: 167–169 MB/s).

mod common;

use ioslice_core::trace::{ServiceEnd, TraceLog};
use ioslice_core::TraceEvent;
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_sim::host::BlockLayer;
use ioslice_sim::simulation::run_traced;

/// Run `job` under `sched` on `device` as the kernel comparison does; its trace.
fn traced(job: &str, sched: &str, device: &str) -> TraceLog {
    let job_file = parse_str(job, "job.fio", &ParseOptions::default()).expect("job parses");
    let mut config = common::config(sched, device, 1);
    config.driver_queue = 128;
    config.block_layer = Some(BlockLayer::BlkMq);
    let mut log = TraceLog::default();
    let outcome = run_traced(&job_file, &config, &mut log).expect("job runs");
    assert_eq!(outcome.submitted, outcome.completed, "lost requests");
    assert_eq!(outcome.duplicate_completions, 0, "duplicates");
    log
}

/// Every turn's end: (time in s, queue, reason, budget).
fn turn_ends(log: &TraceLog) -> Vec<(f64, Option<u32>, ServiceEnd, u64)> {
    log.events
        .iter()
        .filter_map(|(time, event)| match event {
            TraceEvent::BudgetEnd {
                queue,
                reason,
                budget,
                ..
            } => Some((
                *time as f64 / 1e9,
                queue.process.map(|p| p.0),
                *reason,
                *budget,
            )),
            _ => None,
        })
        .collect()
}

const EIGHT_READERS: &str = "\
[global]
filename=/dev/sdb
direct=1
ioengine=psync
rw=read
bs=4k
size=4g
runtime=10
time_based
[reader]
numjobs=8
offset_increment=8g
";

#[test]
fn readers_cut_short_take_the_disk_back_until_their_budgets_run_out() {
    let log = traced(EIGHT_READERS, "bfq", "sim:ide-2004");
    let ends = turn_ends(&log);
    let preempted: Vec<_> = ends
        .iter()
        .filter(|end| end.2 == ServiceEnd::Preempted)
        .collect();
    assert!(
        (300..700).contains(&preempted.len()),
        "{} preempted turns of {}",
        preempted.len(),
        ends.len()
    );
    // A queue coming back keeps what it had left: one 8-sector request less each time.
    let shrinking = preempted
        .windows(2)
        .filter(|pair| pair[0].1 == pair[1].1 && pair[0].3 == pair[1].3 + 8)
        .count();
    let mut by_queue: std::collections::BTreeMap<Option<u32>, Vec<u64>> = Default::default();
    for end in &preempted {
        by_queue.entry(end.1).or_default().push(end.3);
    }
    let steps: usize = by_queue
        .values()
        .map(|budgets| budgets.windows(2).filter(|w| w[0] == w[1] + 8).count())
        .sum();
    assert!(
        steps * 10 >= preempted.len() * 8,
        "{steps} of {} turns shrink by one request ({shrinking} back to back)",
        preempted.len()
    );
    // The budgets run out within the run, and long turns end it.
    let last = preempted.last().map_or(0.0, |end| end.0);
    assert!((2.0..8.0).contains(&last), "last preemption at {last:.2} s");
    assert!(ends
        .iter()
        .filter(|end| end.0 > last)
        .all(|end| end.2 != ServiceEnd::Preempted));
    let mb = common::trace_rate(&log, 10.0);
    assert!((4.0..14.0).contains(&mb), "{mb:.1} MB/s");
}

#[test]
fn weighted_groups_on_a_software_array_use_up_their_budgets_uninjected() {
    let mut job = String::from(
        "[global]\nfilename=/dev/sdb\ndirect=1\nioengine=psync\nrw=read\nbs=4k\nsize=20g\nruntime=10\ntime_based\n",
    );
    for i in 1..=8 {
        job.push_str(&format!(
            "[cgrp{i}]\ncgroup=cgrp{i}\ncgroup_weight={}\noffset={}g\n",
            i * 100,
            (i - 1) * 40
        ));
    }
    let log = traced(&job, "bfq", "sim:raid5-12:ctrl_cache_mib=0");
    assert_eq!(log.count("inject"), 0);
    let ends = turn_ends(&log);
    let exhausted = ends
        .iter()
        .filter(|end| end.2 == ServiceEnd::BudgetExhausted)
        .count();
    assert!(exhausted * 10 > ends.len() * 9, "{ends:?}");
    let mut bytes = [0u64; 8];
    for (_, event) in &log.events {
        if let TraceEvent::Complete { request, .. } = event {
            bytes[request.process.0 as usize - 1] += u64::from(request.sectors) * 512;
        }
    }
    let total: u64 = bytes.iter().sum();
    for (i, b) in bytes.iter().enumerate() {
        let share = *b as f64 / total as f64;
        let weight = (i + 1) as f64 / 36.0;
        assert!(
            (share - weight).abs() < 0.01,
            "group {}: {share:.3} against {weight:.3}: {bytes:?}",
            i + 1
        );
    }
    let mb = common::trace_rate(&log, 10.0);
    assert!((12.0..30.0).contains(&mb), "{mb:.1} MB/s");
}

#[test]
fn a_new_queue_is_io_bound_and_keeps_the_disk_without_raising() {
    let job = "\
[global]
filename=/dev/sdb
direct=1
ioengine=psync
bs=64k
rw=read
size=50g
runtime=5
time_based
[reader0]
offset=0g
[reader1]
offset=100g
[reader2]
offset=200g
[reader3]
offset=300g
";
    let log = traced(job, "bfq:low_latency=0", "sim:sata-7200");
    assert_eq!(log.count("preempt"), 0);
    let first = turn_ends(&log)[0];
    assert_eq!(first.2, ServiceEnd::BudgetExhausted, "{first:?}");
    let mb = common::trace_rate(&log, 5.0);
    assert!(mb > 150.0, "{mb:.1} MB/s");
}
