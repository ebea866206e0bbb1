//! fio's own example job files run as a user copies them: read from the shared corpus (never
//! copied into the tree), each runs to its end on a simulated device, or is refused in one
//! line that names it. The table below says which, file by file, and why a file is refused:
//! because it needs what this machine and ioslice cannot have (a network, RDMA or SCSI
//! hardware, an NVMe character device, a library or service, credentials in the
//! environment: fio refuses those too without them), because fio 3.33 refuses it as well
//! (an engine or a value newer than it), or because ioslice does not do it yet; the filesystem engines' examples are refused on a simulated device and run for real
//! on a directory (the runner's corpus test runs them). Each run is of a copy whose every section has `runtime=1` (one simulated second) in
//! place of its own, so that an example written to run for fifteen minutes takes a moment;
//! nothing else in the copy changes. Where an example wants a device of another kind or
//! size, its row gives the arguments, as a user would give them.

use std::path::{Path, PathBuf};
use std::process::Command;

use Outcome::{FioRefuses, Lacks, NotYet, RealOnly, Runs};

/// What becomes of one example.
#[derive(Debug, Clone, Copy)]
enum Outcome {
    /// It runs to its end, with these arguments before the file.
    Runs(&'static [&'static str]),
    /// Refused in one line containing this text, for what this machine lacks.
    Lacks(&'static str),
    /// Refused in one line containing this text, for what ioslice does not do yet.
    NotYet(&'static str),
    /// Refused in one line containing this text, as fio 3.33 refuses the file too: an
    /// engine or an option value newer than fio 3.33 (the row's comment gives fio's words,
    /// from `fio --parse-only FILE` or a short run with fio 3.33).
    FioRefuses(&'static str),
    /// Refused on a simulated device in one line containing this text, because the device
    /// model cannot say what the operation costs; it runs for real on a directory
    /// (`crates/runner/tests/corpus.rs` runs these examples, made smaller).
    RealOnly(&'static str),
}

/// Every example fio ships, in name order.
const EXAMPLES: &[(&str, Outcome)] = &[
    ("1mbs_clients.fio", Runs(&[])),
    ("aio-read.fio", Runs(&[])),
    ("atomic-verify.fio", Runs(&[])),
    ("backwards-read.fio", Runs(&[])),
    ("basic-verify.fio", Runs(&[])),
    ("butterfly.fio", Runs(&[])),
    ("cmdprio-bssplit.fio", Runs(&[])),
    ("cmdprio-percentage.fio", Runs(&[])),
    ("cpp_null.fio", Lacks("ioengine=cpp_null ")),
    ("cpuio.fio", Runs(&[])),
    (
        "cross-stripe-verify.fio",
        Runs(&["--device", "sim:sata-7200:capacity_gib=4000"]),
    ),
    ("dedupe-global.fio", Runs(&[])),
    ("dev-dax.fio", Lacks("ioengine=dev-dax ")),
    ("dfs.fio", Lacks("variable 'POOL'")),
    (
        "dircreate-ioengine.fio",
        RealOnly("ioengine=dircreate cannot be simulated"),
    ),
    (
        "dirdelete-ioengine.fio",
        RealOnly("ioengine=dirdelete cannot be simulated"),
    ),
    (
        "dirstat-ioengine.fio",
        RealOnly("ioengine=dirstat cannot be simulated"),
    ),
    ("disk-zone-profile.fio", Runs(&[])),
    ("e4defrag.fio", NotYet("ioengine=e4defrag ")),
    ("e4defrag2.fio", NotYet("ioengine=e4defrag ")),
    ("enospc-pressure.fio", Runs(&["--device", "sim:ssd"])),
    // fio 3.33: "fio: failed parsing steadystate=lat:5%" (it has iops, iops_slope, bw and
    // bw_slope only), then "Bad option <steadystate_check_interval=10>".
    ("example_latency_steadystate.fio", FioRefuses("'lat:5%'")),
    // Its real run also needs `cpuio` with `cpumode=qsort` on a real run, which ioslice refuses, and
    // /usr/sbin/turbostat; the `exec` engine runs for real in crates/runner/tests/exec.rs.
    ("exec.fio", RealOnly("ioengine=exec cannot be simulated")),
    ("exitwhat.fio", Runs(&[])),
    (
        "falloc.fio",
        RealOnly("ioengine=falloc cannot be simulated"),
    ),
    (
        "filecreate-ioengine.fio",
        RealOnly("ioengine=filecreate cannot be simulated"),
    ),
    (
        "filedelete-ioengine.fio",
        RealOnly("ioengine=filedelete cannot be simulated"),
    ),
    (
        "filestat-ioengine.fio",
        RealOnly("ioengine=filestat cannot be simulated"),
    ),
    ("fio-rand-RW.fio", Runs(&[])),
    ("fio-rand-read.fio", Runs(&[])),
    ("fio-rand-write.fio", Runs(&[])),
    ("fio-seq-RW.fio", Runs(&[])),
    ("fio-seq-read.fio", Runs(&[])),
    ("fio-seq-write.fio", Runs(&[])),
    ("fixed-rate-submission.fio", Runs(&[])),
    ("flow.fio", Runs(&[])),
    ("fsx.fio", Runs(&[])),
    (
        "ftruncate.fio",
        RealOnly("ioengine=ftruncate cannot be simulated"),
    ),
    ("gfapi.fio", Lacks("ioengine=gfapi ")),
    ("gpudirect-rdmaio-client.fio", Lacks("'[port]'")),
    ("gpudirect-rdmaio-server.fio", Lacks("'[port]'")),
    ("http-s3-crypto.fio", Lacks("variable 'S3_KEY'")),
    ("http-s3-storage-class.fio", Lacks("variable 'S3_KEY'")),
    ("http-s3.fio", Lacks("variable 'S3_KEY'")),
    ("http-swift.fio", Lacks("variable 'SWIFT_id'")),
    ("http-webdav.fio", Lacks("ioengine=http ")),
    ("ime.fio", Lacks("ioengine=ime_psync ")),
    ("iometer-file-access-server.fio", Runs(&[])),
    ("jesd219.fio", Runs(&[])),
    ("latency-profile.fio", Runs(&[])),
    ("libblkio-io_uring.fio", Lacks("ioengine=libblkio ")),
    (
        "libblkio-virtio-blk-vfio-pci.fio",
        Lacks("ioengine=libblkio "),
    ),
    ("libcufile-cufile.fio", Lacks("variable 'GPU_DEV_IDS'")),
    ("libcufile-posix.fio", Lacks("variable 'GPU_DEV_IDS'")),
    ("libhdfs.fio", Lacks("ioengine=libhdfs ")),
    ("libhipfile-hipfile.fio", Lacks("variable 'GPU_DEV_IDS'")),
    ("libhipfile-posix.fio", Lacks("variable 'GPU_DEV_IDS'")),
    ("libiscsi.fio", Lacks("ioengine=libiscsi ")),
    ("libpmem.fio", Lacks("ioengine=libpmem ")),
    ("libzbc-rand-write.fio", Lacks("ioengine=libzbc ")),
    ("libzbc-seq-read.fio", Lacks("ioengine=libzbc ")),
    ("mtd.fio", Lacks("ioengine=mtd ")),
    ("nbd.fio", Lacks("variable 'uri'")),
    ("netio.fio", Lacks("ioengine=net ")),
    ("netio_multicast.fio", Lacks("ioengine=net ")),
    ("netio_vsock.fio", Lacks("ioengine=net ")),
    ("netio_vsock_receiver.fio", Lacks("ioengine=net ")),
    ("netio_vsock_sender.fio", Lacks("ioengine=net ")),
    ("nfs.fio", Lacks("ioengine=nfs ")),
    ("null.fio", Runs(&[])),
    ("numa.fio", Runs(&[])),
    // fio 3.33: "fio: engine page_fault not loadable" (the engine came after it).
    ("page_fault.fio", FioRefuses("ioengine=page_fault ")),
    ("poisson-rate-submission.fio", Runs(&[])),
    ("rados.fio", Lacks("ioengine=rados ")),
    ("rand-zones.fio", Runs(&[])),
    ("rbd.fio", Lacks("ioengine=rbd ")),
    ("rdmaio-client.fio", Lacks("'[port]'")),
    ("rdmaio-server.fio", Lacks("'[port]'")),
    // fio 3.33: "fio: failed parsing random_distribution=sequence:2,0,1", then "Bad option
    // <random_sequence_stride=0>".
    (
        "sequence-distribution.fio",
        FioRefuses("'sequence:2,0,1' for random_distribution"),
    ),
    ("sg_verify-fail.fio", Lacks("ioengine=sg ")),
    ("sg_verify.fio", Lacks("ioengine=sg ")),
    ("sg_write_same_ndob.fio", Lacks("ioengine=sg ")),
    ("sprandom.fio", Runs(&["--size=1g"])),
    ("ssd-steadystate.fio", Runs(&[])),
    ("ssd-test.fio", Runs(&[])),
    ("steadystate.fio", Runs(&[])),
    ("surface-scan.fio", Runs(&[])),
    ("tiobench-example.fio", Runs(&[])),
    ("uring-cmd-bsg.fio", Lacks("ioengine=io_uring_cmd ")),
    ("uring-cmd-fdp.fio", Lacks("ioengine=io_uring_cmd ")),
    ("uring-cmd-ng.fio", Lacks("ioengine=io_uring_cmd ")),
    ("uring-cmd-pi-ext.fio", Lacks("ioengine=io_uring_cmd ")),
    ("uring-cmd-pi-sb.fio", Lacks("ioengine=io_uring_cmd ")),
    (
        "uring-cmd-trim-multi-range.fio",
        Lacks("ioengine=io_uring_cmd "),
    ),
    ("uring-cmd-write-mode.fio", Lacks("ioengine=io_uring_cmd ")),
    // The engine is refused before its size in zones, which only the engine's device could
    // turn into bytes (fio 3.33 refuses the file anyway: "Bad option <write_mode=zone_append>").
    (
        "uring-cmd-zoned-append.fio",
        Lacks("ioengine=io_uring_cmd "),
    ),
    ("uring-cmd-zoned.fio", Lacks("ioengine=io_uring_cmd ")),
    ("waitfor.fio", Runs(&[])),
    ("xnvme-compare.fio", Runs(&[])),
    ("xnvme-fdp.fio", Runs(&[])),
    ("xnvme-pi.fio", Runs(&[])),
    ("xnvme-zoned.fio", Runs(&["--device", "sim:smr"])),
    ("zbd-rand-write-trim-gc.fio", Runs(&["--device", "sim:smr"])),
    (
        "zbd-rand-write-zone-reset-gc.fio",
        Runs(&["--device", "sim:smr"]),
    ),
    ("zbd-rand-write.fio", Runs(&["--device", "sim:smr"])),
    ("zbd-seq-read.fio", Runs(&["--device", "sim:smr"])),
    ("zipf.fio", Runs(&[])),
];

/// The variables the xNVMe and libcufile examples document in their headers; the others
/// (credentials, pool names, GPU ids) are left unset, as on a machine without them.
const ENV: &[(&str, &str)] = &[
    ("FIO_RW", "randread"),
    ("FIO_BS", "4k"),
    ("FIO_IODEPTH", "8"),
    ("FIO_DIR", "/tmp"),
];

/// The corpus beside the checkout, or where `FIO_EXAMPLES_DIR` says (a checkout elsewhere).
fn corpus_dir() -> PathBuf {
    std::env::var_os("FIO_EXAMPLES_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/fio-examples"),
        PathBuf::from,
    )
}

/// The example's text with every `runtime=` line dropped and `runtime=1` at the top of
/// every section.
fn capped(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 256);
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("runtime")
            && trimmed["runtime".len()..].trim_start().starts_with('=')
        {
            continue;
        }
        out.push_str(line);
        out.push('\n');
        if trimmed.starts_with('[') && trimmed.trim_end().ends_with(']') {
            out.push_str("runtime=1\n");
        }
    }
    out
}

