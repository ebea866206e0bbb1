//! fio's command line in `ioslice run`: jobs given as `--name=x --rw=... --size=...`, options
//! after a job file, `--section`, `--showcmd`, `--parse-only`, `--minimal`, `--output`,
//! `--eta`, and values checked as fio checks them. Each expectation is fio 3.33's own answer
//! for the same command line (recorded here); when fio is installed the test runs it beside
//! ioslice and compares, else it says why it skips that half.

#[allow(dead_code)]
mod common;

use std::path::Path;
use std::process::{Command, Output};

const JOB: &str =
    "[global]\nbs=8k\n[a]\nrw=randread\nsize=16m\nruntime=10\n[b]\nrw=write\nsize=1m\n";
const NULL_JOB: &str = "[global]\nioengine=null\n[a]\nrw=read\nsize=1m\n";

fn fio_here() -> bool {
    let here = Command::new("fio").arg("--version").output().is_ok();
    if !here {
        eprintln!("fio is not installed: comparing with fio 3.33's recorded answers only");
    }
    here
}

fn fio(dir: &Path, args: &[&str]) -> Output {
    Command::new("fio")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("fio runs")
}

fn ioslice_in(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    Command::new(env!("CARGO_BIN_EXE_ioslice"))
        .current_dir(dir)
        .args(&all)
        .output()
        .expect("ioslice runs")
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("job.fio"), JOB).expect("job");
    std::fs::write(dir.path().join("null.fio"), NULL_JOB).expect("job");
    std::fs::write(
        dir.path().join("alias.fio"),
        "[global]\nioengine=null\nblocksize=8k\n[a]\nreadwrite=read\nsize=8192k\nkb_base=1000\n",
    )
    .expect("job");
    std::fs::write(
        dir.path().join("first.fio"),
        "[global]\nioengine=null\nbs=2k\n[a]\nrw=read\nsize=1m\n",
    )
    .expect("job");
    std::fs::write(
        dir.path().join("second.fio"),
        "[b]\nrw=read\nsize=1m\nioengine=null\n",
    )
    .expect("job");
    std::fs::write(
        dir.path().join("twice.fio"),
        "[global]\nbs=4k\n[a]\nreadwrite=read\n[global]\nblocksize=8k\n[b]\nrw=write\nkb_base=1000\n",
    )
    .expect("job");
    dir
}

/// `--showcmd` lines, fio 3.33's output for each command line.
const SHOWCMD: &[(&[&str], &str)] = &[
    (
        &["--showcmd", "job.fio"],
        "fio --bs=8k --name=a --rw=randread --size=16m --runtime=10 --name=b --rw=write --size=1m \n",
    ),
    (
        &["--showcmd", "job.fio", "--runtime=5"],
        "fio --runtime=5 --bs=8k --name=a --rw=randread --size=16m --runtime=10 --name=b --rw=write --size=1m \n",
    ),
    (
        &["--showcmd", "--section=b", "job.fio", "--iodepth", "4"],
        "fio --iodepth=4 --bs=8k --name=b --rw=write --size=1m \n",
    ),
    (
        &["--showcmd", "--section", "zz", "job.fio"],
        "fio --bs=8k \n",
    ),
    (
        &["--showcmd", "twice.fio", "--direct=1"],
        "fio --direct=1 --bs=4k --name=a --rw=read --direct=1 --bs=4k --bs=8k --name=b --kb_base=1000 --rw=write \n",
    ),
    (&["--showcmd", "--name=x", "--rw=randread", "--size=16m"], ""),
    // fio starts its defaults afresh before a later file: the command line's globals are
    // the first file's only.
    (
        &["--showcmd", "job.fio", "twice.fio", "--runtime=3"],
        "fio --runtime=3 --bs=8k --name=a --rw=randread --size=16m --runtime=10 --name=b --rw=write --size=1m \n\
         fio --bs=4k --name=a --rw=read --bs=4k --bs=8k --name=b --kb_base=1000 --rw=write \n",
    ),
];

#[test]
fn showcmd_prints_what_fio_prints() {
    let dir = setup();
    let fio_here = fio_here();
    for (args, expected) in SHOWCMD {
        let output = ioslice_in(dir.path(), args);
        assert!(
            output.status.success(),
            "{args:?}: {}",
            common::stderr(&output)
        );
        assert_eq!(text(&output), *expected, "ioslice {args:?}");
        if fio_here {
            assert_eq!(text(&fio(dir.path(), args)), *expected, "fio {args:?}");
        }
    }
}

