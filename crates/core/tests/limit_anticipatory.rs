//! The limit layer around the anticipatory elevator, stepped by hand on a fake clock.
//!
//! AS waits for the process it served last. When the layer releases another process's
//! request of the same limited group while AS waits, that request must still leave before
//! the awaited process's next one, which the layer holds back behind it: the layer says the
//! awaited process is outranked and AS stops waiting. The same steps with the news withheld
//! show what AS did before: it kept waiting, and the BE7 reader it waited for went ahead of
//! the RT reader's released request, again and again.

mod common;

use ioslice_core::limit::{LimitLayer, Limits};
use ioslice_core::policy::anticipatory::Anticipatory;
use ioslice_core::time::{ms, us};
use ioslice_core::{
    Completion, Direction, Dispatch, GroupId, GroupTree, Inserted, IoPriority, Nanos,
    PriorityClass, ProcessId, Request, RequestId, Scheduler, SchedulerContext,
};

use common::tunables;

const RT_READER: ProcessId = ProcessId(1);
const BE7_READER: ProcessId = ProcessId(2);
/// Where the BE7 reader's file starts: far beyond AS's close window from the RT reader's.
const FAR: u64 = 10_000_000;

fn anticipatory() -> Box<dyn Scheduler> {
    Box::new(Anticipatory::new(
        &tunables("anticipatory", Anticipatory::TUNABLES, &[]),
        &SchedulerContext::default(),
    ))
}

/// AS with the layer's news withheld: every call but `set_outranked` goes through.
struct Deaf(Box<dyn Scheduler>);

impl Scheduler for Deaf {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        self.0.insert(request, now)
    }
    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        self.0.dispatch(now)
    }
    fn complete(&mut self, completion: &Completion, now: Nanos) {
        self.0.complete(completion, now);
    }
    fn queued(&self) -> usize {
        self.0.queued()
    }
    fn process_exited(&mut self, process: ProcessId, now: Nanos) {
        self.0.process_exited(process, now);
    }
}

/// Group `g` limited to `read_bps` with `burst`, and the layer around `policy`.
fn limited(policy: Box<dyn Scheduler>, read_bps: u64, burst: Nanos) -> (LimitLayer, GroupId) {
    let mut groups = GroupTree::default();
    let g = groups.ensure("g").expect("valid path");
    let limits = Limits {
        read_bps: Some(read_bps),
        burst: Some(burst),
        ..Limits::default()
    };
    groups.set_limits(g, limits);
    (LimitLayer::new(policy, &groups), g)
}

/// The `n`th 4 KiB read of a sequential reader: the RT reader's file at sector 0, the
/// BE7 reader's at `FAR`.
fn read(process: ProcessId, n: u64, group: GroupId) -> Request {
    let (start, priority) = if process == RT_READER {
        (0, IoPriority::new(PriorityClass::RealTime, 0))
    } else {
        (FAR, IoPriority::new(PriorityClass::BestEffort, 7))
    };
    Request {
        group,
        priority: priority.expect("valid level"),
        ..Request::new(
            RequestId(u64::from(process.0) * 1000 + n),
            process,
            Direction::Read,
            start + 8 * n,
            8,
        )
    }
}

/// Ask for dispatches at `now` until the answer is not a request: the requests sent, as
/// (process, n), and that last answer.
fn dispatch(policy: &mut dyn Scheduler, now: Nanos) -> (Vec<(u32, u64)>, Dispatch) {
    let mut sent = Vec::new();
    loop {
        match policy.dispatch(now) {
            Dispatch::Request(request) => sent.push((request.process.0, request.id.0 % 1000)),
            answer => return (sent, answer),
        }
    }
}

fn complete(policy: &mut dyn Scheduler, request: Request, now: Nanos) {
    let completion = Completion {
        request,
        dispatch_time: 0,
        error: None,
    };
    policy.complete(&completion, now);
}

/// 4 KiB a millisecond with no burst: one 4 KiB read may leave per millisecond.
const FOUR_K_PER_MS: u64 = 4096 * 1000;

/// The first millisecond, the same with or without the news: the BE7 reader's first read
/// leaves at once, AS waits for the BE7 reader, and both readers' next reads wait in the
/// layer for the bucket.
fn first_millisecond(layer: &mut LimitLayer, g: GroupId) {
    layer.insert(read(BE7_READER, 0, g), 0);
    // AS has nothing else queued: it answers Empty, whatever it waits for.
    assert_eq!(dispatch(layer, 0), (vec![(2, 0)], Dispatch::Empty));
    layer.insert(read(RT_READER, 0, g), us(100));
    assert_eq!(layer.held(), 1);
    complete(layer, read(BE7_READER, 0, g), us(500));
    assert_eq!(
        dispatch(layer, us(500)),
        (vec![], Dispatch::WaitUntil(ms(1)))
    );
    layer.insert(read(BE7_READER, 1, g), us(600));
    assert_eq!(layer.held(), 2);
    assert_eq!(layer.outranked().count(), 0);
}

