//! fio's `verify=` on a real run: what a job process writes into its blocks and checks on
//! reading them back.
//!
//! A [`Verifier`] belongs to one job process and is touched only by that process's thread
//! (`worker.rs`). It owns:
//! - the blocks' layout ([`block`]: fio's header ([`header`]), the checksum, the data from a
//!   per-block seed or `verify_pattern`);
//! - the history of blocks written and not yet checked: every one of them until the write
//!   phase ends, or the last `verify_backlog` of them;
//! - the queue of blocks to read back now (after the write phase, or a backlog's batch);
//! - the failures seen, in fio's words, and the `verify_dump` files.
//!
//! As in fio: a write job with `verify=` reads back and checks everything it wrote once it
//! has written it (`do_verify`, the default), or every `verify_backlog` blocks; a read job
//! with `verify=` checks each block it reads (a file an earlier run wrote); `verify_only`
//! issues no writes, only the reads that check what the same job wrote before. A failure is
//! an `EILSEQ` on the read, which stops the job unless `continue_on_error=` covers verify
//! errors and `verify_fatal` is off.

mod block;
mod dump;
mod header;

use std::collections::{BTreeMap, VecDeque};

use ioslice_fio::pattern::IoUnit;
use ioslice_fio::verify::VerifySpec;
use ioslice_fio::{JobSpec, Pattern};

pub(crate) use block::{Expect, Layout, Stamp, Written};

/// Most failure messages a job keeps (each names its block; the count is in the stats).
const MAX_REPORTS: usize = 64;

/// One job process's verification state.
pub(crate) struct Verifier {
    layout: Layout,
    options: VerifySpec,
    /// Whether the headers' write numbers are checked: fio checks them for a job that wrote
    /// the blocks itself with one block size and not `time_based`.
    check_numberio: bool,
    /// Whether the job writes (else it checks what it reads).
    writes: bool,
    thread: u16,
    seeds: u64,
    numberio: u16,
    /// Blocks written and not yet checked, by file and offset (overlapping older ones
    /// dropped), without `verify_backlog`.
    history: BTreeMap<(usize, u64), Written>,
    /// Blocks written since the last backlog check, in write order, with `verify_backlog`.
    recent: Vec<Written>,
    /// Blocks to read back now.
    queue: VecDeque<Written>,
    /// Failure messages, at most [`MAX_REPORTS`].
    pub(crate) reports: Vec<String>,
}

impl Verifier {
    /// The verifier of a job process, if its job names a `verify=` kind (with `do_verify=0`
    /// its writes still carry headers; nothing is read back); `thread` is its 1-based number
    /// and `seed` the start of its blocks' seeds.
    pub(crate) fn new(spec: &JobSpec, thread: u32, seed: u64) -> Option<Self> {
        let writes = !matches!(spec.pattern, Pattern::Read | Pattern::RandRead);
        let fixed = spec.block_size[1].min() == spec.block_size[1].max();
        Some(Self {
            layout: Layout::of(&spec.verify)?,
            options: spec.verify.clone(),
            check_numberio: writes && fixed && !spec.time_based && !spec.verify.verify_only,
            writes,
            thread: u16::try_from(thread).unwrap_or(u16::MAX),
            seeds: seed,
            numberio: 0,
            history: BTreeMap::new(),
            recent: Vec::new(),
            queue: VecDeque::new(),
            reports: Vec::new(),
        })
    }

    /// Whether the job's writes are replaced by reading back what an earlier run wrote.
    pub(crate) fn verify_only(&self) -> bool {
        self.options.verify_only && self.writes
    }

    /// Whether each read the workload issues is checked (a read job verifying a file).
    pub(crate) fn checks_workload_reads(&self) -> bool {
        !self.writes && self.options.do_verify
    }

    /// Whether a failure stops the job whatever `continue_on_error=` says.
    pub(crate) fn fatal(&self) -> bool {
        self.options.fatal
    }

