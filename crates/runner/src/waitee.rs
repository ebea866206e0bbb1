//! fio's `wait_for=NAME` on a real run: a job's threads start (then sleep their
//! `startdelay`) only once every process of the job named NAME is done. Shared by every job
//! thread of a run: each says when it is done, and a waiting one blocks until its waitee's
//! count reaches zero or the run is asked to stop.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

use ioslice_core::StopSignal;
use ioslice_fio::JobSpec;

use crate::plan::ProcessPlan;

/// Processes not done yet, by job name.
#[derive(Debug, Default)]
pub(crate) struct Waitees {
    left: Mutex<HashMap<String, usize>>,
    done: Condvar,
}

/// How often a waiting thread looks at the stop request.
const STOP_CHECK: Duration = Duration::from_millis(50);

impl Waitees {
    /// Every process of the run counted under its job's name.
    pub(crate) fn of(processes: &[ProcessPlan], specs: &[JobSpec]) -> Self {
        let mut left = HashMap::new();
        for process in processes {
            *left
                .entry(specs[process.spec_index].name.clone())
                .or_insert(0) += 1;
        }
        Self {
            left: Mutex::new(left),
            done: Condvar::new(),
        }
    }

    /// Block until every process of job `name` is done, or the run is asked to stop.
    pub(crate) fn wait_for(&self, name: &str, stop: &StopSignal) {
        let mut left = self.left.lock().unwrap_or_else(PoisonError::into_inner);
        while left.get(name).is_some_and(|&n| n > 0) && !stop.is_set() {
            left = self
                .done
                .wait_timeout(left, STOP_CHECK)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// One process of job `name` is done.
    pub(crate) fn finished(&self, name: &str) {
        let mut left = self.left.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = left.get_mut(name) {
            *n = n.saturating_sub(1);
        }
        drop(left);
        self.done.notify_all();
    }
}
