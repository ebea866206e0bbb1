//! fio output formats: exact lines for hand-built runs, and conformance of the JSON
//! schema and terse field count with real fio 3.33 output from `shared/corpus/fio-json/`.

use std::path::PathBuf;

use ioslice_core::limit::Limits;
use ioslice_core::time::SECOND;
use ioslice_fio::latency_bins;
use ioslice_fio::output::{self, OutputFormat};
use ioslice_fio::report::{CgroupSettings, DiskUtil, JobDescription, JobReport, RunReport};
use ioslice_fio::stats::JobStats;
use serde_json::Value;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn description(name: &str, rw: &str, bs: u32, pid: u32) -> JobDescription {
    let b = format!("{bs}B-{bs}B");
    JobDescription {
        name: name.to_string(),
        groupid: 0,
        jobs: 1,
        pid,
        rw: rw.to_string(),
        bs_line: format!("(R) {b}, (W) {b}, (T) {b}"),
        ioengine: "psync".to_string(),
        iodepth: 1,
        options: vec![("rw".to_string(), rw.to_string())],
        ..JobDescription::default()
    }
}

/// `count` requests of `bytes` in direction `dir`, clat cycling through `clats`,
/// completions spread evenly over `runtime`.
fn record(stats: &mut JobStats, dir: usize, count: u64, bytes: u64, clats: &[u64]) {
    for i in 0..count {
        let at = stats.runtime * i / count.max(1);
        let clat = clats[i as usize % clats.len()];
        stats.directions[dir].record(bytes, 0, clat, at);
        stats.record_depth(1);
    }
    stats.issued[dir] += count;
}

/// A run shaped like the corpus' `two-jobs.fio`: a sequential reader and a 70/30 mix.
fn two_jobs() -> RunReport {
    let mut seq = JobReport {
        description: description("seqread", "read", 4096, 1),
        ..JobReport::default()
    };
    seq.stats.runtime = 138 * MS;
    record(
        &mut seq.stats,
        0,
        4096,
        4096,
        &[8 * US, 30 * US, 1962 * US, 45 * US],
    );
    let mut mix = JobReport {
        description: description("randrw", "randrw", 8192, 2),
        ..JobReport::default()
    };
    mix.stats.runtime = 71 * MS;
    record(&mut mix.stats, 0, 1420, 8192, &[9 * US, 109 * US, 32 * US]);
    record(&mut mix.stats, 1, 628, 8192, &[11 * US, 144 * US, 37 * US]);
    RunReport {
        version: "fio-3.33".to_string(),
        timestamp: 0,
        elapsed: 0,
        global_options: vec![("ioengine".to_string(), "psync".to_string())],
        jobs: vec![seq, mix],
        disk_util: vec![DiskUtil {
            name: "loop0".to_string(),
            ios: [5119, 628],
            merges: [0, 0],
            ticks: [112, 16],
            in_queue: 127,
            util: 34.01,
        }],
        scheduler: "noop".to_string(),
        device: "sim:null".to_string(),
        cgroups: Vec::new(),
    }
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

fn assert_has_line(text: &str, line: &str) {
    assert!(
        lines(text).contains(&line),
        "missing line {line:?} in:\n{text}"
    );
}

#[test]
fn normal_preamble_and_headers() {
    let text = output::normal(&two_jobs());
    let l = lines(&text);
    assert_eq!(
        l[0],
        "seqread: (g=0): rw=read, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1"
    );
    assert_eq!(l[2], "fio-3.33");
    assert_eq!(l[3], "Starting 2 processes");
    assert_eq!(l[4], "");
    assert_eq!(
        l[5],
        "seqread: (groupid=0, jobs=1): err= 0: pid=1: Thu Jan  1 00:00:00 1970"
    );
    assert_has_line(
        &text,
        "randrw: (groupid=0, jobs=1): err= 0: pid=2: Thu Jan  1 00:00:00 1970",
    );
}

#[test]
fn normal_rate_lines_match_fio_rounding() {
    let text = output::normal(&two_jobs());
    assert_has_line(
        &text,
        "  read: IOPS=29.7k, BW=116MiB/s (122MB/s)(16.0MiB/138msec)",
    );
    assert_has_line(
        &text,
        "  read: IOPS=20.0k, BW=156MiB/s (164MB/s)(11.1MiB/71msec)",
    );
    assert_has_line(
        &text,
        "  write: IOPS=8845, BW=69.1MiB/s (72.5MB/s)(5024KiB/71msec); 0 zone resets",
    );
}

#[test]
fn normal_run_status_and_disk_stats() {
    let text = output::normal(&two_jobs());
    let tail: Vec<&str> = lines(&text)
        .into_iter()
        .rev()
        .take(7)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    assert_eq!(
        tail,
        [
            "",
            "Run status group 0 (all jobs):",
            "   READ: bw=196MiB/s (206MB/s), 116MiB/s-156MiB/s (122MB/s-164MB/s), io=27.1MiB (28.4MB), run=71-138msec",
            "  WRITE: bw=69.1MiB/s (72.5MB/s), 69.1MiB/s-69.1MiB/s (72.5MB/s-72.5MB/s), io=5024KiB (5145kB), run=71-71msec",
            "",
            "Disk stats (read/write):",
            "  loop0: ios=5119/628, merge=0/0, ticks=112/16, in_queue=127, util=34.01%",
        ]
    );
}

#[test]
fn normal_job_tail_lines() {
    let text = output::normal(&two_jobs());
    for line in [
        "  cpu          : usr=0.00%, sys=0.00%, ctx=0, majf=0, minf=0",
        "  IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%",
        "     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%",
        "     complete  : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%",
        "     issued rwts: total=4096,0,0,0 short=0,0,0,0 dropped=0,0,0,0",
        "     issued rwts: total=1420,628,0,0 short=0,0,0,0 dropped=0,0,0,0",
        "     latency   : target=0, window=0, percentile=100.00%, depth=1",
    ] {
        assert_has_line(&text, line);
    }
}

/// One job whose reads all took the given latencies (ns), over `runtime`.
fn one_job(clats: &[u64], count: u64, runtime: u64) -> RunReport {
    let mut job = JobReport {
        description: description("j", "read", 4096, 1),
        ..JobReport::default()
    };
    job.stats.runtime = runtime;
    record(&mut job.stats, 0, count, 4096, clats);
    RunReport {
        version: "ioslice".to_string(),
        jobs: vec![job],
        ..RunReport::default()
    }
}

fn line_starting<'a>(text: &'a str, prefix: &str) -> &'a str {
    lines(text)
        .into_iter()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting {prefix:?} in:\n{text}"))
}

