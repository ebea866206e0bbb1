//! Discards through every elevator, as the kernel passes them: never merged with a write
//! (`blk_rq_merge_ok` wants the same operation), merged with a contiguous discard of the same
//! process, queued with the writes where an elevator keeps per-direction lists
//! (`rq_data_dir` is WRITE for `REQ_OP_DISCARD`), and in kyber's own discard domain.

use ioslice_core::tunable::SchedSpec;
use ioslice_core::{
    build_scheduler, Completion, Direction, Dispatch, GroupTree, Inserted, Nanos, ProcessId,
    Request, RequestId, Scheduler, SchedulerContext, SCHEDULERS,
};

fn request(id: u64, direction: Direction, sector: u64) -> Request {
    Request::new(RequestId(id), ProcessId(1), direction, sector, 8)
}

fn scheduler(name: &str) -> Box<dyn Scheduler> {
    let spec = SchedSpec {
        name: name.to_string(),
        settings: Vec::new(),
    };
    let context = SchedulerContext {
        groups: GroupTree::default(),
        rotational: true,
        queue_depth: 1,
    };
    build_scheduler(&spec, &context).expect("a registered scheduler builds")
}

/// Dispatch everything, one request at the device at a time, each served in 1 µs; the
/// requests in dispatch order.
fn drain(policy: &mut dyn Scheduler, mut now: Nanos) -> Vec<Request> {
    let mut sent = Vec::new();
    for _ in 0..1000 {
        match policy.dispatch(now) {
            Dispatch::Request(rq) => {
                let completion = Completion {
                    request: rq.clone(),
                    dispatch_time: now,
                    error: None,
                };
                now += 1_000;
                policy.complete(&completion, now);
                sent.push(rq);
            }
            Dispatch::WaitUntil(at) => now = at.max(now + 1),
            Dispatch::Empty => return sent,
        }
    }
    panic!("{}: still dispatching after 1000 rounds", policy.name());
}

fn ids(rq: &Request) -> Vec<u64> {
    rq.ids().map(|id| id.0).collect()
}

#[test]
fn no_elevator_merges_a_discard_with_a_write_and_each_merges_contiguous_discards_as_it_merges_writes(
) {
    for info in SCHEDULERS {
        let mut policy = scheduler(info.name);
        // A write, a discard just behind it, another discard just behind that.
        let write = policy.insert(request(1, Direction::Write, 0), 0);
        let first = policy.insert(request(2, Direction::Discard, 8), 0);
        let second = policy.insert(request(3, Direction::Discard, 16), 0);
        assert_eq!(write, Inserted::Queued, "{}", info.name);
        assert_eq!(
            first,
            Inserted::Queued,
            "{}: discard merged into a write",
            info.name
        );
        let sent = drain(policy.as_mut(), 0);
        let write_rq = sent
            .iter()
            .find(|rq| rq.direction == Direction::Write)
            .unwrap_or_else(|| panic!("{}: the write was not dispatched", info.name));
        assert_eq!(ids(write_rq), vec![1], "{}", info.name);
        let discards: Vec<Vec<u64>> = sent
            .iter()
            .filter(|rq| rq.direction == Direction::Discard)
            .map(ids)
            .collect();
        // Whatever an elevator does with two contiguous writes it does with two discards:
        // compare with the same three requests as writes then a read.
        let mut twin = scheduler(info.name);
        twin.insert(request(1, Direction::Read, 0), 0);
        let writes_merge = matches!(
            {
                twin.insert(request(2, Direction::Write, 8), 0);
                twin.insert(request(3, Direction::Write, 16), 0)
            },
            Inserted::Merged(_)
        );
        assert_eq!(
            matches!(second, Inserted::Merged(_)),
            writes_merge,
            "{}",
            info.name
        );
        let expected = if writes_merge {
            vec![vec![2, 3]]
        } else {
            vec![vec![2], vec![3]]
        };
        assert_eq!(discards, expected, "{}", info.name);
        assert!(
            sent.iter()
                .all(|rq| !rq.sync || rq.direction == Direction::Read),
            "{}",
            info.name
        );
    }
}

#[test]
fn deadline_keeps_a_discard_on_the_write_fifo_and_sort_list() {
    for name in ["deadline", "mq-deadline"] {
        // One FIFO: the discard, queued first, starts the write batch once the read is served
        // (a new batch starts at its direction's FIFO head); the writes before it in sector
        // order come in the batch after.
        let mut policy = scheduler(name);
        policy.insert(request(1, Direction::Discard, 300), 0);
        policy.insert(request(2, Direction::Write, 100), 0);
        policy.insert(request(3, Direction::Read, 5000), 0);
        policy.insert(request(4, Direction::Write, 200), 0);
        let order: Vec<u64> = drain(policy.as_mut(), 0).iter().map(|rq| rq.id.0).collect();
        assert_eq!(order, vec![3, 1, 2, 4], "{name}");
        // One sort list: a batch started at the write at 100 sweeps up through the discard
        // at 150 to the write at 200.
        let mut policy = scheduler(name);
        policy.insert(request(2, Direction::Write, 100), 0);
        policy.insert(request(1, Direction::Discard, 150), 0);
        policy.insert(request(3, Direction::Read, 5000), 0);
        policy.insert(request(4, Direction::Write, 200), 0);
        let order: Vec<u64> = drain(policy.as_mut(), 0).iter().map(|rq| rq.id.0).collect();
        assert_eq!(order, vec![3, 2, 1, 4], "{name}");
    }
}

#[test]
fn kyber_puts_a_discard_in_its_discard_domain() {
    use ioslice_core::policy::kyber::domain::Domain;
    assert_eq!(
        Domain::of(&request(1, Direction::Discard, 0)),
        Domain::Discard
    );
    assert_eq!(Domain::of(&request(2, Direction::Write, 0)), Domain::Write);
}

#[test]
fn a_discard_is_async_from_request_new() {
    let discard = request(1, Direction::Discard, 0);
    assert!(!discard.sync);
    assert_eq!(Direction::Discard.index(), 1);
    assert!(Direction::Discard.is_write());
    assert_eq!(Direction::Discard.data(), Direction::Write);
}
