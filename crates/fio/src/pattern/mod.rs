//! A job's I/O sequence: which file, which offset, how long, which direction.
//!
//! Pure and deterministic: every random choice comes from the generator the caller passes
//! to [`IoPattern::next`], so a seed reproduces the sequence exactly. [`plan_files`] names
//! and sizes a job's files the way fio does; [`IoPattern`] walks their regions.
//!
//! Random patterns visit block-aligned offsets (in units of the smallest block size) in a
//! pseudo-random permutation, so each block is touched once per pass, like fio's default
//! random map, in O(1) memory ([`Permutation`]); `norandommap` draws blocks with
//! replacement and `random_distribution=` skews them, as fio does ([`BlockChooser`]).
//!
//! Strided zones (`zonemode=strided`, see [`StridedZones`]) walk a job's single file zone
//! by zone as fio does: `zonesize` bytes in a zone, then `zonerange + zoneskip` bytes on,
//! wrapping to the first zone past the end of the file. Sequential I/O runs from the
//! zone's start (again from the start when it passes `zonerange`); random I/O is a
//! permutation of the zone's blocks, cut so that it never leaves the zone. A `rw=…:N`
//! offset modifier moves within the zone, wrapping at `zonerange`. The bytes to issue are
//! unchanged: `io_size` or `size` (times `loops`), skipped bytes not counted, so a job
//! whose zones cover less than that goes over them again.

use rand::{Rng, RngCore};

pub use crate::direction::DataDirection;
use crate::job::{BlockSize, Extent, JobSpec, Origin, Pattern, StridedZones};

mod offsets;
mod trimwrite;
pub use offsets::{BlockChooser, Permutation};

/// One I/O the job issues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoUnit {
    /// Read, write or trim.
    pub direction: DataDirection,
    /// Index into the job's [`FilePlan`]s.
    pub file: usize,
    /// Bytes from the start of that file.
    pub offset: u64,
    /// Bytes.
    pub length: u64,
}

/// One file (or device) a job does I/O to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePlan {
    /// The path, as fio would name it.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
}

/// Why a job's files or pattern cannot be set up. Messages name the job's file and line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// Nothing says how big the job's files are.
    #[error("{}:{}: job {job} needs size= (or filename= of a device)", .origin.file, .origin.line)]
    NeedsSize {
        /// Where the job starts.
        origin: Origin,
        /// The job's name.
        job: String,
    },
    /// The region left for I/O is empty or otherwise unusable.
    #[error("{}:{}: job {job}: {reason}", .origin.file, .origin.line)]
    BadRegion {
        /// Where the job starts.
        origin: Origin,
        /// The job's name.
        job: String,
        /// What is wrong, in a few words.
        reason: String,
    },
    /// More requests in flight than a run may keep.
    #[error("{file}: {total} requests in flight (iodepth times numjobs): expected at most {limit} in one run")]
    TooDeep {
        /// The job file.
        file: String,
        /// Requests the job file would keep in flight.
        total: u64,
        /// The limit.
        limit: u64,
    },
    /// More files than a run may plan.
    #[error("{file}: {total} files (nrfiles times numjobs): expected at most {limit} in one run")]
    TooManyFiles {
        /// The job file.
        file: String,
        /// Files the job file declares.
        total: u64,
        /// The limit.
        limit: u64,
    },
    /// More job processes than the run allows.
    #[error("{file}: {total} jobs (numjobs clones counted): expected at most {limit}, the maximum number of jobs (fio's limit is 4096 too; --max-jobs raises it)")]
    TooManyJobs {
        /// The job file.
        file: String,
        /// Processes the file declares.
        total: u64,
        /// The limit.
        limit: u32,
    },
}

impl PatternError {
    fn bad_region(spec: &JobSpec, reason: String) -> Self {
        Self::BadRegion {
            origin: spec.origin.clone(),
            job: spec.name.clone(),
            reason,
        }
    }
}

