//! Faults injected by the emulator, met by the engine and by fio on a real block device: a
//! loop device over `ioslice emulate`'s file. Every request completes exactly once with its
//! error; what was acknowledged reads back; a torn write leaves its prefix; a stall is
//! reported after the engine's timeout; and fio's `continue_on_error` and `ignore_error` end
//! ioslice's jobs as they end fio's. Each test needs root, /dev/fuse and a free loop device,
//! and skips with a printed reason without them.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use ioslice_core::{Direction, IoPriority};
use ioslice_emulate::fault::{CommandInfo, FaultCounts, FaultPlan, Faults};
use ioslice_emulate::{EmulateError, Emulator, EmulatorConfig, Summary};
use ioslice_engine::{AlignedBuffer, Client, DirectIo, Engine};
use serde_json::Value;

/// An emulated `sim:null` disk with a fault plan, and a loop device over it; detached and
/// unmounted when dropped, even when a test fails.
struct Emulated {
    emulator: Option<Emulator>,
    device: Option<PathBuf>,
    _mountpoint: tempfile::TempDir,
}

impl Emulated {
    /// `None` (with the reason printed) where this machine cannot mount or attach.
    fn start(faults: &str, seed: u64) -> Option<Self> {
        if !std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0) {
            eprintln!("skipping: not root");
            return None;
        }
        if !Path::new("/dev/fuse").exists() {
            eprintln!("skipping: no /dev/fuse");
            return None;
        }
        let mountpoint = tempfile::tempdir().expect("a mountpoint");
        let config = EmulatorConfig {
            faults: Some(faults.parse().expect("a fault plan")),
            seed,
            ..EmulatorConfig::new("sim:null".parse().expect("a device"))
        };
        let emulator = match Emulator::mount(mountpoint.path(), &config) {
            Ok(emulator) => emulator,
            Err(error) => {
                eprintln!("skipping: {error}");
                return None;
            }
        };
        let output = Command::new("losetup")
            .args(["--direct-io=on", "--find", "--show"])
            .arg(emulator.disk_path())
            .output();
        let mut emulated = Self {
            emulator: Some(emulator),
            device: None,
            _mountpoint: mountpoint,
        };
        match output {
            Ok(output) if output.status.success() => {
                let name = String::from_utf8_lossy(&output.stdout).trim().to_string();
                emulated.device = Some(PathBuf::from(name));
                Some(emulated)
            }
            Ok(output) => {
                let reason = String::from_utf8_lossy(&output.stderr);
                eprintln!("skipping: losetup failed: {}", reason.trim());
                None
            }
            Err(error) => {
                eprintln!("skipping: no losetup: {error}");
                None
            }
        }
    }

    fn device(&self) -> &Path {
        self.device.as_deref().expect("attached")
    }

    /// Detach and unmount; what the emulator served.
    fn stop(mut self) -> Summary {
        self.detach();
        let mut emulator = self.emulator.take().expect("mounted");
        // The kernel lets the file go shortly after the loop device is detached.
        let started = Instant::now();
        loop {
            match emulator.unmount() {
                Ok(summary) => return summary,
                Err(EmulateError::Busy { .. }) if started.elapsed() < Duration::from_secs(10) => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(error) => panic!("cannot unmount: {error}"),
            }
        }
    }

    fn detach(&mut self) {
        if let Some(device) = self.device.take() {
            let _ = Command::new("losetup").arg("-d").arg(device).status();
        }
    }
}

impl Drop for Emulated {
    fn drop(&mut self) {
        self.detach();
    }
}

/// An engine on `device` (noop, O_DIRECT: the block device's page cache would hide the
/// faults) with this I/O timeout, and one client.
fn engine(device: &Path, timeout: Option<Duration>) -> (Engine, Client) {
    let engine = Engine::on_path(device)
        .direct(DirectIo::On)
        .scheduler("noop")
        .io_timeout(timeout)
        .start()
        .expect("engine on the loop device");
    let client = engine
        .handle()
        .client(1, "/", IoPriority::default())
        .expect("a client");
    (engine, client)
}

fn block(len: usize, byte: u8) -> AlignedBuffer {
    let mut buffer = AlignedBuffer::new(len, 4096);
    buffer.as_mut_slice().fill(byte);
    buffer
}

/// Write block `i` (4 KiB) with byte `i + 1`, one at a time: which writes failed, by errno.
fn write_blocks(client: &Client, blocks: u64) -> Vec<Option<i32>> {
    (0..blocks)
        .map(|i| {
            let outcome = client.write(i * 4096, block(4096, i as u8 + 1)).wait();
            outcome.err().map(|error| error.errno())
        })
        .collect()
}

/// The writes of `write_blocks` that `plan` fails with `seed`, decided as the emulator does.
fn predicted_failures(plan: &str, seed: u64, blocks: u64) -> Vec<bool> {
    let plan: FaultPlan = plan.parse().expect("a fault plan");
    let mut faults = Faults::new(plan, seed);
    let counts = FaultCounts::new(1);
    (0..blocks)
        .map(|i| {
            let command = CommandInfo {
                direction: Direction::Write,
                sector: i * 8,
                sectors: 8,
            };
            faults.decide(command, 0, &counts).fails()
        })
        .collect()
}

