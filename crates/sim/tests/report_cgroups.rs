//! The run report carries every cgroup with the weight the policy gave it and its limits,
//! so that printers show what the run used rather than work it out again.

use ioslice_core::limit::Limits;
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_fio::CgroupSettings;
use ioslice_sim::simulation::{run, SimConfig};

/// A short reader in `a` (weight unset), one in `b` (weight 300 in the job file) and one in
/// the nested `p/c`, under `sched`, with `p` limited to 1 MiB/s of reads.
fn cgroups_of(sched: &str) -> Vec<CgroupSettings> {
    let text =
        "[global]\nioengine=psync\ndirect=1\nrw=read\nbs=4k\nsize=1m\nruntime=100ms\ntime_based\n\
                [a]\ncgroup=a\n[b]\ncgroup=b\ncgroup_weight=300\n[c]\ncgroup=p/c\n";
    let job_file = parse_str(text, "t.fio", &ParseOptions::default()).expect("job parses");
    let mut config = SimConfig::new(
        1,
        sched.parse().expect("scheduler"),
        "sim:null".parse().expect("device"),
    );
    config.run.group_limits = vec![(
        "p".to_string(),
        Limits {
            read_bps: Some(1 << 20),
            ..Limits::default()
        },
    )];
    run(&job_file, &config).expect("runs").report.cgroups
}

#[test]
fn weights_are_the_policys_and_limits_the_runs() {
    let summary = |sched: &str| -> Vec<(String, Option<u32>, bool)> {
        cgroups_of(sched)
            .into_iter()
            .map(|g| (g.path, g.weight, g.weight_set))
            .collect()
    };
    let expect = |unset: Option<u32>, set: Option<u32>| {
        vec![
            ("a".to_string(), unset, false),
            ("b".to_string(), set, true),
            ("p".to_string(), unset, false),
            ("p/c".to_string(), unset, false),
        ]
    };
    assert_eq!(summary("cfq"), expect(Some(500), Some(300)));
    assert_eq!(summary("bfq"), expect(Some(100), Some(300)));
    for sched in ["noop", "deadline", "anticipatory"] {
        assert_eq!(summary(sched), expect(None, None), "{sched}");
    }
    let limited: Vec<(String, Option<u64>)> = cgroups_of("bfq")
        .into_iter()
        .filter(|g| !g.limits.is_unlimited())
        .map(|g| (g.path, g.limits.read_bps))
        .collect();
    assert_eq!(limited, [("p".to_string(), Some(1 << 20))]);
}

#[test]
fn an_ungrouped_run_reports_no_cgroups() {
    let text = "[r]\nioengine=psync\nrw=read\nbs=4k\nsize=64k\n";
    let job_file = parse_str(text, "t.fio", &ParseOptions::default()).expect("job parses");
    let config = SimConfig::new(
        1,
        "cfq".parse().expect("scheduler"),
        "sim:null".parse().expect("device"),
    );
    assert!(run(&job_file, &config)
        .expect("runs")
        .report
        .cgroups
        .is_empty());
}