/// Names and sizes the files of clone `clone_index` of `spec`.
///
/// `filename=` may list several names separated by ':' (`\:` is a literal colon); without it
/// fio names the files by `filename_format=`, `jobname.clone.filenum` by default (in
/// `directory=` when given). Devices (names
/// under `/dev/`), and files named without any size, take `device_capacity`. Otherwise
/// `filesize=` sizes each file, or `size=` is split evenly across the files.
pub fn plan_files(
    spec: &JobSpec,
    clone_index: u32,
    device_capacity: u64,
) -> Result<Vec<FilePlan>, PatternError> {
    let names = file_names(spec, clone_index);
    let count = names.len().max(1) as u64;
    names
        .into_iter()
        .enumerate()
        .map(|(index, name)| {
            let size = file_size(spec, &name, (clone_index, index), count, device_capacity)?;
            Ok(FilePlan { name, size })
        })
        .collect()
}

fn file_names(spec: &JobSpec, clone_index: u32) -> Vec<String> {
    let names: Vec<String> = match &spec.filename {
        Some(list) => split_filenames(list),
        None => (0..spec.nrfiles.max(1))
            .map(|file| match &spec.filename_format {
                Some(format) if !format.is_empty() => {
                    formatted_name(format, &spec.name, clone_index, file)
                }
                _ => format!("{}.{}.{}", spec.name, clone_index, file),
            })
            .collect(),
    };
    names
        .into_iter()
        .map(|name| in_directory(spec.directory.as_deref(), name))
        .collect()
}

/// A file's name by fio's `filename_format=`: each `$jobname`, `$jobnum` (the clone's
/// number), `$filenum` and `$clientuid` (empty: no client/server mode here), in any case,
/// replaced by its value (fio's `make_filename`, init.c).
fn formatted_name(format: &str, job: &str, clone_index: u32, file: u32) -> String {
    let keywords = [
        ("$jobname", job.to_string()),
        ("$jobnum", clone_index.to_string()),
        ("$filenum", file.to_string()),
        ("$clientuid", String::new()),
    ];
    let mut name = format.to_string();
    for (keyword, value) in keywords {
        let mut from = 0;
        while let Some(found) = name[from..].to_ascii_lowercase().find(keyword) {
            let at = from + found;
            name.replace_range(at..at + keyword.len(), &value);
            from = at + value.len();
        }
    }
    name
}

/// Splits fio's `filename=` list on ':' (a `\:` is a colon inside a name).
pub fn split_filenames(list: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut current = String::new();
    let mut chars = list.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                current.push(':');
                chars.next();
            }
            ':' => names.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    names.push(current);
    names.retain(|name| !name.is_empty());
    names
}

fn in_directory(directory: Option<&str>, name: String) -> String {
    match directory {
        Some(dir) if !dir.is_empty() && !name.starts_with('/') => {
            format!("{}/{}", dir.trim_end_matches('/'), name)
        }
        _ => name,
    }
}

fn file_size(
    spec: &JobSpec,
    name: &str,
    which: (u32, usize),
    count: u64,
    device_capacity: u64,
) -> Result<u64, PatternError> {
    if name.starts_with("/dev/") {
        return Ok(device_capacity);
    }
    if let Some((min, max)) = spec.filesize {
        return Ok(pick_in_range(min, max, which));
    }
    match spec.size {
        Some(Extent::Bytes(bytes)) => Ok(offset_bytes(spec, which.0).saturating_add(bytes / count)),
        Some(Extent::Percent(_)) => Ok(device_capacity / count),
        None if spec.filename.is_some() => Ok(device_capacity),
        // A diskless engine (fio's `FIO_DISKLESSIO`) has no file to size: one block's worth
        // gives its I/Os somewhere to point.
        None if spec.ioengine.is_diskless() => Ok(spec
            .block_size
            .iter()
            .map(BlockSize::max)
            .max()
            .unwrap_or(4096)),
        None => Err(PatternError::NeedsSize {
            origin: spec.origin.clone(),
            job: spec.name.clone(),
        }),
    }
}

/// Where a regular file's region starts when the offset is absolute (fio lays the file out
/// to `offset + size`).
fn offset_bytes(spec: &JobSpec, clone_index: u32) -> u64 {
    let increment = spec.offset_increment.saturating_mul(u64::from(clone_index));
    match spec.offset {
        Extent::Bytes(bytes) => bytes.saturating_add(increment),
        Extent::Percent(_) => increment,
    }
}

/// A size in `min..=max` chosen by hashing the clone and file index, so it is deterministic
/// without a generator.
fn pick_in_range(min: u64, max: u64, (clone, file): (u32, usize)) -> u64 {
    if max <= min {
        return min;
    }
    let span = max - min;
    let hash = mix((u64::from(clone) << 32) ^ file as u64);
    let pick = min + hash % span.saturating_add(1);
    if min > 0 {
        pick - pick % min
    } else {
        pick
    }
}

