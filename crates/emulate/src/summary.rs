//! What an emulator served, for the line it prints when it stops.

use std::fmt;

use hdrhistogram::Histogram;

/// Mean and 99th percentile of a time, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Latency {
    /// Arithmetic mean.
    pub mean: f64,
    /// 99th percentile.
    pub p99: u64,
}

impl Latency {
    /// The mean and 99th percentile of a histogram of microseconds.
    pub(crate) fn of(histogram: &Histogram<u64>) -> Self {
        if histogram.is_empty() {
            return Self::default();
        }
        Self {
            mean: histogram.mean(),
            p99: histogram.value_at_quantile(0.99),
        }
    }
}

/// Commands the emulated disk served, and how they were timed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Commands completed.
    pub commands: u64,
    /// Reads completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Discards completed (not among `reads` or `writes`).
    pub discards: u64,
    /// From submission to the model to its completion: the disk's service time.
    pub service: Latency,
    /// From arrival to submission: the wait in the driver queue for a free slot in the
    /// model's own queue.
    pub waiting: Latency,
    /// From the model's completion to the reply leaving: how late the emulator answered.
    pub lateness: Latency,
    /// Most requests waiting in the driver queue at once.
    pub longest_queue: usize,
    /// Commands answered with an error by a fault (included in `commands`).
    pub failed: u64,
    /// Each fault of the plan as written, and how many commands it affected (for a stall:
    /// the replies it held).
    pub faults: Vec<(String, u64)>,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} commands ({} reads, {} writes; {} MiB read, {} MiB written); service time mean \
             {:.0} µs, p99 {} µs; driver queue wait mean {:.0} µs, p99 {} µs, longest {}; \
             replies late by mean {:.1} µs, p99 {} µs",
            self.commands,
            self.reads,
            self.writes,
            self.bytes_read >> 20,
            self.bytes_written >> 20,
            self.service.mean,
            self.service.p99,
            self.waiting.mean,
            self.waiting.p99,
            self.longest_queue,
            self.lateness.mean,
            self.lateness.p99,
        )?;
        if self.discards > 0 {
            write!(f, "; {} discards", self.discards)?;
        }
        if !self.faults.is_empty() {
            write!(f, "; {} failed by faults; injected:", self.failed)?;
            for (index, (text, count)) in self.faults.iter().enumerate() {
                let sep = if index == 0 { "" } else { "," };
                write!(f, "{sep} {text} ×{count}")?;
            }
        }
        Ok(())
    }
}
