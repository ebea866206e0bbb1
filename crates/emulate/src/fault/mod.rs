//! Fault plans: which commands of the emulated disk fail, tear, slow down or stall, decided
//! as each command arrives, with time passed in and every random draw taken from the run's
//! seed, so that the same seed and the same commands give the same faults.
//!
//! A plan ([`FaultPlan`], parsed from `--faults`; its syntax is in the `parse` module and
//! `docs/fidelity.md`) is a list of faults, each a kind and the commands it selects:
//!
//! - `eio`: the command fails with `EIO` when the model completes it; a failed write leaves
//!   the medium as it was.
//! - `torn`: only the first sectors of a write reach the medium and the command fails with
//!   `EIO`, as a drive reports a write it could not finish (SCSI's medium error names the
//!   first sector not written; NVMe's write fault leaves the range undefined). A drive that
//!   acknowledged a write it had not finished would be losing acknowledged data, a different
//!   fault; the emulator never does that, so whatever it acknowledged reads back.
//! - `slow`: the reply leaves that much later than the model completes the command.
//! - `stall`: from a time or from the arrival of the Nth command, for a duration, the device
//!   answers nothing and takes no new command; what completes meanwhile is answered when the
//!   stall ends.
//!
//! [`Faults`] holds a plan's state (match counters, stalls begun) and decides each command
//! ([`Faults::decide`]); [`Stalls`] says until when replies are held; [`FaultCounts`] counts
//! what was injected, for the summary.
//!
//! Touched by the FUSE session thread ([`Faults`], at each arrival, before the store is
//! written) and the disk thread ([`Stalls`], holding replies); both add to [`FaultCounts`].

mod parse;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicU64, Ordering};

use ioslice_core::{Direction, Nanos};

pub use parse::FaultSpecError;

/// What a fault does to the commands it selects.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultKind {
    /// Fail with `EIO`.
    Eio,
    /// Write only the first `keep` sectors (half the write when `None`, and always fewer
    /// than all of them), then fail with `EIO`.
    Torn {
        /// Sectors written.
        keep: Option<u32>,
    },
    /// Answer this many nanoseconds later.
    Slow {
        /// Extra latency.
        add: Nanos,
    },
    /// Answer nothing and take nothing for `length`, from `start`.
    Stall {
        /// When it begins.
        start: StallStart,
        /// How long it lasts.
        length: Nanos,
    },
}

/// When a stall begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StallStart {
    /// At this time since the emulator started.
    At(Nanos),
    /// When the Nth command arrives (1 is the first).
    Command(u64),
}

/// Which commands a fault applies to: all of them unless narrowed. A command is selected when
/// it matches every field given; then `every` keeps each Nth of those, and `probability`
/// draws from the seed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selector {
    /// Reads or writes only.
    pub direction: Option<Direction>,
    /// Commands overlapping these sectors, `[start, end)`.
    pub sectors: Option<(u64, u64)>,
    /// Commands arriving in `[start, end)`, nanoseconds since the emulator started.
    pub window: Option<(Nanos, Nanos)>,
    /// Commands whose arrival number (the first is 1) is in `[start, end)`.
    pub commands: Option<(u64, u64)>,
    /// Each Nth command that matches the above.
    pub every: Option<u64>,
    /// Each matching command with this probability, drawn from the seed for the Nth command
    /// matched (see [`draw`]).
    pub probability: Option<f64>,
}

/// One fault of a plan, with the text it was given as (for the summary).
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// As written in the plan.
    pub text: String,
    /// What it does.
    pub kind: FaultKind,
    /// To which commands (a stall has none).
    pub select: Selector,
}

/// A fault plan: the faults of `--faults`, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultPlan {
    /// The faults.
    pub faults: Vec<Fault>,
}

/// One command as it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandInfo {
    /// Read, write or discard.
    pub direction: Direction,
    /// First sector.
    pub sector: u64,
    /// Length in sectors (at least 1).
    pub sectors: u32,
}

