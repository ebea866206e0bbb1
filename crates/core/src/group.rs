//! Groups (cgroups) and their hierarchy. Group 0 is the root; every other group has a parent,
//! a name that is its path from the root (`a/b`), and a weight.
//!
//! Groups may be added and removed while a run goes on, as `mkdir` and `rmdir` in a cgroup
//! hierarchy do ([`GroupTree::add`], [`GroupTree::remove`]). Ids are never reused: a removed
//! group keeps its id, and its slot in per-group arrays, for the rest of the run, and is no
//! longer found by its path; a group made again at the same path is a new group with a new
//! id, as a new cgroup at a removed one's path is a new cgroup.

use std::fmt;

use crate::ioband::Controller;
use crate::limit::Limits;

/// A group's identity: its index in the [`GroupTree`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct GroupId(pub u32);

impl GroupId {
    /// The root group, which holds every process not placed elsewhere.
    pub const ROOT: GroupId = GroupId(0);

    /// The index into per-group arrays.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Path from the root, `""` for the root itself.
    pub path: String,
    /// Parent, `None` for the root.
    pub parent: Option<GroupId>,
    /// Proportional weight among siblings.
    pub weight: u32,
    /// Whether `weight` was set explicitly (a job's `cgroup_weight=`, `--cgroup`), as opposed
    /// to holding the tree's default: a policy with its own default (BFQ's 100) uses that instead.
    pub weight_set: bool,
    /// Bandwidth and IOPS limits (`io.max`); unlimited by default.
    pub limits: Limits,
    /// Depth: 0 for the root, 1 for its children, …
    pub depth: u32,
}

impl Group {
    /// How traces, statistics and reports name the group: its path, `/` for the root.
    pub fn label(&self) -> String {
        if self.path.is_empty() {
            "/".to_string()
        } else {
            self.path.clone()
        }
    }
}

/// Valid group weights, as the cgroup v1 blkio controller takes them (CFQ); BFQ takes 1–1000.
pub const WEIGHT_RANGE: std::ops::RangeInclusive<u32> = 1..=10_000;

/// A weight or path that cannot be accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GroupError {
    /// The path has an empty component, `..`, or odd characters.
    #[error("invalid group name '{0}': expected names of letters, digits, '-', '_' or '.', separated by '/'")]
    InvalidPath(String),
    /// A group is added where one already is.
    #[error("group '{0}' already exists")]
    Exists(String),
    /// A group is added under a parent that does not exist.
    #[error("cannot add group '{0}': its parent group does not exist (add it first)")]
    NoParent(String),
    /// The root group cannot be removed.
    #[error("the root group cannot be removed")]
    RemoveRoot,
    /// A group with child groups cannot be removed (`rmdir` says `EBUSY`).
    #[error("group '{0}' has child groups: remove them first")]
    HasChildren(String),
    /// The weight is outside the accepted range.
    #[error("group weight {weight} for '{path}' is out of range: expected {min}..={max}", min = WEIGHT_RANGE.start(), max = WEIGHT_RANGE.end())]
    InvalidWeight {
        /// The group.
        path: String,
        /// The rejected weight.
        weight: u32,
    },
}

/// All groups of a run. Ids are handed out in creation order, so a tree built from the same
/// input always numbers its groups the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupTree {
    groups: Vec<Group>,
    /// Per group, whether it was removed ([`GroupTree::remove`]).
    removed: Vec<bool>,
    default_weight: u32,
    /// Which controller enforces the weights.
    controller: Controller,
}

impl Default for GroupTree {
    fn default() -> Self {
        Self::new(Self::DEFAULT_WEIGHT)
    }
}

impl GroupTree {
    /// The default weight of a new group (CFQ's blkio.weight default).
    pub const DEFAULT_WEIGHT: u32 = 500;

    /// A tree holding only the root; new groups get `default_weight` unless told otherwise.
    pub fn new(default_weight: u32) -> Self {
        Self {
            groups: vec![Group {
                path: String::new(),
                parent: None,
                weight: default_weight,
                weight_set: false,
                limits: Limits::default(),
                depth: 0,
            }],
            removed: vec![false],
            default_weight,
            controller: Controller::Elevator,
        }
    }

