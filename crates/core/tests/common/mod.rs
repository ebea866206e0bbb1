//! Helpers the policy test files share. Each test file is its own crate and uses only part
//! of this module, so unused items are expected here.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use ioslice_core::tunable::{TunableDef, Tunables};
use ioslice_core::{Direction, GroupId, IoPriority, ProcessId, Request, RequestId};
use proptest::prelude::*;

/// Resolve `settings` (name, value) against a policy's tunables; the settings must be valid.
pub fn tunables(policy: &str, defs: &'static [TunableDef], settings: &[(&str, &str)]) -> Tunables {
    let settings: Vec<(String, String)> = settings
        .iter()
        .map(|&(name, value)| (name.to_string(), value.to_string()))
        .collect();
    Tunables::resolve(policy, defs, &settings).expect("settings are valid")
}

/// Check a dispatched request against what was inserted: it covers exactly the extents of
/// the ids it carries, with their direction, sync-ness and process, and each id comes back once.
pub fn account(
    rq: &Request,
    inserted: &BTreeMap<u64, Request>,
    dispatched: &mut BTreeSet<u64>,
) -> Result<(), TestCaseError> {
    let mut total = 0u32;
    let mut start = u64::MAX;
    for id in rq.ids() {
        prop_assert!(dispatched.insert(id.0), "id {} dispatched twice", id.0);
        let original = inserted.get(&id.0);
        prop_assert!(original.is_some(), "unknown id {}", id.0);
        let original = original.expect("checked");
        prop_assert_eq!(original.direction, rq.direction);
        prop_assert_eq!(original.sync, rq.sync);
        prop_assert_eq!(original.process, rq.process);
        total += original.sectors;
        start = start.min(original.sector);
    }
    prop_assert_eq!(total, rq.sectors);
    prop_assert_eq!(start, rq.sector);
    Ok(())
}

/// A 4 KiB read by `process` in `group` at `priority`, far from every other request (at
/// sector `id × 1024`) so that no policy merges two.
pub fn grouped_read(id: u64, process: u32, group: GroupId, priority: IoPriority) -> Request {
    Request {
        group,
        priority,
        ..Request::new(
            RequestId(id),
            ProcessId(process),
            Direction::Read,
            id * 1024,
            8,
        )
    }
}
