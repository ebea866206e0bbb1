//! `ioslice sweep --cluster slurm` on a real one-node Slurm cluster that the test starts
//! (slurmctld and slurmd with their own configuration, ports and state in a temporary
//! directory, no authentication daemon): the job array's tasks store the point files, and
//! `--merge` makes the same JSON bytes as the sweep run on this machine. Skipped, saying
//! why, where the Slurm daemons are not installed or do not start.

#[allow(dead_code)]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{ioslice, stderr, stdout};

const SMALL: &str = "[global]\nioengine=libaio\nrw=randread\nbs=4k\nsize=64m\ndirect=1\nruntime=200ms\ntime_based\n[a]\n[b]\n";

/// The daemons this test started, stopped (by their pid files) when it ends.
struct Cluster {
    dir: PathBuf,
}

impl Cluster {
    fn conf(&self) -> PathBuf {
        self.dir.join("slurm.conf")
    }

    /// Start slurmctld and slurmd on one node; `Err` says why not.
    fn start(dir: &Path) -> Result<Cluster, String> {
        for daemon in ["slurmctld", "slurmd", "sbatch", "sinfo"] {
            let found = Command::new("sh")
                .args(["-c", &format!("command -v {daemon}")])
                .output()
                .map_err(|e| e.to_string())?;
            if !found.status.success() {
                return Err(format!(
                    "{daemon} is not installed (apt-get install slurmctld slurmd)"
                ));
            }
        }
        let host = Command::new("hostname")
            .output()
            .map_err(|e| e.to_string())?;
        let host = String::from_utf8_lossy(&host.stdout).trim().to_string();
        let port = 20_000 + (std::process::id() % 20_000) * 2;
        for sub in ["state", "spool"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(|e| e.to_string())?;
        }
        let d = dir.display();
        let conf = format!(
            "ClusterName=ioslicetest\nSlurmctldHost={host}\nSlurmUser=root\nSlurmdUser=root\n\
AuthType=auth/none\nCredType=cred/none\nSlurmctldPort={port}\nSlurmdPort={}\n\
StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\nSlurmctldPidFile={d}/ctld.pid\n\
SlurmdPidFile={d}/d.pid\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
SchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n\
ReturnToService=2\nMpiDefault=none\nJobAcctGatherType=jobacct_gather/none\n\
SlurmctldLogFile={d}/ctld.log\nSlurmdLogFile={d}/d.log\n\
NodeName={host} CPUs=1 State=UNKNOWN\n\
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP\n",
            port + 1
        );
        let cluster = Cluster {
            dir: dir.to_path_buf(),
        };
        std::fs::write(cluster.conf(), conf).map_err(|e| e.to_string())?;
        for daemon in ["slurmctld", "slurmd"] {
            let started = Command::new(daemon)
                .arg("-f")
                .arg(cluster.conf())
                .env("SLURM_CONF", cluster.conf())
                .output()
                .map_err(|e| e.to_string())?;
            if !started.status.success() {
                return Err(format!("{daemon} did not start: {}", stderr(&started)));
            }
        }
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            let info = Command::new("sinfo")
                .args(["-h", "-o", "%t"])
                .env("SLURM_CONF", cluster.conf())
                .output()
                .map_err(|e| e.to_string())?;
            if stdout(&info).trim() == "idle" {
                return Ok(cluster);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err("the node did not come up idle within 20 s".into())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for pid_file in ["d.pid", "ctld.pid"] {
            if let Ok(text) = std::fs::read_to_string(self.dir.join(pid_file)) {
                if let Ok(pid) = text.trim().parse::<i32>() {
                    // SAFETY: `kill` only signals a daemon this test started.
                    unsafe { libc::kill(pid, libc::SIGTERM) };
                }
            }
        }
    }
}

#[test]
fn a_slurm_job_array_stores_the_points_and_merge_gives_the_local_bytes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cluster = match Cluster::start(&dir.path().join("slurm")) {
        Ok(cluster) => cluster,
        Err(reason) => {
            eprintln!("skipped: {reason}");
            return;
        }
    };
    let job = dir.path().join("small.fio");
    std::fs::write(&job, SMALL).expect("job file");
    let job = job.to_str().expect("path");
    let sweep = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "sweep",
            job,
            "--device",
            "sim:ssd",
            "--axis",
            "sched=cfq,bfq",
            "--axis",
            "iodepth=1,4",
            "--seeds",
            "2",
            "--out",
            out.to_str().expect("path"),
        ];
        args.extend_from_slice(extra);
        ioslice(&args)
    };
    let on_slurm = dir.path().join("slurm-out");
    let emitted = sweep(&on_slurm, &["--cluster", "slurm"]);
    assert!(emitted.status.success(), "{}", stderr(&emitted));
    assert!(stdout(&emitted).contains("8 of 8 points to run"));
    let script = on_slurm.join("sweep.sbatch");
    let text = std::fs::read_to_string(&script).expect("script");
    assert!(text.contains("#SBATCH --array=0,1,2,3,4,5,6,7\n"), "{text}");
    assert!(!on_slurm.join("results.json").exists());
    let submitted = Command::new("sbatch")
        .arg("--wait")
        .arg(&script)
        .env("SLURM_CONF", cluster.conf())
        .output()
        .expect("sbatch runs");
    assert!(submitted.status.success(), "{}", stderr(&submitted));
    let stored = std::fs::read_dir(on_slurm.join("points"))
        .expect("points")
        .count();
    assert_eq!(stored, 8, "every task stored its point");
    let merged = ioslice(&["sweep", "--merge", on_slurm.to_str().expect("path")]);
    assert!(merged.status.success(), "{}", stderr(&merged));
    let local = dir.path().join("local");
    assert!(sweep(&local, &[]).status.success());
    let read = |p: PathBuf| std::fs::read_to_string(p).expect("results");
    assert_eq!(
        read(on_slurm.join("results.json")),
        read(local.join("results.json"))
    );
    // Nothing left to run: the array would be empty, so the sweep merges at once.
    let again = sweep(&on_slurm, &["--cluster", "slurm"]);
    assert!(
        stdout(&again).contains("8 of 8 points (8 stored before)"),
        "{}",
        stdout(&again)
    );
}
