//! A simulation's progress as a status line reads it: each job's state and share done, the
//! bytes and requests completed, and the simulated clock, while the run goes and at its end.

use std::time::Duration;

use ioslice_core::Progress;
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_sim::simulation::{run, SimConfig};

/// A time-based random reader and a writer of a fixed size, then (after a stonewall) a
/// sequential reader.
const JOB: &str = "\
[global]
bs=4k
direct=1
[timed]
rw=randread
size=1g
runtime=20
time_based
[sized]
rw=write
size=64m
[after]
stonewall
rw=read
size=8m
";

fn config() -> SimConfig {
    SimConfig::new(
        1,
        "deadline".parse().expect("scheduler"),
        "sim:sata-7200".parse().expect("device"),
    )
}

#[test]
fn the_end_shows_every_job_done_and_every_byte() {
    let job_file = parse_str(JOB, "progress.fio", &ParseOptions::default()).expect("parses");
    let mut config = config();
    let progress = Progress::new();
    config.run.progress = Some(progress.clone());
    let outcome = run(&job_file, &config).expect("runs");
    let reading = progress.read();
    assert_eq!(reading.states, b"___");
    assert_eq!(reading.done, 1_000_000);
    let mut bytes = [0; 3];
    let mut ios = [0; 3];
    for job in &outcome.report.jobs {
        for (d, direction) in job.stats.directions.iter().enumerate() {
            bytes[d] += direction.io_bytes;
            ios[d] += direction.total_ios;
        }
    }
    assert_eq!(reading.bytes, bytes);
    assert_eq!(reading.ios, ios);
    assert_eq!(bytes[1], 64 << 20);
    assert!(
        reading.clock >= 20_000_000_000,
        "the clock covers the timed job's 20 s: {}",
        reading.clock
    );
}

#[test]
fn a_reading_during_the_run_shows_running_and_waiting_jobs() {
    let job_file = parse_str(JOB, "progress.fio", &ParseOptions::default()).expect("parses");
    let mut config = config();
    let progress = Progress::new();
    config.run.progress = Some(progress.clone());
    let watcher = progress.clone();
    let seen = std::thread::spawn(move || {
        let mut readings = Vec::new();
        for _ in 0..400 {
            std::thread::sleep(Duration::from_millis(2));
            readings.push(watcher.read());
        }
        readings
    });
    run(&job_file, &config).expect("runs");
    let readings = seen.join().expect("watcher");
    let during: Vec<_> = readings
        .iter()
        .filter(|r| !r.states.is_empty() && r.states != b"___")
        .collect();
    if during.is_empty() {
        eprintln!("the run ended before a reading caught it: nothing to check mid-run");
        return;
    }
    for reading in &during {
        let first_file_done = reading.states[..2] == *b"__";
        let after = reading.states[2];
        assert!(
            after == if first_file_done { b'R' } else { b'P' },
            "the stonewalled job waits for the others: {reading:?}"
        );
        assert!(reading.states[0] == b'r' || reading.states[0] == b'_');
        assert!(reading.done < 1_000_000);
    }
    let dones: Vec<u32> = during.iter().map(|r| r.done).collect();
    assert!(dones.windows(2).all(|w| w[0] <= w[1]), "done only grows");
}
