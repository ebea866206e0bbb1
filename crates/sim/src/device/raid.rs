//! RAID 0 and RAID 5 arrays of member devices (usually [`super::hdd::Hdd`]), as DiskSim's
//! array organisations and Linux md lay them out. The array's address space is cut into
//! chunks of `chunk` sectors, dealt round the members; RAID 5 keeps one parity chunk per
//! stripe and rotates it left-symmetrically (md's default layout: parity moves one member
//! to the left each stripe, data starts on the member after the parity). A command is split
//! per member chunk (contiguous pieces on one member are merged) and completes when every
//! piece has completed. A RAID 5 write that does not cover a whole stripe pays the
//! read-modify-write: read the old data and old parity, then write the new data and new
//! parity — four member I/Os for a small write; a full-stripe write just writes the data
//! and the parity. Member queues stay at their own depth; the array holds the rest.

use std::collections::{HashMap, VecDeque};

use ioslice_core::{Direction, Nanos};

use super::{Command, DeviceInfo, DeviceModel};

/// Array organisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaidLevel {
    /// Striping without redundancy.
    Raid0,
    /// Striping with rotating (left-symmetric) parity.
    Raid5,
}

/// Everything a [`Raid`] is built from (besides its members).
#[derive(Debug, Clone, PartialEq)]
pub struct RaidConfig {
    /// The name reported in [`DeviceInfo`].
    pub name: String,
    /// RAID 0 or RAID 5.
    pub level: RaidLevel,
    /// Chunk (stripe unit) in sectors.
    pub chunk_sectors: u64,
    /// Commands the array accepts at once.
    pub queue_depth: usize,
}

/// Member I/Os of one stripe-level job: a first phase, then (for read-modify-write) a second.
#[derive(Debug, Clone)]
struct Job {
    parent: u64,
    remaining: usize,
    then: Parts,
}

/// A simulated disk array.
pub struct Raid {
    config: RaidConfig,
    members: Vec<Box<dyn DeviceModel>>,
    member_depth: Vec<usize>,
    member_chunks: u64,
    waiting: Vec<VecDeque<Command>>,
    parts: HashMap<u64, usize>,
    jobs: Vec<Option<Job>>,
    free_jobs: Vec<usize>,
    parents: HashMap<u64, usize>,
    next_tag: u64,
    member_commands: u64,
    scratch: Vec<u64>,
}

impl std::fmt::Debug for Raid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Raid")
            .field("config", &self.config)
            .field("members", &self.members.len())
            .finish()
    }
}

/// Member commands of one phase: (member, command).
type Parts = Vec<(usize, Command)>;

/// One piece of a command on one member: (member, member sector, sectors).
type Piece = (usize, u64, u64);

impl Raid {
    /// An array over `members` (at least 2 for RAID 0, 3 for RAID 5).
    pub fn new(config: RaidConfig, members: Vec<Box<dyn DeviceModel>>) -> Result<Self, String> {
        let minimum = match config.level {
            RaidLevel::Raid0 => 2,
            RaidLevel::Raid5 => 3,
        };
        if members.len() < minimum {
            return Err(format!(
                "{:?} needs at least {minimum} members, got {}",
                config.level,
                members.len()
            ));
        }
        if config.chunk_sectors == 0 {
            return Err("the chunk size must be at least one sector".into());
        }
        let smallest = members
            .iter()
            .map(|m| m.info().capacity_sectors)
            .min()
            .unwrap_or(0);
        Ok(Self {
            member_depth: members
                .iter()
                .map(|m| m.info().queue_depth.max(1))
                .collect(),
            member_chunks: smallest / config.chunk_sectors,
            waiting: members.iter().map(|_| VecDeque::new()).collect(),
            parts: HashMap::new(),
            jobs: Vec::new(),
            free_jobs: Vec::new(),
            parents: HashMap::new(),
            next_tag: 0,
            member_commands: 0,
            scratch: Vec::new(),
            members,
            config,
        })
    }

    /// Commands sent to members so far.
    pub fn member_commands(&self) -> u64 {
        self.member_commands
    }

    /// Sectors of data in one stripe (the parity chunk not counted).
    pub fn stripe_sectors(&self) -> u64 {
        self.config.chunk_sectors * self.data_members()
    }

