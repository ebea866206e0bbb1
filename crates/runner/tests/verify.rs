//! fio's `verify=` on real runs: a job writes blocks with fio's verify headers and reads them
//! back; a flipped byte is found at its offset with the expected and received checksums;
//! `verify_only`, `verify_fatal` and `verify_backlog` behave as fio documents; and fio itself
//! verifies a file ioslice wrote (skipped, saying why, where `fio` is not installed).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::PoisonError;

use ioslice_core::{Direction, TraceEvent, TraceSink};
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_runner::{run, run_traced, RunConfig, RunOutcome};

mod common;
use common::Shared;

/// 16 blocks of 4 KiB written in order.
const WRITE: &str = "[w]\nrw=write\nbs=4k\nsize=64k\n";

/// EILSEQ, the errno of a verify failure.
const EILSEQ: i32 = 84;

fn config(path: &Path) -> RunConfig {
    RunConfig::new(1, "noop".parse().expect("scheduler"), path.to_path_buf())
}

/// Run `job` (a job file's text) on `path`.
fn run_job(job: &str, path: &Path) -> RunOutcome {
    let file = parse_str(job, "verify.fio", &ParseOptions::default()).expect("job parses");
    run(&file, &config(path)).expect("run starts")
}

/// The job `w` with `verify=` `kind` and `extra` options.
fn job(kind: &str, extra: &str) -> String {
    let pattern = if kind == "pattern" {
        "verify_pattern=0xdeadbeef\n"
    } else {
        ""
    };
    format!("{WRITE}verify={kind}\n{pattern}{extra}")
}

fn temp_file(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("data")
}

/// Flip `len` bytes of `path` at `offset`.
fn flip(path: &Path, offset: u64, len: usize) {
    let mut bytes = std::fs::read(path).expect("read data");
    for byte in &mut bytes[offset as usize..offset as usize + len] {
        *byte ^= 0xff;
    }
    std::fs::write(path, bytes).expect("write data");
}

/// The job's reads and writes issued, its first errno.
fn counts(outcome: &RunOutcome) -> (u64, u64, i32) {
    let stats = &outcome.report.jobs[0].stats;
    (stats.issued[0], stats.issued[1], stats.error)
}

#[test]
fn every_kind_verifies_clean_and_finds_a_flipped_block_at_its_offset() {
    for kind in [
        "crc32c",
        "crc32c-intel",
        "md5",
        "sha256",
        "xxhash",
        "pattern",
    ] {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = temp_file(&dir);
        let written = run_job(&job(kind, ""), &path);
        assert!(
            written.verify_errors.is_empty(),
            "{kind}: {:?}",
            written.verify_errors
        );
        assert_eq!(
            counts(&written),
            (16, 16, 0),
            "{kind}: written and read back"
        );

        let clean = run_job(&job(kind, "verify_only=1\n"), &path);
        assert!(
            clean.verify_errors.is_empty(),
            "{kind}: {:?}",
            clean.verify_errors
        );
        assert_eq!(counts(&clean), (16, 0, 0), "{kind}: verify_only only reads");

        flip(&path, 5 * 4096 + 100, 2);
        let corrupt = run_job(&job(kind, "verify_only=1\n"), &path);
        assert_eq!(
            corrupt.failed_jobs,
            ["w"],
            "{kind}: the failure stops the job"
        );
        assert_eq!(counts(&corrupt).2, EILSEQ, "{kind}");
        assert_eq!(corrupt.verify_errors.len(), 1, "{kind}");
        let message = &corrupt.verify_errors[0];
        let place = format!(
            "verify failed at file {} offset 20480, length 4096 (requested block: offset=20480, length=4096)",
            path.display()
        );
        assert!(message.contains(&place), "{kind}: {message}");
        if kind == "pattern" {
            assert!(
                message.contains("fio: bad pattern block offset 100"),
                "{message}"
            );
            assert!(
                message.contains("got pattern '21', wanted 'de'"),
                "{message}"
            );
        } else {
            let expected = field(message, "Expected CRC: ");
            let received = field(message, "Received CRC: ");
            assert_ne!(expected, received, "{kind}: {message}");
            assert!(
                !expected.is_empty() && expected.len() == received.len(),
                "{message}"
            );
        }
    }
}

/// The value after `label` on its line of `message`.
fn field<'a>(message: &'a str, label: &str) -> &'a str {
    message
        .lines()
        .find_map(|line| line.trim().strip_prefix(label))
        .unwrap_or("")
}