#[test]
fn the_table_names_every_example_once() {
    let Ok(listing) = std::fs::read_dir(corpus_dir()) else {
        println!("skipped: no corpus at {}", corpus_dir().display());
        return;
    };
    let mut names: Vec<String> = listing
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".fio"))
        .collect();
    names.sort();
    let table: Vec<&str> = EXAMPLES.iter().map(|(name, _)| *name).collect();
    assert_eq!(table, names);
}

#[test]
fn every_example_runs_or_is_refused_in_one_line_as_its_row_says() {
    let dir = corpus_dir();
    if !dir.is_dir() {
        println!("skipped: no corpus at {}", dir.display());
        return;
    }
    let work = tempfile::tempdir().expect("temp dir");
    let (mut runs, mut real_only, mut lacks, mut not_yet, mut fio_refuses) = (0, 0, 0, 0, 0);
    for (name, outcome) in EXAMPLES {
        let text = std::fs::read(dir.join(name)).expect("read the example");
        let copy = work.path().join(name);
        std::fs::write(&copy, capped(&String::from_utf8_lossy(&text))).expect("write the copy");
        let mut command = Command::new(env!("CARGO_BIN_EXE_ioslice"));
        command
            .current_dir(work.path())
            .envs(ENV.iter().copied())
            .arg("run");
        if let Runs(args) = outcome {
            command.args(*args);
        }
        let output = command
            .arg(&copy)
            .args(["--output-format", "terse"])
            .output()
            .expect("ioslice runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        match outcome {
            Runs(_) => {
                assert!(output.status.success(), "{name} should run: {stderr}");
                assert!(!output.stdout.is_empty(), "{name} printed no report");
                runs += 1;
            }
            Lacks(text) | NotYet(text) | RealOnly(text) | FioRefuses(text) => {
                assert_eq!(
                    output.status.code(),
                    Some(2),
                    "{name} should be refused: {stderr}"
                );
                let lines: Vec<&str> = stderr.lines().collect();
                assert_eq!(lines.len(), 1, "{name}: more than one line: {stderr}");
                assert!(
                    lines[0].contains(name),
                    "{name}: the refusal names no file: {stderr}"
                );
                assert!(
                    lines[0].contains(text),
                    "{name}: expected '{text}' in: {stderr}"
                );
                match outcome {
                    Lacks(_) => lacks += 1,
                    RealOnly(_) => real_only += 1,
                    FioRefuses(_) => fio_refuses += 1,
                    _ => not_yet += 1,
                }
            }
        }
    }
    println!(
        "{} examples: {runs} run simulated, {real_only} more run for real only, {lacks} refused for what this machine lacks, {fio_refuses} refused as fio 3.33 refuses them, {not_yet} refused for what ioslice does not do yet",
        EXAMPLES.len()
    );
}

