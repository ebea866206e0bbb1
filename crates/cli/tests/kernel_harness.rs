//! The kernel oracle's harness, `bench/kernel-vs-ioslice.sh`, where it can be checked without
//! root: how a job file becomes kernel-side fio processes (one per `cgroup=`, each job with a
//! random seed of its own), how groups' limits reach blk-throttle's files, how `--pairs` is read,
//! and how the table judges a pair.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Run `script` in bash with bench/lib/kernel-runs.sh sourced.
fn harness(script: &str) -> Output {
    Command::new("bash")
        .arg("-c")
        .arg(format!(
            "say() {{ echo \"say: $*\" >&2; }}; source bench/lib/kernel-runs.sh; {script}"
        ))
        .current_dir(root())
        .output()
        .expect("bash runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).expect("write");
    path
}

const GROUPED: &str = "; device: sim:sata-7200\n[writer]\nrw=write\n[global]\nrw=randread\ncgroup=shared\ncgroup_weight=300\n[a]\nnumjobs=2\n[b]\ncgroup=b/inner\ncgroup_weight=100\n[c]\n";

#[test]
fn jobs_that_share_a_cgroup_share_a_process() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write(dir.path(), "grouped.fio", GROUPED);
    let out = harness(&format!("kr_job_groups {}", job.display()));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "-\t0\twriter\nshared\t300\ta c\nb/inner\t100\tb\n",
        "the writer in the root (its [global] comes after it), a and c in one process"
    );
    let eight =
        harness("kr_job_groups bench/kernel-vs-ioslice/seed000-eight-groups.fio | cut -f1,2");
    let lines = text(&eight.stdout);
    assert_eq!(lines.lines().count(), 8, "{lines}");
    assert!(lines.starts_with("cgrp1\t100\n"), "{lines}");
}

#[test]
fn every_job_of_several_processes_gets_its_own_seed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write(dir.path(), "grouped.fio", GROUPED);
    let out_path = dir.path().join("for-processes.fio");
    let out = harness(&format!(
        "kr_job_for_processes {} {} 1 && kr_job_seeds {} 1",
        job.display(),
        out_path.display(),
        job.display()
    ));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let seeds = text(&out.stdout);
    assert_eq!(
        seeds, "writer 2978585581\na 2978585582\nb 2978585583\nc 2978585584\n",
        "fio's own seed first, then one more a section"
    );
    let rewritten = std::fs::read_to_string(&out_path).expect("written");
    assert!(!rewritten.contains("cgroup"), "{rewritten}");
    assert_eq!(rewritten.matches("randseed=").count(), 4, "{rewritten}");
    assert!(
        rewritten.contains("[a]\nrandseed=2978585582\nnumjobs=2\n"),
        "{rewritten}"
    );
    // One process: fio seeds its jobs itself; a file that sets randseed= keeps its own.
    let one = harness(&format!(
        "kr_job_for_processes {} {} 0 && grep -c randseed {} || true",
        job.display(),
        out_path.display(),
        out_path.display()
    ));
    assert_eq!(text(&one.stdout).trim(), "0");
    let own = write(dir.path(), "own.fio", &format!("{GROUPED}randseed=7\n"));
    let kept = harness(&format!("kr_job_seeds {} 1", own.display()));
    assert!(text(&kept.stdout).lines().all(|l| l.ends_with(" fio")));
}

#[test]
fn pairs_may_carry_kernel_tunables() {
    let out =
        harness("kr_parse_pairs 'bfq:low_latency=0,slice_idle=0=bfq:low_latency=0;none=noop'");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "bfq:low_latency=0,slice_idle=0\tbfq:low_latency=0\nnone\tnoop\n"
    );
    let plain = harness("kr_parse_pairs bfq=bfq,none=noop");
    assert_eq!(text(&plain.stdout), "bfq\tbfq\nnone\tnoop\n");
    let bad = harness("kr_parse_pairs cfq=cfq");
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("'cfq=cfq'"));
    // The script refuses it before it needs root.
    let script = Command::new("bash")
        .args(["bench/kernel-vs-ioslice.sh", "--pairs", "cfq=cfq"])
        .current_dir(root())
        .output()
        .expect("bash runs");
    assert_eq!(script.status.code(), Some(2), "{}", text(&script.stderr));
}