    /// Which controller enforces the groups' weights: the elevator's own groups (the
    /// default), or dm-ioband above it ([`crate::ioband`]).
    pub fn controller(&self) -> Controller {
        self.controller
    }

    /// Set the controller that enforces the groups' weights.
    pub fn set_controller(&mut self, controller: Controller) {
        self.controller = controller;
    }

    /// The group at `path` (`a/b`), created with its missing ancestors at the default weight.
    pub fn ensure(&mut self, path: &str) -> Result<GroupId, GroupError> {
        let trimmed = path.trim_matches('/');
        if trimmed.is_empty() {
            return Ok(GroupId::ROOT);
        }
        let mut current = GroupId::ROOT;
        let mut prefix = String::new();
        for component in trimmed.split('/') {
            if !valid_component(component) {
                return Err(GroupError::InvalidPath(path.to_string()));
            }
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(component);
            current = match self.find(&prefix) {
                Some(id) => id,
                None => self.push(&prefix, current),
            };
        }
        Ok(current)
    }

    fn push(&mut self, path: &str, parent: GroupId) -> GroupId {
        let id = GroupId(self.groups.len() as u32);
        let depth = self.groups[parent.index()].depth + 1;
        self.groups.push(Group {
            path: path.to_string(),
            parent: Some(parent),
            weight: self.default_weight,
            weight_set: false,
            limits: Limits::default(),
            depth,
        });
        self.removed.push(false);
        id
    }

    /// Add the group at `path` under its parent, which must exist, as `mkdir` makes a
    /// cgroup: with the default weight and no limits. A path already in the tree, a missing
    /// parent or a bad name is an error and adds nothing.
    pub fn add(&mut self, path: &str) -> Result<GroupId, GroupError> {
        let trimmed = path.trim_matches('/');
        if trimmed.is_empty() || self.find(trimmed).is_some() {
            return Err(GroupError::Exists(absolute(trimmed)));
        }
        if !trimmed.split('/').all(valid_component) {
            return Err(GroupError::InvalidPath(path.to_string()));
        }
        let parent_path = trimmed.rsplit_once('/').map_or("", |(parent, _)| parent);
        let parent = self
            .find(parent_path)
            .ok_or_else(|| GroupError::NoParent(absolute(trimmed)))?;
        Ok(self.push(trimmed, parent))
    }

    /// Remove a group, as `rmdir` removes a cgroup: it must not be the root and must have no
    /// child groups left. Whether it still holds processes or requests is for the driver to
    /// check, which knows them. Its id stays in the tree ([`GroupTree::is_removed`]).
    pub fn remove(&mut self, id: GroupId) -> Result<(), GroupError> {
        if id == GroupId::ROOT {
            return Err(GroupError::RemoveRoot);
        }
        if self.children(id).next().is_some() {
            return Err(GroupError::HasChildren(absolute(&self.get(id).path)));
        }
        self.removed[id.index()] = true;
        Ok(())
    }

    /// Whether the group was removed.
    pub fn is_removed(&self, id: GroupId) -> bool {
        self.removed.get(id.index()).copied().unwrap_or(false)
    }

    /// Set a group's weight.
    pub fn set_weight(&mut self, id: GroupId, weight: u32) -> Result<(), GroupError> {
        let group = &mut self.groups[id.index()];
        if !WEIGHT_RANGE.contains(&weight) {
            return Err(GroupError::InvalidWeight {
                path: group.path.clone(),
                weight,
            });
        }
        group.weight = weight;
        group.weight_set = true;
        Ok(())
    }

    /// Set a group's limits (they apply to the group's whole subtree).
    pub fn set_limits(&mut self, id: GroupId, limits: Limits) {
        self.groups[id.index()].limits = limits;
    }

    /// Whether any group has a limit.
    pub fn has_limits(&self) -> bool {
        self.groups.iter().any(|g| !g.limits.is_unlimited())
    }

    /// The group with this path, if any (a removed group is not found).
    pub fn find(&self, path: &str) -> Option<GroupId> {
        let trimmed = path.trim_matches('/');
        self.groups
            .iter()
            .zip(&self.removed)
            .position(|(g, &removed)| !removed && g.path == trimmed)
            .map(|i| GroupId(i as u32))
    }

