//! The seed scenario seed-003 (two sequential readers on the 2004 IDE disk) as the timeline
//! shows it under deadline, anticipatory and cfq: deadline alternates request by request,
//! anticipatory waits and serves one reader at length, cfq alternates slices of about
//! 100 ms with idle windows.

use std::path::PathBuf;

use ioslice_fio::jobfile::{parse_file, ParseOptions};
use ioslice_sim::simulation::{run_traced, SimConfig};

use ioslice_core::trace::TraceEvent;
use ioslice_core::{GroupTree, Nanos, TraceSink};
use ioslice_timeline::{render_html, Mark, Timeline, TimelineRecorder, DEFAULT_CAP};

const SEQUENTIAL_READERS: &str = "seed-003/read-sequential-4k.fio";
const IDE: &str = "sim:ide-2004";
const SECONDS: u64 = 3;

/// Run seed-003's sequential readers at two clients under `sched` for `seconds`.
fn timeline(sched: &str, seconds: u64, cap: usize) -> Timeline {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(SEQUENTIAL_READERS);
    let mut job_file = parse_file(&path, &ParseOptions::default()).expect("scenario parses");
    for job in &mut job_file.jobs {
        job.numjobs = 2;
        job.runtime = Some(seconds * 1_000_000_000);
    }
    let config = SimConfig::new(
        1,
        sched.parse().expect("scheduler spec"),
        IDE.parse().expect("device spec"),
    );
    let mut recorder = TimelineRecorder::with_cap(vec!["client.0".into(), "client.1".into()], cap);
    run_traced(&job_file, &config, &mut recorder).expect("scenario runs");
    recorder.finish()
}

fn of_kind<'a>(timeline: &'a Timeline, kind: &'a str) -> impl Iterator<Item = &'a Mark> + 'a {
    timeline.marks.iter().filter(move |mark| mark.kind == kind)
}

/// How often the device goes from one reader to the other, per second.
fn switches_per_second(timeline: &Timeline) -> f64 {
    let lanes: Vec<u32> = of_kind(timeline, "service").map(|mark| mark.lane).collect();
    let switches = lanes.windows(2).filter(|pair| pair[0] != pair[1]).count();
    switches as f64 / (timeline.duration as f64 / 1e9)
}

/// The mean length of the service marks of the two readers, nanoseconds.
fn mean_service_run(timeline: &Timeline) -> f64 {
    let runs: Vec<u64> = of_kind(timeline, "service")
        .map(|mark| mark.end - mark.start)
        .collect();
    runs.iter().sum::<u64>() as f64 / runs.len().max(1) as f64
}

/// The lane of a reader.
fn reader(timeline: &Timeline, index: usize) -> u32 {
    timeline
        .lane_named(&format!("client.{index}"))
        .expect("a reader's lane")
}

#[test]
fn deadline_alternates_between_the_readers_request_by_request() {
    let deadline = timeline("deadline", SECONDS, DEFAULT_CAP);
    let switches = switches_per_second(&deadline);
    assert!(switches > 50.0, "{switches:.1} switches per second");
    // Seek-bound: every request is a mark of its own, a few milliseconds long.
    let services: Vec<&Mark> = of_kind(&deadline, "service").collect();
    assert!(services.len() > 200, "{} requests", services.len());
    assert!(services.iter().all(|mark| mark.count == 1));
    assert!(mean_service_run(&deadline) < 20e6);
    for index in 0..2 {
        let lane = reader(&deadline, index);
        assert!(deadline.marks_on(lane).count() > 100);
    }
    assert!(of_kind(&deadline, "batch").all(|mark| mark.lane == 0));
    assert_eq!(of_kind(&deadline, "anticipation").count(), 0);
}

#[test]
fn anticipatory_waits_and_serves_one_reader_at_length() {
    let deadline = timeline("deadline", SECONDS, DEFAULT_CAP);
    let anticipatory = timeline("as", SECONDS, DEFAULT_CAP);
    let waits: Vec<&Mark> = of_kind(&anticipatory, "anticipation").collect();
    assert!(!waits.is_empty());
    let waited: u64 = waits.iter().map(|mark| mark.count).sum();
    assert!(waited > 5_000, "{waited} anticipation waits");
    assert!(waits
        .iter()
        .any(|mark| mark.label.contains("request_arrived")));
    for index in 0..2 {
        let lane = reader(&anticipatory, index);
        assert!(waits.iter().any(|mark| mark.lane == lane));
    }
    let switches = switches_per_second(&anticipatory);
    assert!(switches < 20.0, "{switches:.1} switches per second");
    let (runs, seeks) = (mean_service_run(&anticipatory), mean_service_run(&deadline));
    assert!(runs > 10.0 * seeks, "runs of {runs} ns against {seeks} ns");
    assert!(runs > 50e6, "runs of {runs} ns");
    // Requests are counted, not dropped.
    let requests: u64 = of_kind(&anticipatory, "service")
        .map(|mark| mark.count)
        .sum();
    assert!(requests > 10_000, "{requests} requests");
}