#[test]
fn latency_lines_pick_fio_units() {
    let usec = output::normal(&one_job(&[8 * US, 1962 * US], 2, 10 * MS));
    assert_eq!(
        line_starting(&usec, "    clat"),
        "    clat (usec): min=8, max=1962, avg=985.00, stdev=1381.69"
    );
    assert_eq!(
        line_starting(&usec, "     lat"),
        "     lat (usec): min=8, max=1962, avg=985.00, stdev=1381.69"
    );
    // psync measures no submission latency: no slat line.
    assert!(!usec.contains("slat"), "{usec}");
    let nsec = output::normal(&one_job(&[500, 900], 2, MS));
    assert_eq!(
        line_starting(&nsec, "    clat"),
        "    clat (nsec): min=500, max=900, avg=700.00, stdev=282.84"
    );
    let msec = output::normal(&one_job(&[3 * MS, 150 * MS], 2, 10 * MS));
    assert_eq!(
        line_starting(&msec, "    clat"),
        "    clat (msec): min=3, max=150, avg=76.50, stdev=103.94"
    );
    // Small values keep their width like fio's %5.02f.
    let small = output::normal(&one_job(&[5, 6], 2, MS));
    assert_eq!(
        line_starting(&small, "    clat"),
        "    clat (nsec): min=5, max=6, avg= 5.50, stdev= 0.71"
    );
}

#[test]
fn slat_shown_for_async_engines() {
    let mut report = one_job(&[8 * US], 1, MS);
    report.jobs[0].description.ioengine = "libaio".to_string();
    report.jobs[0].stats.directions[0].slat.record(1500);
    let text = output::normal(&report);
    assert_eq!(
        line_starting(&text, "    slat"),
        "    slat (nsec): min=0, max=1500, avg=750.00, stdev=1060.66"
    );
}

