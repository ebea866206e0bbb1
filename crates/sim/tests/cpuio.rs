//! fio's `cpuio` engine in simulation: a job of cycles that burn for `cpuchunks` and think
//! for the rest of `cpuload`'s duty cycle, never reaching the elevator or the disk.

mod common;

use common::{config, run_text};

/// fio's `examples/cpuio.fio`, one second a job: two jobs at 50 % in `noop` mode, then two
/// in `qsort` mode.
const CPUIO: &str = "\
[global]
ioengine=cpuio
time_based
runtime=1
[burn_2x50_noop]
cpuload=50
numjobs=2
cpumode=noop
[burn_2x50%_qsort]
stonewall
cpuload=50
numjobs=2
cpumode=qsort
";

#[test]
fn a_cpuio_job_burns_its_duty_cycle_for_its_runtime() {
    let outcome = run_text(CPUIO, &config("mq-deadline", "sim:sata-7200", 1));
    assert_eq!(outcome.report.jobs.len(), 4);
    for job in &outcome.report.jobs {
        let reads = &job.stats.directions[0];
        // 50 ms burning and 50 ms thinking: ten cycles in the second, as fio 3.33 counts
        // (`total_ios` 10), no bytes moved.
        assert_eq!(reads.total_ios, 10, "{}", job.description.name);
        assert_eq!(reads.io_bytes, 0, "{}", job.description.name);
        assert_eq!(job.stats.total_errors(), 0);
    }
    assert_eq!(
        outcome.report.disk_util[0].ios,
        [0, 0],
        "the disk saw nothing"
    );
}

#[test]
fn the_load_sets_the_think_time_and_a_cpuio_job_needs_a_load_and_an_end() {
    // 20 %: 50 ms burning, 200 ms thinking: four cycles a second.
    let light = "[c]\nioengine=cpuio\ncpuload=20\ntime_based\nruntime=1\n";
    let outcome = run_text(light, &config("noop", "sim:sata-7200", 1));
    assert_eq!(outcome.report.jobs[0].stats.directions[0].total_ios, 4);
    // 100 % with 10 ms chunks: back to back, a hundred a second.
    let full = "[c]\nioengine=cpuio\ncpuload=100\ncpuchunks=10000\ntime_based\nruntime=1\n";
    let outcome = run_text(full, &config("noop", "sim:sata-7200", 1));
    assert_eq!(outcome.report.jobs[0].stats.directions[0].total_ios, 100);
    let refused = |text: &str| {
        let file =
            ioslice_fio::jobfile::parse_str(text, "c.fio", &Default::default()).expect("parses");
        ioslice_sim::simulation::run(&file, &config("noop", "sim:sata-7200", 1))
            .expect_err("refused")
            .to_string()
    };
    assert!(refused("[c]\nioengine=cpuio\ntime_based\nruntime=1\n")
        .contains("c.fio:2: job c: ioengine=cpuio needs cpuload="));
    assert!(refused("[c]\nioengine=cpuio\ncpuload=50\n")
        .contains("c.fio:2: job c: ioengine=cpuio without time_based and runtime= never ends"));
}
