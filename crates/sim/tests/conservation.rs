//! Every submitted request completes exactly once: random job mixes × every policy × every
//! device preset.

use ioslice_core::SCHEDULERS;
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_sim::preset::presets;
use ioslice_sim::simulation::{run, SimConfig};
use proptest::prelude::*;

/// One randomly shaped job section.
#[derive(Debug, Clone)]
struct JobShape {
    rw: &'static str,
    bs_kib: u32,
    engine: &'static str,
    iodepth: u32,
    numjobs: u32,
    direct: bool,
    thinktime_us: u32,
    ios: u32,
    startdelay_ms: u32,
}

fn job_shape() -> impl Strategy<Value = JobShape> {
    (
        prop::sample::select(vec![
            "read",
            "write",
            "randread",
            "randwrite",
            "rw",
            "randrw",
        ]),
        prop::sample::select(vec![4u32, 8, 64, 128]),
        prop::sample::select(vec!["psync", "libaio", "io_uring", "null"]),
        1u32..16,
        1u32..4,
        any::<bool>(),
        prop::sample::select(vec![0u32, 0, 100, 2000]),
        1u32..60,
        0u32..20,
    )
        .prop_map(
            |(rw, bs_kib, engine, iodepth, numjobs, direct, thinktime_us, ios, startdelay_ms)| {
                JobShape {
                    rw,
                    bs_kib,
                    engine,
                    iodepth,
                    numjobs,
                    direct,
                    thinktime_us,
                    ios,
                    startdelay_ms,
                }
            },
        )
}

fn job_file_text(jobs: &[JobShape]) -> String {
    let mut text = String::from("[global]\nsize=64m\n");
    for (i, job) in jobs.iter().enumerate() {
        text.push_str(&format!(
            "[job{i}]\nrw={}\nbs={}k\nioengine={}\niodepth={}\nnumjobs={}\ndirect={}\nthinktime={}\nnumber_ios={}\nstartdelay={}ms\n",
            job.rw,
            job.bs_kib,
            job.engine,
            job.iodepth,
            job.numjobs,
            u8::from(job.direct),
            job.thinktime_us,
            job.ios,
            job.startdelay_ms,
        ));
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn every_request_completes_exactly_once(
        jobs in prop::collection::vec(job_shape(), 1..4),
        seed in any::<u64>(),
    ) {
        let text = job_file_text(&jobs);
        let job_file = parse_str(&text, "mix.fio", &ParseOptions::default()).expect("generated job parses");
        for scheduler in SCHEDULERS {
            for preset in presets() {
                // A zoned disk takes only the elevators with zoned write support.
                if preset.name == "smr" && !["mq-deadline", "noop"].contains(&scheduler.name) {
                    continue;
                }
                let config = SimConfig::new(
                    seed,
                    scheduler.name.parse().expect("registered name"),
                    format!("sim:{}", preset.name).parse().expect("listed preset"),
                );
                let outcome = run(&job_file, &config).expect("simulation runs");
                let label = format!("{} on sim:{}", scheduler.name, preset.name);
                prop_assert!(outcome.submitted > 0, "{label}: nothing submitted");
                prop_assert_eq!(outcome.submitted, outcome.completed, "{}: lost requests", &label);
                prop_assert_eq!(outcome.duplicate_completions, 0, "{}: duplicates", &label);
                let reported: u64 = outcome
                    .report
                    .jobs
                    .iter()
                    .flat_map(|job| job.stats.directions.iter())
                    .map(|direction| direction.total_ios)
                    .sum();
                prop_assert_eq!(reported, outcome.completed, "{}: reported ios", &label);
                let writeback = outcome.writeback;
                prop_assert_eq!(writeback.submitted, writeback.completed, "{}: lost writeback", &label);
                prop_assert_eq!(writeback.bytes_dirtied, writeback.bytes_written, "{}: dirty data left", &label);
                let readahead = outcome.readahead;
                prop_assert_eq!(readahead.submitted, readahead.completed, "{}: lost read-ahead", &label);
            }
        }
    }
}