/// The table bench/lib/kernel-vs-ioslice-report.py prints for `manifest` (10 s runs).
fn report(manifest: &Path) -> String {
    let out = Command::new("python3")
        .arg("bench/lib/kernel-vs-ioslice-report.py")
        .arg(manifest)
        .arg("10")
        .current_dir(root())
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// A fio-like JSON file with one job per `(name, bytes a second)`.
fn fio_json(dir: &Path, name: &str, jobs: &[(&str, u64)]) -> String {
    let jobs: Vec<String> = jobs
        .iter()
        .map(|(job, bw)| {
            format!(
                "{{\"jobname\":\"{job}\",\"job_runtime\":10000,\"read\":{{\"bw_bytes\":{bw},\"io_bytes\":{bw},\"clat_ns\":{{\"percentile\":{{\"99.000000\":5000000}}}}}},\"write\":{{\"bw_bytes\":0,\"io_bytes\":0}}}}"
            )
        })
        .collect();
    let path = write(dir, name, &format!("{{\"jobs\":[{}]}}", jobs.join(",")));
    path.display().to_string()
}

#[test]
fn the_table_judges_shares_by_points_or_percent_and_totals_by_the_kernels_range() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write(
        dir.path(),
        "two.fio",
        "[big]\ncgroup=big\n[small]\ncgroup=small\n",
    );
    // The kernel: 97 : 3 and 95 : 5 over two runs; ioslice 96 : 4, a share 1 point off the
    // median but 30 % off in relative terms: it agrees by points.
    let k1 = fio_json(
        dir.path(),
        "k1.json",
        &[("big", 97_000_000), ("small", 3_000_000)],
    );
    let k2 = fio_json(
        dir.path(),
        "k2.json",
        &[("big", 95_000_000), ("small", 5_000_000)],
    );
    let near = fio_json(
        dir.path(),
        "near.json",
        &[("big", 96_000_000), ("small", 4_000_000)],
    );
    let far = fio_json(
        dir.path(),
        "far.json",
        &[("big", 60_000_000), ("small", 40_000_000)],
    );
    let late = write(
        dir.path(),
        "k.emulate.out",
        "sim:sata-7200: 10 commands (10 reads, 0 writes; 1 MiB read, 0 MiB written); service time mean 100 µs, p99 200 µs; driver queue wait mean 1 µs, p99 2 µs, longest 3; replies late by mean 4.5 µs, p99 37 µs\n",
    );
    let manifest = write(
        dir.path(),
        "manifest.tsv",
        &format!(
            "two\t{job}\tsim:sata-7200\tbfq\t{k1};{k2}\tbfq\t{near}\t{late}\t-\ntwo\t{job}\tsim:sata-7200\tnone\t{k1};{k2}\tnoop\t{far}\n",
            job = job.display(),
            late = late.display()
        ),
    );
    let table = report(&manifest);
    let ioslice_lines: Vec<&str> = table
        .lines()
        .filter(|l| l.trim_start().starts_with("ioslice"))
        .collect();
    assert!(ioslice_lines[0].ends_with("agrees"), "{table}");
    assert!(
        ioslice_lines[1].contains("DIFFERS: shares off by up to 36.0 points"),
        "{table}"
    );
    assert!(table.contains("emulator late p99 37 µs"), "{table}");
    assert!(table.contains("1 of 2 pairs agree"), "{table}");
}

#[test]
fn shares_of_grouped_rows_are_the_groups_shares() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write(
        dir.path(),
        "groups.fio",
        "[global]\nnumjobs=2\n[light]\ncgroup=light\ncgroup_weight=100\n[heavy]\ncgroup=heavy\ncgroup_weight=400\n",
    );
    // fio names numjobs clones alike; the table adds them up per group.
    let kernel = fio_json(
        dir.path(),
        "k.json",
        &[("light", 10), ("light", 10), ("heavy", 45), ("heavy", 35)],
    );
    let mine = fio_json(
        dir.path(),
        "m.json",
        &[("light", 12), ("light", 9), ("heavy", 40), ("heavy", 39)],
    );
    let manifest = write(
        dir.path(),
        "manifest.tsv",
        &format!(
            "groups\t{}\tsim:sata-7200\tbfq\t{kernel}\tbfq\t{mine}\n",
            job.display()
        ),
    );
    let table = report(&manifest);
    assert!(table.contains("weight shares %:    20.0  80.0"), "{table}");
    assert!(table.contains("shares % (light heavy)"), "{table}");
    let kernel_line = table
        .lines()
        .find(|l| l.trim_start().starts_with("kernel bfq"))
        .expect("the kernel's line");
    assert!(kernel_line.ends_with("20.0  80.0"), "{table}");
    assert!(table.contains("1 of 1 pairs agree"), "{table}");
}

