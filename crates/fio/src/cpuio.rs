//! fio's `cpuio` engine: a job that moves no data and burns CPU at a duty cycle.
//!
//! fio 3.33 (`engines/cpu.c`): each I/O of a `cpuio` job spins the CPU for `cpuchunks`
//! microseconds (default 50 000; `cpumode=noop`) and the job then thinks, sleeping, for
//! `cpuchunks × (100 − cpuload) / cpuload` microseconds after every completion, so that the
//! job holds `cpuload` percent of one CPU (fio's `fio_cpuio_init` sets `thinktime`,
//! `thinktime_blocks=1` and no spinning think time this way, over what the job file says).
//! With `cpumode=qsort` an I/O is four sorts of 256 Ki 32-bit numbers, and the cycle is
//! re-measured after each one (`do_qsort`): the duty cycle is the same, the count of I/Os
//! depends on how fast the host sorts. A `cpuload` of 0 is refused (`cpu thread needs rate
//! (cpuload=)`), one above 100 taken as 100. The engine is synchronous and diskless: fio
//! counts each cycle as an I/O of the job's direction with no bytes. This is our own code.

use ioslice_core::Nanos;

/// `cpumode=`: what a cycle of burning does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuMode {
    /// `noop`: spin for the cycle.
    #[default]
    Noop,
    /// `qsort`: sort an array of random numbers four times.
    Qsort,
}

impl CpuMode {
    /// `cpumode=`'s value.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "noop" => Some(Self::Noop),
            "qsort" => Some(Self::Qsort),
            _ => None,
        }
    }
}

/// A `cpuio` job's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuBurn {
    /// `cpuload=`: percent of one CPU, 0 when not given (which fio refuses).
    pub load: u32,
    /// `cpumode=`.
    pub mode: CpuMode,
    /// `cpuchunks=`: the length of a cycle of burning, in microseconds.
    pub chunk_us: u64,
}

impl Default for CpuBurn {
    fn default() -> Self {
        Self {
            load: 0,
            mode: CpuMode::Noop,
            chunk_us: 50_000,
        }
    }
}

impl CpuBurn {
    /// The percent of a CPU held, as fio takes `cpuload`: at most 100.
    pub fn percent(&self) -> u32 {
        self.load.min(100)
    }

    /// One cycle of burning, in nanoseconds.
    pub fn burn(&self) -> Nanos {
        self.chunk_us.saturating_mul(1_000)
    }

    /// The think time after each cycle, in nanoseconds (fio's integer microseconds):
    /// `chunk × (100 − load) / load`; none without a load.
    pub fn think(&self) -> Nanos {
        let load = u64::from(self.percent());
        if load == 0 {
            return 0;
        }
        let micros = self.chunk_us.saturating_mul(100 - load) / load;
        micros.saturating_mul(1_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_duty_cycle_holds_the_load() {
        let half = CpuBurn {
            load: 50,
            ..CpuBurn::default()
        };
        assert_eq!((half.burn(), half.think()), (50_000_000, 50_000_000));
        let third = CpuBurn {
            load: 30,
            chunk_us: 1_000,
            ..CpuBurn::default()
        };
        // 1000 × 70 / 30 = 2333 µs (fio's integer division).
        assert_eq!(third.think(), 2_333_000);
        let over = CpuBurn {
            load: 150,
            ..CpuBurn::default()
        };
        assert_eq!((over.percent(), over.think()), (100, 0));
        assert_eq!(CpuBurn::default().think(), 0);
        assert_eq!(CpuMode::parse("qsort"), Some(CpuMode::Qsort));
        assert_eq!(CpuMode::parse("spin"), None);
    }
}
