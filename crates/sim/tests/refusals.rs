//! The simulator refuses what it cannot run, whoever calls it: the library path, not only the CLI.

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_sim::simulation::{run, SimConfig};

fn refusal(text: &str, device: &str) -> String {
    let job_file = parse_str(text, "refuse.fio", &ParseOptions::default()).expect("job parses");
    let config = SimConfig::new(
        1,
        "noop".parse().expect("noop"),
        device.parse().expect("device"),
    );
    match run(&job_file, &config) {
        Ok(_) => panic!("a job that cannot run was run"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn trim_jobs_are_refused_on_a_disk_without_trim() {
    let message = refusal("[trimmer]\nrw=randtrim\nsize=1m\n", "sim:sata-7200");
    assert!(message.contains("refuse.fio:2"), "{message}");
    assert!(
        message.contains("sim:sata-7200 takes no discards"),
        "{message}"
    );
}

#[test]
fn unsupported_engines_are_refused() {
    let message = refusal("[net]\nioengine=rados\nsize=1m\n", "sim:null");
    assert!(message.contains("refuse.fio:2"), "{message}");
    assert!(message.contains("rados"), "{message}");
}

/// fio's filesystem engines: what a create, a stat, a truncate or an allocation costs is
/// the filesystem's work, which no device model says.
#[test]
fn filesystem_engines_are_refused_in_one_line() {
    for engine in [
        "filecreate",
        "filestat",
        "filedelete",
        "dircreate",
        "dirstat",
        "dirdelete",
        "ftruncate",
        "falloc",
    ] {
        let message = refusal(
            &format!("[j]\nioengine={engine}\nnrfiles=4\nfilesize=4k\n"),
            "sim:ssd",
        );
        assert_eq!(
            message,
            format!("refuse.fio:2: ioengine={engine} cannot be simulated (the device model has no cost for a filesystem operation): expected a real --device DIR"),
        );
    }
}