/// What happens to the bytes of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Served as the model says.
    Served,
    /// Fails with `EIO`; a write leaves the medium untouched.
    Failed,
    /// A write of which only the first `keep` sectors reach the medium; fails with `EIO`.
    Torn {
        /// Sectors written.
        keep: u32,
    },
}

/// The faults decided for one command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// What happens to its bytes and its reply.
    pub fate: Fate,
    /// Extra latency before its reply.
    pub extra: Nanos,
    /// A stall this command's arrival begins: (fault index, start, end).
    pub stall: Option<(usize, Nanos, Nanos)>,
}

impl Verdict {
    /// Nothing injected.
    pub const CLEAN: Self = Self {
        fate: Fate::Served,
        extra: 0,
        stall: None,
    };

    /// Whether the reply is an error.
    pub fn fails(&self) -> bool {
        self.fate != Fate::Served
    }
}

/// How many commands each fault of a plan affected (for a stall: the replies it held),
/// counted by whichever thread injects it.
#[derive(Debug, Default)]
pub struct FaultCounts(Vec<AtomicU64>);

impl FaultCounts {
    /// Zero for each of `faults` faults.
    pub fn new(faults: usize) -> Self {
        Self((0..faults).map(|_| AtomicU64::new(0)).collect())
    }

    /// One more for fault `index`.
    pub fn add(&self, index: usize) {
        if let Some(count) = self.0.get(index) {
            count.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The counts, in the plan's order.
    pub fn values(&self) -> Vec<u64> {
        self.0.iter().map(|c| c.load(Ordering::Relaxed)).collect()
    }
}

/// A plan's state as commands arrive: on the FUSE session thread.
#[derive(Debug)]
pub struct Faults {
    plan: FaultPlan,
    seed: u64,
    /// Commands arrived so far.
    arrived: u64,
    /// Per fault, the commands its fields matched so far (for `every`).
    matched: Vec<u64>,
}

impl Faults {
    /// The state of `plan` before any command, drawing from `seed`.
    pub fn new(plan: FaultPlan, seed: u64) -> Self {
        let matched = vec![0; plan.faults.len()];
        Self {
            plan,
            seed,
            arrived: 0,
            matched,
        }
    }

    /// Decide the faults of the next command, arriving `now` nanoseconds after the start,
    /// counting each one injected in `counts` (but a stall's: the replies it holds are).
    pub fn decide(&mut self, command: CommandInfo, now: Nanos, counts: &FaultCounts) -> Verdict {
        self.arrived += 1;
        let number = self.arrived;
        let mut verdict = Verdict::CLEAN;
        for index in 0..self.plan.faults.len() {
            let fault = &self.plan.faults[index];
            if let FaultKind::Stall {
                start: StallStart::Command(at),
                length,
            } = fault.kind
            {
                if at == number {
                    verdict.stall = Some((index, now, now.saturating_add(length)));
                }
                continue;
            }
            if !self.selects(index, command, number, now) {
                continue;
            }
            let fault = &self.plan.faults[index];
            let injected = apply(&fault.kind, command, &mut verdict);
            if injected {
                counts.add(index);
            }
        }
        verdict
    }

    /// Whether fault `index` selects this command (and count the match for `every`).
    fn selects(&mut self, index: usize, command: CommandInfo, number: u64, now: Nanos) -> bool {
        let select = &self.plan.faults[index].select;
        let end = command
            .sector
            .saturating_add(u64::from(command.sectors.max(1)));
        let fields = select.direction.is_none_or(|d| d == command.direction)
            && select
                .sectors
                .is_none_or(|(start, stop)| command.sector < stop && end > start)
            && select
                .window
                .is_none_or(|(start, stop)| (start..stop).contains(&now))
            && select
                .commands
                .is_none_or(|(start, stop)| (start..stop).contains(&number));
        if !fields {
            return false;
        }
        self.matched[index] += 1;
        let nth = select
            .every
            .is_none_or(|every| self.matched[index].is_multiple_of(every));
        // Drawn for the Nth command the fields match, not the Nth to arrive: commands other
        // faults select (another program's reads, say) do not move this fault's draws.
        let matched = self.matched[index];
        nth && select
            .probability
            .is_none_or(|p| draw(self.seed, index, matched) < p)
    }

    /// The stalls that begin at a time, as (fault index, start, end), for the disk thread.
    pub fn timed_stalls(&self) -> Vec<(usize, Nanos, Nanos)> {
        timed_stalls(&self.plan)
    }
}

/// Add fault `kind` to `verdict`; whether it changed anything for this command.
fn apply(kind: &FaultKind, command: CommandInfo, verdict: &mut Verdict) -> bool {
    match *kind {
        FaultKind::Eio => {
            verdict.fate = Fate::Failed;
            true
        }
        FaultKind::Torn { keep } => {
            if command.direction != Direction::Write || verdict.fate == Fate::Failed {
                return false;
            }
            let sectors = command.sectors.max(1);
            let keep = keep.unwrap_or(sectors / 2).min(sectors - 1);
            verdict.fate = match verdict.fate {
                Fate::Torn { keep: earlier } => Fate::Torn {
                    keep: earlier.min(keep),
                },
                _ => Fate::Torn { keep },
            };
            true
        }
        FaultKind::Slow { add } => {
            verdict.extra = verdict.extra.saturating_add(add);
            true
        }
        FaultKind::Stall { .. } => false,
    }
}

/// The stalls of `plan` that begin at a time.
pub fn timed_stalls(plan: &FaultPlan) -> Vec<(usize, Nanos, Nanos)> {
    plan.faults
        .iter()
        .enumerate()
        .filter_map(|(index, fault)| match fault.kind {
            FaultKind::Stall {
                start: StallStart::At(at),
                length,
            } => Some((index, at, at.saturating_add(length))),
            _ => None,
        })
        .collect()
}

/// A number in `[0, 1)` for the `number`th command fault `index` matches, from `seed` alone:
/// the same seed and commands give the same draws, whatever else the plan holds.
pub fn draw(seed: u64, index: usize, number: u64) -> f64 {
    let key = mix(mix(seed ^ mix(index as u64)) ^ number);
    (key >> 11) as f64 / (1u64 << 53) as f64
}

/// SplitMix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The stall windows the disk thread honours: replies due inside one leave at its end, and
/// no command is handed to the model during one. Touched by the disk thread only.
#[derive(Debug, Default)]
pub struct Stalls {
    /// (fault index, start, end), in the order they became known.
    windows: Vec<(usize, Nanos, Nanos)>,
}

impl Stalls {
    /// The stalls known at the start.
    pub fn new(windows: Vec<(usize, Nanos, Nanos)>) -> Self {
        Self { windows }
    }

    /// A stall begun by a command's arrival.
    pub fn add(&mut self, window: (usize, Nanos, Nanos)) {
        self.windows.push(window);
    }

    /// If `at` lies in a stall, when the device answers again (through overlapping stalls)
    /// and which stall held it first.
    pub fn held(&self, at: Nanos) -> Option<(usize, Nanos)> {
        let first = self
            .windows
            .iter()
            .find(|&&(_, start, end)| (start..end).contains(&at))?;
        let mut until = first.2;
        while let Some(&(_, _, end)) = self
            .windows
            .iter()
            .find(|&&(_, start, end)| (start..end).contains(&until) && end > until)
        {
            until = end;
        }
        Some((first.0, until))
    }

    /// When a reply the model completes at `due`, `extra` late, may leave, and the stall that
    /// held it, if one did.
    pub fn release(&self, due: Nanos, extra: Nanos) -> (Nanos, Option<usize>) {
        let at = due.saturating_add(extra);
        match self.held(at) {
            Some((index, until)) => (until, Some(index)),
            None => (at, None),
        }
    }
}
