//! The `ioslice` binary as a user meets it: output, determinism, and one-line errors with exit 2.

mod common;

use common::{assert_user_error, ioslice, stderr, stdout};
use std::path::{Path, PathBuf};

/// A job file in a temporary directory of its own; both are removed when it is dropped, at the
/// end of the test that made it, whether the test passes or fails.
struct JobFile {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for JobFile {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

/// A job file named `name` holding `text`, in a fresh temporary directory.
fn job_file(name: &str, text: &str) -> JobFile {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write job file");
    JobFile { path, _dir: dir }
}

const SHORT_READERS: &str = "[global]\nioengine=psync\ndirect=1\nrw=read\nbs=4k\nsize=64m\nruntime=1\n[reader]\nnumjobs=4\n";

#[test]
fn four_sequential_readers_print_bandwidth_and_latency_per_job() {
    let path = job_file("readers.fio", SHORT_READERS);
    let output = ioslice(&["run", path.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert_eq!(
        text.matches("reader: (groupid=0, jobs=1)").count(),
        4,
        "{text}"
    );
    assert_eq!(text.matches("  read: IOPS=").count(), 4, "{text}");
    assert!(text.contains("clat ("), "{text}");
    assert!(text.contains("clat percentiles"), "{text}");
    assert!(text.contains("Run status group 0 (all jobs):"), "{text}");
}

#[test]
fn json_is_byte_identical_for_a_seed_and_differs_across_seeds() {
    let path = job_file("readers-json.fio", SHORT_READERS);
    let path = path.to_str().unwrap();
    let run = |seed: &str| {
        let output = ioslice(&["run", path, "--output-format", "json", "--seed", seed]);
        assert!(output.status.success(), "{}", stderr(&output));
        output.stdout
    };
    let first = run("7");
    assert_eq!(first, run("7"));
    assert_ne!(first, run("8"));
    let json = String::from_utf8(first).unwrap();
    for key in [
        "\"fio version\"",
        "\"jobname\" : \"reader\"",
        "\"bw_bytes\"",
        "\"clat_ns\"",
        "\"percentile\"",
    ] {
        assert!(json.contains(key), "{key}");
    }
}

#[test]
fn malformed_job_file_names_file_and_line() {
    let path = job_file(
        "broken.fio",
        "[global]\nrw=read\nthis line is not an option\n[job]\nsize=1m\n",
    );
    let output = ioslice(&["run", path.to_str().unwrap()]);
    assert_user_error(&output, &["broken.fio:3"]);
}

#[test]
fn bad_option_value_names_option_and_line() {
    let path = job_file("badvalue.fio", "[job]\nsize=1m\nbs=fast\n");
    let output = ioslice(&["run", path.to_str().unwrap()]);
    assert_user_error(&output, &["badvalue.fio:3", "bs", "fast"]);
}

#[test]
fn a_bad_ignore_error_is_one_line_naming_fios_syntax() {
    // fio 3.33 refuses both ("Unknown error EBOGUS, please use number value"; "Illegal error
    // type" for a fourth list) and drops the job.
    let expected = "expected up to three lists READ,WRITE,VERIFY separated by commas, each of error names or numbers separated by colons, such as EAGAIN,ENOSPC:122";
    for (value, line) in [(",ENOSPC:EBOGUS", 3), ("EIO,EIO,EIO,EIO", 3)] {
        let path = job_file(
            "ignore.fio",
            &format!("[job]\nsize=1m\nignore_error={value}\n"),
        );
        let output = ioslice(&["run", path.to_str().unwrap()]);
        let what =
            format!("ignore.fio:{line}: invalid value '{value}' for ignore_error: {expected}");
        assert_user_error(&output, &[&what]);
    }
}

#[test]
fn unknown_scheduler_lists_valid_ones() {
    let path = job_file("sched.fio", SHORT_READERS);
    let output = ioslice(&["run", path.to_str().unwrap(), "--sched", "elevator9"]);
    assert_user_error(&output, &["elevator9", "noop", "deadline"]);
}

#[test]
fn bad_tunable_names_it_and_its_range() {
    let path = job_file("tunable.fio", SHORT_READERS);
    let output = ioslice(&[
        "run",
        path.to_str().unwrap(),
        "--sched",
        "deadline:fifo_batch=-3",
    ]);
    assert_user_error(&output, &["fifo_batch", "-3"]);
    let output = ioslice(&[
        "run",
        path.to_str().unwrap(),
        "--sched",
        "deadline:nonsense=1",
    ]);
    assert_user_error(&output, &["nonsense", "read_expire"]);
}

#[test]
fn a_kernel_release_is_read_as_the_kernel_writes_it() {
    let path = job_file("kernel.fio", SHORT_READERS);
    let run = ioslice(&["run", path.to_str().unwrap(), "--kernel", "2.6.x"]);
    assert_user_error(&run, &["--kernel", "'2.6.x'", "2.6.28"]);
    let compare = ioslice(&["compare", path.to_str().unwrap(), "--kernel", "two"]);
    assert_user_error(&compare, &["--kernel", "'two'"]);
    let declared = job_file(
        "declared.fio",
        &format!("; ioslice-kernel: 2.6\n; ioslice-kernel: 2.6.28\n{SHORT_READERS}"),
    );
    let twice = ioslice(&["run", declared.to_str().unwrap()]);
    assert_user_error(&twice, &["declared.fio:2", "a second ioslice-kernel line"]);
    // A scheduler without a `version` tunable runs as it is under any kernel.
    let noop = ioslice(&[
        "run",
        path.to_str().unwrap(),
        "--kernel",
        "2.6.10",
        "--sched",
        "noop",
        "--output-format",
        "terse",
    ]);
    let plain = ioslice(&[
        "run",
        path.to_str().unwrap(),
        "--sched",
        "noop",
        "--output-format",
        "terse",
    ]);
    assert!(noop.status.success(), "{}", stderr(&noop));
    assert_eq!(stdout(&noop), stdout(&plain));
}

#[test]
fn unknown_preset_and_parameter_list_valid_ones() {
    let path = job_file("preset.fio", SHORT_READERS);
    let output = ioslice(&["run", path.to_str().unwrap(), "--device", "sim:floppy"]);
    assert_user_error(&output, &["floppy", "sata-7200"]);
    let output = ioslice(&[
        "run",
        path.to_str().unwrap(),
        "--device",
        "sim:sata-7200:warp=9",
    ]);
    assert_user_error(&output, &["warp"]);
}

#[test]
fn missing_job_file_and_bad_output_format() {
    let output = ioslice(&["run", "/nonexistent/job.fio"]);
    assert_user_error(&output, &["/nonexistent/job.fio"]);
    let path = job_file("format.fio", SHORT_READERS);
    let output = ioslice(&["run", path.to_str().unwrap(), "--output-format", "xml"]);
    assert_user_error(&output, &["xml", "json"]);
}

#[test]
fn unsupported_option_warns_and_strict_refuses() {
    let path = job_file("prerun.fio", "[job]\nsize=1m\nexec_prerun=true\n");
    let output = ioslice(&["run", path.to_str().unwrap(), "--device", "sim:null"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("exec_prerun"),
        "{}",
        stderr(&output)
    );
    let output = ioslice(&["run", path.to_str().unwrap(), "--strict"]);
    assert_user_error(&output, &["prerun.fio:3", "exec_prerun"]);
}

#[test]
fn a_simulated_verify_job_warns_that_the_read_back_is_not_simulated() {
    let path = job_file("verify.fio", "[job]\nrw=write\nsize=1m\nverify=md5\n");
    let output = ioslice(&["run", path.to_str().unwrap(), "--device", "sim:null"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("job job: verify= is not simulated"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn devices_and_schedulers_are_listed() {
    let devices = stdout(&ioslice(&["devices"]));
    for preset in [
        "sim:ide-2004",
        "sim:sata-7200",
        "sim:raid5-12",
        "sim:ssd",
        "sim:null",
    ] {
        assert!(devices.contains(preset), "{preset} missing: {devices}");
    }
    let schedulers = stdout(&ioslice(&["schedulers"]));
    for name in [
        "noop",
        "deadline",
        "mq-deadline",
        "prio_aging_expire",
        "kyber",
        "read_lat_nsec",
        "write_lat_nsec",
        "read_expire",
        "fifo_batch",
        "writes_starved",
        "ioband",
        "elv-fq",
        "iocost",
        "rrandiops",
        "wlat",
    ] {
        assert!(schedulers.contains(name), "{name} missing");
    }
}

#[test]
fn compare_prints_one_table_per_scheduler() {
    let path = job_file("compare.fio", SHORT_READERS);
    let output = ioslice(&[
        "compare",
        path.to_str().unwrap(),
        "--sched",
        "noop,deadline",
        "--clients",
        "1,2",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert_eq!(text.matches("Clients   Max bwidth").count(), 2, "{text}");
    assert!(text.contains("Scheduler: noop"), "{text}");
    assert!(text.contains("Scheduler: deadline"), "{text}");
}

/// Three cgroups (one nested, one job in the root) of short sequential readers.
const GROUPED: &str = "[global]\nioengine=psync\ndirect=1\nrw=read\nbs=4k\nsize=8m\nruntime=1\n\
[a]\ncgroup=grp1\ncgroup_weight=100\n[b]\ncgroup=grp2/sub\ncgroup_weight=200\n[c]\n[d]\ncgroup=grp1\n";

/// The rows of the table under the heading of `scheduler`, up to the blank line.
fn table_rows<'a>(text: &'a str, scheduler: &str) -> Vec<&'a str> {
    let heading = format!("Scheduler: {scheduler}  ");
    text.lines()
        .skip_while(|l| !l.starts_with(&heading))
        .skip_while(|l| !l.is_empty())
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect()
}

fn compare_ok(args: &[&str]) -> String {
    let output = ioslice(args);
    assert!(output.status.success(), "{}", stderr(&output));
    stdout(&output)
}

#[test]
fn compare_grouped_table_has_group_columns_and_their_total() {
    let path = job_file("grouped.fio", GROUPED);
    let text = compare_ok(&[
        "compare",
        path.to_str().unwrap(),
        "--sched",
        "noop,deadline",
        "--clients",
        "1,2",
        "--device",
        "sim:ssd",
        "--cgroup",
        "grp1:weight=300",
    ]);
    for scheduler in ["noop", "deadline"] {
        let rows = table_rows(&text, scheduler);
        let header: Vec<&str> = rows[0].split_whitespace().collect();
        assert_eq!(header, ["NR", "grp1", "grp2/sub", "/", "total"], "{text}");
        assert_eq!(rows.len(), 3, "a header and a row per client count: {text}");
        for (row, nr) in rows[1..].iter().zip(["1", "2"]) {
            let cells: Vec<&str> = row.split_whitespace().collect();
            assert_eq!(cells[0], nr, "{text}");
            let numbers: Vec<u64> = cells[1..].iter().map(|c| c.parse().unwrap()).collect();
            let (total, groups) = numbers.split_last().unwrap();
            assert!(groups.iter().all(|&g| g > 0), "{row}");
            assert_eq!(groups.iter().sum::<u64>(), *total, "{row}");
        }
    }
    assert_eq!(
        text.matches("Weights: none (noop does not weigh cgroups)\n")
            .count()
            + text
                .matches("Weights: none (deadline does not weigh cgroups)\n")
                .count(),
        2,
        "{text}"
    );
    assert!(
        !text.contains("Max bwidth"),
        "grouped, not the clients table"
    );
}

#[test]
fn compare_clients_gives_a_row_per_count_and_scheduler() {
    let path = job_file("clients.fio", SHORT_READERS);
    let text = compare_ok(&[
        "compare",
        path.to_str().unwrap(),
        "--sched",
        "noop,deadline,as,cfq",
        "--clients",
        "1,2",
        "--device",
        "sim:null",
    ]);
    for scheduler in ["noop", "deadline", "anticipatory", "cfq"] {
        let rows = table_rows(&text, scheduler);
        assert_eq!(
            rows[0],
            "Clients   Max bwidth   Min bwidth   Agg bwidth   Max latency"
        );
        let clients: Vec<&str> = rows[1..]
            .iter()
            .map(|r| r.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(clients, ["1", "2"], "{scheduler}: {text}");
    }
    assert!(text.ends_with(
        "Bandwidth in KB/s (1000 bytes) per client; latency is the largest completion latency.\n"
    ));
}

#[test]
fn compare_set_applies_where_known_and_per_scheduler_settings_win() {
    let path = job_file("set.fio", SHORT_READERS);
    let text = compare_ok(&[
        "compare",
        path.to_str().unwrap(),
        "--sched",
        "noop,deadline:fifo_batch=1",
        "--set",
        "fifo_batch=8,read_expire=250",
        "--device",
        "sim:null",
    ]);
    assert!(
        text.contains("Scheduler: noop  Device: sim:null  Seed: 1\n"),
        "{text}"
    );
    assert!(
        text.contains("Scheduler: deadline:fifo_batch=1,read_expire=250  Device: sim:null"),
        "{text}"
    );
}

#[test]
fn compare_json_has_every_run() {
    let path = job_file("json.fio", GROUPED);
    let text = compare_ok(&[
        "compare",
        path.to_str().unwrap(),
        "--sched",
        "noop,deadline:fifo_batch=1",
        "--clients",
        "1,3",
        "--device",
        "sim:ssd",
        "--seed",
        "5",
        "--output-format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(doc["seed"], 5);
    assert_eq!(doc["device"], "sim:ssd");
    let runs = doc["runs"].as_array().unwrap();
    let shape: Vec<(String, u64, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["scheduler"].as_str().unwrap().to_string(),
                r["numjobs"].as_u64().unwrap(),
                r["clients"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("noop", 1, 4),
        ("noop", 3, 12),
        ("deadline:fifo_batch=1", 1, 4),
        ("deadline:fifo_batch=1", 3, 12),
    ];
    assert_eq!(
        shape,
        expected.map(|(s, n, c)| (s.to_string(), n, c)),
        "{text}"
    );
    for run in runs {
        assert_eq!(run["seed"], 5);
        let jobs = run["jobs"].as_array().unwrap();
        assert_eq!(jobs.len() as u64, run["clients"].as_u64().unwrap());
        let job_sum: u64 = jobs.iter().map(|j| j["bw_bytes"].as_u64().unwrap()).sum();
        assert_eq!(run["aggregate"]["bw_bytes"], job_sum);
        let groups = run["cgroups"].as_array().unwrap();
        let names: Vec<&str> = groups.iter().map(|g| g["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["grp1", "grp2/sub", "/"]);
        assert!(
            groups.iter().all(|g| g.get("weight").is_none()),
            "noop and deadline weigh no cgroups: {text}"
        );
        let group_sum: u64 = groups.iter().map(|g| g["bw_bytes"].as_u64().unwrap()).sum();
        assert_eq!(group_sum, job_sum);
        assert!(run["aggregate"]["max_clat_ns"].as_u64().unwrap() > 0);
    }
    assert_eq!(runs[2]["settings"]["fifo_batch"], 1, "{text}");
    assert!(runs[2]["defaults"].get("fifo_batch").is_none(), "{text}");
    assert_eq!(runs[2]["defaults"]["read_expire"], 500, "{text}");
    assert_eq!(runs[0]["settings"], serde_json::json!({}), "{text}");
}

#[test]
fn compare_is_byte_identical_for_a_seed() {
    let path = job_file("identical.fio", GROUPED);
    let path = path.to_str().unwrap();
    for format in ["normal", "json"] {
        let args = [
            "compare",
            path,
            "--sched",
            "noop,deadline,cfq",
            "--clients",
            "1,2,3",
            "--device",
            "sim:ide-2004",
            "--seed",
            "9",
            "--output-format",
            format,
        ];
        let first = ioslice(&args);
        assert!(first.status.success(), "{}", stderr(&first));
        assert_eq!(first.stdout, ioslice(&args).stdout, "{format}");
        assert!(first.stderr.is_empty(), "no progress bar off a terminal");
    }
}

#[test]
fn compare_set_unknown_tunable_is_named_with_the_known_ones() {
    let path = job_file("set-unknown.fio", SHORT_READERS);
    let output = ioslice(&[
        "compare",
        path.to_str().unwrap(),
        "--sched",
        "noop,deadline",
        "--set",
        "slice_idle=0",
    ]);
    assert_user_error(&output, &["slice_idle", "read_expire", "fifo_batch"]);
    assert!(output.stdout.is_empty(), "nothing ran");
}

#[test]
fn compare_bad_arguments_fail_before_any_run() {
    let path = job_file("compare-bad.fio", SHORT_READERS);
    let path = path.to_str().unwrap();
    for (args, what) in [
        (["--clients", "0"], ["--clients", "'0'"]),
        (["--clients", "x"], ["--clients", "'x'"]),
        (["--sched", "noop,elevator9"], ["elevator9", "deadline"]),
        (["--sched", "deadline:fifo_batch=-3"], ["fifo_batch", "-3"]),
        (["--device", "sim:floppy"], ["floppy", "sata-7200"]),
        (["--set", "fifo_batch"], ["--set", "'fifo_batch'"]),
        (["--output-format", "terse"], ["terse", "json"]),
    ] {
        let mut all = vec!["compare", path];
        all.extend(args);
        let output = ioslice(&all);
        assert_user_error(&output, &what);
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn cgroup_flag_errors_name_the_value() {
    let path = job_file("cgroup-bad.fio", GROUPED);
    let path = path.to_str().unwrap();
    for command in ["run", "compare"] {
        for (value, what) in [
            ("x", "expected NAME:weight=N"),
            ("x:weight=0", "1..=10000"),
            ("x:weight=abc", "'abc'"),
            ("x:limit=5", "unknown setting 'limit'"),
            ("a b:weight=5", "invalid group name"),
            ("x:rbps=0", "expected a positive number of bytes per second"),
            ("x:rbps=8Q", "rbps '8Q'"),
            ("x riops=1.5 wiops=max", "riops '1.5'"),
            ("x:rbps=1M,burst=soon", "burst 'soon': expected a duration"),
            ("x rbps", "setting 'rbps' has no value"),
        ] {
            let output = ioslice(&[command, path, "--cgroup", value]);
            assert_user_error(&output, &["--cgroup", value, what]);
        }
    }
}

#[test]
fn controller_flag_errors_name_the_value_and_ioband_elv_fq_and_iocost_run() {
    let path = job_file("controller.fio", GROUPED);
    let path = path.to_str().unwrap();
    for command in ["run", "compare"] {
        for (value, what) in [
            ("dm-ioband", "expected elevator, or ioband"),
            (
                "ioband:policy=time",
                "policy 'time': expected weight or weight-iosize",
            ),
            ("ioband:io_limit=0", "io_limit '0'"),
            ("ioband:token", "setting 'token' has no value"),
            (
                "elv-fq:fairness=2",
                "fairness '2': expected a whole number in 0..=1",
            ),
            ("elv-fq:slice=5", "unknown setting 'slice'"),
            (
                "iocost:rpct=101",
                "rpct '101': expected a percentage in 0..=100 with up to two decimals",
            ),
            (
                "iocost:rlat=0",
                "rlat '0': expected a whole number in 1..=10000000",
            ),
            ("iocost:min=90,max=80", "min 90% is above max 80%"),
        ] {
            let output = ioslice(&[command, path, "--controller", value]);
            assert_user_error(&output, &["--controller", value, what]);
        }
        let output = ioslice(&[command, path, "--controller", "ioband:policy=weight-iosize"]);
        assert!(output.status.success(), "{command}: {output:?}");
        let output = ioslice(&[command, path, "--controller", "elv-fq:group_idle=4"]);
        assert!(output.status.success(), "{command}: {output:?}");
        let output = ioslice(&[command, path, "--controller", "iocost:rpct=95,rlat=5000"]);
        assert!(output.status.success(), "{command}: {output:?}");
    }
}

#[test]
fn run_prints_cgroup_totals_with_flag_weights() {
    let path = job_file("run-grouped.fio", GROUPED);
    let output = ioslice(&[
        "run",
        path.to_str().unwrap(),
        "--sched",
        "cfq",
        "--device",
        "sim:ssd",
        "--cgroup",
        "grp2/sub:weight=700",
        "--cgroup",
        "nothere:weight=5",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("Group totals (cgroup=grp1, weight=100, jobs=2):\n  read: IOPS="),
        "{text}"
    );
    assert!(
        text.contains("Group totals (cgroup=grp2/sub, weight=700, jobs=1):\n"),
        "{text}"
    );
    assert!(
        text.contains("Group totals (cgroup=/, jobs=1):\n"),
        "{text}"
    );
    assert!(
        text.contains("Group totals (cgroup=nothere, weight=10, jobs=0):\n\n"),
        "a set weight without jobs is shown, clamped to cfq's 10..=1000: {text}"
    );
    assert!(
        !text.contains("cgroup=grp2,"),
        "an ancestor with nothing set is not: {text}"
    );
    let warning = stderr(&output);
    assert!(
        warning.contains("warning: --cgroup nothere: no job is in cgroup nothere"),
        "{warning}"
    );
    let json = ioslice(&[
        "run",
        path.to_str().unwrap(),
        "--sched",
        "cfq",
        "--device",
        "sim:ssd",
        "--output-format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("valid JSON");
    assert_eq!(doc["cgroups"][1]["name"], "grp2/sub");
    assert_eq!(doc["cgroups"][1]["weight"], 200);
    assert_eq!(
        doc["jobs"].as_array().unwrap().len(),
        4,
        "fio's keys untouched"
    );
}

#[test]
fn host_flag_errors_name_the_setting() {
    let path = job_file("host-bad.fio", GROUPED);
    let path = path.to_str().unwrap();
    for command in ["run", "compare"] {
        for (value, what) in [
            ("swappiness=60", "unknown host setting 'swappiness'"),
            ("dirty_ratio=0", "expected percent, 1..=100"),
            ("direct_writes=maybe", "expected sync or async"),
            ("memory", "is not key=value"),
        ] {
            let output = ioslice(&[command, path, "--host", value]);
            assert_user_error(&output, &["--host", what]);
        }
    }
}

#[test]
fn host_direct_writes_async_changes_how_the_policy_sees_writes() {
    let path = job_file(
        "host-writes.fio",
        "[global]\nioengine=psync\ndirect=1\nbs=64k\nsize=64m\nruntime=2\ntime_based\n[reader]\nrw=read\n[writer]\nrw=write\n",
    );
    let path = path.to_str().unwrap();
    let run = |host: &str| {
        let output = ioslice(&[
            "compare",
            path,
            "--sched",
            "as",
            "--device",
            "sim:ide-2004",
            "--host",
            host,
        ]);
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };
    let sync = run("direct_writes=sync");
    let asynchronous = run("direct_writes=async");
    assert!(sync.contains("Host: direct_writes=sync"), "{sync}");
    assert_ne!(
        sync.replace("=sync", ""),
        asynchronous.replace("=async", ""),
        "async O_DIRECT writes change anticipatory's batches"
    );
}

/// A reader limited by a flag, beside a free one, for two seconds.
const LIMITED_AND_FREE: &str = "[global]\nioengine=psync\ndirect=1\nrw=read\nbs=64k\nsize=64m\nruntime=2\ntime_based\n[slow]\ncgroup=slow\nprioclass=1\n[fast]\ncgroup=fast\n";

/// Each job's read bandwidth in bytes/s from `run --output-format json`.
fn run_read_bw(path: &str, extra: &[&str]) -> Vec<u64> {
    let mut args = vec!["run", path, "--output-format", "json"];
    args.extend(extra);
    let output = ioslice(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    doc["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|job| job["read"]["bw_bytes"].as_u64().expect("bw_bytes"))
        .collect()
}

#[test]
fn cgroup_limits_in_both_spellings_hold_a_group_to_its_rate() {
    let path = job_file("limited.fio", LIMITED_AND_FREE);
    let path = path.to_str().unwrap();
    let free = run_read_bw(path, &[]);
    let ours = run_read_bw(path, &["--cgroup", "slow:rbps=1M"]);
    let io_max = run_read_bw(
        path,
        &["--cgroup", "slow rbps=1048576 wbps=max riops=max wiops=max"],
    );
    assert_eq!(ours, io_max, "the two spellings are the same limit");
    // 1 MiB/s for 2 s, plus the 100 ms burst the bucket starts with.
    let mib = 1u64 << 20;
    assert!((mib..mib * 11 / 10).contains(&ours[0]), "{ours:?}");
    assert!(
        free[0] > 10 * mib,
        "unlimited it reads far faster: {free:?}"
    );
    assert!(
        ours[1] > 10 * mib,
        "the other group is not limited: {ours:?}"
    );
    let burst = run_read_bw(path, &["--cgroup", "slow:rbps=1M,burst=1s"]);
    assert!(burst[0] > ours[0] + mib / 4, "{burst:?} against {ours:?}");
    let iops = run_read_bw(path, &["--cgroup", "slow:riops=10"]);
    assert!(
        (630_000..700_000).contains(&iops[0]),
        "10 × 64 KiB/s: {iops:?}"
    );
}

#[test]
fn compare_applies_cgroup_limits_to_every_scheduler() {
    let path = job_file("limited-compare.fio", LIMITED_AND_FREE);
    let text = compare_ok(&[
        "compare",
        path.to_str().unwrap(),
        "--sched",
        "noop,cfq",
        "--cgroup",
        "slow:weight=200,rbps=2M",
        "--output-format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let runs = doc["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    for (run, weight) in runs.iter().zip([None, Some(200)]) {
        let slow = &run["cgroups"][0];
        assert_eq!(
            (slow["name"].as_str(), slow["weight"].as_u64()),
            (Some("slow"), weight),
            "noop weighs no cgroups, cfq takes the flag's 200"
        );
        assert_eq!(
            slow["limits"],
            serde_json::json!({"rbps": 2 << 20, "burst_ns": 100_000_000}),
            "{run}"
        );
        assert!(run["cgroups"][1].get("limits").is_none(), "{run}");
        // A ceiling, not a guarantee: under cfq the other group's slices take a little.
        let bw = slow["bw_bytes"].as_u64().expect("bw");
        assert!(
            ((2 << 20) * 9 / 10..(2 << 20) * 11 / 10).contains(&bw),
            "{run}"
        );
    }
}

/// Two short readers: `g1` with no weight set and `g2` at 200.
const ONE_UNSET_ONE_SET: &str =
    "[global]\nioengine=psync\ndirect=1\nrw=read\nbs=4k\nsize=1m\nruntime=1\n\
[a]\ncgroup=g1\n[b]\ncgroup=g2\ncgroup_weight=200\n";

/// The heading lines of each scheduler's table: from `Scheduler:` to the blank line.
fn headings(text: &str) -> Vec<Vec<&str>> {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("Scheduler: "))
        .map(|(i, _)| {
            lines[i..]
                .iter()
                .copied()
                .take_while(|l| !l.is_empty())
                .collect()
        })
        .collect()
}

#[test]
fn compare_shows_each_schedulers_own_weights_and_the_limits() {
    let path = job_file("weights.fio", ONE_UNSET_ONE_SET);
    let text = compare_ok(&[
        "compare",
        path.to_str().unwrap(),
        "--sched",
        "cfq,bfq,noop",
        "--device",
        "sim:null",
        "--cgroup",
        "g1:rbps=8M,riops=max,burst=250ms",
        "--cgroup",
        "g2 wiops=300",
    ]);
    let limits = [
        "Limits: g1 rbps=8MiB/s wbps=max riops=max wiops=max burst=250ms",
        "        g2 rbps=max wbps=max riops=max wiops=300 burst=100ms",
    ];
    let expected = [
        ("cfq", "Weights: g1=500  g2=200"),
        ("bfq", "Weights: g1=100  g2=200"),
        ("noop", "Weights: none (noop does not weigh cgroups)"),
    ]
    .map(|(scheduler, weights)| {
        let heading = format!("Scheduler: {scheduler}  Device: sim:null  Seed: 1");
        [heading.as_str(), weights, limits[0], limits[1]].map(str::to_string)
    });
    assert_eq!(headings(&text), expected, "{text}");
}

#[test]
fn compare_without_cgroups_prints_no_weights() {
    let path = job_file("no-groups.fio", SHORT_READERS);
    let text = compare_ok(&["compare", path.to_str().unwrap(), "--sched", "cfq,bfq"]);
    assert!(
        !text.contains("Weights:") && !text.contains("Limits:"),
        "{text}"
    );
}

/// The `Group totals` headers and `limits:` lines of `run`'s normal output.
fn group_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("Group totals") || l.starts_with("  limits:"))
        .collect()
}

#[test]
fn run_shows_the_weight_the_scheduler_used_and_the_limits() {
    let path = job_file("run-weights.fio", ONE_UNSET_ONE_SET);
    let run = |sched: &str| {
        let output = ioslice(&[
            "run",
            path.to_str().unwrap(),
            "--sched",
            sched,
            "--device",
            "sim:null",
            "--cgroup",
            "g1:rbps=1536k,wbps=2G",
        ]);
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };
    let limits = "  limits: rbps=1536KiB/s wbps=2GiB/s riops=max wiops=max burst=100ms";
    for (sched, unset) in [("cfq", "500"), ("bfq", "100")] {
        let text = run(sched);
        assert_eq!(
            group_lines(&text),
            [
                format!("Group totals (cgroup=g1, weight={unset}, jobs=1):").as_str(),
                limits,
                "Group totals (cgroup=g2, weight=200, jobs=1):",
            ],
            "{sched}: {text}"
        );
    }
    let text = run("noop");
    assert_eq!(
        group_lines(&text),
        [
            "Group totals (cgroup=g1, jobs=1):",
            limits,
            "Group totals (cgroup=g2, jobs=1):",
        ],
        "noop weighs no cgroups: {text}"
    );
}

#[test]
fn emulate_refuses_a_bad_mountpoint_device_or_transport_with_one_line() {
    let dir = tempfile::tempdir().expect("a directory");
    let missing = dir.path().join("missing");
    let missing = missing.to_str().expect("utf-8");
    let empty = dir.path().to_str().expect("utf-8");
    if !std::path::Path::new("/dev/fuse").exists() {
        let output = ioslice(&["emulate", missing]);
        assert_user_error(&output, &["/dev/fuse"]);
        return;
    }
    assert_user_error(
        &ioslice(&["emulate", missing]),
        &["mountpoint", "missing", "no such directory"],
    );
    assert_user_error(
        &ioslice(&["emulate", empty, "--device", "sim:floppy"]),
        &["--device", "floppy"],
    );
    assert_user_error(
        &ioslice(&["emulate", empty, "--transport", "fast"]),
        &["--transport", "'fast'", "FIXED_US+PER_MIB_US"],
    );
}

/// A seed's scenario brings its disk and kernel (`; ioslice-device:`, `; ioslice-host:`):
/// anticipatory starves seed 003's writer with no flag given, and the command line still
/// overrides the file.
#[test]
fn a_scenario_brings_its_eras_disk_and_host() {
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/seed-003/reader-vs-writer-64k.fio"
    );
    let bandwidths = |extra: &[&str]| {
        let mut args = vec!["run", scenario, "--sched", "as", "--output-format", "json"];
        args.extend_from_slice(extra);
        let output = ioslice(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        let report: serde_json::Value =
            serde_json::from_str(&stdout(&output)).expect("JSON report");
        let job = |name: &str| {
            report["jobs"]
                .as_array()
                .and_then(|jobs| jobs.iter().find(|job| job["jobname"] == name))
                .map(|job| {
                    job["read"]["bw_bytes"].as_f64().unwrap_or(0.0)
                        + job["write"]["bw_bytes"].as_f64().unwrap_or(0.0)
                })
                .expect("job in the report")
        };
        (job("reader"), job("writer"))
    };
    let (reader, writer) = bandwidths(&[]);
    assert!(writer * 100.0 < reader, "reader {reader}, writer {writer}");
    let (reader, writer) = bandwidths(&["--host", "direct_writes=sync"]);
    assert!(
        writer > reader,
        "sync O_DIRECT writes: reader {reader}, writer {writer}"
    );
}

#[test]
fn an_unknown_scenario_directive_is_one_line_naming_the_line() {
    let path = job_file(
        "directive.fio",
        "; ioslice-sched: cfq\n[job]\nrw=read\nsize=1m\n",
    );
    let output = ioslice(&["run", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("directive.fio:1: unknown directive 'ioslice-sched'"),
        "{message}"
    );
    assert_eq!(message.trim_end().lines().count(), 1, "{message}");
}

#[test]
fn a_simulated_run_is_dated_now_unless_source_date_epoch_says() {
    let path = job_file("dated.fio", SHORT_READERS);
    let path = path.to_str().unwrap();
    let run = |epoch: Option<&str>| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_ioslice"));
        command.args(["run", path, "--output-format", "json"]);
        match epoch {
            Some(epoch) => command.env("SOURCE_DATE_EPOCH", epoch),
            None => command.env_remove("SOURCE_DATE_EPOCH"),
        };
        command.output().expect("the binary runs")
    };
    let timestamp = |output: &std::process::Output| {
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
        json["timestamp"].as_u64().expect("a timestamp")
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let dated = timestamp(&run(None));
    assert!(dated.abs_diff(now) < 60, "{dated} against {now}");
    assert_eq!(timestamp(&run(Some("1234567890"))), 1_234_567_890);
    assert_user_error(&run(Some("yesterday")), &["SOURCE_DATE_EPOCH=yesterday"]);
}

#[test]
fn a_job_for_hardware_ioslice_has_no_model_of_is_one_line_without_warnings() {
    // fio's examples/netio.fio in short: the net engine's options would each warn.
    let path = job_file(
        "netio.fio",
        "[global]\nioengine=net\nport=8888\nprotocol=tcp\n[receiver]\nlisten\n[sender]\nhostname=localhost\n",
    );
    for command in ["run", "compare"] {
        let output = ioslice(&[command, path.to_str().unwrap()]);
        assert_user_error(&output, &["ioengine=net is not supported"]);
    }
    // Parsing alone still says what ioslice would ignore, as fio's --parse-only parses it.
    let output = ioslice(&["run", "--parse-only", path.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("option 'port'"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_real_run_reads_the_job_files_directives_or_refuses_them_in_one_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let device = dir.path().join("data");
    let device = device.to_str().unwrap();
    // A simulated host does not apply to a real device: refused, naming the file.
    let host = job_file(
        "host.fio",
        "; ioslice-host: read_ahead_kb=0\n[r]\nrw=read\nsize=1m\n",
    );
    let output = ioslice(&["run", host.to_str().unwrap(), "--device", device]);
    assert_user_error(
        &output,
        &["host.fio", "ioslice-host: read_ahead_kb=0", "real --device"],
    );
    // A scheduled change to a group is made on the real clock, checked before the run as in
    // the simulator.
    let at = job_file(
        "at.fio",
        "[r]\nrw=read\nsize=1m\ncgroup=g\n; ioslice-at: 10ms cgroup g weight=800\n",
    );
    let output = ioslice(&["run", at.to_str().unwrap(), "--device", device]);
    assert!(output.status.success(), "{}", stderr(&output));
    let missing = job_file(
        "missing.fio",
        "[r]\nrw=read\nsize=1m\ncgroup=g\n; ioslice-at: 10ms cgroup h weight=800\n",
    );
    let output = ioslice(&["run", missing.to_str().unwrap(), "--device", device]);
    assert_user_error(
        &output,
        &["missing.fio:5: no group 'h' in the run then (the groups then: g)"],
    );
    // The kernel release a file names models that release's elevators, as in the simulator.
    let kernel = job_file(
        "kernel.fio",
        "; ioslice-kernel: 2.6.10\n[r]\nrw=read\nsize=1m\n",
    );
    let page = dir.path().join("page.html");
    let output = ioslice(&[
        "run",
        kernel.to_str().unwrap(),
        "--device",
        device,
        "--sched",
        "cfq",
        "--report",
        page.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&page).expect("the report");
    assert!(
        html.contains("version=2.6.10"),
        "the page names cfq's 2.6.10 model"
    );
}

#[test]
fn on_a_real_run_a_waiting_job_starts_when_its_waitee_is_done() {
    let dir = tempfile::tempdir().expect("temp dir");
    let device = dir.path().join("data");
    std::fs::write(&device, vec![0u8; 1 << 20]).expect("data file");
    let job = job_file(
        "wait.fio",
        "[global]\nrw=randread\nbs=4k\nsize=1m\nruntime=300ms\ntime_based=1\n[a]\n[b]\nwait_for=a\n",
    );
    let started = std::time::Instant::now();
    let output = ioslice(&[
        "run",
        job.to_str().unwrap(),
        "--device",
        device.to_str().unwrap(),
        "--output-format",
        "json",
    ]);
    let took = started.elapsed();
    assert!(output.status.success(), "{}", stderr(&output));
    // Each job runs its 300 ms, one after the other.
    assert!(took >= std::time::Duration::from_millis(600), "{took:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    for job in report["jobs"].as_array().expect("jobs") {
        let runtime = job["job_runtime"].as_u64().expect("runtime");
        assert!((300..400).contains(&runtime), "{job}");
    }
}
