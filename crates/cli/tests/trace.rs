//! `--trace FILE` and `--trace-format` on `run` and `compare`: the same seed writes the same
//! bytes, `compare` writes each run's trace to a file of its own (the same bytes `run`
//! writes), a bad path or format is one line and exit status 2, and a real run writes the
//! same kinds of events.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{assert_user_error, ioslice, stderr, stdout};
use serde_json::Value;

/// Two sequential readers and an RT reader that starts late, in a limited group.
const JOB: &str = "\
[global]
rw=read
bs=64k
size=1m
direct=1
ioengine=psync
cgroup=g
[a]
[b]
offset=10g
[rt]
offset=20g
prioclass=1
startdelay=20ms
";

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir")
}

fn write_job(dir: &Path) -> PathBuf {
    let path = dir.join("trace.fio");
    std::fs::write(&path, JOB).expect("job file");
    path
}

fn utf8(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// `ioslice run JOB --trace TRACE` under `sched` with group `g` limited, plus `extra`.
fn run_traced(job: &Path, sched: &str, trace: &Path, extra: &[&str]) -> String {
    let mut args = vec![
        "run",
        utf8(job),
        "--sched",
        sched,
        "--cgroup",
        "g:rbps=4M",
        "--trace",
        utf8(trace),
    ];
    args.extend_from_slice(extra);
    let output = ioslice(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    std::fs::read_to_string(trace).expect("the trace file")
}

/// How many lines of each event a trace has (text: the second column; JSON: `event`).
fn kinds(trace: &str) -> BTreeMap<String, usize> {
    let mut kinds = BTreeMap::new();
    for line in trace.lines() {
        let name = if line.starts_with('{') {
            let value: Value = serde_json::from_str(line).expect("a JSON line");
            value["event"].as_str().expect("event").to_string()
        } else {
            line.split_whitespace().nth(1).expect("a name").to_string()
        };
        *kinds.entry(name).or_insert(0) += 1;
    }
    kinds
}

#[test]
fn two_runs_with_the_same_seed_write_the_same_trace_bytes() {
    let dir = temp_dir();
    let job = write_job(dir.path());
    for sched in ["cfq", "bfq", "anticipatory"] {
        for (name, extra) in [
            ("t.txt", &[][..]),
            ("t.jsonl", &[][..]),
            ("t", &["--trace-format", "json"][..]),
        ] {
            let first = run_traced(&job, sched, &dir.path().join(format!("1-{name}")), extra);
            let second = run_traced(&job, sched, &dir.path().join(format!("2-{name}")), extra);
            assert!(first == second, "{sched} {name}: the two traces differ");
            let json = name != "t.txt";
            assert_eq!(first.starts_with('{'), json, "{sched} {name}");
            let kinds = kinds(&first);
            for kind in [
                "insert", "dispatch", "complete", "hold", "release", "preempt",
            ] {
                if kind == "preempt" && sched == "anticipatory" {
                    continue;
                }
                assert!(
                    kinds.contains_key(kind),
                    "{sched} {name}: no {kind} in {kinds:?}"
                );
            }
        }
    }
    // The text and JSON traces of one run are the same events.
    let text = kinds(&run_traced(&job, "cfq", &dir.path().join("k.txt"), &[]));
    let json = kinds(&run_traced(&job, "cfq", &dir.path().join("k.json"), &[]));
    assert_eq!(text, json);
}

#[test]
fn compare_writes_each_runs_trace_to_its_own_file_as_run_would() {
    let dir = temp_dir();
    let job = write_job(dir.path());
    let base = dir.path().join("cmp.txt");
    let output = ioslice(&[
        "compare",
        utf8(&job),
        "--sched",
        "noop,cfq,bfq:low_latency=0",
        "--cgroup",
        "g:rbps=4M",
        "--trace",
        utf8(&base),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    for (sched, file) in [
        ("noop", "cmp.noop.txt"),
        ("cfq", "cmp.cfq.txt"),
        ("bfq:low_latency=0", "cmp.bfq-low_latency-0.txt"),
    ] {
        let compared = std::fs::read_to_string(dir.path().join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let alone = run_traced(&job, sched, &dir.path().join("alone.txt"), &[]);
        assert!(compared == alone, "{sched}: compare's trace is not run's");
    }
    // With client counts, each count gets its file too.
    let output = ioslice(&[
        "compare",
        utf8(&job),
        "--sched",
        "deadline",
        "--clients",
        "1,2",
        "--trace",
        utf8(&dir.path().join("clients.jsonl")),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    for file in ["clients.deadline.c1.jsonl", "clients.deadline.c2.jsonl"] {
        let trace = std::fs::read_to_string(dir.path().join(file)).expect(file);
        assert!(kinds(&trace)["batch_start"] > 0, "{file}");
    }
}

#[test]
fn a_bad_trace_path_or_format_is_one_line_and_exit_status_2() {
    let dir = temp_dir();
    let job = write_job(dir.path());
    let job = utf8(&job);
    let missing = dir.path().join("no/such/dir/t.txt");
    let output = ioslice(&["run", job, "--trace", utf8(&missing)]);
    assert_user_error(&output, &["--trace", utf8(&missing), "cannot create"]);
    assert!(stdout(&output).is_empty(), "no report without the trace");
    let output = ioslice(&["compare", job, "--sched", "noop", "--trace", utf8(&missing)]);
    assert_user_error(&output, &["--trace", "no/such/dir/t.noop.txt"]);
    let trace = dir.path().join("t.txt");
    let output = ioslice(&["run", job, "--trace", utf8(&trace), "--trace-format", "xml"]);
    assert_user_error(&output, &["--trace-format", "'xml'", "text or json"]);
    let output = ioslice(&["compare", job, "--trace-format", "json"]);
    assert_user_error(&output, &["--trace-format needs --trace FILE"]);
}

#[test]
fn a_real_run_writes_the_same_kinds_of_events() {
    let dir = temp_dir();
    let job = dir.path().join("real.fio");
    // Buffered reads, so that any filesystem takes them.
    std::fs::write(&job, JOB.replace("direct=1", "direct=0")).expect("job file");
    let data = dir.path().join("data");
    std::fs::File::create(&data)
        .and_then(|file| file.set_len(32 << 30))
        .expect("a sparse data file");
    let trace = dir.path().join("real.jsonl");
    let output = ioslice(&[
        "run",
        utf8(&job),
        "--device",
        utf8(&data),
        "--sched",
        "cfq",
        "--cgroup",
        "g:rbps=4M",
        "--trace",
        utf8(&trace),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = std::fs::read_to_string(&trace).expect("the trace");
    let kinds = kinds(&text);
    // 3 readers of 16 reads each.
    assert_eq!(kinds["insert"], 48, "{kinds:?}");
    assert_eq!(kinds["complete"], kinds["dispatch"], "{kinds:?}");
    assert_eq!(kinds["hold"], 48, "{kinds:?}");
    assert_eq!(kinds["release"], 48, "{kinds:?}");
    for kind in ["slice_start", "slice_end", "group_start", "group_end"] {
        assert!(kinds.contains_key(kind), "no {kind}: {kinds:?}");
    }
    assert_eq!(kinds.get("idle_start"), kinds.get("idle_end"), "{kinds:?}");
}
