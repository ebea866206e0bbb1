//! fio's filesystem engines from the command line: refused in one line by the simulator
//! (before any warning about the options that go with them), run for real on a directory.

mod common;

use common::{assert_user_error, ioslice, stderr, stdout};

/// A `filecreate` job as fio's example writes it, `openfiles` (which ioslice warns about)
/// included.
const CREATE: &str = "[global]\ncreate_on_open=1\nnrfiles=20\nioengine=filecreate\nfallocate=none\nfilesize=4k\nopenfiles=1\n[t0]\n[t1]\n";

#[test]
fn the_simulator_refuses_them_in_one_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("create.fio");
    std::fs::write(&path, CREATE).expect("job file");
    let job = path.to_str().expect("utf-8 path");
    for args in [
        vec!["run", job, "--device", "sim:ssd"],
        vec!["run", job],
        vec!["compare", job, "--sched", "noop,bfq"],
    ] {
        let output = ioslice(&args);
        assert_user_error(
            &output,
            &[
                "create.fio:4: ioengine=filecreate cannot be simulated",
                "expected a real --device DIR",
            ],
        );
    }
}

#[test]
fn a_real_run_creates_each_file_and_reports_it_as_fio_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("files");
    std::fs::create_dir(&target).expect("target");
    let path = dir.path().join("create.fio");
    std::fs::write(&path, CREATE).expect("job file");
    let output = ioslice(&[
        "run",
        path.to_str().expect("utf-8 path"),
        "--device",
        target.to_str().expect("utf-8 path"),
        "--output-format",
        "json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("json");
    let jobs = json["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 2);
    assert_eq!(json["global options"]["ioengine"], "filecreate");
    for job in jobs {
        assert_eq!(job["read"]["total_ios"], 20);
        assert_eq!(job["read"]["io_bytes"], 20 * 4096);
        assert_eq!(job["read"]["clat_ns"]["N"], 20);
        assert_eq!(job["read"]["lat_ns"]["N"], 0);
        assert_eq!(job["write"]["total_ios"], 0);
    }
    let names = std::fs::read_dir(&target).expect("files").count();
    assert_eq!(names, 40);
}