#[test]
fn percentile_block_layout() {
    let text = output::normal(&one_job(&[MS], 100, 10 * MS));
    let start = lines(&text)
        .iter()
        .position(|l| l.starts_with("    clat percentiles"))
        .unwrap();
    // 1 ms lies in fio's bin [999 424, 1 007 616) ns, which stands for its middle.
    assert_eq!(
        &lines(&text)[start..start + 6],
        [
            "    clat percentiles (usec):",
            "     |  1.00th=[ 1004],  5.00th=[ 1004], 10.00th=[ 1004], 20.00th=[ 1004],",
            "     | 30.00th=[ 1004], 40.00th=[ 1004], 50.00th=[ 1004], 60.00th=[ 1004],",
            "     | 70.00th=[ 1004], 80.00th=[ 1004], 90.00th=[ 1004], 95.00th=[ 1004],",
            "     | 99.00th=[ 1004], 99.50th=[ 1004], 99.90th=[ 1004], 99.95th=[ 1004],",
            "     | 99.99th=[ 1004]",
        ]
    );
}

#[test]
fn latency_distribution_lines() {
    let mut clats = vec![8 * US; 34];
    clats.extend(vec![30 * US; 66]);
    let text = output::normal(&one_job(&clats, 100, 10 * MS));
    assert_has_line(&text, "  lat (usec)   : 10=34.00%, 50=66.00%");
    // Six non-empty buckets wrap after five; a single slow request still shows 0.01%.
    let mut clats = vec![500, 3 * US, 15 * US, 30 * US, 70 * US, 200 * US];
    clats.extend(vec![30 * US; 10_000 - 7]);
    clats.push(3 * MS);
    let text = output::normal(&one_job(&clats, 10_000, 10 * MS));
    assert_has_line(&text, "  lat (nsec)   : 750=0.01%");
    assert_has_line(
        &text,
        "  lat (usec)   : 4=0.01%, 20=0.01%, 50=99.94%, 100=0.01%, 250=0.01%",
    );
    assert_has_line(&text, "  lat (msec)   : 4=0.01%");
}

#[test]
fn latency_buckets_put_round_values_above_the_boundary() {
    // fio counts 10 µs exactly in the 10–20 µs bucket, labelled 20.
    let text = output::normal(&one_job(&[10 * US], 10, 10 * MS));
    assert_has_line(&text, "  lat (usec)   : 20=100.00%");
    let text = output::normal(&one_job(&[10 * US - 1], 10, 10 * MS));
    assert_has_line(&text, "  lat (usec)   : 10=100.00%");
    let text = output::normal(&one_job(&[2 * MS, 10 * US, 100 * US], 3, 10 * MS));
    assert_has_line(&text, "  lat (usec)   : 20=33.33%, 250=33.33%");
    assert_has_line(&text, "  lat (msec)   : 4=33.33%");
}

#[test]
fn bandwidth_and_iops_samples_over_full_windows() {
    // One 4 KiB read per millisecond for two seconds: four 500 ms windows, the last of which
    // ends with the run and has no sample (fio's helper thread would take it after the end).
    let text = output::normal(&one_job(&[100 * US], 2000, 2000 * MS));
    assert_has_line(
        &text,
        "   bw (  KiB/s): min= 4000, max= 4000, per=100.00%, avg=4000.00, stdev= 0.00, samples=3",
    );
    assert_has_line(
        &text,
        "   iops        : min= 1000, max= 1000, avg=1000.00, stdev= 0.00, samples=3",
    );
    // Shorter than a window: no sample lines, as in fio's own short runs.
    let short = output::normal(&one_job(&[100 * US], 100, 100 * MS));
    assert!(!short.contains("   bw ("), "{short}");
    assert!(!short.contains("   iops "), "{short}");
}

