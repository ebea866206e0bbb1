//! The lanes of a timeline: which lane an event lands on, what each is called, and their
//! order (the device first, then the groups, the processes in id order, the async queues).
//!
//! While recording, a lane is known by the index it was given when first seen; the final
//! order is set once, at the end, so that lanes found late still sort into place.

use std::collections::BTreeMap;

use ioslice_core::trace::QueueRef;
use ioslice_core::{GroupId, GroupTree, PriorityClass, ProcessId};

use crate::{Lane, LaneKind};

/// What a lane follows, in lane order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum LaneKey {
    Device,
    Group(u32),
    Process(u32),
    Async { group: u32, class: u8, level: u8 },
}

/// The lanes found so far, with their names.
#[derive(Debug, Default)]
pub(crate) struct Lanes {
    lanes: Vec<(LaneKey, Lane)>,
    index: BTreeMap<LaneKey, u32>,
    process_names: Vec<String>,
    group_names: Vec<String>,
}

/// The device's lane, always the first.
pub(crate) const DEVICE: u32 = 0;

impl Lanes {
    /// The device's lane and one lane per named process (so that a process the policy never
    /// served still shows, empty).
    pub(crate) fn new(process_names: Vec<String>) -> Self {
        let mut lanes = Self {
            process_names,
            ..Self::default()
        };
        lanes.lane(LaneKey::Device);
        for index in 0..lanes.process_names.len() {
            let id = u32::try_from(index + 1).unwrap_or(u32::MAX);
            lanes.process(ProcessId(id));
        }
        lanes
    }

    /// Take the group names of the run.
    pub(crate) fn set_groups(&mut self, groups: &GroupTree) {
        self.group_names = groups
            .iter()
            .map(|(_, group)| absolute(&group.path))
            .collect();
        for (key, lane) in &mut self.lanes {
            match *key {
                LaneKey::Group(group) => lane.name = group_name(&self.group_names, group),
                LaneKey::Async {
                    group,
                    class,
                    level,
                } => {
                    lane.name = async_name(&self.group_names, group, class, level);
                    lane.group = Some(group_name(&self.group_names, group));
                }
                LaneKey::Device | LaneKey::Process(_) => {}
            }
        }
    }

    /// A group's name: its path from the root, `/` for the root.
    pub(crate) fn group_name(&self, group: GroupId) -> String {
        group_name(&self.group_names, group.0)
    }

    /// A process's lane.
    pub(crate) fn process(&mut self, process: ProcessId) -> u32 {
        self.lane(LaneKey::Process(process.0))
    }

    /// A group's lane.
    pub(crate) fn group(&mut self, group: GroupId) -> u32 {
        self.lane(LaneKey::Group(group.0))
    }

    /// A queue's lane: its process's for a sync queue, its own for an async queue (one per
    /// group and priority).
    pub(crate) fn queue(&mut self, queue: &QueueRef) -> u32 {
        match queue.process {
            Some(process) => self.process(process),
            None => self.lane(LaneKey::Async {
                group: queue.group.0,
                class: class_rank(queue.priority.class),
                level: queue.priority.level,
            }),
        }
    }

    /// Note the group of a process's lane, if not known yet.
    pub(crate) fn note_group(&mut self, lane: u32, group: GroupId) {
        let unknown =
            matches!(self.lanes.get(lane as usize), Some((_, lane)) if lane.group.is_none());
        if unknown {
            let name = self.group_name(group);
            if let Some((_, lane)) = self.lanes.get_mut(lane as usize) {
                lane.group = Some(name);
            }
        }
    }

    /// The lanes in their final order, and for each lane index given while recording, its
    /// index in that order.
    pub(crate) fn finish(self) -> (Vec<Lane>, Vec<u32>) {
        let mut order: Vec<usize> = (0..self.lanes.len()).collect();
        order.sort_by_key(|&index| self.lanes[index].0);
        let mut remap = vec![0u32; self.lanes.len()];
        for (position, &index) in order.iter().enumerate() {
            remap[index] = u32::try_from(position).unwrap_or(u32::MAX);
        }
        let mut lanes: Vec<Option<Lane>> = self.lanes.into_iter().map(|(_, l)| Some(l)).collect();
        let ordered = order
            .iter()
            .filter_map(|&index| lanes.get_mut(index).and_then(Option::take))
            .collect();
        (ordered, remap)
    }

