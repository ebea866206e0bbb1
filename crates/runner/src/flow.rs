//! fio's flow control between jobs (`flow_id`, `flow`, `flow_sleep`) in a real run: every job
//! thread of the run shares one [`FlowGroups`] behind a lock and asks it before each I/O, as
//! fio's threads share their flow counters. A job held back with `flow_sleep` lets its
//! requests in flight complete and sleeps that long; without it, it yields its CPU and asks
//! again, where fio spins.

use std::sync::{Arc, Mutex, PoisonError};

use ioslice_core::Nanos;
use ioslice_fio::flow::{FlowGroups, FlowMember};
use ioslice_fio::JobSpec;

/// The run's flow groups, shared by its job threads.
pub(crate) type SharedFlows = Arc<Mutex<FlowGroups>>;

/// One job thread's place in its flow group, if its job has a `flow` weight.
pub(crate) struct FlowGate {
    flows: SharedFlows,
    member: Option<FlowMember>,
    /// `flow_sleep`.
    pub(crate) sleep: Nanos,
}

impl FlowGate {
    /// A gate that holds nothing back until [`Self::join`].
    pub(crate) fn new(flows: SharedFlows, spec: &JobSpec) -> Self {
        Self {
            flows,
            member: None,
            sleep: spec.flow_sleep,
        }
    }

    /// The job starts: it joins its group.
    pub(crate) fn join(&mut self, spec: &JobSpec) {
        let member = self.lock().join(spec.flow_id, spec.flow);
        self.member = member;
    }

    /// Whether the job must hold its next I/O back.
    pub(crate) fn holds_back(&self) -> bool {
        self.member
            .as_ref()
            .is_some_and(|member| self.lock().holds_back(member))
    }

    /// The job issues an I/O.
    pub(crate) fn issued(&mut self) {
        let Self { flows, member, .. } = self;
        if let Some(member) = member.as_mut() {
            let mut groups = flows.lock().unwrap_or_else(PoisonError::into_inner);
            groups.issue(member);
        }
    }

    /// The job ends: it leaves its group.
    pub(crate) fn leave(&mut self) {
        if let Some(member) = self.member.take() {
            self.lock().leave(&member);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FlowGroups> {
        // The counts stay consistent whatever a panicking thread was doing: each change is
        // one statement.
        self.flows.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(flow: u32) -> JobSpec {
        JobSpec {
            flow_id: 4,
            flow,
            ..JobSpec::default()
        }
    }

    /// Two threads that issue whenever their gate lets them: while both are in the group,
    /// the one of weight 1 never passes a quarter of the group's counter.
    #[test]
    fn threads_sharing_a_group_keep_to_their_weights() {
        let flows = SharedFlows::default();
        let mut heavy = FlowGate::new(Arc::clone(&flows), &spec(3));
        let mut light = FlowGate::new(Arc::clone(&flows), &spec(1));
        heavy.join(&spec(3));
        light.join(&spec(1));
        let light_count = Arc::new(Mutex::new(0u64));
        let counted = Arc::clone(&light_count);
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = Arc::clone(&done);
        let light_thread = std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                if light.holds_back() {
                    std::thread::yield_now();
                    continue;
                }
                light.issued();
                *counted.lock().unwrap_or_else(PoisonError::into_inner) += 1;
            }
            light.leave();
        });
        let mut issued = 0u64;
        while issued < 30_000 {
            if heavy.holds_back() {
                std::thread::yield_now();
                continue;
            }
            heavy.issued();
            issued += 1;
        }
        let light_issued = *light_count.lock().unwrap_or_else(PoisonError::into_inner);
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        heavy.leave();
        light_thread.join().expect("light thread ends");
        // The light job issues only while its count before the issue, b - 1, is at most a
        // quarter of the group's, a + b - 1: 4(b - 1) ≤ a + b - 1, so b ≤ (a + 3) / 3 (it may
        // reach that once the heavy job has stopped issuing).
        assert!(
            light_issued <= (issued + 3) / 3,
            "{light_issued} of {issued}"
        );
        assert!(light_issued > 0);
    }
}
