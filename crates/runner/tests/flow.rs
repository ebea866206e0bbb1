//! fio's flow control in a real run: two null-engine jobs of one flow group (weights 3 and 1)
//! each issue all their I/O, the lighter one held back while the heavier one runs and free
//! once it has left, without either waiting for ever; `flow_sleep` holds by sleeping.

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_runner::{run, RunConfig};

fn run_jobs(text: &str) -> Vec<u64> {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let path = dir.path().join("data");
    let file = std::fs::File::create(&path).expect("data file");
    file.set_len(16 << 20).expect("a sparse 16 MiB file");
    let job_file = parse_str(text, "flow.fio", &ParseOptions::default()).expect("job parses");
    assert!(job_file.warnings.is_empty(), "{:?}", job_file.warnings);
    let config = RunConfig::new(1, "noop".parse().expect("scheduler"), path);
    let outcome = run(&job_file, &config).expect("run");
    assert!(outcome.failed_jobs.is_empty(), "{:?}", outcome.io_errors);
    outcome
        .report
        .jobs
        .iter()
        .map(|job| job.stats.directions[0].total_ios)
        .collect()
}

#[test]
fn a_flow_group_runs_every_job_to_its_end() {
    for sleep in ["", "flow_sleep=50\n"] {
        let text = format!(
            "[global]\nioengine=null\nrw=randread\nbs=4k\nsize=16m\nflow_id=2\n{sleep}[a]\nflow=3\n[b]\nflow=1\n"
        );
        assert_eq!(run_jobs(&text), [4096, 4096], "{sleep}");
    }
}
