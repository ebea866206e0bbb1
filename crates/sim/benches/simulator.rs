//! Simulator speed: simulated requests per second, whole pipeline (job generation, policy,
//! device model, statistics), every policy on `sim:null`; then the same runs traced, every
//! event handed to a sink that drops it, which is what tracing costs before any rendering
//! or writing (an untraced run pays one branch per call to the policy).
//!
//!     cargo bench -p ioslice-sim --bench simulator
//!
//! Criterion reports throughput in elements per second: one element is one request.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ioslice_core::{Nanos, TraceEvent, TraceSink};
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_sim::simulation::{run, run_traced, SimConfig};

/// 8 processes of random 4 KiB reads, 4 in flight each, 25 000 requests each.
const JOB: &str = "\
[global]
ioengine=libaio
iodepth=4
direct=1
rw=randread
bs=4k
size=1g
number_ios=25000

[random-readers]
numjobs=8
";

fn simulator(c: &mut Criterion) {
    let job_file = parse_str(JOB, "bench.fio", &ParseOptions::default()).expect("bench job parses");
    for traced in [false, true] {
        let name = if traced {
            "simulated requests, traced"
        } else {
            "simulated requests"
        };
        let mut group = c.benchmark_group(name);
        group.sample_size(10);
        for sched in ["noop", "deadline", "anticipatory", "cfq", "bfq"] {
            let config = SimConfig::new(
                1,
                sched.parse().expect("valid scheduler"),
                "sim:null".parse().expect("valid device"),
            );
            let requests = run(&job_file, &config).expect("bench runs").submitted;
            group.throughput(Throughput::Elements(requests));
            group.bench_function(format!("{sched} on sim:null"), |b| {
                b.iter(|| {
                    if traced {
                        run_traced(&job_file, &config, &mut Dropped)
                    } else {
                        run(&job_file, &config)
                    }
                    .expect("bench runs")
                })
            });
        }
        group.finish();
    }
}

/// A trace sink that drops every event (after making sure it was built).
struct Dropped;

impl TraceSink for Dropped {
    fn record(&mut self, time: Nanos, event: &TraceEvent) {
        std::hint::black_box((time, event));
    }
}

criterion_group!(benches, simulator);
criterion_main!(benches);