    /// The group a job with `cgroup=path` runs in: that group if the tree has it, else (or
    /// without a path) the root.
    pub fn of_job(&self, path: Option<&str>) -> GroupId {
        path.and_then(|path| self.find(path))
            .unwrap_or(GroupId::ROOT)
    }

    /// The group with this id. Panics on an id from another tree (a programming error).
    pub fn get(&self, id: GroupId) -> &Group {
        &self.groups[id.index()]
    }

    /// Number of groups, the root included.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Whether only the root exists.
    pub fn is_empty(&self) -> bool {
        self.groups.len() == 1
    }

    /// All groups with their ids, in id order (parents before children), removed ones
    /// included: ids index per-group arrays.
    pub fn iter(&self) -> impl Iterator<Item = (GroupId, &Group)> {
        self.groups
            .iter()
            .enumerate()
            .map(|(i, g)| (GroupId(i as u32), g))
    }

    /// The direct children of a group that are not removed, in id order.
    pub fn children(&self, id: GroupId) -> impl Iterator<Item = GroupId> + '_ {
        self.iter()
            .filter(move |&(child, g)| g.parent == Some(id) && !self.is_removed(child))
            .map(|(child, _)| child)
    }

    /// The path from the root down to `id`, both included.
    pub fn ancestry(&self, id: GroupId) -> Vec<GroupId> {
        let mut chain = vec![id];
        let mut current = id;
        while let Some(parent) = self.groups[current.index()].parent {
            chain.push(parent);
            current = parent;
        }
        chain.reverse();
        chain
    }
}

/// A path as errors name it: `/a/b`.
fn absolute(path: &str) -> String {
    format!("/{path}")
}

fn valid_component(component: &str) -> bool {
    !component.is_empty()
        && component != "."
        && component != ".."
        && component
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl fmt::Display for GroupId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "group#{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_paths_create_ancestors_in_order() {
        let mut tree = GroupTree::default();
        let b = tree.ensure("a/b").unwrap();
        let a = tree.find("a").unwrap();
        assert_eq!(a, GroupId(1));
        assert_eq!(b, GroupId(2));
        assert_eq!(tree.get(b).parent, Some(a));
        assert_eq!(tree.get(b).depth, 2);
        assert_eq!(tree.ensure("/a/b/").unwrap(), b);
        assert_eq!(tree.ancestry(b), vec![GroupId::ROOT, a, b]);
        assert_eq!(tree.children(GroupId::ROOT).collect::<Vec<_>>(), vec![a]);
    }

    #[test]
    fn bad_names_and_weights_are_refused() {
        let mut tree = GroupTree::default();
        assert!(tree.ensure("a//b").is_err());
        assert!(tree.ensure("../x").is_err());
        let a = tree.ensure("a").unwrap();
        assert!(tree.set_weight(a, 0).is_err());
        tree.set_weight(a, 800).unwrap();
        assert_eq!(tree.get(a).weight, 800);
    }

    #[test]
    fn groups_are_added_and_removed_as_mkdir_and_rmdir_do() {
        let mut tree = GroupTree::default();
        let a = tree.add("a").unwrap();
        assert_eq!(tree.add("/a/"), Err(GroupError::Exists("/a".into())));
        assert_eq!(tree.add("x/y"), Err(GroupError::NoParent("/x/y".into())));
        assert!(matches!(
            tree.add("a/../b"),
            Err(GroupError::InvalidPath(_))
        ));
        let b = tree.add("a/b").unwrap();
        assert_eq!((a, b), (GroupId(1), GroupId(2)));
        assert_eq!(tree.get(b).depth, 2);
        assert_eq!(tree.remove(a), Err(GroupError::HasChildren("/a".into())));
        assert_eq!(tree.remove(GroupId::ROOT), Err(GroupError::RemoveRoot));
        tree.remove(b).unwrap();
        assert!(tree.is_removed(b));
        assert_eq!(tree.find("a/b"), None);
        assert_eq!(tree.children(a).count(), 0);
        // The path is free again, for a new group with a new id; the old id keeps its slot.
        assert_eq!(tree.add("a/b"), Ok(GroupId(3)));
        assert_eq!(tree.len(), 4);
        tree.remove(GroupId(3)).unwrap();
        tree.remove(a).unwrap();
        assert_eq!(tree.find("a"), None);
    }
}