    /// Bytes a block must have at least to hold a header and its checksum.
    pub(crate) fn min_block(&self) -> u64 {
        self.layout.min_block()
    }

    /// The header values of the next block written: a fresh seed and write number.
    pub(crate) fn next_written(&mut self, unit: &IoUnit) -> Written {
        let numberio = self.numberio;
        self.numberio = self.numberio.wrapping_add(1);
        self.seeds = ioslice_fio::pattern::mix(self.seeds.wrapping_add(1));
        Written {
            file: unit.file,
            offset: unit.offset,
            length: unit.length,
            seed: self.seeds,
            numberio,
        }
    }

    /// Fill a write's buffer for `written`, `elapsed` nanoseconds into the job.
    pub(crate) fn fill(&self, buffer: &mut [u8], written: &Written, elapsed: u64) {
        let stamp = Stamp {
            thread: self.thread,
            elapsed,
        };
        self.layout.fill(buffer, written, stamp);
    }

    /// A write of `written` completed: keep it to check later.
    pub(crate) fn wrote(&mut self, written: Written) {
        if !self.options.do_verify {
            return;
        }
        if self.options.backlog > 0 {
            self.recent.push(written);
            return;
        }
        let end = written.offset + written.length;
        let overlapping: Vec<(usize, u64)> = self
            .history
            .range((written.file, 0)..(written.file, end))
            .filter(|(_, old)| old.offset + old.length > written.offset)
            .map(|(key, _)| *key)
            .collect();
        for key in overlapping {
            self.history.remove(&key);
        }
        self.history.insert((written.file, written.offset), written);
    }

    /// Whether `verify_backlog` blocks were written since the last check.
    pub(crate) fn backlog_due(&self) -> bool {
        self.options.do_verify
            && self.options.backlog > 0
            && self.recent.len() as u64 >= self.options.backlog
    }

    /// Queue the backlog's batch for reading back: `verify_backlog_batch` of the blocks
    /// written since the last check (all of them by default; a larger batch checks some
    /// twice, a smaller one leaves some unchecked), and forget them.
    pub(crate) fn queue_backlog(&mut self) {
        let batch = match self.options.backlog_batch {
            0 => self.recent.len(),
            n => usize::try_from(n).unwrap_or(usize::MAX),
        };
        let recent = std::mem::take(&mut self.recent);
        self.queue
            .extend(recent.iter().cycle().take(batch).copied());
    }

    /// Queue everything written and not yet checked, at the end of the write phase.
    pub(crate) fn queue_all(&mut self) {
        let history = std::mem::take(&mut self.history);
        self.queue.extend(history.into_values());
        self.queue.extend(std::mem::take(&mut self.recent));
    }

    /// The next block to read back, if any.
    pub(crate) fn next_check(&mut self) -> Option<Written> {
        self.queue.pop_front()
    }

    /// Drop what is left to read back (the job stops).
    pub(crate) fn clear(&mut self) {
        self.queue.clear();
    }

    /// What a read of `offset` and `length` must find: `written`'s values if this run wrote
    /// it and fio would check them.
    pub(crate) fn expect(&self, offset: u64, length: u64, written: Option<&Written>) -> Expect {
        Expect {
            offset,
            length,
            written: written
                .filter(|_| self.check_numberio)
                .map(|w| (w.seed, w.numberio)),
        }
    }

    /// Check a block read back from `file`; on a failure, keep its message (and dump the
    /// blocks if asked) and return false.
    pub(crate) fn check(&mut self, read: &[u8], file: &str, expect: &Expect) -> bool {
        let Err(failure) = self.layout.check(read, expect) else {
            return true;
        };
        let mut message = failure.message(&self.layout.kind, file, expect);
        if self.options.dump {
            let stamp = Stamp {
                thread: self.thread,
                elapsed: 0,
            };
            let expected = self.layout.expected(read, expect, stamp);
            message.push_str(&dump::write(file, expect.offset, read, &expected));
        }
        if self.reports.len() < MAX_REPORTS {
            self.reports.push(message);
        }
        false
    }
}