#[test]
fn empty_and_degenerate_reports_do_not_panic() {
    let mut zero_runtime = one_job(&[US], 10, 0);
    zero_runtime.jobs.push(JobReport::default());
    for report in [RunReport::default(), zero_runtime] {
        for format in [
            OutputFormat::Normal,
            OutputFormat::Json,
            OutputFormat::Terse,
        ] {
            let text = output::render(&report, format);
            if format == OutputFormat::Json {
                serde_json::from_str::<Value>(&text).expect("valid JSON");
            }
        }
    }
    let text = output::normal(&one_job(&[US], 10, 0));
    assert_has_line(&text, "  read: IOPS=0, BW=0B/s (0B/s)(40.0KiB/0msec)");
}

fn corpus(name: &str) -> Option<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/fio-json")
        .join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) => {
            println!("skipping: cannot read {}: {e}", path.display());
            None
        }
    }
}

fn keys(value: &Value) -> Vec<String> {
    value
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn json_keys_and_order_match_fio() {
    let Some(sample) = corpus("fio-3.33-two-jobs.json") else {
        return;
    };
    let fio: Value = serde_json::from_str(&sample).unwrap();
    let ours: Value = serde_json::from_str(&output::json(&two_jobs())).unwrap();
    assert_eq!(keys(&ours), keys(&fio));
    let (fio_job, our_job) = (&fio["jobs"][1], &ours["jobs"][1]);
    assert_eq!(keys(our_job), keys(fio_job));
    for dir in ["read", "write", "trim"] {
        assert_eq!(keys(&our_job[dir]), keys(&fio_job[dir]), "{dir}");
        for lat in ["slat_ns", "clat_ns", "lat_ns"] {
            assert_eq!(
                keys(&our_job[dir][lat]),
                keys(&fio_job[dir][lat]),
                "{dir}.{lat}"
            );
        }
    }
    assert_eq!(
        keys(&our_job["read"]["clat_ns"]["percentile"]),
        keys(&fio_job["read"]["clat_ns"]["percentile"])
    );
    for map in [
        "sync",
        "iodepth_level",
        "iodepth_submit",
        "iodepth_complete",
        "latency_ns",
        "latency_us",
        "latency_ms",
    ] {
        assert_eq!(keys(&our_job[map]), keys(&fio_job[map]), "{map}");
    }
    assert_eq!(keys(&ours["disk_util"][0]), keys(&fio["disk_util"][0]));
}

#[test]
fn json_values_and_whitespace() {
    let text = output::json(&two_jobs());
    assert!(
        text.starts_with("{\n  \"fio version\" : \"fio-3.33\",\n  \"timestamp\" : 0,\n"),
        "{text}"
    );
    assert!(text.contains("\n  \"jobs\" : [\n    {\n      \"jobname\" : \"seqread\",\n"));
    assert!(text.ends_with("\n}\n"));
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["time"], "Thu Jan  1 00:00:00 1970");
    let read = &v["jobs"][0]["read"];
    assert_eq!(read["io_bytes"], 16_777_216);
    assert_eq!(read["io_kbytes"], 16_384);
    assert_eq!(read["bw_bytes"], 121_574_028);
    assert_eq!(read["bw"], 118_724);
    assert_eq!(read["runtime"], 138);
    assert_eq!(read["total_ios"], 4096);
    assert_eq!(read["slat_ns"]["N"], 0);
    assert_eq!(read["clat_ns"]["N"], 4096);
    assert!(
        text.contains("\"iops\" : 29681.159420,"),
        "six-decimal floats"
    );
    assert!(v["jobs"][0]["write"]["clat_ns"].get("percentile").is_none());
    assert_eq!(v["disk_util"][0]["util"], 34.01);
}

#[test]
fn terse_field_count_matches_fio() {
    let text = output::terse(&two_jobs());
    assert_eq!(text.lines().count(), 2);
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(
            "3;fio-3.33;seqread;0;0;16384;118724;29681;138;0;0;0.000000;0.000000;8;1962;"
        ),
        "{first}"
    );
    assert!(
        first.ends_with(";loop0;5119;628;0;0;112;16;127;34.01%"),
        "{first}"
    );
    let Some(sample) = corpus("fio-3.33-two-jobs.terse") else {
        return;
    };
    for (ours, fio) in text.lines().zip(sample.lines()) {
        assert_eq!(ours.split(';').count(), fio.split(';').count());
    }
}

