//! fio's `wait_for=NAME` in the simulator: a job starts only once every process of the job it
//! names is done, so two sequential readers that would share the disk run one after the other,
//! each at the disk's whole rate, and the run lasts as long as both back to back.

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_sim::simulation::{run, SimConfig, SimOutcome};

fn simulate(text: &str) -> SimOutcome {
    let job_file = parse_str(text, "wait.fio", &ParseOptions::default()).expect("job parses");
    assert!(job_file.warnings.is_empty(), "{:?}", job_file.warnings);
    let config = SimConfig::new(
        1,
        "mq-deadline".parse().expect("scheduler"),
        "sim:sata-7200".parse().expect("device"),
    );
    run(&job_file, &config).expect("simulation runs")
}

/// Each job's bandwidth in bytes a second, and how long it ran.
fn rates(outcome: &SimOutcome) -> Vec<(f64, u64)> {
    outcome
        .report
        .jobs
        .iter()
        .map(|job| {
            let read = &job.stats.directions[0];
            (
                read.io_bytes as f64 * 1e9 / job.stats.runtime as f64,
                job.stats.runtime,
            )
        })
        .collect()
}

const READERS: &str = "\
[global]
filename=/dev/sdb
direct=1
ioengine=psync
rw=read
bs=4k
size=32m
[a]
[b]
offset=100g
";

#[test]
fn a_waiting_job_starts_when_its_waitee_is_done() {
    let together = simulate(READERS);
    let apart = simulate(&format!("{READERS}wait_for=a\n"));
    let alone =
        simulate("[a]\nfilename=/dev/sdb\ndirect=1\nioengine=psync\nrw=read\nbs=4k\nsize=32m\n");
    let solo = rates(&alone)[0].0;
    let [(a, a_time), (b, b_time)] = rates(&apart)[..] else {
        panic!("two jobs");
    };
    // One after the other, each reads at the disk's rate alone (within 2 %) ...
    for rate in [a, b] {
        assert!(
            (rate / solo - 1.0).abs() < 0.02,
            "{rate} against {solo} alone"
        );
    }
    // ... and the run lasts as long as the two back to back (b's start delay is 0).
    let back_to_back = (a_time + b_time) as f64;
    assert!((apart.elapsed as f64 / back_to_back - 1.0).abs() < 0.01);
    // Together, the two streams share the disk and each is well below its rate alone.
    for (rate, _) in rates(&together) {
        assert!(rate < 0.75 * solo, "{rate} together against {solo} alone");
    }
}

#[test]
fn a_job_cannot_wait_for_itself_or_for_one_not_defined_before_it() {
    let options = ParseOptions::default();
    for (text, expected) in [
        (
            "[a]\nrw=read\nsize=1m\nwait_for=a\n",
            "cannot wait for itself",
        ),
        (
            "[a]\nrw=read\nsize=1m\nwait_for=b\n[b]\nrw=read\nsize=1m\n",
            "defined before",
        ),
    ] {
        let error = parse_str(text, "w.fio", &options).expect_err("refused");
        let message = error.to_string();
        assert!(message.starts_with("w.fio:4: invalid value"), "{message}");
        assert!(message.contains(expected), "{message}");
    }
}