/// SplitMix64's finaliser: a cheap, well-mixed 64-bit hash, which also decorrelates seeds
/// derived from one another (`crate::plan`).
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One file's region and where the job is in it.
#[derive(Debug, Clone)]
struct Region {
    start: u64,
    len: u64,
    /// Next sequential position, relative to `start`.
    cursor: u64,
    /// Sequential I/Os still to follow the last random offset (`randread:N`).
    sequential_left: u64,
    order: BlockChooser,
    /// Where the job is in its strided zones, when it has them.
    zone: Option<ZoneWalk>,
}

/// A job's walk over strided zones: fio's `file_offset` (the zone's start), `zone_bytes`
/// and `last_pos` for one file.
#[derive(Debug, Clone)]
struct ZoneWalk {
    zones: StridedZones,
    /// Absolute start of the first zone, where the walk wraps to.
    first: u64,
    /// End of the file: a zone that would start there or later wraps to `first`.
    file_end: u64,
    /// Absolute start of the current zone.
    base: u64,
    /// Bytes issued in the current zone.
    bytes: u64,
    /// Next sequential position, relative to `base`.
    cursor: u64,
    /// Random choice of the zone's blocks.
    order: BlockChooser,
}

impl ZoneWalk {
    fn new(zones: StridedZones, first: u64, file_end: u64, order: BlockChooser) -> Self {
        Self {
            zones,
            first,
            file_end,
            base: first,
            bytes: 0,
            cursor: 0,
            order,
        }
    }

    /// fio's zone bookkeeping before each I/O: move to the next zone once `zonesize`
    /// bytes are done; start the zone over when the position passes `zonerange`; start a
    /// new random pass whenever a whole `zonerange` has been issued.
    fn prepare(&mut self) {
        let StridedZones { size, range, skip } = self.zones;
        if self.bytes >= size {
            self.bytes = 0;
            self.base = self.base.saturating_add(range).saturating_add(skip);
            if self.base >= self.file_end {
                self.base = self.first;
            }
            self.cursor = 0;
        }
        if self.cursor >= range {
            self.cursor = 0;
        }
        if self.bytes.is_multiple_of(range) {
            self.cursor = 0;
            self.order.restart();
        }
    }

    /// A position for the next I/O, relative to the zone's start: the sequential one
    /// (moved by `modifier` except at the zone's start, wrapping within the range), or a
    /// random block.
    fn position(
        &mut self,
        random: Option<DataDirection>,
        modifier: i64,
        unit: u64,
        rng: &mut impl RngCore,
    ) -> u64 {
        if let Some(direction) = random {
            return self.order.next(direction, rng) * unit;
        }
        if self.cursor == 0 || modifier == 0 {
            return self.cursor;
        }
        let range = i128::from(self.zones.range);
        let moved = (i128::from(self.cursor) + i128::from(modifier)).rem_euclid(range);
        // rem_euclid keeps it in 0..range, which fits u64 because range does.
        u64::try_from(moved).expect("remainder of a u64 range fits u64")
    }
}

/// The I/O sequence of one job clone. Call [`IoPattern::next`] until it returns `None`.
#[derive(Debug, Clone)]
pub struct IoPattern {
    pattern: Pattern,
    modifier: i64,
    rwmixread: u32,
    block_size: [BlockSize; 3],
    unit: u64,
    regions: Vec<Region>,
    next_file: usize,
    /// Bytes still to issue; `None` when time based (never ends by size).
    budget: Option<u64>,
    ios_left: Option<u64>,
    /// The write half of a trim-then-write pair.
    pending_write: Option<IoUnit>,
    /// Per file, a sequential `trimwrite`'s trim and write positions when the two block
    /// sizes differ (`trimwrite.rs`); empty otherwise.
    split_trimwrite: Vec<trimwrite::Cursors>,
}

