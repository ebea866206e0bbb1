//! A real run on a `--device` directory writes only inside it: a job whose absolute
//! `directory=` or `filename=` points elsewhere is refused in one line naming the option and
//! its value, and nothing is created, in the directory or outside it.

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_runner::{run, RunConfig};

fn refusal(job: &str, dir: &std::path::Path) -> String {
    let job_file = parse_str(job, "escape.fio", &ParseOptions::default()).expect("job parses");
    let config = RunConfig::new(1, "noop".parse().expect("scheduler"), dir.to_path_buf());
    match run(&job_file, &config) {
        Ok(_) => panic!("the run should be refused: {job}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn an_absolute_directory_or_filename_elsewhere_is_refused_and_nothing_is_made() {
    let device = tempfile::tempdir().expect("temporary directory");
    let elsewhere = tempfile::tempdir().expect("temporary directory");
    let other = elsewhere.path().display().to_string();

    let job = format!("[j]\nrw=write\nsize=64k\ndirectory={other}\n");
    let error = refusal(&job, device.path());
    assert_eq!(
        error,
        format!(
            "escape.fio:1: job j: directory={other} is outside --device {}: expected a path inside that directory (relative to it, or absolute under it)",
            device.path().display()
        )
    );

    let job = format!("[j]\nrw=write\nsize=64k\nfilename={other}/x\n");
    let error = refusal(&job, device.path());
    assert!(
        error.contains(&format!("job j: filename={other}/x is outside --device ")),
        "{error}"
    );

    let error = refusal("[j]\nrw=write\nsize=64k\nfilename=../x\n", device.path());
    assert!(
        error.contains("job j: filename=../x is outside --device "),
        "{error}"
    );

    for dir in [device.path(), elsewhere.path()] {
        assert_eq!(std::fs::read_dir(dir).expect("listing").count(), 0);
    }
}

#[test]
fn an_absolute_name_under_the_directory_runs_there() {
    let device = tempfile::tempdir().expect("temporary directory");
    let inside = device.path().join("sub");
    std::fs::create_dir(&inside).expect("sub directory");
    let job = format!("[j]\nrw=write\nsize=64k\ndirectory={}\n", inside.display());
    let job_file = parse_str(&job, "inside.fio", &ParseOptions::default()).expect("job parses");
    let config = RunConfig::new(1, "noop".parse().expect("scheduler"), device.path().into());
    let outcome = run(&job_file, &config).expect("run");
    assert_eq!(outcome.report.jobs[0].stats.directions[1].io_bytes, 65_536);
    let file = std::fs::metadata(inside.join("j.0.0")).expect("the job's file");
    assert_eq!(file.len(), 65_536);
}