    fn lane(&mut self, key: LaneKey) -> u32 {
        if let Some(&found) = self.index.get(&key) {
            return found;
        }
        let lane = match key {
            LaneKey::Device => Lane {
                name: "device".to_string(),
                kind: LaneKind::Device,
                group: None,
            },
            LaneKey::Group(group) => Lane {
                name: group_name(&self.group_names, group),
                kind: LaneKind::Group,
                group: None,
            },
            LaneKey::Process(0) => Lane {
                name: "flusher".to_string(),
                kind: LaneKind::Process,
                group: None,
            },
            LaneKey::Process(process) => Lane {
                name: (process as usize)
                    .checked_sub(1)
                    .and_then(|index| self.process_names.get(index))
                    .cloned()
                    .unwrap_or_else(|| format!("process {process}")),
                kind: LaneKind::Process,
                group: None,
            },
            LaneKey::Async {
                group,
                class,
                level,
            } => Lane {
                name: async_name(&self.group_names, group, class, level),
                kind: LaneKind::Queue,
                group: Some(group_name(&self.group_names, group)),
            },
        };
        let index = u32::try_from(self.lanes.len()).unwrap_or(u32::MAX);
        self.lanes.push((key, lane));
        self.index.insert(key, index);
        index
    }
}

/// A queue as the trace names it: `p3:BE4` for process 3's sync queue, `async:BE4`.
pub(crate) fn queue_name(queue: &QueueRef) -> String {
    match queue.process {
        Some(process) => format!("p{}:{}", process.0, queue.priority),
        None => format!("async:{}", queue.priority),
    }
}

fn absolute(path: &str) -> String {
    format!("/{}", path.trim_matches('/'))
}

fn group_name(names: &[String], group: u32) -> String {
    match names.get(group as usize) {
        Some(name) => name.clone(),
        None if group == GroupId::ROOT.0 => "/".to_string(),
        None => format!("group #{group}"),
    }
}

fn class_rank(class: PriorityClass) -> u8 {
    match class {
        PriorityClass::RealTime => 0,
        PriorityClass::BestEffort => 1,
        PriorityClass::Idle => 2,
    }
}

fn async_name(names: &[String], group: u32, class: u8, level: u8) -> String {
    let priority = match class {
        0 => format!("RT{level}"),
        1 => format!("BE{level}"),
        _ => "IDLE".to_string(),
    };
    format!("async:{priority} {}", group_name(names, group))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ioslice_core::IoPriority;

    #[test]
    fn lanes_sort_device_groups_processes_async() {
        let mut groups = GroupTree::default();
        let grp = groups.ensure("grp").expect("a valid path");
        let mut lanes = Lanes::new(vec!["a".into(), "b".into()]);
        lanes.set_groups(&groups);
        let async_queue = lanes.queue(&QueueRef {
            process: None,
            group: grp,
            priority: IoPriority::default(),
        });
        let flusher = lanes.process(ProcessId(0));
        let group = lanes.group(grp);
        let root = lanes.group(GroupId::ROOT);
        let (ordered, remap) = lanes.finish();
        let names: Vec<_> = ordered.iter().map(|lane| lane.name.as_str()).collect();
        assert_eq!(
            names,
            ["device", "/", "/grp", "flusher", "a", "b", "async:BE4 /grp"]
        );
        assert_eq!(remap[DEVICE as usize], 0);
        assert_eq!(remap[root as usize], 1);
        assert_eq!(remap[group as usize], 2);
        assert_eq!(remap[flusher as usize], 3);
        assert_eq!(remap[async_queue as usize], 6);
        assert_eq!(ordered[6].kind, LaneKind::Queue);
        assert_eq!(ordered[6].group.as_deref(), Some("/grp"));
    }

    #[test]
    fn unnamed_processes_and_groups_get_numbers() {
        let mut lanes = Lanes::new(Vec::new());
        lanes.process(ProcessId(7));
        lanes.group(GroupId(3));
        let (ordered, _) = lanes.finish();
        let names: Vec<_> = ordered.iter().map(|lane| lane.name.as_str()).collect();
        assert_eq!(names, ["device", "group #3", "process 7"]);
    }
}