impl IoPattern {
    /// The pattern of clone `clone_index` of `spec` over `files` (from [`plan_files`]).
    pub fn new(spec: &JobSpec, files: &[FilePlan], clone_index: u32) -> Result<Self, PatternError> {
        let unit = block_unit(spec);
        if unit == 0 {
            return Err(PatternError::bad_region(spec, "block size is 0".into()));
        }
        if files.is_empty() {
            return Err(PatternError::bad_region(
                spec,
                "no files to do I/O to".into(),
            ));
        }
        let regions = files
            .iter()
            .map(|file| region_for(spec, file, files.len() as u64, clone_index, unit))
            .collect::<Result<Vec<_>, _>>()?;
        let budget = (!spec.time_based).then(|| total_bytes(spec, &regions, unit));
        Ok(Self {
            pattern: spec.pattern,
            modifier: spec.offset_modifier,
            rwmixread: spec.rwmixread.min(100),
            block_size: spec.block_size.clone(),
            unit,
            next_file: 0,
            budget,
            ios_left: spec.number_ios,
            pending_write: None,
            split_trimwrite: if splits_trimwrite(spec, &regions) {
                vec![trimwrite::Cursors::default(); regions.len()]
            } else {
                Vec::new()
            },
            regions,
        })
    }

    /// Bytes still to issue; `None` for a time-based job, which never ends by size.
    pub fn bytes_left(&self) -> Option<u64> {
        self.budget
    }

    /// The next I/O, or `None` when the job has issued everything it should.
    pub fn next(&mut self, rng: &mut impl RngCore) -> Option<IoUnit> {
        if !self.split_trimwrite.is_empty() {
            return self.next_split_trimwrite(rng);
        }
        if let Some(write) = self.pending_write.take() {
            return Some(write);
        }
        if self.budget == Some(0) || self.ios_left == Some(0) {
            return None;
        }
        let direction = self.draw_direction(rng);
        let length = self.draw_length(direction, rng);
        let file = self.next_file;
        self.next_file = (self.next_file + 1) % self.regions.len();
        let mut placed = self.place(file, direction, length, rng);
        if placed.is_none() && self.budget.is_none() {
            // Time based: fio starts the job's files over, from the first zone.
            self.regions[file].restart_zones();
            placed = self.place(file, direction, length, rng);
        }
        let Some(unit) = placed else {
            // A zone position past the end of the file: fio marks the file done.
            self.budget = Some(0);
            return None;
        };
        self.charge(unit.length);
        if matches!(self.pattern, Pattern::TrimWrite | Pattern::RandTrimWrite) {
            self.pending_write = Some(IoUnit {
                direction: DataDirection::Write,
                ..unit.clone()
            });
        }
        Some(unit)
    }

    fn charge(&mut self, length: u64) {
        if let Some(budget) = &mut self.budget {
            *budget = budget.saturating_sub(length);
        }
        if let Some(left) = &mut self.ios_left {
            *left = left.saturating_sub(1);
        }
    }

    fn draw_direction(&self, rng: &mut impl RngCore) -> DataDirection {
        match self.pattern {
            Pattern::Read | Pattern::RandRead => DataDirection::Read,
            Pattern::Write | Pattern::RandWrite => DataDirection::Write,
            Pattern::Trim | Pattern::RandTrim | Pattern::TrimWrite | Pattern::RandTrimWrite => {
                DataDirection::Trim
            }
            Pattern::ReadWrite | Pattern::RandReadWrite => {
                if rng.gen_range(0..100) < self.rwmixread {
                    DataDirection::Read
                } else {
                    DataDirection::Write
                }
            }
        }
    }

    fn draw_length(&self, direction: DataDirection, rng: &mut impl RngCore) -> u64 {
        let length = draw_block_size(&self.block_size[direction_slot(direction)], rng);
        match self.budget {
            Some(budget) => length.min(budget),
            None => length,
        }
    }

    /// Where the I/O goes; None when a strided zone would put it past the end of the file.
    fn place(
        &mut self,
        file: usize,
        direction: DataDirection,
        length: u64,
        rng: &mut impl RngCore,
    ) -> Option<IoUnit> {
        let random = self.pattern.is_random();
        let (modifier, unit) = (self.modifier, self.unit);
        let region = &mut self.regions[file];
        let (offset, length) = if region.zone.is_some() {
            region.zone_position((direction, length), random, modifier, unit, rng)?
        } else if random {
            let (position, length) =
                region.random_position((direction, length), modifier, unit, rng);
            (region.start + position, length)
        } else {
            let (position, length) = region.sequential_position(length, modifier);
            (region.start + position, length)
        };
        Some(IoUnit {
            direction,
            file,
            offset,
            length,
        })
    }
}

