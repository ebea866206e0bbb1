//! fio's own examples of its filesystem engines (read from the shared corpus, never copied)
//! run for real, each in a temporary directory given as the device. Each row of the table
//! says how the example is shrunk to a test's length (fewer files, a shorter `runtime=`,
//! smaller files) and what it must then have done; `directory=/scratch` is dropped, so the
//! files go in the temporary directory.

use std::path::{Path, PathBuf};

use ioslice_fio::jobfile::{parse_file, ParseOptions};
use ioslice_fio::{Extent, JobSpec};
use ioslice_runner::{run, RunConfig};

fn corpus_dir() -> Option<PathBuf> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("shared/corpus/fio-examples"))
        .find(|dir| dir.is_dir())
}

/// How an example is shrunk: files per job at most, runtime at most (ms), bytes per file
/// at most.
struct Shrink {
    nrfiles: u32,
    runtime_ms: u64,
    file_bytes: u64,
}

fn shrink(spec: &mut JobSpec, to: &Shrink) {
    spec.directory = None;
    spec.nrfiles = spec.nrfiles.min(to.nrfiles);
    spec.runtime = spec.runtime.map(|r| r.min(to.runtime_ms * 1_000_000));
    if let Some((low, high)) = spec.filesize {
        spec.filesize = Some((low.min(to.file_bytes), high.min(to.file_bytes)));
    }
    if let Some(Extent::Bytes(bytes)) = spec.size {
        spec.size = Some(Extent::Bytes(bytes.min(to.file_bytes)));
    }
}

/// Each example, how it is shrunk, and the I/Os (read, write, trim) of all its jobs
/// together then; `None` for a time-based example, whose count depends on the clock.
type Row = (&'static str, Shrink, Option<[u64; 3]>, usize);

fn table() -> Vec<Row> {
    let files = |nrfiles| Shrink {
        nrfiles,
        runtime_ms: 0,
        file_bytes: u64::MAX,
    };
    let timed = Shrink {
        nrfiles: 1,
        runtime_ms: 200,
        file_bytes: 4 << 20,
    };
    vec![
        // 16 jobs of 31250 files in the example; 40 each here: 640 creates.
        ("filecreate-ioengine.fio", files(40), Some([640, 0, 0]), 640),
        (
            "filestat-ioengine.fio",
            files(200),
            Some([1200, 0, 0]),
            1200,
        ),
        ("filedelete-ioengine.fio", files(200), Some([1200, 0, 0]), 0),
        ("dircreate-ioengine.fio", files(30), Some([180, 0, 0]), 180),
        // numjobs=10 of 6 jobs, 5 directories each.
        ("dirstat-ioengine.fio", files(5), Some([300, 0, 0]), 300),
        ("dirdelete-ioengine.fio", files(200), Some([1200, 0, 0]), 0),
        ("ftruncate.fio", timed, None, 1),
        (
            "falloc.fio",
            Shrink {
                nrfiles: 1,
                runtime_ms: 200,
                file_bytes: 4 << 20,
            },
            None,
            1,
        ),
    ]
}

#[test]
fn filesystem_engine_examples_run_in_a_directory() {
    let Some(dir) = corpus_dir() else {
        println!("skipped: no shared/corpus/fio-examples above this checkout");
        return;
    };
    let mut ran = 0;
    for (name, to, ios, left) in table() {
        let mut job_file = parse_file(&dir.join(name), &ParseOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        job_file.jobs.iter_mut().for_each(|spec| shrink(spec, &to));
        let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
        let config = RunConfig::new(1, "noop".parse().expect("scheduler"), root.path().into());
        let outcome = run(&job_file, &config).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            outcome.failed_jobs.is_empty(),
            "{name}: {:?}",
            outcome.io_errors
        );
        let done: Vec<u64> = (0..3)
            .map(|d| {
                let jobs = outcome.report.jobs.iter();
                jobs.map(|job| job.stats.directions[d].total_ios).sum()
            })
            .collect();
        match ios {
            Some(expected) => assert_eq!(done, expected, "{name}"),
            None => assert!(done.iter().sum::<u64>() > 0, "{name}: {done:?}"),
        }
        let entries = std::fs::read_dir(root.path()).expect("dir").count();
        assert_eq!(entries, left, "{name}: names left");
        ran += 1;
    }
    println!("{ran} of fio's filesystem engine examples ran for real");
    assert_eq!(ran, 8);
}
