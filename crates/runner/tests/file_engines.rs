//! fio's filesystem engines in a real run, against fio itself: each job runs through
//! ioslice in one temporary directory and through fio (when installed) in another, and the
//! two must agree on what was done: the I/Os and bytes of each direction, the completion
//! latency samples (one per operation; none of total latency for the namespace engines),
//! the files left on disk and the error. fio 3.33 has no directory engines (they first
//! appear in 3.37); where the installed fio refuses an engine, ioslice's counts are checked
//! against the values fio's `engines/fileoperations.c` gives, and the reason is printed.

use std::path::Path;
use std::process::Command;

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_fio::JobStats;
use ioslice_runner::{run, RunConfig};

/// What a run did, in the terms fio's JSON reports it.
#[derive(Debug, PartialEq, Eq)]
struct Done {
    /// Per direction (read, write, trim): I/Os, bytes, clat samples.
    directions: [(u64, u64, u64); 3],
    /// Jobs' first errno (0: none).
    errors: Vec<i64>,
    /// Names left in the directory.
    left: usize,
}

fn left_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| entries.count())
}

fn ioslice_run(job: &str, dir: &Path) -> (Done, Vec<JobStats>) {
    let job_file = parse_str(job, "engine.fio", &ParseOptions::default()).expect("job parses");
    let config = RunConfig::new(1, "noop".parse().expect("scheduler"), dir.to_path_buf());
    let outcome = run(&job_file, &config).expect("run");
    let stats: Vec<JobStats> = outcome
        .report
        .jobs
        .iter()
        .map(|j| j.stats.clone())
        .collect();
    let mut directions = [(0, 0, 0); 3];
    for job in &stats {
        for (d, sum) in directions.iter_mut().enumerate() {
            let dir = &job.directions[d];
            *sum = (
                sum.0 + dir.total_ios,
                sum.1 + dir.io_bytes,
                sum.2 + dir.clat.count(),
            );
        }
    }
    let errors = stats.iter().map(|job| i64::from(job.error)).collect();
    let done = Done {
        directions,
        errors,
        left: left_in(dir),
    };
    (done, stats)
}

/// fio's run of `job` in `dir`, or why there is none.
fn fio_run(job: &str, dir: &Path) -> Result<Done, String> {
    let path = dir.with_extension("fio");
    std::fs::write(&path, job).map_err(|e| e.to_string())?;
    let output = Command::new("fio")
        .arg("--output-format=json")
        .arg(format!("--directory={}", dir.display()))
        .arg(&path)
        .output()
        .map_err(|e| format!("fio is not installed ({e})"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(start) = text.find('{') else {
        let err = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "fio ran nothing: {}",
            err.lines().next().unwrap_or("")
        ));
    };
    let json: serde_json::Value =
        serde_json::from_str(&text[start..]).map_err(|e| format!("fio's JSON: {e}"))?;
    let jobs = json["jobs"].as_array().ok_or("fio's JSON has no jobs")?;
    let mut directions = [(0, 0, 0); 3];
    for job in jobs {
        for (d, name) in ["read", "write", "trim"].iter().enumerate() {
            let dir = &job[name];
            let number = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
            directions[d].0 += number(&dir["total_ios"]);
            directions[d].1 += number(&dir["io_bytes"]);
            directions[d].2 += number(&dir["clat_ns"]["N"]);
        }
    }
    let errors = jobs
        .iter()
        .map(|j| j["error"].as_i64().unwrap_or(-1))
        .collect();
    Ok(Done {
        directions,
        errors,
        left: left_in(dir),
    })
}

/// Run `job` through both; compare with fio when it runs the job, else with `expected`.
/// Returns ioslice's jobs.
fn agree(job: &str, expected: &Done) -> Vec<JobStats> {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let (ours, theirs) = (root.path().join("ioslice"), root.path().join("fio"));
    std::fs::create_dir(&ours).expect("dir");
    std::fs::create_dir(&theirs).expect("dir");
    let (done, stats) = ioslice_run(job, &ours);
    match fio_run(job, &theirs) {
        Ok(fio) => assert_eq!(done, fio, "ioslice against fio on:\n{job}"),
        Err(reason) => println!("not compared with fio: {reason}"),
    }
    assert_eq!(&done, expected, "ioslice on:\n{job}");
    stats
}

fn only_read(ios: u64, bytes: u64, clat: u64) -> [(u64, u64, u64); 3] {
    [(ios, bytes, clat), (0, 0, 0), (0, 0, 0)]
}

#[test]
fn filecreate_creates_each_file_once_counting_its_blocks() {
    // Two 4 KiB I/Os per 8 KiB file, one create (one clat sample) per file.
    let job = "[t]\nioengine=filecreate\ncreate_on_open=1\nnrfiles=12\nfilesize=8k\nbs=4k\nopenfiles=1\nfallocate=none\n";
    let stats = agree(
        job,
        &Done {
            directions: only_read(24, 24 * 4096, 12),
            errors: vec![0],
            left: 12,
        },
    );
    // No total or submission latency: fio's FIO_NOSTATS.
    assert_eq!(stats[0].directions[0].lat.count(), 0);
    assert_eq!(stats[0].directions[0].slat.count(), 0);
    // One at a time, whatever iodepth says.
    assert_eq!(stats[0].depth_counts[0], 24);
}