impl Region {
    /// The next sequential position for an I/O of `length`; returns (position, length).
    fn sequential_position(&mut self, length: u64, modifier: i64) -> (u64, u64) {
        let length = length.min(self.len);
        let mut position = self.cursor;
        if position.saturating_add(length) > self.len {
            position = if modifier < 0 { self.len - length } else { 0 };
        }
        self.cursor = self.advance(position, length, modifier);
        (position, length)
    }

    /// Where the job goes after an I/O at `position`: forward by `length + modifier`,
    /// wrapping around the region either way.
    fn advance(&self, position: u64, length: u64, modifier: i64) -> u64 {
        let next = i128::from(position) + i128::from(length) + i128::from(modifier);
        let len = i128::from(self.len.max(1));
        // rem_euclid keeps it in 0..len, which fits u64 because len does.
        u64::try_from(next.rem_euclid(len)).expect("remainder of a u64 length fits u64")
    }

    /// A random block-aligned position, or the next sequential one while a `randread:N`
    /// run lasts; returns (position, length).
    fn random_position(
        &mut self,
        (direction, length): (DataDirection, u64),
        modifier: i64,
        unit: u64,
        rng: &mut impl RngCore,
    ) -> (u64, u64) {
        if self.sequential_left > 0 {
            self.sequential_left -= 1;
            return self.sequential_position(length, 0);
        }
        let position = self.order.next(direction, rng) * unit;
        self.sequential_left = u64::try_from(modifier).unwrap_or(0).saturating_sub(1);
        let length = length.min(self.len - position);
        self.cursor = self.advance(position, length, 0);
        (position, length)
    }

    /// Back to the first strided zone, as at the start.
    fn restart_zones(&mut self) {
        if let Some(zone) = &mut self.zone {
            zone.base = zone.first;
            zone.bytes = 0;
            zone.cursor = 0;
        }
    }

    /// The next I/O in the job's strided zones: (absolute offset, length), or None when
    /// it would start past the end of the file. Random I/O is cut at the zone's end;
    /// every I/O is cut at the file's end.
    fn zone_position(
        &mut self,
        (direction, length): (DataDirection, u64),
        random: bool,
        modifier: i64,
        unit: u64,
        rng: &mut impl RngCore,
    ) -> Option<(u64, u64)> {
        let zone = self.zone.as_mut()?;
        zone.prepare();
        // For random patterns the modifier counts sequential I/Os per random offset
        // (`randread:N`); for sequential ones it is bytes added to each offset.
        let (random, modifier) = if !random {
            (false, modifier)
        } else if self.sequential_left > 0 {
            self.sequential_left -= 1;
            (false, 0)
        } else {
            self.sequential_left = u64::try_from(modifier).unwrap_or(0).saturating_sub(1);
            (true, 0)
        };
        let position = zone.position(random.then_some(direction), modifier, unit, rng);
        let offset = zone.base.checked_add(position)?;
        if offset >= zone.file_end {
            return None;
        }
        let mut length = length.min(zone.file_end - offset);
        if random {
            length = length.min(zone.zones.range - position);
        }
        zone.cursor = position + length;
        zone.bytes += length;
        Some((offset, length))
    }
}

fn direction_slot(direction: DataDirection) -> usize {
    match direction {
        DataDirection::Read => 0,
        DataDirection::Write => 1,
        DataDirection::Trim => 2,
    }
}

/// The directions a pattern issues.
fn directions(pattern: Pattern) -> &'static [DataDirection] {
    use DataDirection::{Read, Trim, Write};
    match pattern {
        Pattern::Read | Pattern::RandRead => &[Read],
        Pattern::Write | Pattern::RandWrite => &[Write],
        Pattern::Trim | Pattern::RandTrim => &[Trim],
        Pattern::ReadWrite | Pattern::RandReadWrite => &[Read, Write],
        Pattern::TrimWrite | Pattern::RandTrimWrite => &[Trim, Write],
    }
}

/// The alignment unit: the smallest block size of any direction the job issues.
fn block_unit(spec: &JobSpec) -> u64 {
    directions(spec.pattern)
        .iter()
        .map(|d| spec.block_size[direction_slot(*d)].min())
        .min()
        .unwrap_or(4096)
}

