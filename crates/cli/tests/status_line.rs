//! fio's status line on a terminal: shown on stderr for a simulated run that takes more
//! than a second and for a real run, never when stderr is not a terminal. A terminal is
//! made with util-linux's `script`; the tests skip, saying so, where it is missing.

#[allow(dead_code)]
mod common;

use std::path::Path;
use std::process::Command;

use common::{ioslice, stderr, stdout};

/// Eight sequential readers on the 2004 IDE disk for five simulated minutes: a few seconds of
/// wall time.
const LONG: &str = "[global]\nioengine=psync\ndirect=1\nruntime=300\ntime_based\n[client]\nrw=read\nbs=4k\nsize=1g\nnumjobs=8\n; ioslice-device: sim:ide-2004\n";
const SHORT: &str = "[j]\nrw=read\nbs=4k\nsize=1m\ndirect=1\n";

/// `ioslice ARGS` on a terminal (its stdout to a file); what the terminal showed.
fn on_terminal(args: &[&str], stdout_file: &Path) -> Option<String> {
    let script = Command::new("script").arg("--version").output();
    if script.is_err() {
        eprintln!("skipped: util-linux's script (to make a terminal) is not installed");
        return None;
    }
    let binary = env!("CARGO_BIN_EXE_ioslice");
    let command = format!("{binary} {} > {}", args.join(" "), stdout_file.display());
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("script runs");
    assert!(output.status.success(), "{}", stderr(&output));
    Some(stdout(&output))
}

fn status_lines(terminal: &str) -> Vec<&str> {
    terminal
        .split(['\r', '\n'])
        .filter(|line| line.starts_with("Jobs: "))
        .collect()
}

#[test]
fn a_long_simulation_shows_fios_status_line_every_second() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = dir.path().join("long.fio");
    std::fs::write(&job, LONG).expect("job file");
    let report = dir.path().join("report.json");
    let args = [
        "run",
        job.to_str().expect("path"),
        "--sched",
        "as",
        "--output-format",
        "json",
    ];
    let started = std::time::Instant::now();
    let Some(terminal) = on_terminal(&args, &report) else {
        return;
    };
    let lines = status_lines(&terminal);
    if lines.is_empty() {
        assert!(
            started.elapsed() < std::time::Duration::from_millis(3000),
            "a run of more than a second shows the line: {terminal:?}"
        );
        eprintln!("the simulation took under a second here: only the quiet start was checked");
        return;
    }
    let last = lines.last().expect("a line");
    assert!(
        last.starts_with("Jobs: 0 (f=0): [_(8)][100.0%][r="),
        "{last}"
    );
    assert!(
        last.ends_with("[eta 00m:00s]") || last.trim_end().ends_with(']'),
        "{last}"
    );
    for line in &lines[..lines.len() - 1] {
        assert!(line.starts_with("Jobs: 8 (f=8): [R(8)]["), "{line}");
        assert!(
            line.contains("MiB/s][r=") && line.contains(" IOPS][eta "),
            "{line}"
        );
    }
    let json = std::fs::read_to_string(&report).expect("report");
    assert!(
        json.starts_with('{') && !json.contains("Jobs: "),
        "stdout keeps only the report"
    );
}

#[test]
fn a_short_simulation_and_a_pipe_show_no_status_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = dir.path().join("short.fio");
    std::fs::write(&job, SHORT).expect("job file");
    let out = dir.path().join("out.txt");
    if let Some(terminal) = on_terminal(&["run", job.to_str().expect("path")], &out) {
        assert!(status_lines(&terminal).is_empty(), "{terminal:?}");
    }
    let long = dir.path().join("long.fio");
    std::fs::write(&long, LONG).expect("job file");
    let output = ioslice(&[
        "run",
        long.to_str().expect("path"),
        "--output-format",
        "terse",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        !stderr(&output).contains("Jobs: "),
        "stderr is a pipe: {}",
        stderr(&output)
    );
}

#[test]
fn a_real_run_shows_the_line_from_its_first_second() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = dir.path().join("real.fio");
    let text =
        "[global]\nioengine=psync\nruntime=2\ntime_based\nsize=16m\n[reader]\nrw=randread\nbs=4k\n";
    std::fs::write(&job, text).expect("job file");
    let file = dir.path().join("data");
    let out = dir.path().join("out.txt");
    let args = [
        "run",
        job.to_str().expect("path"),
        "--device",
        file.to_str().expect("path"),
    ];
    let Some(terminal) = on_terminal(&args, &out) else {
        return;
    };
    let lines = status_lines(&terminal);
    assert!(lines.len() >= 2, "{terminal:?}");
    assert!(
        lines[0].starts_with("Jobs: 1 (f=1): [r(1)]["),
        "{}",
        lines[0]
    );
    assert!(
        lines
            .last()
            .is_some_and(|l| l.starts_with("Jobs: 0 (f=0): [_(1)][100.0%]")),
        "{terminal:?}"
    );
}
