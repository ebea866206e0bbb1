//! CFQ's `group_isolation`, driven with a fake clock on a one-command disk (1 ms a request):
//! where a group's seeky queue is served under 0 and 1, that it returns to its group once it
//! idles again, and that a sequential queue stays in its group either way.

mod common;

use ioslice_core::policy::cfq::Cfq;
use ioslice_core::time::ms;
use ioslice_core::trace::{render_text, QueueRef, TraceNames, Workload};
use ioslice_core::{
    build_scheduler, Completion, Direction, Dispatch, GroupId, GroupTree, Nanos, ProcessId,
    Request, RequestId, SchedSpec, Scheduler, SchedulerContext, TraceEvent,
};

use common::tunables;

/// Sectors between two seeky reads: far beyond CFQ's seek threshold.
const FAR: u64 = 1 << 22;

/// Where a reader's `n`th read starts.
#[derive(Debug, Clone, Copy)]
enum Pattern {
    /// One 4 KiB read after the other.
    Sequential,
    /// Every read far from the last.
    Seeky,
    /// Seeky for this many reads, then sequential.
    SeekyThenSequential(u64),
}

impl Pattern {
    fn sector(self, base: u64, n: u64) -> u64 {
        match self {
            Self::Sequential => base + 8 * n,
            Self::Seeky => base + FAR * n,
            Self::SeekyThenSequential(seeky) if n < seeky => base + FAR * n,
            Self::SeekyThenSequential(seeky) => base + FAR * seeky + 8 * (n - seeky),
        }
    }
}

/// A process reading with no think time: its next read is issued as the last completes.
struct Reader {
    process: u32,
    group: GroupId,
    pattern: Pattern,
    issued: u64,
}

/// What a run showed: the policy's events with their times, and every dispatch (time, process).
struct Run {
    events: Vec<(Nanos, TraceEvent)>,
    dispatches: Vec<(Nanos, u32)>,
    names: TraceNames,
}

/// Groups `/a` (weight 1000) and `/b` (weight 100).
fn groups() -> (GroupTree, GroupId, GroupId) {
    let mut tree = GroupTree::default();
    let a = tree.ensure("a").expect("path");
    tree.set_weight(a, 1000).expect("weight");
    let b = tree.ensure("b").expect("path");
    tree.set_weight(b, 100).expect("weight");
    (tree, a, b)
}

/// Run these readers (process, group index: 0 root, 1 `/a`, 2 `/b`, pattern) under CFQ with
/// these settings until `end`, one request at the disk at a time.
fn run(settings: &[(&str, &str)], readers: &[(u32, usize, Pattern)], end: Nanos) -> Run {
    let (tree, a, b) = groups();
    let ids = [GroupId::ROOT, a, b];
    let names = TraceNames::of(&tree);
    let context = SchedulerContext {
        groups: tree,
        rotational: true,
        queue_depth: 1,
    };
    let mut cfq = Cfq::new(&tunables("cfq", Cfq::TUNABLES, settings), &context);
    cfq.set_tracing(true);
    let mut readers: Vec<Reader> = readers
        .iter()
        .map(|&(process, group, pattern)| Reader {
            process,
            group: ids[group],
            pattern,
            issued: 0,
        })
        .collect();
    let mut out = Run {
        events: Vec::new(),
        dispatches: Vec::new(),
        names,
    };
    let mut now = 0;
    for reader in &mut readers {
        issue(&mut cfq, reader, now);
    }
    drain(&mut cfq, &mut out, now);
    while now < end {
        match cfq.dispatch(now) {
            Dispatch::Request(request) => {
                drain(&mut cfq, &mut out, now);
                out.dispatches.push((now, request.process.0));
                now += ms(1);
                complete(&mut cfq, request.clone(), now);
                let reader = readers
                    .iter_mut()
                    .find(|reader| ProcessId(reader.process) == request.process)
                    .expect("a reader's request");
                issue(&mut cfq, reader, now);
            }
            Dispatch::WaitUntil(at) => now = at.max(now + 1),
            Dispatch::Empty => panic!("every reader always has a read queued"),
        }
        drain(&mut cfq, &mut out, now);
    }
    out
}

