//! Scheduler registry (being written).
/// Placeholder.
pub struct SchedulerContext;
/// Placeholder.
pub struct SchedulerInfo;
/// Placeholder.
pub const SCHEDULERS: &[SchedulerInfo] = &[];
/// Placeholder.
pub fn build_scheduler() {}