fn draw_block_size(size: &BlockSize, rng: &mut impl RngCore) -> u64 {
    match size {
        BlockSize::Fixed(bytes) => *bytes,
        BlockSize::Range { min, max } => {
            let steps = if *min == 0 { 1 } else { (max / min).max(1) };
            min * rng.gen_range(1..=steps)
        }
        BlockSize::Split(list) => draw_split(list, rng).unwrap_or_else(|| size.min()),
    }
}

fn draw_split(list: &[(u64, u32)], rng: &mut impl RngCore) -> Option<u64> {
    let total: u64 = list.iter().map(|(_, pct)| u64::from(*pct)).sum();
    if total == 0 {
        return None;
    }
    let mut pick = rng.gen_range(0..total);
    for (bytes, pct) in list {
        let pct = u64::from(*pct);
        if pick < pct {
            return Some(*bytes);
        }
        pick -= pct;
    }
    None
}

fn resolve(extent: Extent, of: u64) -> u64 {
    match extent {
        Extent::Bytes(bytes) => bytes,
        Extent::Percent(pct) => {
            u64::try_from(u128::from(of) * u128::from(pct.min(100)) / 100).unwrap_or(of)
        }
    }
}

fn region_for(
    spec: &JobSpec,
    file: &FilePlan,
    files: u64,
    clone_index: u32,
    unit: u64,
) -> Result<Region, PatternError> {
    let increment = spec.offset_increment.saturating_mul(u64::from(clone_index));
    let start = resolve(spec.offset, file.size).saturating_add(increment);
    let start = start - start % unit;
    let available = file.size.saturating_sub(start);
    let wanted = match spec.size {
        Some(Extent::Bytes(bytes)) if spec.filesize.is_none() => bytes / files,
        Some(Extent::Percent(pct)) => resolve(Extent::Percent(pct), file.size),
        _ => available,
    };
    let len = wanted.min(available);
    let blocks = len / unit;
    if blocks == 0 && files > 1 && spec.filesize.is_none() {
        let reason = format!(
            "size={} split over {files} files leaves {wanted} bytes each: expected at least one {unit}-byte block per file (raise size= or lower nrfiles=)",
            spec.size.map_or(0, |size| match size {
                Extent::Bytes(bytes) => bytes,
                Extent::Percent(_) => file.size,
            })
        );
        return Err(PatternError::bad_region(spec, reason));
    }
    if blocks == 0 {
        let reason = format!(
            "no room for a {unit}-byte block in {} (size {}, region starts at {start})",
            file.name, file.size
        );
        return Err(PatternError::bad_region(spec, reason));
    }
    let chooser = |blocks: u64| {
        BlockChooser::new(spec, blocks, unit)
            .map_err(|reason| PatternError::bad_region(spec, format!("{}: {reason}", file.name)))
    };
    // fio walks strided zones only in a job with one file.
    let zone = match spec.strided_zones().filter(|_| files == 1) {
        Some(zones) => Some(ZoneWalk::new(
            zones,
            start,
            file.size,
            chooser(zones.range / unit)?,
        )),
        None => None,
    };
    Ok(Region {
        start,
        len,
        cursor: 0,
        sequential_left: 0,
        order: chooser(blocks)?,
        zone,
    })
}

/// Whether a job is a sequential `trimwrite` over unzoned files whose trims and writes
/// differ in block size, which keep positions of their own (`trimwrite.rs`).
fn splits_trimwrite(spec: &JobSpec, regions: &[Region]) -> bool {
    let slot = |direction| &spec.block_size[direction_slot(direction)];
    spec.pattern == Pattern::TrimWrite
        && slot(DataDirection::Trim) != slot(DataDirection::Write)
        && regions.iter().all(|region| region.zone.is_none())
}

/// Bytes the job transfers when not time based: `io_size` (or one pass over the regions'
/// whole blocks of `unit`, as fio leaves a file's tail shorter than a block alone, or `size`
/// when `filesize` sizes the files), times `loops`.
fn total_bytes(spec: &JobSpec, regions: &[Region], unit: u64) -> u64 {
    let pass: u64 = regions.iter().map(|r| r.len - r.len % unit).sum();
    let pass = match spec.size {
        Some(Extent::Bytes(bytes)) if spec.filesize.is_some() => bytes,
        _ => pass,
    };
    spec.io_size
        .unwrap_or(pass)
        .saturating_mul(u64::from(spec.loops.max(1)))
}

#[cfg(test)]
mod tests;