#[test]
fn a_writing_filecreate_job_counts_writes() {
    let job = "[t]\nioengine=filecreate\nrw=write\nnrfiles=5\nfilesize=4k\niodepth=8\n";
    agree(
        job,
        &Done {
            directions: [(0, 0, 0), (5, 5 * 4096, 5), (0, 0, 0)],
            errors: vec![0],
            left: 5,
        },
    );
}

#[test]
fn filestat_stats_files_laid_out_before() {
    for stat_type in ["stat", "lstat", "statx"] {
        let job = format!(
            "[global]\nioengine=filestat\nstat_type={stat_type}\nfilesize=4k\nnrfiles=10\n[a]\n[b]\n"
        );
        agree(
            &job,
            &Done {
                directions: only_read(20, 20 * 4096, 20),
                errors: vec![0, 0],
                left: 20,
            },
        );
    }
}

#[test]
fn filedelete_leaves_nothing_and_a_second_pass_fails() {
    let job = "[t]\nioengine=filedelete\nfilesize=4k\nnrfiles=10\nunlink=0\n";
    agree(
        job,
        &Done {
            directions: only_read(10, 10 * 4096, 10),
            errors: vec![0],
            left: 0,
        },
    );
    // The second pass finds nothing to delete: ENOENT stops the job, as fio's td_verror.
    agree(
        &job.replace("unlink=0", "loops=2"),
        &Done {
            directions: only_read(10, 10 * 4096, 10),
            errors: vec![2],
            left: 0,
        },
    );
}

#[test]
fn directory_engines_make_stat_and_remove_directories() {
    for (engine, left) in [("dircreate", 6), ("dirstat", 6), ("dirdelete", 0)] {
        let job = format!("[t]\nioengine={engine}\nfilesize=4k\nnrfiles=6\n");
        agree(
            &job,
            &Done {
                directions: only_read(6, 6 * 4096, 6),
                errors: vec![0],
                left,
            },
        );
    }
}

#[test]
fn ftruncate_truncates_to_each_write_offset() {
    let job = "[t]\nioengine=ftruncate\nrw=write\nbs=4k\nsize=64k\nfilename=tr\n";
    let stats = agree(
        job,
        &Done {
            directions: [(0, 0, 0), (16, 65536, 16), (0, 0, 0)],
            errors: vec![0],
            left: 1,
        },
    );
    // An ordinary request: total latency as well, no submission latency reported.
    assert_eq!(stats[0].directions[1].lat.count(), 16);
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    ioslice_run(job, root.path());
    let len = std::fs::metadata(root.path().join("tr")).expect("tr").len();
    assert_eq!(
        len,
        60 << 10,
        "the last write truncated the file to its offset"
    );
}

#[test]
fn falloc_punches_a_hole_for_each_trim() {
    let job = "[t]\nioengine=falloc\nrw=randtrim\nbs=4k\nsize=64k\nfilename=fa\n";
    agree(
        job,
        &Done {
            directions: [(0, 0, 0), (0, 0, 0), (16, 65536, 16)],
            errors: vec![0],
            left: 1,
        },
    );
}

#[test]
fn ftruncate_refuses_reads_with_einval() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let job = "[t]\nioengine=ftruncate\nrw=read\nbs=4k\nsize=64k\nfilename=tr\n";
    let (done, _) = ioslice_run(job, root.path());
    assert_eq!(done.errors, vec![22]);
}

#[test]
fn filesystem_engines_need_a_directory_and_a_file_of_their_own() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let mixed = "[a]\nioengine=filestat\nfilesize=4k\n[b]\nioengine=psync\nsize=64k\n";
    let job_file = parse_str(mixed, "m.fio", &ParseOptions::default()).expect("parses");
    let config = RunConfig::new(1, "noop".parse().expect("scheduler"), root.path().into());
    let error = run(&job_file, &config).expect_err("refused").to_string();
    assert_eq!(
        error,
        "job a uses ioengine=filestat and job b moves data: expected the filesystem engines in a job file of their own"
    );
    let file = root.path().join("plain");
    std::fs::write(&file, [0u8; 4096]).expect("file");
    let job_file = parse_str(
        "[a]\nioengine=filecreate\n",
        "c.fio",
        &ParseOptions::default(),
    )
    .expect("parses");
    let config = RunConfig::new(1, "noop".parse().expect("scheduler"), file.clone());
    let error = run(&job_file, &config).expect_err("refused").to_string();
    assert_eq!(
        error,
        format!(
            "{}: is not a directory; expected a directory for the jobs' files (ioengine=filecreate)",
            file.display()
        )
    );
}