fn issue(cfq: &mut Cfq, reader: &mut Reader, now: Nanos) {
    let id = u64::from(reader.process) * 1_000_000 + reader.issued;
    let base = u64::from(reader.process) << 32;
    let sector = reader.pattern.sector(base, reader.issued);
    reader.issued += 1;
    let request = Request {
        group: reader.group,
        submit_time: now,
        ..Request::new(
            RequestId(id),
            ProcessId(reader.process),
            Direction::Read,
            sector,
            8,
        )
    };
    cfq.insert(request, now);
}

fn complete(cfq: &mut Cfq, request: Request, now: Nanos) {
    let completion = Completion {
        request,
        dispatch_time: now - ms(1),
        error: None,
    };
    cfq.complete(&completion, now);
}

fn drain(cfq: &mut Cfq, out: &mut Run, now: Nanos) {
    let mut events = Vec::new();
    cfq.drain_trace(&mut events);
    out.events
        .extend(events.into_iter().map(|event| (now, event)));
}

impl Run {
    /// Every group move: when, the process, and the groups it leaves and joins.
    fn moves(&self) -> Vec<(Nanos, u32, GroupId, GroupId)> {
        self.events
            .iter()
            .filter_map(|(at, event)| match event {
                TraceEvent::GroupMove { queue, to } => {
                    Some((*at, process_of(queue), queue.group, *to))
                }
                _ => None,
            })
            .collect()
    }

    /// Every slice start: when, the process, and the group the queue is served in.
    fn slices(&self) -> Vec<(Nanos, u32, GroupId)> {
        self.events
            .iter()
            .filter_map(|(at, event)| match event {
                TraceEvent::SliceStart { queue } => Some((*at, process_of(queue), queue.group)),
                _ => None,
            })
            .collect()
    }

    /// The trace as text, for failure messages.
    fn text(&self) -> String {
        let mut out = String::new();
        for (at, event) in &self.events {
            render_text(*at, event, &self.names, None, &mut out);
        }
        out
    }
}

fn process_of(queue: &QueueRef) -> u32 {
    queue.process.expect("a sync queue").0
}

/// The slices of one process: when, and the group its queue was served in.
fn slices_of(run: &Run, process: u32) -> Vec<(Nanos, GroupId)> {
    run.slices()
        .into_iter()
        .filter(|&(_, p, _)| p == process)
        .map(|(at, _, group)| (at, group))
        .collect()
}

/// Requests dispatched for a process.
fn served(run: &Run, process: u32) -> usize {
    run.dispatches
        .iter()
        .filter(|&&(_, p)| p == process)
        .count()
}

const ROOT: GroupId = GroupId::ROOT;

#[test]
fn group_isolation_is_a_bool_defaulting_to_1() {
    let def = Cfq::TUNABLES
        .iter()
        .find(|def| def.name == "group_isolation")
        .expect("declared");
    assert_eq!((def.default, def.min, def.max, def.unit), (1, 0, 1, "bool"));
    let spec: SchedSpec = "cfq:group_isolation=2".parse().expect("syntax");
    let context = SchedulerContext {
        groups: GroupTree::default(),
        rotational: true,
        queue_depth: 1,
    };
    let Err(error) = build_scheduler(&spec, &context) else {
        panic!("2 is out of range");
    };
    assert_eq!(
        error.to_string(),
        "invalid value '2' for cfq tunable group_isolation: expected an integer in 0..=1 (bool)"
    );
}

#[test]
fn under_0_a_groups_seeky_queue_is_served_in_the_root_group() {
    let (_, a, _) = groups();
    let run = run(
        &[("group_isolation", "0")],
        &[(1, 1, Pattern::Seeky)],
        ms(400),
    );
    // Its first slice is in /a (a new queue idles until its history shows it seeky); the
    // slice ends at 101 ms (100 ms from its first completion) and the queue, now sync-noidle,
    // joins the root group's tree.
    assert_eq!(run.moves(), vec![(ms(101), 1, a, ROOT)], "{}", run.text());
    assert_eq!(
        slices_of(&run, 1),
        vec![(0, a), (ms(101), ROOT), (ms(202), ROOT), (ms(303), ROOT)]
    );
    let served_in_root: Vec<_> = run
        .events
        .iter()
        .filter_map(|(at, event)| match event {
            TraceEvent::GroupStart {
                group, workload, ..
            } if *at >= ms(101) => Some((*group, *workload)),
            _ => None,
        })
        .collect();
    assert_eq!(served_in_root, vec![(ROOT, Workload::SyncNoIdle); 3]);
}

