//! mq-deadline honours I/O priority classes on `sim:sata-7200`: a real-time O_DIRECT
//! sequential reader against a best-effort level-7 one for 10 s gets the disk, as the
//! kernel's mq-deadline (Linux 6.18) does on the same disk model over `ioslice emulate`:
//! RT 22.2 MB/s, BE7 close to nothing (`docs/fidelity.md`, row rt-vs-be7). The legacy
//! deadline elevator, which knows no priorities, shares the disk evenly.
//!
//! mq-deadline runs with blk-mq's deferred queue run after a completion (the simulator's
//! default for it, `SimConfig::BLK_MQ_QUEUE_RUN_DELAY`), the block layer it is written for: the
//! RT reader's next request arrives before the queue runs, so the device never sees RT idle
//! and the BE7 request waits behind it (only aging, after `prio_aging_expire`, would let it
//! through). Both with the device's own queue and behind the loop device's 128-command
//! driver queue of the kernel's measurement (`--host driver_queue=128`).

mod common;

/// Seed 002's priority case without a limit (`bench/kernel-vs-ioslice/rt-vs-be7.fio`): 4 KiB
/// O_DIRECT sequential readers, BE7 and RT0, each in a region of its own, 10 s.
const RT_VS_BE7: &str = "\
[global]
direct=1
ioengine=psync
rw=read
bs=4k
size=100g
runtime=10
time_based
[be7]
prioclass=2
prio=7
offset=0
[rt0]
prioclass=1
prio=0
offset=300g
";

/// Bytes read by each job (BE7, RT0) under `sched`, on the block layer it was written for
/// (mq-deadline: blk-mq's deferred queue run after a completion).
fn bytes(sched: &str, driver_queue: usize) -> [u64; 2] {
    let mut config = common::config(sched, "sim:sata-7200", 1);
    config.driver_queue = driver_queue;
    let outcome = common::run_text(RT_VS_BE7, &config);
    let jobs: Vec<u64> = outcome
        .report
        .jobs
        .iter()
        .map(|job| job.stats.directions.iter().map(|d| d.io_bytes).sum())
        .collect();
    [jobs[0], jobs[1]]
}

#[test]
fn the_real_time_reader_gets_the_disk() {
    for driver_queue in [0, 128] {
        let [be7, rt] = bytes("mq-deadline", driver_queue);
        let share = rt as f64 / (rt + be7) as f64;
        assert!(
            share >= 0.95,
            "driver_queue {driver_queue}: RT {rt} bytes, BE7 {be7} ({share:.3})"
        );
        // About the kernel's 22.2 MB/s on the same disk.
        let rt_mb_per_s = rt as f64 / 10.0 / 1e6;
        assert!(
            (15.0..30.0).contains(&rt_mb_per_s),
            "driver_queue {driver_queue}: RT {rt_mb_per_s:.1} MB/s"
        );
    }
}

#[test]
fn the_legacy_deadline_shares_the_disk_evenly() {
    let [be7, rt] = bytes("deadline", 0);
    let share = rt as f64 / (rt + be7) as f64;
    assert!((0.4..=0.6).contains(&share), "RT {rt} bytes, BE7 {be7}");
}