#[test]
fn each_write_completes_once_with_its_error_and_what_was_acknowledged_reads_back() {
    // Reads are left alone: the kernel's own probes of a new block device read it.
    for plan in ["eio:dir=write,every=4", "eio:dir=write,p=0.3"] {
        let blocks = 40;
        let expected = predicted_failures(plan, 9, blocks);
        let Some(emulated) = Emulated::start(plan, 9) else {
            return;
        };
        let (engine, client) = engine(emulated.device(), None);
        let outcomes = write_blocks(&client, blocks);
        let failed: Vec<bool> = outcomes.iter().map(Option::is_some).collect();
        assert_eq!(failed, expected, "{plan}: the seed's faults, exactly");
        assert!(outcomes.iter().flatten().all(|&errno| errno == libc::EIO));
        // Acknowledged writes read back; failed ones left the medium as it was (zeros).
        for (i, failed) in failed.iter().enumerate() {
            let read = client.read(i as u64 * 4096, 4096).wait().expect("a read");
            let byte = if *failed { 0 } else { i as u8 + 1 };
            assert!(
                read.buffer.as_slice().iter().all(|&b| b == byte),
                "{plan}: block {i}"
            );
        }
        drop(client); // it holds the device open
        let stats = engine.shutdown().expect("clean shutdown");
        let failures = expected.iter().filter(|&&f| f).count() as u64;
        assert_eq!(stats.totals.requests, 2 * blocks, "{plan}: each once");
        assert_eq!(stats.totals.errors, failures, "{plan}");
        assert_eq!(stats.double_completions, 0);
        let summary = emulated.stop();
        assert_eq!(summary.faults, [(plan.to_string(), failures)], "{summary}");
        assert_eq!(summary.failed, failures, "{summary}");
    }
}

#[test]
fn reads_in_a_failing_range_fail_and_the_others_are_served() {
    // Beyond the first 512 KiB, which the engine reads before it lets a device be written.
    let plan = "eio:sectors=8256..8264,dir=read";
    let Some(emulated) = Emulated::start(plan, 1) else {
        return;
    };
    let (engine, client) = engine(emulated.device(), None);
    // Sixteen 4 KiB reads from 4 MiB at once: only the one over sectors 8256..8264 fails.
    let futures: Vec<_> = (0..16u64)
        .map(|i| client.read((4 << 20) + i * 4096, 4096))
        .collect();
    let failed: Vec<u64> = futures
        .into_iter()
        .enumerate()
        .filter_map(|(i, f)| f.wait().err().map(|e| (i as u64, e.errno())))
        .map(|(i, errno)| {
            assert_eq!(errno, libc::EIO);
            i
        })
        .collect();
    assert_eq!(failed, [8]);
    drop(client); // it holds the device open
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!((stats.totals.requests, stats.totals.errors), (16, 1));
    assert!(emulated.stop().failed >= 1);
}

#[test]
fn a_torn_write_fails_and_leaves_its_prefix_new_and_the_rest_old() {
    // The second write to sectors 800..816 tears after 4 sectors.
    let plan = "torn:sectors=800..816,every=2,keep=4";
    let Some(emulated) = Emulated::start(plan, 1) else {
        return;
    };
    let (engine, client) = engine(emulated.device(), None);
    let offset = 800 * 512;
    client
        .write(offset, block(8192, 0xaa))
        .wait()
        .expect("the first write is served");
    let torn = client.write(offset, block(8192, 0xbb)).wait().err();
    assert_eq!(torn.map(|e| e.errno()), Some(libc::EIO));
    let back = client.read(offset, 8192).wait().expect("read back");
    let bytes = back.buffer.as_slice();
    assert!(
        bytes[..2048].iter().all(|&b| b == 0xbb),
        "the prefix is new"
    );
    assert!(bytes[2048..].iter().all(|&b| b == 0xaa), "the rest is old");
    drop(client); // it holds the device open
    engine.shutdown().expect("clean shutdown");
    let summary = emulated.stop();
    assert_eq!(summary.faults, [(plan.to_string(), 1)], "{summary}");
}

#[test]
fn a_stall_is_reported_after_the_timeout_and_its_late_answer_absorbed() {
    // Nothing answered from 1.5 s to 4 s after the emulator starts.
    let plan = "stall:at=1500ms,for=2500ms";
    let started = Instant::now();
    let Some(emulated) = Emulated::start(plan, 1) else {
        return;
    };
    let timeout = Duration::from_millis(500);
    let (engine, client) = engine(emulated.device(), Some(timeout));
    client.read(0, 4096).wait().expect("before the stall");
    let into_stall = Duration::from_millis(1700).saturating_sub(started.elapsed());
    std::thread::sleep(into_stall);
    let asked = Instant::now();
    let error = client
        .read(4096, 4096)
        .wait()
        .expect_err("the device stalls");
    let waited = asked.elapsed();
    assert_eq!(error.errno(), libc::ETIMEDOUT, "{error}");
    assert!(
        waited >= timeout && waited < Duration::from_millis(2000),
        "reported after {waited:?}"
    );
    // After the stall the device serves again; its late answer is absorbed, not delivered.
    let after = Duration::from_millis(4200).saturating_sub(started.elapsed());
    std::thread::sleep(after);
    client.read(8192, 4096).wait().expect("after the stall");
    drop(client); // it holds the device open
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!((stats.timed_out, stats.late_completions), (1, 1));
    assert_eq!((stats.totals.requests, stats.totals.errors), (3, 1));
    assert_eq!(stats.double_completions, 0);
    let summary = emulated.stop();
    assert!(
        summary.faults[0].1 >= 1,
        "the stall held a reply: {summary}"
    );
}