/// `cpuio.fio`, one second a job: each of its four jobs (two at 50 % in `noop` mode, then two
/// in `qsort` mode) burns ten 50 ms cycles and moves no bytes; as in fio 3.33's JSON for such
/// a job (`total_ios` 10, `io_bytes`, `runtime` and `iops` 0), a direction without bytes has
/// no runtime and no rate.
#[test]
fn the_cpuio_example_counts_its_cycles_and_no_bytes() {
    let path = corpus_dir().join("cpuio.fio");
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!("skipped: no corpus at {}", corpus_dir().display());
        return;
    };
    let work = tempfile::tempdir().expect("temp dir");
    let copy = work.path().join("cpuio.fio");
    std::fs::write(&copy, capped(&text)).expect("write the copy");
    let output = Command::new(env!("CARGO_BIN_EXE_ioslice"))
        .args(["run", "--output-format", "json"])
        .arg(&copy)
        .output()
        .expect("ioslice runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let jobs = report["jobs"].as_array().expect("jobs");
    let names: Vec<&str> = jobs
        .iter()
        .filter_map(|job| job["jobname"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "burn_2x50_noop",
            "burn_2x50_noop",
            "burn_2x50%_qsort",
            "burn_2x50%_qsort"
        ]
    );
    for job in jobs {
        let read = &job["read"];
        assert_eq!(read["total_ios"], 10, "{job}");
        assert_eq!(read["io_bytes"], 0, "{job}");
        assert_eq!(read["runtime"], 0, "{job}");
        assert_eq!(read["iops"], 0.0, "{job}");
        assert_eq!(read["clat_ns"]["mean"], 50_000_000.0, "{job}");
    }
}