#[test]
fn a_bimodal_kernel_row_is_judged_against_each_mode() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write(
        dir.path(),
        "two.fio",
        "[first]\ncgroup=first\n[second]\ncgroup=second\n",
    );
    // Two kernel runs give the first group everything at 200 MB/s; one splits 100 MB/s evenly.
    let fast = |name: &str, bw: u64| fio_json(dir.path(), name, &[("first", bw), ("second", 0)]);
    let (k1, k2) = (fast("k1.json", 200_000_000), fast("k2.json", 198_000_000));
    let k3 = fio_json(
        dir.path(),
        "k3.json",
        &[("first", 50_000_000), ("second", 50_000_000)],
    );
    let even = fio_json(
        dir.path(),
        "even.json",
        &[("first", 52_000_000), ("second", 50_000_000)],
    );
    let between = fio_json(
        dir.path(),
        "between.json",
        &[("first", 110_000_000), ("second", 40_000_000)],
    );
    let manifest = write(
        dir.path(),
        "manifest.tsv",
        &format!(
            "two\t{job}\tsim:sata-7200\tbfq\t{k1};{k2};{k3}\tbfq\t{even}\ntwo\t{job}\tsim:sata-7200\tnone\t{k1};{k2};{k3}\tnoop\t{between}\n",
            job = job.display()
        ),
    );
    let table = report(&manifest);
    let kernel_modes: Vec<&str> = table
        .lines()
        .filter(|l| l.trim_start().starts_with("kernel bfq") && !l.contains("vs itself"))
        .collect();
    assert_eq!(kernel_modes.len(), 2, "{table}");
    assert!(kernel_modes[0].contains("kernel bfq (2/3)"), "{table}");
    assert!(kernel_modes[0].contains("100.0   0.0"), "{table}");
    assert!(kernel_modes[1].contains("kernel bfq (1/3)"), "{table}");
    let verdicts: Vec<&str> = table
        .lines()
        .filter(|l| l.trim_start().starts_with("ioslice"))
        .collect();
    assert!(
        verdicts[0].ends_with("agrees with the mode of 1 of 3 runs"),
        "{table}"
    );
    assert!(verdicts[1].contains("DIFFERS from every mode: "), "{table}");
    assert!(
        table.contains("1 of 2 pairs agree, 1 of them with one mode of the kernel's runs"),
        "{table}"
    );
}

#[test]
fn runs_of_which_no_two_agree_are_a_spread_not_modes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write(dir.path(), "one.fio", "[only]\n");
    let runs: Vec<String> = [10_000_000, 20_000_000, 40_000_000]
        .iter()
        .enumerate()
        .map(|(i, bw)| fio_json(dir.path(), &format!("k{i}.json"), &[("only", *bw)]))
        .collect();
    let mine = fio_json(dir.path(), "m.json", &[("only", 21_000_000)]);
    let manifest = write(
        dir.path(),
        "manifest.tsv",
        &format!(
            "one\t{}\tsim:sata-7200\tnone\t{}\tnoop\t{mine}\n",
            job.display(),
            runs.join(";")
        ),
    );
    let table = report(&manifest);
    // One line for the kernel: the median total of the three runs and their range.
    let kernel_line = table
        .lines()
        .find(|l| l.trim_start().starts_with("kernel none"))
        .expect("the kernel's line");
    assert!(kernel_line.contains("20.0"), "{table}");
    assert!(kernel_line.contains("3 runs, 10.0–40.0 MB/s"), "{table}");
    assert!(table.contains("1 of 1 pairs agree (10 s a run)"), "{table}");
}

#[test]
fn the_table_says_how_often_the_kernel_agrees_with_itself() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write(
        dir.path(),
        "two.fio",
        "[first]\ncgroup=first\n[second]\ncgroup=second\n",
    );
    let run = |name: &str, first: u64, second: u64| {
        fio_json(dir.path(), name, &[("first", first), ("second", second)])
    };
    // Three runs within a point of each other: each agrees with the other two.
    let steady = [
        run("s1.json", 50_000_000, 50_000_000),
        run("s2.json", 51_000_000, 49_000_000),
        run("s3.json", 49_000_000, 51_000_000),
    ];
    // Two even runs and one 80 : 20: left out, the odd run disagrees with the even pair, and
    // each even run disagrees with the spread of the other two.
    let unsteady = [
        run("u1.json", 50_000_000, 50_000_000),
        run("u2.json", 50_000_000, 50_000_000),
        run("u3.json", 80_000_000, 20_000_000),
    ];
    let mine = run("m.json", 50_000_000, 50_000_000);
    let manifest = write(
        dir.path(),
        "manifest.tsv",
        &format!(
            "two\t{job}\tsim:sata-7200\tbfq\t{}\tbfq\t{mine}\ntwo\t{job}\tsim:sata-7200\tnone\t{}\tnoop\t{mine}\n",
            steady.join(";"),
            unsteady.join(";"),
            job = job.display()
        ),
    );
    let table = report(&manifest);
    assert!(
        table.contains("kernel bfq vs itself: 3 of 3 runs agree with the others"),
        "{table}"
    );
    assert!(
        table.contains("kernel none vs itself: 0 of 3 runs agree with the others"),
        "{table}"
    );
    assert!(
        table.contains("The kernel against itself: 3 of 6 runs (50 %) agree"),
        "{table}"
    );
    assert!(
        table.contains("In the 1 pairs where every kernel run does, ioslice agrees in 1."),
        "{table}"
    );
}

