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