#[test]
fn under_1_a_groups_seeky_queue_stays_in_its_group() {
    let (_, a, _) = groups();
    let run = run(
        &[("group_isolation", "1")],
        &[(1, 1, Pattern::Seeky)],
        ms(400),
    );
    assert_eq!(run.moves(), vec![], "{}", run.text());
    assert_eq!(
        slices_of(&run, 1),
        vec![(0, a), (ms(101), a), (ms(202), a), (ms(303), a)]
    );
}

#[test]
fn seeky_readers_of_two_groups_share_by_queue_under_0_and_by_weight_under_1() {
    let (_, a, b) = groups();
    let readers = [(1, 1, Pattern::Seeky), (2, 2, Pattern::Seeky)];
    // 0: /a's reader moves at the end of its 100 ms slice, /b's at the end of its 29 ms one
    // (b's group slice: 300 ms × 100/1100). From then on both are on the root's sync-noidle
    // tree, which does not idle with two queues on it: they take one request each in turn.
    let shared = run(&[("group_isolation", "0")], &readers, ms(2_000));
    assert_eq!(
        shared.moves(),
        vec![(ms(101), 1, a, ROOT), (ms(130), 2, b, ROOT)],
        "{}",
        shared.text()
    );
    let after: Vec<u32> = shared
        .dispatches
        .iter()
        .filter(|&&(at, _)| at >= ms(130))
        .map(|&(_, process)| process)
        .collect();
    assert!(after
        .chunks(2)
        .all(|pair| pair[0] == 1 && pair.get(1).is_none_or(|&p| p == 2)));
    assert_eq!((served(&shared, 1), served(&shared, 2)), (1036, 964));
    // 1: the groups take turns by vdisktime, /a with ten times /b's weight.
    let isolated = run(&[("group_isolation", "1")], &readers, ms(2_000));
    assert_eq!(isolated.moves(), vec![]);
    assert_eq!(
        isolated.slices()[..6],
        [
            (0, 1, a),
            (ms(101), 2, b),
            (ms(130), 1, a),
            (ms(231), 1, a),
            (ms(332), 2, b),
            (ms(361), 1, a),
        ]
    );
    assert_eq!((served(&isolated, 1), served(&isolated, 2)), (1797, 203));
}

#[test]
fn a_moved_queue_returns_to_its_group_when_it_idles_again() {
    let (_, a, _) = groups();
    // Process 1 in /a seeks for 150 reads, then reads sequentially; process 2 (root) seeks.
    let readers = [
        (1, 1, Pattern::SeekyThenSequential(150)),
        (2, 0, Pattern::Seeky),
    ];
    let run = run(&[("group_isolation", "0")], &readers, ms(1_000));
    // Once its seeky reads have left its history it idles again: served on the root's sync
    // tree until its slice ends at 432 ms, then back in /a.
    assert_eq!(
        run.moves(),
        vec![(ms(101), 1, a, ROOT), (ms(432), 1, ROOT, a)],
        "{}",
        run.text()
    );
    let later: Vec<_> = slices_of(&run, 1)
        .into_iter()
        .filter(|&(at, _)| at >= ms(330))
        .collect();
    assert_eq!(
        later,
        vec![(ms(330), ROOT), (ms(533), a), (ms(710), a), (ms(963), a)]
    );
}

#[test]
fn a_sequential_queue_stays_in_its_group_either_way() {
    let (_, a, b) = groups();
    // A sequential reader in /a beside a seeky one in /b.
    let readers = [(1, 1, Pattern::Sequential), (2, 2, Pattern::Seeky)];
    for isolation in ["0", "1"] {
        let run = run(&[("group_isolation", isolation)], &readers, ms(1_000));
        let moves = run.moves();
        assert!(
            moves.iter().all(|&(_, process, _, _)| process == 2),
            "group_isolation={isolation}: {moves:?}"
        );
        let slices = slices_of(&run, 1);
        assert!(slices.len() > 3, "group_isolation={isolation}: {slices:?}");
        assert!(
            slices.iter().all(|&(_, group)| group == a),
            "group_isolation={isolation}: {slices:?}"
        );
        let expected = if isolation == "0" {
            vec![(ms(130), 2, b, ROOT)]
        } else {
            vec![]
        };
        assert_eq!(moves, expected, "{}", run.text());
    }
}