#[test]
fn a_header_moved_to_another_offset_is_a_bad_header() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = temp_file(&dir);
    run_job(&job("crc32c", "do_verify=0\n"), &path);
    // Block 3's contents copied over block 2: a valid header, for the wrong place.
    let mut bytes = std::fs::read(&path).expect("read");
    let block3 = bytes[3 * 4096..4 * 4096].to_vec();
    bytes[2 * 4096..3 * 4096].copy_from_slice(&block3);
    std::fs::write(&path, bytes).expect("write");
    let outcome = run_job(&job("crc32c", "verify_only=1\n"), &path);
    assert_eq!(
        outcome.verify_errors,
        [format!(
            "verify: bad header offset 12288, wanted 8192 at file {} offset 8192, length 4096 (requested block: offset=8192, length=4096)",
            path.display()
        )]
    );
}

#[test]
fn verify_fatal_stops_a_job_that_continue_on_error_would_keep_going() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = temp_file(&dir);
    run_job(&job("md5", "do_verify=0\n"), &path);
    flip(&path, 4096 + 300, 1);
    flip(&path, 9 * 4096 + 300, 1);

    let going_on = run_job(
        &job("md5", "verify_only=1\ncontinue_on_error=verify\n"),
        &path,
    );
    assert_eq!(
        going_on.verify_errors.len(),
        2,
        "{:?}",
        going_on.verify_errors
    );
    assert!(going_on.verify_errors[1].contains("offset 36864, length 4096"));
    assert!(going_on.failed_jobs.is_empty());
    let stats = &going_on.report.jobs[0].stats;
    assert_eq!((stats.issued[0], stats.directions[0].errors), (16, 2));

    let fatal = run_job(
        &job(
            "md5",
            "verify_only=1\ncontinue_on_error=verify\nverify_fatal=1\n",
        ),
        &path,
    );
    assert_eq!(fatal.verify_errors.len(), 1, "{:?}", fatal.verify_errors);
    assert_eq!(fatal.failed_jobs, ["w"]);
    assert!(
        counts(&fatal).0 < 16,
        "stopped before reading everything back"
    );
}

#[test]
fn a_read_job_with_verify_checks_what_it_reads() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = temp_file(&dir);
    run_job(&job("xxhash", "do_verify=0\n"), &path);
    let read = "[r]\nrw=read\nbs=4k\nsize=64k\nverify=xxhash\n";
    assert!(run_job(read, &path).verify_errors.is_empty());
    flip(&path, 15 * 4096 + 4000, 1);
    let outcome = run_job(read, &path);
    assert_eq!(outcome.verify_errors.len(), 1);
    assert!(outcome.verify_errors[0].starts_with("xxhash: verify failed at file"));
    assert!(outcome.verify_errors[0].contains("offset 61440"));
}

#[test]
fn verify_dump_writes_the_received_and_the_expected_block() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = temp_file(&dir);
    run_job(&job("crc32c", "do_verify=0\n"), &path);
    let original = std::fs::read(&path).expect("read");
    flip(&path, 4096 + 64, 4);
    // The dump goes to the current directory, as in fio: run from the test's directory.
    let job_text = job("crc32c", "verify_only=1\nverify_dump=1\n");
    let file = parse_str(&job_text, "verify.fio", &ParseOptions::default()).expect("parses");
    std::env::set_current_dir(dir.path()).expect("cd");
    let outcome = run(&file, &config(&path)).expect("run");
    assert!(outcome.verify_errors[0].contains("received data dumped as data.4096.received"));
    let received = std::fs::read(dir.path().join("data.4096.received")).expect("received");
    let expected = std::fs::read(dir.path().join("data.4096.expected")).expect("expected");
    let flipped: Vec<u8> = original[4096 + 64..4096 + 68].iter().map(|b| !b).collect();
    assert_eq!(received[64..68], flipped[..]);
    // The expected block is rebuilt from its seed: the data as written (the time stamp in
    // the header aside).
    assert_eq!(expected[40..], original[4096 + 40..8192]);
}

/// The directions of the requests a run inserted, in order: 'W' or 'R'.
fn directions(job: &str, path: &Path) -> String {
    let file = parse_str(job, "verify.fio", &ParseOptions::default()).expect("parses");
    let sink = Shared::default();
    let make = |_: Option<&str>| -> Box<dyn TraceSink + Send> { Box::new(sink.clone()) };
    let outcome = run_traced(&file, &config(path), Some(&make)).expect("run");
    assert!(
        outcome.verify_errors.is_empty(),
        "{:?}",
        outcome.verify_errors
    );
    let log = sink
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    log.events
        .iter()
        .filter_map(|(_, event)| match event {
            TraceEvent::Insert { request } => Some(match request.direction {
                Direction::Read => 'R',
                Direction::Write => 'W',
                Direction::Discard => 'D',
            }),
            _ => None,
        })
        .collect()
}

