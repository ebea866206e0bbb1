//! fio's `exec` engine in a real run, against what fio 3.33 does with the same job (one
//! second, `arguments=%n %r`, a script that says it started, then on SIGTERM writes `term`
//! to its standard error and exits): fio reports 11 reads of no bytes (the start, then ten
//! polls 100 ms apart, the last one past the runtime holding the 1 s grace time: its
//! `clat` max 1.050 s), a job runtime of 2056 ms, and leaves `started j 1` in `j.stdout` and
//! `term` in `j.stderr`. The run's working directory is where fio writes those files, so
//! this file holds one test, which changes it.

use std::os::unix::fs::PermissionsExt;

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_runner::{run, RunConfig};

const SCRIPT: &str = "#!/bin/sh\necho started $1 $2\ntrap 'echo term >&2; exit 0' TERM\nwhile :; do sleep 0.05; done\n";

#[test]
fn the_program_runs_for_the_runtime_is_terminated_and_its_output_kept() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let script = dir.path().join("prog.sh");
    std::fs::write(&script, SCRIPT).expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("mode");
    std::env::set_current_dir(dir.path()).expect("working directory");
    let job = format!(
        "[j]\ntime_based\nruntime=1\nioengine=exec\nprogram={}\narguments=%n %r\n\n[nap]\nstonewall\ntime_based\nruntime=1\nioengine=exec\nprogram=sleep\narguments=30\ngrace_time=0\nstd_redirect=0\n",
        script.display()
    );
    let job_file = parse_str(&job, "exec.fio", &ParseOptions::default()).expect("job parses");
    let config = RunConfig::new(1, "noop".parse().expect("scheduler"), dir.path().into());
    let outcome = run(&job_file, &config).expect("run");
    assert!(outcome.failed_jobs.is_empty());
    let jobs = &outcome.report.jobs;
    for (job, least_ms) in jobs.iter().zip([2_000, 1_000]) {
        let read = &job.stats.directions[0];
        assert_eq!(
            (read.total_ios, read.io_bytes),
            (11, 0),
            "{}",
            job.description.name
        );
        assert_eq!(job.stats.directions[1].total_ios, 0);
        let runtime_ms = job.stats.runtime / 1_000_000;
        assert!(
            (least_ms..least_ms + 400).contains(&runtime_ms),
            "{}: {runtime_ms} ms",
            job.description.name
        );
    }
    let grace = jobs[0].stats.directions[0].clat.max();
    assert!((1_000_000_000..1_300_000_000).contains(&grace), "{grace}");
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).expect(name);
    assert_eq!(read("j.stdout"), "started j 1\n");
    assert_eq!(read("j.stderr"), "term\n");
    assert!(!dir.path().join("nap.stdout").exists());
}