#[test]
fn as_stops_waiting_for_a_be7_reader_once_the_layer_releases_the_rt_readers_read() {
    let (mut layer, g) = limited(anticipatory(), FOUR_K_PER_MS, 0);
    first_millisecond(&mut layer, g);
    // 1 ms: the layer releases the RT read (class first) and holds the BE7 read back to
    // 2 ms. The BE7 reader is outranked, so AS ends its wait and sends the RT read.
    let sent = layer.dispatch(ms(1));
    assert!(matches!(sent, Dispatch::Request(r) if r.id == read(RT_READER, 0, g).id));
    assert_eq!(layer.outranked().collect::<Vec<_>>(), vec![BE7_READER]);
    // With the RT read gone from AS, nothing outranks anyone; AS waits for the RT reader.
    assert_eq!(
        dispatch(&mut layer, ms(1)),
        (vec![], Dispatch::WaitUntil(ms(2)))
    );
    assert_eq!(layer.outranked().count(), 0);
    assert_eq!(layer.held(), 1);
    // The RT reader's next read waits in the layer beside the BE7 reader's, and leaves
    // first at 2 ms; AS sends it at once (it waits for that reader).
    complete(&mut layer, read(RT_READER, 0, g), us(1200));
    layer.insert(read(RT_READER, 1, g), us(1300));
    assert_eq!(
        dispatch(&mut layer, ms(2)),
        (vec![(1, 1)], Dispatch::WaitUntil(ms(3)))
    );
    assert_eq!(layer.outranked().count(), 0, "nothing of the group in AS");
    assert_eq!(layer.held(), 1);
}

#[test]
fn without_the_news_as_serves_the_be7_reader_it_waits_for_before_the_released_rt_read() {
    let (mut layer, g) = limited(Box::new(Deaf(anticipatory())), FOUR_K_PER_MS, 0);
    first_millisecond(&mut layer, g);
    // 1 ms: the RT read goes into AS, which keeps waiting for the BE7 reader (its next
    // read is 10 M sectors from the RT read, and the wait has lasted 0.5 ms of 6).
    assert_eq!(
        dispatch(&mut layer, ms(1)),
        (vec![], Dispatch::WaitUntil(ms(2)))
    );
    assert_eq!(layer.queued(), 2);
    // 2 ms: the layer, holding nothing else, releases the BE7 read, and AS sends it ahead
    // of the RT read it has held for a millisecond. The RT reader has nothing more to
    // send, so from here on the layer sees only the BE7 reader: each of its reads leaves the
    // layer a millisecond apart and AS sends each ahead of the RT read, until that read's
    // 125 ms deadline.
    assert_eq!(
        dispatch(&mut layer, ms(2)),
        (vec![(2, 1)], Dispatch::WaitUntil(ms(3)))
    );
    for n in 2..6 {
        complete(&mut layer, read(BE7_READER, n - 1, g), ms(n) + us(200));
        layer.insert(read(BE7_READER, n, g), ms(n) + us(300));
        assert_eq!(layer.held(), 1);
        assert_eq!(
            dispatch(&mut layer, ms(n + 1)),
            (vec![(2, n)], Dispatch::WaitUntil(ms(n + 2)))
        );
    }
    assert_eq!(layer.queued(), 1, "the RT read, still in AS");
}

#[test]
fn while_the_limit_does_not_bind_as_keeps_its_bet_as_it_would_without_the_layer() {
    // A 100 ms burst at 4 KiB/ms: 100 reads' worth, so every read leaves the layer at once.
    let (mut layer, g) = limited(anticipatory(), FOUR_K_PER_MS, ms(100));
    let mut bare = anticipatory();
    let steps = |policy: &mut dyn Scheduler| {
        let mut sent = Vec::new();
        policy.insert(read(BE7_READER, 0, g), 0);
        sent.push(dispatch(policy, 0));
        policy.insert(read(RT_READER, 0, g), us(100));
        sent.push(dispatch(policy, us(100)));
        complete(policy, read(BE7_READER, 0, g), us(500));
        sent.push(dispatch(policy, us(500)));
        policy.insert(read(BE7_READER, 1, g), us(600));
        sent.push(dispatch(policy, us(600)));
        sent
    };
    let sent = [steps(&mut layer), steps(bare.as_mut())];
    assert_eq!(sent[0], sent[1]);
    // AS waited for the BE7 reader with the RT read queued, and the bet paid.
    assert_eq!(
        sent[0],
        vec![
            (vec![(2, 0)], Dispatch::Empty),
            (vec![], Dispatch::WaitUntil(us(1100))),
            (vec![], Dispatch::WaitUntil(us(6500))),
            (vec![(2, 1)], Dispatch::WaitUntil(us(1600))),
        ]
    );
    assert_eq!(layer.outranked().count(), 0);
}