#[test]
fn group_reporting_folds_clones() {
    let mut jobs = Vec::new();
    for pid in 1..=3 {
        let mut job = JobReport {
            description: description("writers", "write", 4096, pid),
            ..JobReport::default()
        };
        job.description.group_reporting = true;
        job.stats.runtime = (10 + u64::from(pid)) * MS;
        record(&mut job.stats, 1, 10, 4096, &[50 * US]);
        jobs.push(job);
    }
    let report = RunReport {
        version: "ioslice".to_string(),
        jobs,
        ..RunReport::default()
    };
    let text = output::normal(&report);
    assert_eq!(lines(&text)[1], "...");
    assert_has_line(&text, "Starting 3 processes");
    assert_has_line(
        &text,
        "writers: (groupid=0, jobs=3): err= 0: pid=1: Thu Jan  1 00:00:00 1970",
    );
    assert_eq!(text.matches("(groupid=").count(), 1);
    assert_has_line(
        &text,
        "     issued rwts: total=0,30,0,0 short=0,0,0,0 dropped=0,0,0,0",
    );
    let v: Value = serde_json::from_str(&output::json(&report)).unwrap();
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0]["jobname"], "writers");
    assert_eq!(jobs[0]["write"]["io_bytes"], 30 * 4096);
    assert_eq!(jobs[0]["write"]["total_ios"], 30);
    assert_eq!(jobs[0]["write"]["runtime"], 13);
    assert_eq!(output::terse(&report).lines().count(), 1);
}

#[test]
fn run_status_groups_per_groupid() {
    let mut report = two_jobs();
    report.jobs[1].description.groupid = 1;
    let text = output::normal(&report);
    assert_has_line(&text, "Run status group 0 (all jobs):");
    assert_has_line(&text, "Run status group 1 (all jobs):");
    assert_has_line(
        &text,
        "   READ: bw=116MiB/s (122MB/s), 116MiB/s-116MiB/s (122MB/s-122MB/s), io=16.0MiB (16.8MB), run=138-138msec",
    );
}

#[test]
fn output_is_deterministic() {
    for format in [
        OutputFormat::Normal,
        OutputFormat::Json,
        OutputFormat::Terse,
    ] {
        assert_eq!(
            output::render(&two_jobs(), format),
            output::render(&two_jobs(), format)
        );
    }
}

#[test]
fn output_format_parses() {
    assert_eq!("json".parse::<OutputFormat>().unwrap(), OutputFormat::Json);
    assert_eq!(
        "normal".parse::<OutputFormat>().unwrap(),
        OutputFormat::Normal
    );
    assert_eq!(
        "terse".parse::<OutputFormat>().unwrap(),
        OutputFormat::Terse
    );
    assert_eq!(
        "json+".parse::<OutputFormat>().unwrap(),
        OutputFormat::JsonPlus
    );
    assert_eq!(OutputFormat::JsonPlus.to_string(), "json+");
    let err = "xml".parse::<OutputFormat>().unwrap_err().to_string();
    assert!(err.contains("normal, json, json+, terse"), "{err}");
    let err = "normal,xml"
        .parse::<OutputFormat>()
        .unwrap_err()
        .to_string();
    assert!(err.contains("`normal,xml`"), "{err}");
}

#[test]
fn a_list_of_formats_prints_each_once_in_fios_order() {
    let report = two_jobs();
    let list: OutputFormat = "normal,json+,terse".parse().unwrap();
    assert_eq!(list.to_string(), "normal,json+,terse");
    let expected = [
        output::render(&report, OutputFormat::Terse),
        output::render(&report, OutputFormat::JsonPlus),
        output::render(&report, OutputFormat::Normal),
    ]
    .concat();
    assert_eq!(output::render(&report, list), expected);
    // json with json+ is one JSON output, with the bins; the order asked does not matter.
    let both: OutputFormat = "json,normal,json+".parse().unwrap();
    let expected = [
        output::render(&report, OutputFormat::JsonPlus),
        output::render(&report, OutputFormat::Normal),
    ]
    .concat();
    assert_eq!(output::render(&report, both), expected);
}