#[test]
fn cfq_alternates_slices_with_idle_windows() {
    let cfq = timeline("cfq", SECONDS, DEFAULT_CAP);
    let slices: Vec<&Mark> = of_kind(&cfq, "slice").collect();
    assert!(slices.len() >= 20, "{} slices", slices.len());
    assert!(slices.windows(2).all(|pair| pair[0].lane != pair[1].lane));
    // Every slice but those the readers' exit cut short runs its 100 ms from its first
    // completion (the first of a reader also waits for its first seek).
    let whole: Vec<&&Mark> = slices
        .iter()
        .filter(|mark| !mark.label.contains("process_exited"))
        .collect();
    assert!(whole.len() + 2 >= slices.len());
    for slice in &whole {
        let length = slice.end - slice.start;
        assert!(
            (95e6..125e6).contains(&(length as f64)),
            "a slice of {length} ns"
        );
        assert!(slice.label.contains("100 ms from its first completion"));
    }
    for index in 0..2 {
        let lane = reader(&cfq, index);
        let idle = of_kind(&cfq, "idle")
            .filter(|mark| mark.lane == lane)
            .count();
        assert!(idle >= 10, "{idle} idle marks on reader {index}");
    }
    // Each slice's idle windows lie within it.
    for mark in of_kind(&cfq, "idle") {
        assert!(slices.iter().any(|slice| slice.lane == mark.lane
            && slice.start <= mark.start
            && mark.end <= slice.end));
    }
    let switches = switches_per_second(&cfq);
    assert!(
        (5.0..15.0).contains(&switches),
        "{switches:.1} switches per second"
    );
}

/// A sink that hands each event to the recorder and counts the dispatches.
struct Counting<'a> {
    recorder: &'a mut TimelineRecorder,
    dispatched: u64,
}

impl TraceSink for Counting<'_> {
    fn start(&mut self, groups: &GroupTree) {
        self.recorder.start(groups);
    }

    fn record(&mut self, time: Nanos, event: &TraceEvent) {
        if matches!(event, TraceEvent::Dispatch { .. }) {
            self.dispatched += 1;
        }
        self.recorder.record(time, event);
    }
}

#[test]
fn the_cap_holds_over_a_long_run() {
    let (job_file, config, names) = four_clients("as");
    let mut recorder = TimelineRecorder::with_cap(names, 300);
    let mut sink = Counting {
        recorder: &mut recorder,
        dispatched: 0,
    };
    run_traced(&job_file, &config, &mut sink).expect("scenario runs");
    let dispatched = sink.dispatched;
    let timeline = recorder.finish();
    assert!(timeline.duration >= 29_000_000_000);
    assert!(
        timeline.marks.len() <= 300,
        "{} marks",
        timeline.marks.len()
    );
    assert!(timeline.sampling.coarsenings > 0);
    assert!(timeline.sampling.resolution > ioslice_timeline::BASE_RESOLUTION);
    assert!(timeline.sampling.recorded > 100_000);
    assert!(timeline
        .sampling_note()
        .contains("coarsened to stay under 300 marks"));
    let requests: u64 = of_kind(&timeline, "service").map(|mark| mark.count).sum();
    assert_eq!(requests, dispatched);
    assert!(timeline
        .marks
        .windows(2)
        .all(|pair| pair[0].start <= pair[1].start));

    let html = render_html(&timeline, "long");
    assert!(html.len() < 300 * 400 + 20_000, "{} bytes", html.len());
}

#[test]
fn a_long_run_at_the_default_cap_renders_small() {
    let (job_file, config, names) = four_clients("deadline");
    let mut recorder = TimelineRecorder::new(names);
    run_traced(&job_file, &config, &mut recorder).expect("scenario runs");
    let timeline = recorder.finish();
    assert!(timeline.marks.len() <= DEFAULT_CAP);
    // How fast it renders is measured by `bench/report-size.sh`, not here.
    let html = render_html(&timeline, "deadline");
    let budget = timeline.marks.len() * ioslice_timeline::BYTES_PER_MARK + 20_000;
    assert!(html.len() < budget, "{} bytes", html.len());
}

/// The scenario at four clients under `scheduler` on the 2004 IDE disk, for its full 30 s,
/// with the clients' lane names.
fn four_clients(scheduler: &str) -> (ioslice_fio::JobFile, SimConfig, Vec<String>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(SEQUENTIAL_READERS);
    let mut job_file = parse_file(&path, &ParseOptions::default()).expect("scenario parses");
    for job in &mut job_file.jobs {
        job.numjobs = 4;
    }
    let config = SimConfig::new(
        1,
        scheduler.parse().expect("scheduler spec"),
        IDE.parse().expect("device spec"),
    );
    let names = (0..4).map(|index| format!("client.{index}")).collect();
    (job_file, config, names)
}