#[test]
fn limits_reach_blk_throttles_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write(
        dir.path(),
        "limited.fio",
        "; device: sim:sata-7200\n; limit: g1 rbps=10485760,riops=40\n# limit: b/inner wbps=8388608\n; a comment\n[g1]\ncgroup=g1\n",
    );
    let out = harness(&format!("kr_job_limits {}", job.display()));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "g1\trbps=10485760,riops=40\nb/inner\twbps=8388608\n"
    );
    // cgroup v1: one blkio.throttle file a limit, "MAJ:MIN VALUE".
    let group = dir.path().join("g1");
    std::fs::create_dir(&group).expect("group dir");
    let v1 = harness(&format!(
        "kr_cg_mode=v1; kr_set_group_limits {} rbps=10485760,riops=40 7:3",
        group.display()
    ));
    assert!(v1.status.success(), "{}", text(&v1.stderr));
    let read = |name: &str| std::fs::read_to_string(group.join(name)).expect(name);
    assert_eq!(read("blkio.throttle.read_bps_device"), "7:3 10485760\n");
    assert_eq!(read("blkio.throttle.read_iops_device"), "7:3 40\n");
    // cgroup v2: io.max, a line a key (the kernel keeps the keys it was not given).
    let v2 = harness(&format!(
        "kr_cg_mode=v2; kr_set_group_limits {} wiops=90 7:3",
        group.display()
    ));
    assert!(v2.status.success(), "{}", text(&v2.stderr));
    assert_eq!(read("io.max"), "7:3 wiops=90\n");
    // A limit it cannot read is refused, naming it.
    for bad in ["rbps=10M", "xbps=5", "rbps=0"] {
        let refused = harness(&format!(
            "kr_set_group_limits {} {bad} 7:3",
            group.display()
        ));
        assert_eq!(refused.status.code(), Some(2), "{bad}");
        assert!(
            text(&refused.stderr).contains(bad),
            "{}",
            text(&refused.stderr)
        );
    }
}

/// The limited rows of the matrix, run on ioslice's side as the harness runs them: each
/// limited group stays within its limit (1 s runs, 10 % for the first slice's burst).
#[test]
fn the_limited_rows_run_within_their_limits_on_ioslices_side() {
    let rows = harness(
        "for f in bench/kernel-vs-ioslice/throttle-*.fio; do kr_job_limits $f | sed \"s|^|$f\t|\"; done",
    );
    let listing = text(&rows.stdout);
    assert!(listing.lines().count() >= 4, "{listing}");
    for line in listing.lines() {
        let mut fields = line.split('\t');
        let (file, group, limits) = (
            fields.next().expect("file"),
            fields.next().expect("group"),
            fields.next().expect("limits"),
        );
        let out = Command::new(env!("CARGO_BIN_EXE_ioslice"))
            .args([
                "run",
                file,
                "--device",
                "sim:sata-7200",
                "--output-format",
                "json",
            ])
            .args(["--host", "driver_queue=128,block_layer=blk-mq"])
            .args(["--cgroup", &format!("{group}:{limits},throttle=above")])
            .env("KV_DEVICE", "/dev/emulated")
            .env("KV_RUNTIME", "1")
            .current_dir(root())
            .output()
            .expect("ioslice runs");
        assert!(out.status.success(), "{file}: {}", text(&out.stderr));
        let report = text(&out.stdout);
        for limit in limits.split(',') {
            let (key, value) = limit.split_once('=').expect("KEY=N");
            let value: f64 = value.parse().expect("a number");
            let (direction, field) = match key {
                "rbps" => ("read", "bw_bytes"),
                "wbps" => ("write", "bw_bytes"),
                "riops" => ("read", "iops"),
                _ => ("write", "iops"),
            };
            let measured = job_figure(&report, group, direction, field);
            assert!(
                measured > 0.0 && measured <= value * 1.1,
                "{file}: {group} {key} {measured} against its limit {value}"
            );
        }
    }
}

/// `jobs[jobname == job].direction.field` of an ioslice JSON report.
fn job_figure(report: &str, job: &str, direction: &str, field: &str) -> f64 {
    let report: serde_json::Value = serde_json::from_str(report).expect("JSON");
    let jobs = report["jobs"].as_array().expect("jobs");
    let found = jobs
        .iter()
        .find(|j| j["jobname"] == job)
        .expect("the job in the report");
    found[direction][field].as_f64().expect("a number")
}