#[test]
fn json_plus_adds_each_completion_latency_s_non_empty_bins_in_fio_order() {
    let report = two_jobs();
    let plus: Value =
        serde_json::from_str(&output::render(&report, OutputFormat::JsonPlus)).expect("JSON");
    let plain: Value =
        serde_json::from_str(&output::render(&report, OutputFormat::Json)).expect("JSON");
    for (index, job) in report.jobs.iter().enumerate() {
        for (dir, name) in ["read", "write", "trim"].into_iter().enumerate() {
            let clat = &job.stats.directions[dir].clat;
            let got = &plus["jobs"][index][name]["clat_ns"];
            assert!(plain["jobs"][index][name]["clat_ns"].get("bins").is_none());
            if clat.count() == 0 {
                assert!(got.get("bins").is_none(), "no samples, no bins");
                continue;
            }
            let counts = clat.bin_counts();
            let expected: Vec<(String, u64)> = (0..latency_bins::BINS)
                .filter(|&bin| counts[bin] > 0)
                .map(|bin| (latency_bins::value_of(bin).to_string(), counts[bin]))
                .collect();
            let bins: Vec<(String, u64)> = got["bins"]
                .as_object()
                .expect("a bins object")
                .iter()
                .map(|(key, count)| (key.clone(), count.as_u64().expect("a count")))
                .collect();
            assert_eq!(bins, expected, "{name} of job {index}");
            let total: u64 = bins.iter().map(|(_, count)| count).sum();
            assert_eq!(total, clat.count());
            // Everything else is the JSON output's.
            let mut without = got.clone();
            without.as_object_mut().expect("object").remove("bins");
            assert_eq!(without, plain["jobs"][index][name]["clat_ns"]);
        }
    }
}

#[test]
#[ignore = "prints the sample run in all formats, for eyeballing against fio"]
fn print_sample() {
    let report = two_jobs();
    for format in [
        OutputFormat::Normal,
        OutputFormat::Json,
        OutputFormat::Terse,
    ] {
        println!("{}", output::render(&report, format));
    }
}

#[test]
fn sample_windows_without_completions_give_no_sample() {
    // 1000 reads in the first second of a two-second run: the two windows after it saw no
    // completion, and fio takes no sample of a direction whose byte count did not move.
    let mut report = one_job(&[100 * US], 1000, 1000 * MS);
    report.jobs[0].stats.runtime = 2000 * MS;
    let text = output::normal(&report);
    assert_has_line(
        &text,
        "   iops        : min= 1000, max= 1000, avg=1000.00, stdev= 0.00, samples=2",
    );
    // An absurd runtime must not allocate or loop per window.
    report.jobs[0].stats.runtime = u64::MAX;
    let text = output::normal(&report);
    assert!(text.contains("samples=2"), "{text}");
}

/// A job named `name` in cgroup `cgroup` that moved `count` requests of `bytes` in
/// direction `dir`, spread over `runtime`.
fn cgroup_job(
    name: &str,
    cgroup: &str,
    dir: usize,
    count: u64,
    bytes: u64,
    runtime: u64,
) -> JobReport {
    let rw = if dir == 0 { "read" } else { "write" };
    let mut job = JobReport {
        description: description(name, rw, bytes as u32, 0),
        ..JobReport::default()
    };
    job.description.cgroup = cgroup.to_string();
    job.stats.runtime = runtime;
    record(&mut job.stats, dir, count, bytes, &[100 * US]);
    job
}

/// Two readers in `grp1` (not adjacent, and folded by group_reporting), a writer in the
/// nested `grp2/sub`, and a reader that names no cgroup.
fn grouped() -> RunReport {
    let mut a = cgroup_job("a", "grp1", 0, 2500, 4096, 1000 * MS);
    let c = cgroup_job("c", "grp2/sub", 1, 1000, 8192, 400 * MS);
    let d = cgroup_job("d", "", 0, 10, 4096, 10 * MS);
    let mut b = cgroup_job("b", "/grp1/", 0, 1500, 4096, 800 * MS);
    a.description.group_reporting = true;
    b.description.group_reporting = true;
    let mut jobs = vec![a, c, d, b];
    for (pid, job) in jobs.iter_mut().enumerate() {
        job.description.pid = pid as u32 + 1;
    }
    RunReport {
        version: "ioslice".to_string(),
        jobs,
        ..RunReport::default()
    }
}