/// The JSON's `global options` and each job's `job options`, as text.
fn options_of(json: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(json).expect("JSON");
    let mut out = format!("global {}", value["global options"]);
    for job in value["jobs"].as_array().expect("jobs") {
        out.push_str(&format!(
            "; {} {} ios {}",
            job["jobname"].as_str().unwrap_or(""),
            job["job options"],
            job["read"]["total_ios"]
        ));
    }
    out
}

/// The options each job reports in fio's JSON, and the I/Os it did (so the option took
/// effect), for command lines with jobs on them, with a job file and without.
#[test]
fn json_job_options_are_fios() {
    let dir = setup();
    let fio_here = fio_here();
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "--ioengine=null",
                "--bs=8k",
                "--name=x",
                "--rw=read",
                "--size=1m",
                "--name",
                "y",
                "--size=2m",
            ],
            r#"global {"ioengine":"null","bs":"8k"}; x {"name":"x","rw":"read","size":"1m"} ios 128; y {"name":"y","size":"2m"} ios 256"#,
        ),
        (
            &["null.fio", "--bs=8k"],
            r#"global {"bs":"8k","ioengine":"null"}; a {"rw":"read","size":"1m"} ios 128"#,
        ),
        // fio's names for aliases, and its order: kb_base is parsed first.
        (
            &["alias.fio"],
            r#"global {"ioengine":"null","bs":"8k"}; a {"kb_base":"1000","rw":"read","size":"8192k"} ios 1000"#,
        ),
        (
            &["first.fio", "second.fio", "--bs=8k"],
            r#"global null; a {"rw":"read","size":"1m"} ios 512; b {"rw":"read","size":"1m","ioengine":"null"} ios 256"#,
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["--output-format=json"];
        all.extend_from_slice(args);
        let output = ioslice_in(dir.path(), &all);
        assert!(
            output.status.success(),
            "{args:?}: {}",
            common::stderr(&output)
        );
        assert_eq!(options_of(&text(&output)), *expected, "ioslice {args:?}");
        if fio_here {
            assert_eq!(
                options_of(&text(&fio(dir.path(), &all))),
                *expected,
                "fio {args:?}"
            );
        }
    }
}

#[test]
fn minimal_output_eta_and_parse_only() {
    let dir = setup();
    let terse = ioslice_in(dir.path(), &["--minimal", "--eta", "never", "null.fio"]);
    assert!(terse.status.success(), "{}", common::stderr(&terse));
    assert!(text(&terse).starts_with("3;ioslice-"), "{}", text(&terse));
    let written = ioslice_in(
        dir.path(),
        &["--output", "out.txt", "--minimal", "null.fio"],
    );
    assert!(written.status.success(), "{}", common::stderr(&written));
    assert_eq!(text(&written), "");
    let file = std::fs::read_to_string(dir.path().join("out.txt")).expect("--output file");
    assert!(file.starts_with("3;ioslice-"), "{file}");
    let parsed = ioslice_in(
        dir.path(),
        &["--parse-only", "--name=x", "--rw=randread", "--size=16m"],
    );
    assert!(parsed.status.success(), "{}", common::stderr(&parsed));
    assert_eq!(text(&parsed), "");
    // As in fio, --section leaves out only the jobs named after it.
    let kept = ioslice_in(
        dir.path(),
        &[
            "--parse-only",
            "--name=x",
            "--size=1m",
            "--section=y",
            "--name=z",
            "--size=1m",
        ],
    );
    assert!(kept.status.success(), "{}", common::stderr(&kept));
    let bad_eta = ioslice_in(dir.path(), &["--eta=sometimes", "null.fio"]);
    assert!(!bad_eta.status.success());
}

#[test]
fn unknown_options_get_the_job_files_suggestion() {
    let dir = setup();
    let output = ioslice_in(dir.path(), &["job.fio", "--iodpeth=4"]);
    common::assert_user_error(&output, &["command line:2: bad option <--iodpeth=4>"]);
    assert!(common::stderr(&output).contains("did you mean iodepth?"));
    let output = ioslice_in(dir.path(), &["--name=x", "--rw"]);
    common::assert_user_error(&output, &["option '--rw' requires an argument"]);
    let output = ioslice_in(dir.path(), &[]);
    common::assert_user_error(&output, &["no jobs"]);
}

