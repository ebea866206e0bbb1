//! Tenants that come and go while the engine runs, on the in-memory backend: a group added
//! beside a backlogged one gets its weight's share at once, a group with a client or a
//! request in it cannot be removed until both are gone, a moved client's requests count in
//! its new group, refused changes say why and change nothing, and every request completes
//! exactly once.

mod common;

use common::{
    be, bfq_tenants, engine_on, served_once_backlogged, spaced_reads, upper_share, wait_until,
    BACKLOG, MIB,
};

use ioslice_core::limit::Limits;
use ioslice_engine::backend::memory::MemoryBackend;
use ioslice_engine::EngineError;

/// A group weighted 100 is backlogged under bfq; a group weighted 300 is added and backlogged
/// beside it: it gets about three quarters of the service from its first request on.
#[test]
fn a_group_added_beside_a_backlogged_one_gets_its_weights_share() {
    let (builder, probe) = bfq_tenants(&[("light", 100)]);
    let engine = builder.start().expect("engine starts");
    let handle = engine.handle();
    let light = handle.client(1, "light", be()).expect("light");
    let mut heavy = None;
    let submit = || {
        // light below 4 MiB, heavy above.
        let mut futures = spaced_reads(&[(&light, 0)]);
        handle
            .add_group("heavy", Some(300), None)
            .expect("a new group");
        assert_eq!(handle.group_weight("heavy"), Some(300));
        let client = handle.client(2, "heavy", be()).expect("heavy");
        futures.extend(spaced_reads(&[(&client, 4 * MIB)]));
        heavy = Some(client);
        futures
    };
    let served = served_once_backlogged(&probe, &handle, &light, submit, 2 * BACKLOG, || {});
    let heavy_share = upper_share(&served);
    assert!(
        (0.65..=0.85).contains(&heavy_share),
        "the added group weighted 300 got {heavy_share:.2} of the service beside one of 100, expected about 0.75"
    );
    drop((light, heavy));
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!(stats.groups["light"].requests, BACKLOG + 1);
    assert_eq!(stats.groups["heavy"].requests, BACKLOG);
    assert_eq!(stats.double_completions, 0);
}

/// `rmdir` semantics: a group with a live client, or a request at the device, is busy; once
/// both are gone it is removed, no longer found, keeps its statistics, and its path can be
/// made again as a new group.
#[test]
fn a_group_is_removed_once_nothing_is_in_it() {
    let backend = MemoryBackend::new(MIB as usize);
    let probe = backend.probe();
    let engine = engine_on(backend, MIB, 4)
        .scheduler("cfq")
        .group("a", 200)
        .group("a/b", 100)
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    let parent = handle.remove_group("a").expect_err("a has a child");
    assert!(parent.to_string().contains("child groups"), "{parent}");
    let client = handle.client(1, "a/b", be()).expect("client");
    let clone = client.clone();
    let busy = handle.remove_group("a/b").expect_err("two clients");
    assert!(
        busy.to_string()
            .contains("group '/a/b' is busy: 2 clients are in it"),
        "{busy}"
    );
    probe.hold();
    let read = client.read(0, 4096);
    wait_until(|| handle.stats().in_flight == 1);
    drop((client, clone));
    let in_flight = handle.remove_group("a/b").expect_err("a request");
    assert!(
        in_flight
            .to_string()
            .contains("1 of its requests are queued or in flight"),
        "{in_flight}"
    );
    probe.release();
    read.wait().expect("read");
    handle.remove_group("a/b").expect("nothing in it");
    let gone = handle.client(2, "a/b", be()).expect_err("removed");
    assert!(matches!(gone, EngineError::UnknownGroup { .. }), "{gone}");
    assert!(gone.to_string().ends_with("the engine has /, a"), "{gone}");
    assert_eq!(handle.group_weight("a/b"), None);
    handle.remove_group("a").expect("its child is gone");
    handle.add_group("a", None, None).expect("made again");
    handle
        .add_group("a/b", Some(300), None)
        .expect("made again");
    assert_eq!(handle.group_weight("a/b"), Some(300));
    let again = handle.client(3, "a/b", be()).expect("client");
    again.read(8192, 4096).wait().expect("read");
    drop(again);
    let stats = engine.shutdown().expect("clean shutdown");
    // Statistics are kept by path: the old group's request and the new one's.
    assert_eq!(stats.groups["a/b"].requests, 2);
    assert_eq!(stats.double_completions, 0);
}

/// A client moved to another group: its requests from then on count there, and the old
/// group, with no client left, can be removed.
#[test]
fn a_moved_client_submits_in_its_new_group() {
    let engine = engine_on(MemoryBackend::new(MIB as usize), MIB, 4)
        .scheduler("bfq")
        .group("old", 100)
        .group("new", 100)
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    let client = handle.client(7, "old", be()).expect("client");
    for i in 0..4u64 {
        client.read(i * 8192, 4096).wait().expect("read");
    }
    let moved = client.moved_to("new").expect("moved");
    assert_eq!((moved.process(), moved.group()), (7, "new"));
    drop(client);
    for i in 0..6u64 {
        moved.read(i * 8192, 4096).wait().expect("read");
    }
    handle.remove_group("old").expect("nobody left in it");
    drop(moved);
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!(stats.groups["old"].requests, 4);
    assert_eq!(stats.groups["new"].requests, 6);
    assert_eq!(stats.processes[&7].requests, 10);
}

/// Additions the engine or the policy cannot take are refused with the reason and add
/// nothing.
#[test]
fn refused_additions_say_why_and_add_nothing() {
    let engine = engine_on(MemoryBackend::new(MIB as usize), MIB, 4)
        .scheduler("bfq")
        .group("a", 200)
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    let cases: [(&str, Option<u32>, Option<Limits>, &str); 5] = [
        ("a", None, None, "group '/a' already exists"),
        ("x/y", None, None, "its parent group does not exist"),
        ("b", Some(2000), None, "scheduler 'bfq'"),
        ("b", Some(0), None, "out of range"),
        (
            "b",
            None,
            Some(Limits {
                read_iops: Some(20),
                ..Limits::default()
            }),
            "no limit layer",
        ),
    ];
    for (path, weight, limits, expected) in cases {
        let error = handle.add_group(path, weight, limits).expect_err("refused");
        assert!(error.to_string().contains(expected), "{path}: {error}");
    }
    let unknown = handle.client(1, "b", be()).expect_err("not added");
    assert!(
        unknown.to_string().ends_with("the engine has /, a"),
        "{unknown}"
    );
    let root = handle.remove_group("/").expect_err("the root");
    assert!(root.to_string().contains("root group"), "{root}");
    engine.shutdown().expect("clean shutdown");
}
