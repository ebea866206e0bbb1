//! Simulator speed: simulated requests per second, whole pipeline (job generation, policy,
//! device model, statistics), every policy on `sim:null`.
//!
//!     cargo bench -p ioslice-sim --bench simulator
//!
//! Criterion reports throughput in elements per second: one element is one request.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_sim::simulation::{run, SimConfig};

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
    let mut group = c.benchmark_group("simulated requests");
    group.sample_size(10);
    for sched in ["noop", "deadline", "anticipatory", "cfq"] {
        let config = SimConfig::new(
            1,
            sched.parse().expect("valid scheduler"),
            "sim:null".parse().expect("valid device"),
        );
        let requests = run(&job_file, &config).expect("bench runs").submitted;
        group.throughput(Throughput::Elements(requests));
        group.bench_function(format!("{sched} on sim:null"), |b| {
            b.iter(|| run(&job_file, &config).expect("bench runs"))
        });
    }
    group.finish();
}

criterion_group!(benches, simulator);
criterion_main!(benches);