    fn data_members(&self) -> u64 {
        let n = self.members.len() as u64;
        match self.config.level {
            RaidLevel::Raid0 => n,
            RaidLevel::Raid5 => n - 1,
        }
    }

    /// The member holding parity for `stripe` (RAID 5, left-symmetric).
    fn parity_member(&self, stripe: u64) -> usize {
        let n = self.members.len() as u64;
        ((n - 1) - stripe % n) as usize
    }

    /// Where data chunk `chunk` of the array lives: (member, stripe).
    fn chunk_home(&self, chunk: u64) -> (usize, u64) {
        let n = self.members.len() as u64;
        let stripe = chunk / self.data_members();
        let index = chunk % self.data_members();
        match self.config.level {
            RaidLevel::Raid0 => (index as usize, stripe),
            RaidLevel::Raid5 => (
                ((self.parity_member(stripe) as u64 + 1 + index) % n) as usize,
                stripe,
            ),
        }
    }

    /// Split `[sector, sector + sectors)` into per-chunk pieces: (stripe, piece).
    fn pieces(&self, sector: u64, sectors: u64) -> Vec<(u64, Piece)> {
        let chunk = self.config.chunk_sectors;
        let mut pieces = Vec::new();
        let (mut at, end) = (sector, sector + sectors);
        while at < end {
            let offset = at % chunk;
            let length = (chunk - offset).min(end - at);
            let (member, stripe) = self.chunk_home(at / chunk);
            pieces.push((stripe, (member, stripe * chunk + offset, length)));
            at += length;
        }
        pieces
    }

    fn command(&mut self, direction: Direction, piece: Piece, fua: bool) -> (usize, Command) {
        self.next_tag += 1;
        let (member, sector, sectors) = piece;
        let sectors = u32::try_from(sectors).expect("a piece is at most one chunk of one command");
        (
            member,
            Command {
                tag: self.next_tag,
                direction,
                sector,
                sectors,
                fua,
            },
        )
    }

    /// Member commands for a read or RAID 0 write: pieces merged per member.
    fn direct_job(&mut self, command: &Command) -> Vec<Vec<(usize, Command)>> {
        let mut merged: Vec<Piece> = Vec::new();
        for (_, (member, sector, sectors)) in
            self.pieces(command.sector, u64::from(command.sectors))
        {
            match merged
                .iter_mut()
                .find(|p| p.0 == member && p.1 + p.2 == sector)
            {
                Some(previous) if previous.2 + sectors <= u64::from(u32::MAX) => {
                    previous.2 += sectors
                }
                _ => merged.push((member, sector, sectors)),
            }
        }
        let parts = merged
            .into_iter()
            .map(|p| self.command(command.direction, p, command.fua))
            .collect();
        vec![parts]
    }

    /// RAID 5 write: per stripe, a full-stripe write or a read-modify-write.
    fn parity_jobs(&mut self, command: &Command) -> Vec<(Parts, Parts)> {
        let chunk = self.config.chunk_sectors;
        let mut stripes: Vec<(u64, Vec<Piece>)> = Vec::new();
        for (stripe, piece) in self.pieces(command.sector, u64::from(command.sectors)) {
            match stripes.last_mut() {
                Some((s, pieces)) if *s == stripe => pieces.push(piece),
                _ => stripes.push((stripe, vec![piece])),
            }
        }
        let mut jobs = Vec::new();
        for (stripe, pieces) in stripes {
            let low = pieces
                .iter()
                .map(|p| p.1 - stripe * chunk)
                .min()
                .unwrap_or(0);
            let high = pieces
                .iter()
                .map(|p| p.1 - stripe * chunk + p.2)
                .max()
                .unwrap_or(0);
            let full =
                pieces.len() as u64 == self.data_members() && pieces.iter().all(|p| p.2 == chunk);
            let parity = (self.parity_member(stripe), stripe * chunk + low, high - low);
            let fua = command.fua;
            let mut writes: Vec<_> = pieces
                .iter()
                .map(|&p| self.command(Direction::Write, p, fua))
                .collect();
            writes.push(self.command(Direction::Write, parity, fua));
            if full {
                jobs.push((writes, Vec::new()));
            } else {
                let mut reads: Vec<_> = pieces
                    .iter()
                    .map(|&p| self.command(Direction::Read, p, false))
                    .collect();
                reads.push(self.command(Direction::Read, parity, false));
                jobs.push((reads, writes));
            }
        }
        jobs
    }

