//! fio's `cpuio` engine in simulation: a job that moves no data and holds its share of a CPU
//! for its runtime.
//!
//! Each I/O of a `cpuio` job is a cycle of burning (`cpuchunks`, [`ioslice_fio::cpuio`])
//! that never reaches the elevator or the device: it completes that long after it is
//! issued, with no bytes, and the job then thinks for the rest of its duty cycle (the
//! think time fio's `fio_cpuio_init` sets, which the job's clock already carries), so a
//! `time_based` job of `cpuload=50` over one second counts ten cycles of 50 ms, as fio 3.33
//! reports (`total_ios` 10 in `fio --name=c --ioengine=cpuio --cpuload=50 --runtime=1
//! --time_based`). The simulated host has no CPUs to share, so the burning costs the other
//! jobs nothing here. `cpumode=qsort` cycles are `cpuchunks` long too: fio's last as long as
//! the host takes to sort (`do_qsort`), which the simulator does not model; the duty cycle,
//! which `cpuload` sets, is the same. This is our own code.

use ioslice_core::Nanos;
use ioslice_fio::IoEngine;

use super::Simulation;

impl Simulation<'_> {
    /// For a `cpuio` job's process, how long a cycle burns.
    pub(super) fn cpu_cycle(&self, index: u32) -> Option<Nanos> {
        let spec = &self.job_file.jobs[self.processes[index as usize].spec_index];
        (spec.ioengine == IoEngine::CpuIo).then(|| spec.cpu.burn())
    }
}