/// Bad values fio refuses, and the words of ioslice's refusal. fio 3.33 prints the range
/// error for `iodepth=-1` but runs on (its `-` list splitting reads `1`); later fio refuses
/// it, and so does ioslice.
const BAD_VALUES: &[(&str, &str)] = &[
    ("iodepth=-1", "invalid value '-1' for iodepth"),
    ("bs=abc", "invalid value 'abc' for bs"),
    ("rwmixread=150", "invalid value '150' for rwmixread"),
    ("direct=x", "invalid value 'x' for direct: expected"),
    ("direct=2", "invalid value '2' for direct: expected"),
    ("iodepth=0", "invalid value '0' for iodepth"),
    ("prio=9", "invalid value '9' for prio"),
    ("runtime=abc", "invalid value 'abc' for runtime"),
    (
        "bsrange=4k",
        "invalid value '4k' for bsrange: expected a size range",
    ),
    (
        "cgroup_weight=50",
        "invalid value '50' for cgroup_weight: expected an integer from 100 to 1000",
    ),
    (
        "filename=",
        "invalid value '' for filename: expected a non-empty value",
    ),
    (
        "kb_base=3",
        "invalid value '3' for kb_base: expected 1000 or 1024",
    ),
];

#[test]
fn bad_values_are_refused_as_fio_refuses_them() {
    let dir = setup();
    let fio_here = fio_here();
    for (line, words) in BAD_VALUES {
        let job = dir.path().join("bad.fio");
        std::fs::write(&job, format!("[a]\nioengine=null\nsize=1m\n{line}\n")).expect("job");
        let output = ioslice_in(dir.path(), &["--parse-only", "bad.fio"]);
        common::assert_user_error(&output, &[&format!("bad.fio:4: {words}")]);
        let (name, value) = line.split_once('=').expect("name=value");
        let command_line = format!("--{name}={value}");
        let output = ioslice_in(
            dir.path(),
            &["--parse-only", "--name=a", "--size=1m", &command_line],
        );
        common::assert_user_error(&output, &[&format!("command line:4: {words}")]);
        if fio_here {
            let from_file = fio(dir.path(), &["--parse-only", "bad.fio"]);
            let from_command_line = fio(
                dir.path(),
                &[
                    "--parse-only",
                    "--name=a",
                    "--ioengine=null",
                    "--size=1m",
                    &command_line,
                ],
            );
            for fio_said in [from_file, from_command_line] {
                let said =
                    String::from_utf8_lossy(&fio_said.stderr).into_owned() + &text(&fio_said);
                let refused = ["failed parsing", "out of range", "requires an argument"]
                    .iter()
                    .any(|words| said.contains(words));
                assert!(refused, "fio takes {line}: {said}");
                if *line != "iodepth=-1" {
                    assert!(!fio_said.status.success(), "fio exits 0 on {line}");
                }
            }
        }
    }
}

/// The job line's block sizes as fio prints them: four significant figures, then powers of
/// 1024 (`16.0KiB`, `9.77KiB`, `1024KiB`), bytes below that.
#[test]
fn block_sizes_in_the_job_line_are_scaled_as_fio_scales_them() {
    let dir = setup();
    let args = [
        "--name=x",
        "--ioengine=null",
        "--rw=read",
        "--size=1m",
        "--bs=16k,10000,1m",
    ];
    let expected = "x: (g=0): rw=read, bs=(R) 16.0KiB-16.0KiB, (W) 9.77KiB-9.77KiB, (T) 1024KiB-1024KiB, ioengine=null, iodepth=1";
    let ours = text(&ioslice_in(dir.path(), &args));
    assert_eq!(ours.lines().next(), Some(expected), "{ours}");
    let range = text(&ioslice_in(
        dir.path(),
        &[
            "--name=x",
            "--ioengine=null",
            "--rw=read",
            "--size=1m",
            "--bsrange=1k-130k",
        ],
    ));
    assert!(
        range.starts_with(
            "x: (g=0): rw=read, bs=(R) 1024B-130KiB, (W) 1024B-130KiB, (T) 1024B-130KiB,"
        ),
        "{range}"
    );
    if fio_here() {
        let theirs = text(&fio(dir.path(), &args));
        assert_eq!(
            theirs.lines().next(),
            Some(expected),
            "fio printed {theirs}"
        );
    }
}