/// A job writing 64 blocks of 4 KiB, one at a time, with `options`.
const WRITER: &str = "[w]\nfilename=DEVICE\nrw=write\nbs=4k\nsize=256k\ndirect=1\nioengine=psync\n";

/// (exit status, error, total_err, blocks written) of one run of `program` ("fio" or
/// ioslice) of the writer with `options`, on a fresh emulated disk failing every 8th write.
/// fio reports `total_err` only when the job goes on after errors: `None` otherwise.
type Ended = (i32, u64, Option<u64>, u64);

fn writer_run(program: &str, options: &str) -> Option<Ended> {
    let emulated = Emulated::start("eio:dir=write,every=8", 1)?;
    let device = emulated.device().to_string_lossy().into_owned();
    let dir = tempfile::tempdir().expect("a directory");
    let job = dir.path().join("w.fio");
    let text = WRITER.replace("DEVICE", &device) + options;
    std::fs::write(&job, text).expect("the job file");
    let job = job.to_string_lossy().into_owned();
    let output: Output = match program {
        "fio" => Command::new("fio")
            .args(["--output-format=json", &job])
            .output()
            .expect("fio runs"),
        _ => common::ioslice(&[
            "run",
            &job,
            "--device",
            &device,
            "--sched",
            "noop",
            "--output-format",
            "json",
        ]),
    };
    let text = common::stdout(&output);
    // fio may print notes before its JSON.
    let json: Value = serde_json::from_str(&text[text.find('{').unwrap_or(0)..])
        .unwrap_or_else(|e| panic!("{program}: {e}: {text} {}", common::stderr(&output)));
    let job = &json["jobs"][0];
    let number = |v: &Value| v.as_u64().unwrap_or(0);
    let written = number(&job["write"]["io_bytes"]) / 4096;
    drop(emulated);
    Some((
        output.status.code().unwrap_or(-1),
        number(&job["error"]),
        job["total_err"].as_u64(),
        written,
    ))
}

#[test]
fn continue_on_error_and_ignore_error_end_the_job_as_fio_does() {
    let fio = Command::new("fio").arg("--version").output().is_ok();
    // Without fio, ioslice is checked against what fio 3.33 gave on this device: stopped at
    // the 8th write (exit 1, err=5) by default; 8 errors and 56 blocks written when EIO on
    // writes is continued on, whether by continue_on_error or by ignore_error alone.
    let fio_33: [(&str, Ended); 4] = [
        ("", (1, 5, None, 7)),
        ("continue_on_error=all\n", (0, 5, Some(8), 56)),
        ("continue_on_error=write\n", (0, 5, Some(8), 56)),
        ("ignore_error=,EIO\n", (0, 5, Some(8), 56)),
    ];
    for (options, recorded) in fio_33 {
        let Some(mut ours) = writer_run("ioslice", options) else {
            return;
        };
        let theirs = match fio {
            true => writer_run("fio", options).unwrap_or(recorded),
            false => recorded,
        };
        // ioslice always reports total_err; fio only for a job that went on.
        if theirs.2.is_none() {
            assert_eq!(
                ours.2,
                Some(1),
                "{options:?}: the one error that stopped it"
            );
            ours.2 = None;
        }
        assert_eq!(ours, theirs, "{options:?}: ioslice against fio");
    }
}

#[test]
fn a_bad_fault_plan_or_io_timeout_is_one_line() {
    let dir = tempfile::tempdir().expect("a mountpoint");
    let mountpoint = dir.path().to_string_lossy().into_owned();
    let output = common::ioslice(&["emulate", &mountpoint, "--faults", "eio:every=0"]);
    common::assert_user_error(
        &output,
        &[
            "--faults",
            "every=0",
            "expected a whole number of at least 1",
        ],
    );
    let output = common::ioslice(&["emulate", &mountpoint, "--faults", "stall:at=1s"]);
    common::assert_user_error(&output, &["--faults", "a stall needs for=DURATION"]);
    let job = dir.path().join("j.fio");
    std::fs::write(&job, "[j]\nrw=read\nsize=4k\n").expect("a job file");
    let job = job.to_string_lossy().into_owned();
    let file = dir.path().join("f").to_string_lossy().into_owned();
    let output = common::ioslice(&["run", &job, "--device", &file, "--io-timeout", "soon"]);
    common::assert_user_error(&output, &["--io-timeout", "'soon'", "expected seconds"]);
}
