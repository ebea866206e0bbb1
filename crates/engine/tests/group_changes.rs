//! Weights and limits changed while the engine runs (`Handle::set_group`), on the in-memory
//! backend: a new weight reverses two backlogged groups' shares under bfq, a tightened limit
//! throttles the group from its next request, refused changes change nothing, and every
//! request completes exactly once.

mod common;

use common::{
    be, bfq_tenants, engine_on, served_once_backlogged, spaced_reads, upper_share, BACKLOG, MIB,
};

use std::time::{Duration, Instant};

use ioslice_core::limit::Limits;
use ioslice_engine::backend::memory::MemoryBackend;
use ioslice_engine::{Client, EngineError, IoFuture};

/// Groups weighted 100 and 300 under bfq; while both are backlogged the light one is raised
/// to 900: it gets about three quarters of the service, where it had a quarter.
#[test]
fn a_new_weight_reverses_two_backlogged_groups_shares() {
    let (builder, probe) = bfq_tenants(&[("light", 100), ("heavy", 300)]);
    let engine = builder.start().expect("engine starts");
    let handle = engine.handle();
    let light = handle.client(1, "light", be()).expect("light");
    let heavy = handle.client(2, "heavy", be()).expect("heavy");
    assert_eq!(handle.group_weight("light"), Some(100));
    // light below 4 MiB, heavy above.
    let submit = || spaced_reads(&[(&light, 0), (&heavy, 4 * MIB)]);
    let raise = || {
        handle
            .set_group("light", Some(900), None)
            .expect("bfq takes 900");
    };
    let served = served_once_backlogged(&probe, &handle, &light, submit, 2 * BACKLOG, raise);
    // Taken at the group's first requeue after the change: in force by now.
    assert_eq!(handle.group_weight("light"), Some(900));
    let light_share = 1.0 - upper_share(&served);
    assert!(
        (0.65..=0.85).contains(&light_share),
        "light group got {light_share:.2} of the service after its weight went to 900, expected about 0.75"
    );
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!(stats.groups["light"].requests, BACKLOG + 1);
    assert_eq!(stats.groups["heavy"].requests, BACKLOG);
    assert_eq!(stats.double_completions, 0);
}

/// Changes the engine or the policy cannot take are refused with the reason, and change
/// nothing.
#[test]
fn refused_changes_say_why_and_change_nothing() {
    let engine = engine_on(MemoryBackend::new(MIB as usize), MIB, 4)
        .scheduler("bfq")
        .group("a", 200)
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    let unknown = handle.set_group("b", Some(300), None).expect_err("unknown");
    assert!(
        matches!(unknown, EngineError::UnknownGroup { .. }),
        "{unknown}"
    );
    let root = handle.set_group("/", Some(300), None).expect_err("root");
    assert!(root.to_string().contains("root group"), "{root}");
    let zero = handle.set_group("a", Some(0), None).expect_err("zero");
    assert!(zero.to_string().contains("out of range"), "{zero}");
    let beyond_bfq = handle.set_group("a", Some(2000), None).expect_err("bfq");
    assert!(
        beyond_bfq.to_string().starts_with("scheduler 'bfq'"),
        "{beyond_bfq}"
    );
    let limit = Limits {
        read_iops: Some(20),
        ..Limits::default()
    };
    let no_layer = handle
        .set_group("a", None, Some(limit))
        .expect_err("no layer");
    assert!(
        no_layer.to_string().contains("no limit layer"),
        "{no_layer}"
    );
    assert_eq!(handle.group_weight("a"), Some(200));
    engine.shutdown().expect("clean shutdown");
}

/// 20 read requests a second (with the default 100 ms burst: two at once, then one every
/// 50 ms).
fn twenty_iops() -> Limits {
    Limits {
        read_iops: Some(20),
        ..Limits::default()
    }
}

/// How long five reads by `client`, sent at once, take to complete.
fn five_reads(client: &Client) -> Duration {
    let start = Instant::now();
    let futures: Vec<IoFuture> = (0..5u64).map(|i| client.read(i * 8192, 512)).collect();
    for future in futures {
        future.wait().expect("read");
    }
    start.elapsed()
}

/// A group limited loosely reads 50 requests at once; its limit tightened to 20 IOPS (100 ms
/// burst: two at once, then one every 50 ms), its next five take at least 150 ms.
#[test]
fn a_tightened_limit_throttles_the_next_requests() {
    let loose = Limits {
        read_iops: Some(10_000),
        ..Limits::default()
    };
    let engine = engine_on(MemoryBackend::new(MIB as usize), MIB, 4)
        .scheduler("deadline")
        .group_limits("slow", loose)
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    let client = handle.client(1, "slow", be()).expect("slow");
    let start = Instant::now();
    let futures: Vec<IoFuture> = (0..50u64).map(|i| client.read(i * 8192, 512)).collect();
    for future in futures {
        future.wait().expect("read");
    }
    assert!(
        start.elapsed() < Duration::from_millis(150),
        "the loose limit held 50 reads for {:?}",
        start.elapsed()
    );
    handle
        .set_group("slow", None, Some(twenty_iops()))
        .expect("limit taken");
    let took = five_reads(&client);
    assert!(
        took >= Duration::from_millis(150),
        "the tightened limit let five reads through in {took:?}"
    );
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!((stats.totals.requests, stats.double_completions), (55, 0));
}

/// Built with `limits_later`, an engine whose groups start unlimited takes a limit at run
/// time: limited to 20 IOPS (two at once, then one every 50 ms), the group's next five reads
/// take at least 150 ms. A latency target, not asked for, is still refused.
#[test]
fn limits_given_later_are_enforced_when_asked_for_at_the_start() {
    let engine = engine_on(MemoryBackend::new(MIB as usize), MIB, 4)
        .scheduler("deadline")
        .group("free", 100)
        .limits_later(true, false)
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    let client = handle.client(1, "free", be()).expect("free");
    for future in (0..20u64).map(|i| client.read(i * 8192, 512)) {
        future.wait().expect("read");
    }
    handle
        .set_group("free", None, Some(twenty_iops()))
        .expect("the limit layer is there");
    let took = five_reads(&client);
    assert!(
        took >= Duration::from_millis(150),
        "the limit given later let five reads through in {took:?}"
    );
    let target = Limits {
        latency: Some(250_000),
        ..twenty_iops()
    };
    let refused = handle
        .set_group("free", None, Some(target))
        .expect_err("no io.latency");
    assert!(
        refused.to_string().contains("io.latency does not run"),
        "{refused}"
    );
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!((stats.totals.requests, stats.double_completions), (25, 0));
}
