//! Unit tests of BFQ's pieces working together; behaviour tests are in `crates/core/tests/bfq.rs`.

use super::*;
use crate::time::us;
use crate::{Direction, RequestId};

fn bfq(settings: &[(&str, &str)]) -> Bfq {
    let settings: Vec<(String, String)> = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let tunables = Tunables::resolve("bfq", Bfq::TUNABLES, &settings).expect("tunables");
    let context = SchedulerContext {
        rotational: true,
        queue_depth: 31,
        ..SchedulerContext::default()
    };
    Bfq::new(&tunables, &context).expect("bfq")
}

#[test]
fn a_lone_sequential_reader_is_served_at_once_after_each_arrival() {
    let mut policy = bfq(&[]);
    let mut now = 0;
    for i in 0..300u64 {
        let request = Request {
            submit_time: now,
            ..Request::new(RequestId(i), ProcessId(1), Direction::Read, i * 8, 8)
        };
        assert_eq!(policy.insert(request, now), Inserted::Queued);
        let Dispatch::Request(sent) = policy.dispatch(now) else {
            panic!("request {i} held back at {now}");
        };
        now += us(100);
        let completion = Completion {
            request: sent,
            dispatch_time: now - us(100),
            error: None,
        };
        policy.complete(&completion, now);
        assert!(matches!(
            policy.dispatch(now),
            Dispatch::Empty | Dispatch::WaitUntil(_)
        ));
        now += us(10);
    }
}