    fn start_job(
        &mut self,
        parent: u64,
        first: Vec<(usize, Command)>,
        then: Vec<(usize, Command)>,
        now: Nanos,
    ) {
        let job = Job {
            parent,
            remaining: first.len(),
            then,
        };
        let id = match self.free_jobs.pop() {
            Some(id) => {
                self.jobs[id] = Some(job);
                id
            }
            None => {
                self.jobs.push(Some(job));
                self.jobs.len() - 1
            }
        };
        for (member, command) in first {
            self.issue(id, member, command, now);
        }
    }

    fn issue(&mut self, job: usize, member: usize, command: Command, now: Nanos) {
        self.parts.insert(command.tag, job);
        self.member_commands += 1;
        if self.members[member].in_flight() < self.member_depth[member] {
            self.members[member].submit(command, now);
        } else {
            self.waiting[member].push_back(command);
        }
    }

    /// A member finished `tag` at `now`; returns the parent command if it is now complete.
    fn part_done(&mut self, tag: u64, now: Nanos) -> Option<u64> {
        let id = self
            .parts
            .remove(&tag)
            .expect("every member completion is a part we issued");
        let job = self.jobs[id]
            .as_mut()
            .expect("a part belongs to a live job");
        job.remaining -= 1;
        if job.remaining > 0 {
            return None;
        }
        if !job.then.is_empty() {
            let then = std::mem::take(&mut job.then);
            job.remaining = then.len();
            for (member, command) in then {
                self.issue(id, member, command, now);
            }
            return None;
        }
        let parent = job.parent;
        self.jobs[id] = None;
        self.free_jobs.push(id);
        let left = self
            .parents
            .get_mut(&parent)
            .expect("a job belongs to a live command");
        *left -= 1;
        if *left > 0 {
            return None;
        }
        self.parents.remove(&parent);
        Some(parent)
    }

    fn refill(&mut self, member: usize, now: Nanos) {
        while self.members[member].in_flight() < self.member_depth[member] {
            let Some(command) = self.waiting[member].pop_front() else {
                break;
            };
            self.members[member].submit(command, now);
        }
    }
}

impl DeviceModel for Raid {
    fn info(&self) -> DeviceInfo {
        let capacity = self.member_chunks * self.config.chunk_sectors * self.data_members();
        DeviceInfo {
            name: self.config.name.clone(),
            capacity_sectors: capacity,
            queue_depth: self.config.queue_depth.max(1),
            rotational: self.members.iter().any(|m| m.info().rotational),
            // The arrays modelled are of disks, which have no TRIM.
            discard: false,
            zones: None,
        }
    }

    fn in_flight(&self) -> usize {
        self.parents.len()
    }

    fn submit(&mut self, command: Command, now: Nanos) {
        if command.sectors == 0 {
            // Nothing to move: a zero-length read on the first member reports it.
            let part = self.command(Direction::Read, (0, 0, 0), false);
            self.parents.insert(command.tag, 1);
            return self.start_job(command.tag, vec![part], Vec::new(), now);
        }
        let jobs = match (command.direction, self.config.level) {
            (Direction::Write, RaidLevel::Raid5) => self.parity_jobs(&command),
            _ => self
                .direct_job(&command)
                .into_iter()
                .map(|parts| (parts, Vec::new()))
                .collect(),
        };
        self.parents.insert(command.tag, jobs.len());
        for (first, then) in jobs {
            self.start_job(command.tag, first, then, now);
        }
    }

    fn next_event(&self) -> Option<Nanos> {
        self.members.iter().filter_map(|m| m.next_event()).min()
    }

    fn advance(&mut self, now: Nanos, completed: &mut Vec<u64>) {
        loop {
            let next = (0..self.members.len())
                .filter_map(|i| self.members[i].next_event().map(|at| (at, i)))
                .min();
            let Some((at, member)) = next.filter(|&(at, _)| at <= now) else {
                break;
            };
            let mut done = std::mem::take(&mut self.scratch);
            self.members[member].advance(at, &mut done);
            for tag in done.drain(..) {
                completed.extend(self.part_done(tag, at));
            }
            self.scratch = done;
            for i in 0..self.members.len() {
                self.refill(i, at);
            }
        }
    }
}