#[test]
fn verify_backlog_reads_back_during_the_write_phase() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = temp_file(&dir);
    let at_end = directions(&job("crc32c", ""), &path);
    assert_eq!(at_end, format!("{}{}", "W".repeat(16), "R".repeat(16)));
    let backlog = directions(&job("crc32c", "verify_backlog=4\n"), &path);
    assert_eq!(backlog, "WWWWRRRR".repeat(4));
    let batch = directions(
        &job("crc32c", "verify_backlog=8\nverify_backlog_batch=2\n"),
        &path,
    );
    assert_eq!(batch, "WWWWWWWWRR".repeat(2));
}

#[test]
fn fio_verifies_a_file_ioslice_wrote() {
    if Command::new("fio").arg("--version").output().is_err() {
        println!("skipped: fio is not on PATH (apt-get install fio)");
        return;
    }
    for (kind, extra) in [
        ("crc32c", ""),
        ("md5", ""),
        ("xxhash", "verify_interval=1k\n"),
        ("pattern", ""),
        ("crc32c", "verify_pattern=0xff%o\"ab\"\n"),
    ] {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = temp_file(&dir);
        let written = run_job(&job(kind, &format!("{extra}do_verify=0\n")), &path);
        assert!(written.failed_jobs.is_empty());
        let job_path = dir.path().join("fio.fio");
        let fio_job = format!(
            "{}filename={}\nverify_only=1\n",
            job(kind, extra),
            path.display()
        );
        std::fs::write(&job_path, fio_job).expect("job file");
        let fio = |job: &Path| {
            let output = Command::new("fio")
                .arg(job)
                .arg("--output-format=terse")
                // fio leaves its verify state files in the current directory.
                .current_dir(job.parent().unwrap_or(Path::new("/tmp")))
                .output()
                .expect("fio runs");
            let text = String::from_utf8_lossy(&output.stdout).into_owned()
                + &String::from_utf8_lossy(&output.stderr);
            (output.status.code(), text)
        };
        let (status, text) = fio(&job_path);
        assert_eq!(
            status,
            Some(0),
            "{kind}: fio verifying ioslice's file: {text}"
        );
        assert!(!text.contains("verify failed"), "{kind}: {text}");
        assert!(!text.contains("bad"), "{kind}: {text}");
        // And fio finds a corruption in it where ioslice does.
        flip(&path, 7 * 4096 + 2000, 1);
        // (fio 3.33 exits 0 when the failure is in a verify interval after a block's first.)
        let (_, text) = fio(&job_path);
        assert!(text.contains("verify failed"), "{kind}: {text}");
        assert!(
            text.contains("requested block: offset=28672"),
            "{kind}: {text}"
        );
    }
}

#[test]
fn a_job_an_io_error_stopped_reads_nothing_back() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let path = temp_file(&dir);
    // Some blocks misaligned for O_DIRECT: the first of them fails with EINVAL and stops the
    // job, after aligned writes that succeeded.
    let text = job("crc32c", "direct=1\nsize=1m\nbssplit=4k/95:4608/5\n");
    let file = parse_str(&text, "verify.fio", &ParseOptions::default()).expect("parses");
    let outcome = match run(&file, &config(&path)) {
        Ok(outcome) => outcome,
        Err(error) => {
            println!("skipped: {error}");
            return;
        }
    };
    assert_eq!(outcome.failed_jobs, ["w"]);
    let (reads, writes, error) = counts(&outcome);
    assert_eq!(error, 22);
    assert!(
        writes > 1,
        "{writes} writes: some succeeded before the failure"
    );
    assert_eq!(reads, 0, "nothing read back");
    assert!(outcome.verify_errors.is_empty());
}

#[test]
fn blocks_too_small_for_the_header_are_a_one_line_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = temp_file(&dir);
    let text = "[w]\nrw=write\nbs=64\nsize=64k\nverify=sha256\n";
    let file = parse_str(text, "verify.fio", &ParseOptions::default()).expect("parses");
    let error = run(&file, &config(&path)).expect_err("refused").to_string();
    assert_eq!(
        error,
        "verify.fio:1: job w: verify=sha256 needs blocks of at least 104 bytes for its header and checksum, but the job has 64-byte blocks: expected a larger bs="
    );
    assert!(!path.exists(), "refused before the file is laid out");
}