/// `grouped()` with the settings a run gives its cgroups: `grp1` weighted 300 and limited,
/// `grp2` (no job of its own) limited, `grp2/sub` at the scheduler's default, and `spare`
/// with nothing set and no job.
fn with_settings() -> RunReport {
    let mut report = grouped();
    let setting = |path: &str, weight: u32, weight_set: bool, limits: Limits| CgroupSettings {
        path: path.to_string(),
        weight: Some(weight),
        weight_set,
        limits,
    };
    report.cgroups = vec![
        setting(
            "grp1",
            300,
            true,
            Limits {
                read_bps: Some(8 << 20),
                read_iops: Some(500),
                ..Limits::default()
            },
        ),
        setting(
            "grp2",
            100,
            false,
            Limits {
                write_bps: Some(1 << 20),
                burst: Some(SECOND),
                ..Limits::default()
            },
        ),
        setting("grp2/sub", 200, true, Limits::default()),
        setting("spare", 100, false, Limits::default()),
    ];
    report
}

/// The normal output's lines, and where its first cgroup totals block starts.
fn from_group_totals(text: &str) -> (Vec<&str>, usize) {
    let l = lines(text);
    let start = l
        .iter()
        .position(|line| line.starts_with("Group totals"))
        .expect("a group block");
    (l, start)
}

/// A job moved from `grp1` into `grp2` 400 ms into its 1 s run, having read 1000 of its 2500
/// requests by then, counts 1000 in grp1 over 400 ms and 1500 in grp2 over 600 ms, and once
/// in each; the job that stays in grp1 counts whole, over its whole runtime.
#[test]
fn a_moved_jobs_io_counts_in_each_cgroup_for_its_stretch_there() {
    let mut moved = cgroup_job("m", "grp1", 0, 1000, 4096, 400 * MS);
    moved.stats.moved_to("grp2", 400 * MS);
    record(&mut moved.stats, 0, 1500, 4096, &[100 * US]);
    moved.stats.runtime = 1000 * MS;
    let stays = cgroup_job("s", "grp1", 0, 10, 4096, 1000 * MS);
    let report = RunReport {
        version: "ioslice".to_string(),
        jobs: vec![moved, stays],
        ..RunReport::default()
    };
    let text = output::normal(&report);
    let (l, start) = from_group_totals(&text);
    assert_eq!(
        l[start..start + 4],
        [
            // grp1: m's 1000 over 400 ms and s's 10 over 1 s, over the longer.
            "Group totals (cgroup=grp1, jobs=2):",
            "  read: IOPS=1010, BW=4040KiB/s (4137kB/s)(4040KiB/1000msec)",
            "Group totals (cgroup=grp2, jobs=1):",
            "  read: IOPS=2500, BW=9.77MiB/s (10.2MB/s)(6000KiB/600msec)",
        ]
    );
}

#[test]
fn cgroup_totals_follow_the_job_blocks_in_first_appearance_order() {
    let text = output::normal(&with_settings());
    let (l, start) = from_group_totals(&text);
    assert_eq!(
        l[start..start + 10],
        [
            "Group totals (cgroup=grp1, weight=300, jobs=2):",
            "  limits: rbps=8MiB/s wbps=max riops=500 wiops=max burst=100ms",
            "  read: IOPS=4000, BW=15.6MiB/s (16.4MB/s)(15.6MiB/1000msec)",
            "Group totals (cgroup=grp2/sub, weight=200, jobs=1):",
            "  write: IOPS=2500, BW=19.5MiB/s (20.5MB/s)(8000KiB/400msec)",
            "Group totals (cgroup=/, jobs=1):",
            "  read: IOPS=1000, BW=4000KiB/s (4096kB/s)(40.0KiB/10msec)",
            "Group totals (cgroup=grp2, weight=100, jobs=0):",
            "  limits: rbps=max wbps=1MiB/s riops=max wiops=max burst=1s",
            "",
        ]
    );
    assert_eq!(l[start + 10], "Run status group 0 (all jobs):");
    assert!(
        l[..start]
            .iter()
            .any(|line| line.starts_with("  lat (usec)")),
        "job blocks come first"
    );
    assert_eq!(
        text.matches("Group totals").count(),
        4,
        "spare has no job and nothing set"
    );
}

#[test]
fn cgroup_totals_without_known_weights_and_without_cgroups() {
    let text = output::normal(&grouped());
    assert_has_line(&text, "Group totals (cgroup=grp1, jobs=2):");
    assert_has_line(&text, "Group totals (cgroup=grp2/sub, jobs=1):");
    assert!(!output::normal(&two_jobs()).contains("Group totals"));
    let v: Value = serde_json::from_str(&output::json(&two_jobs())).unwrap();
    assert!(v.get("cgroups").is_none(), "no cgroup, no key");
}

#[test]
fn cgroup_totals_in_json_after_fios_keys() {
    let text = output::json(&with_settings());
    let v: Value = serde_json::from_str(&text).unwrap();
    // No `[global]` option was set, so, as in fio, no `global options` key.
    assert_eq!(
        keys(&v),
        [
            "fio version",
            "timestamp",
            "timestamp_ms",
            "time",
            "jobs",
            "disk_util",
            "cgroups"
        ]
    );
    assert_eq!(v["jobs"].as_array().unwrap().len(), 3, "a and b folded");
    let groups = v["cgroups"].as_array().unwrap();
    assert_eq!(groups.len(), 4);
    let grp1 = &groups[0];
    assert_eq!(
        keys(grp1),
        ["name", "weight", "limits", "jobs", "read", "write", "trim"]
    );
    assert_eq!(keys(&grp1["limits"]), ["rbps", "riops", "burst_ns"]);
    assert_eq!(grp1["limits"]["rbps"], 8 << 20);
    assert_eq!(grp1["limits"]["riops"], 500);
    assert_eq!(grp1["limits"]["burst_ns"], 100_000_000);
    assert_eq!(grp1["name"], "grp1");
    assert_eq!(grp1["weight"], 300);
    assert_eq!(grp1["jobs"], 2);
    assert_eq!(
        keys(&grp1["read"]),
        [
            "io_bytes",
            "io_kbytes",
            "bw_bytes",
            "bw",
            "iops",
            "runtime",
            "total_ios"
        ]
    );
    assert_eq!(grp1["read"]["io_bytes"], 16_384_000);
    assert_eq!(grp1["read"]["io_kbytes"], 16_000);
    assert_eq!(grp1["read"]["bw_bytes"], 16_384_000);
    assert_eq!(grp1["read"]["bw"], 16_000);
    assert_eq!(grp1["read"]["iops"], 4000.0);
    assert_eq!(grp1["read"]["runtime"], 1000);
    assert_eq!(grp1["read"]["total_ios"], 4000);
    assert_eq!(grp1["write"]["io_bytes"], 0);
    assert_eq!(grp1["write"]["runtime"], 0);
    let sub = &groups[1];
    assert_eq!(sub["name"], "grp2/sub");
    assert_eq!(sub["weight"], 200);
    assert!(sub.get("limits").is_none(), "limits only when limited");
    assert_eq!(sub["write"]["bw_bytes"], 20_480_000);
    assert_eq!(sub["write"]["iops"], 2500.0);
    assert_eq!(sub["read"]["total_ios"], 0);
    let root = &groups[2];
    assert_eq!(root["name"], "/");
    assert!(root.get("weight").is_none(), "weight only when known");
    assert_eq!(root["jobs"], 1);
    assert_eq!(root["read"]["bw_bytes"], 4_096_000);
    let parent = &groups[3];
    assert_eq!(parent["name"], "grp2");
    assert_eq!(parent["jobs"], 0);
    assert_eq!(parent["limits"]["wbps"], 1 << 20);
    assert_eq!(parent["limits"]["burst_ns"], 1_000_000_000);
    assert!(
        text.contains("\n  \"cgroups\" : [\n    {\n      \"name\" : \"grp1\",\n"),
        "fio's whitespace: {text}"
    );
}

#[test]
fn terse_output_ignores_cgroups() {
    let report = with_settings();
    let mut plain = grouped();
    for job in &mut plain.jobs {
        job.description.cgroup.clear();
    }
    assert_eq!(
        output::render(&report, OutputFormat::Terse),
        output::terse(&plain)
    );
}
