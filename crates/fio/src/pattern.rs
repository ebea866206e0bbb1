//! A job's I/O sequence: which file, which offset, how long, which direction.
//!
//! Pure and deterministic: every random choice comes from the generator the caller passes
//! to [`IoPattern::next`], so a seed reproduces the sequence exactly. [`plan_files`] names
//! and sizes a job's files the way fio does; [`IoPattern`] walks their regions.
//!
//! Random patterns visit block-aligned offsets (in units of the smallest block size) in a
//! pseudo-random permutation, so each block is touched once per pass, like fio's default
//! random map, in O(1) memory ([`Permutation`]).

use rand::{Rng, RngCore};

use crate::job::{BlockSize, Extent, JobSpec, Origin, Pattern};

/// The direction of one I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataDirection {
    /// A read.
    Read,
    /// A write.
    Write,
    /// A trim (discard).
    Trim,
}

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
/// fio names the files `jobname.clone.filenum` (in `directory=` when given). Devices (names
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
            .map(|file| format!("{}.{}.{}", spec.name, clone_index, file))
            .collect(),
    };
    names
        .into_iter()
        .map(|name| in_directory(spec.directory.as_deref(), name))
        .collect()
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
    let hash = mix64((u64::from(clone) << 32) ^ file as u64);
    let pick = min + hash % span.saturating_add(1);
    if min > 0 {
        pick - pick % min
    } else {
        pick
    }
}

/// The splitmix64 finaliser: a cheap, well-mixed 64-bit hash.
fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A pseudo-random permutation of `0..len` in O(1) memory: a 4-round Feistel network over
/// the smallest even-bit power of two that holds `len`, with cycle walking to stay in range.
/// A new key (drawn at the start of each pass) gives a new order.
#[derive(Debug, Clone)]
pub struct Permutation {
    len: u64,
    half_bits: u32,
    key: u64,
    position: u64,
    keyed: bool,
}

impl Permutation {
    /// A permutation of `0..len`; its key is drawn on first use.
    pub fn new(len: u64) -> Self {
        let bits = 64 - len.saturating_sub(1).leading_zeros();
        Self {
            len,
            half_bits: bits.div_ceil(2).max(1),
            key: 0,
            position: 0,
            keyed: false,
        }
    }

    /// The next index; a new pass (with a fresh key) starts after every `len` calls.
    /// Returns 0 for an empty domain.
    pub fn next(&mut self, rng: &mut impl RngCore) -> u64 {
        if self.len == 0 {
            return 0;
        }
        if !self.keyed || self.position == self.len {
            self.key = rng.next_u64();
            self.keyed = true;
            self.position = 0;
        }
        let mut value = self.encrypt(self.position);
        while value >= self.len {
            value = self.encrypt(value);
        }
        self.position += 1;
        value
    }

    fn encrypt(&self, value: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut left, mut right) = (value >> self.half_bits, value & mask);
        for round in 0..4u64 {
            let f = mix64(right ^ self.key.wrapping_add(round.wrapping_mul(0x51_7cc1))) & mask;
            (left, right) = (right, left ^ f);
        }
        (left << self.half_bits) | right
    }
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
    order: Permutation,
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
        let budget = (!spec.time_based).then(|| total_bytes(spec, &regions));
        Ok(Self {
            pattern: spec.pattern,
            modifier: spec.offset_modifier,
            rwmixread: spec.rwmixread.min(100),
            block_size: spec.block_size.clone(),
            unit,
            regions,
            next_file: 0,
            budget,
            ios_left: spec.number_ios,
            pending_write: None,
        })
    }

    /// The next I/O, or `None` when the job has issued everything it should.
    pub fn next(&mut self, rng: &mut impl RngCore) -> Option<IoUnit> {
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
        let unit = self.place(file, direction, length, rng);
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

    fn place(
        &mut self,
        file: usize,
        direction: DataDirection,
        length: u64,
        rng: &mut impl RngCore,
    ) -> IoUnit {
        let random = self.pattern.is_random();
        let (modifier, unit) = (self.modifier, self.unit);
        let region = &mut self.regions[file];
        let (position, length) = if random {
            region.random_position(length, modifier, unit, rng)
        } else {
            region.sequential_position(length, modifier)
        };
        IoUnit {
            direction,
            file,
            offset: region.start + position,
            length,
        }
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
        length: u64,
        modifier: i64,
        unit: u64,
        rng: &mut impl RngCore,
    ) -> (u64, u64) {
        if self.sequential_left > 0 {
            self.sequential_left -= 1;
            return self.sequential_position(length, 0);
        }
        let position = self.order.next(rng) * unit;
        self.sequential_left = u64::try_from(modifier).unwrap_or(0).saturating_sub(1);
        let length = length.min(self.len - position);
        self.cursor = self.advance(position, length, 0);
        (position, length)
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
    if blocks == 0 {
        let reason = format!(
            "no room for a {unit}-byte block in {} (size {}, region starts at {start})",
            file.name, file.size
        );
        return Err(PatternError::bad_region(spec, reason));
    }
    Ok(Region {
        start,
        len,
        cursor: 0,
        sequential_left: 0,
        order: Permutation::new(blocks),
    })
}

/// Bytes the job transfers when not time based: `io_size` (or one pass over the regions, or
/// `size` when `filesize` sizes the files), times `loops`.
fn total_bytes(spec: &JobSpec, regions: &[Region]) -> u64 {
    let pass: u64 = regions.iter().map(|r| r.len).sum();
    let pass = match spec.size {
        Some(Extent::Bytes(bytes)) if spec.filesize.is_some() => bytes,
        _ => pass,
    };
    spec.io_size
        .unwrap_or(pass)
        .saturating_mul(u64::from(spec.loops.max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use std::collections::BTreeSet;

    fn job(pattern: Pattern, size: u64, bs: u64) -> JobSpec {
        JobSpec {
            name: "j".into(),
            pattern,
            size: Some(Extent::Bytes(size)),
            block_size: [
                BlockSize::Fixed(bs),
                BlockSize::Fixed(bs),
                BlockSize::Fixed(bs),
            ],
            ..JobSpec::default()
        }
    }

    fn run(spec: &JobSpec, limit: usize) -> Vec<IoUnit> {
        let files = plan_files(spec, 0, 1 << 30).expect("files");
        let mut pattern = IoPattern::new(spec, &files, 0).expect("pattern");
        let mut rng = StdRng::seed_from_u64(7);
        std::iter::from_fn(|| pattern.next(&mut rng))
            .take(limit)
            .collect()
    }

    fn offsets(units: &[IoUnit]) -> Vec<u64> {
        units.iter().map(|u| u.offset).collect()
    }

    #[test]
    fn sequential_reads_walk_the_region_once() {
        let units = run(&job(Pattern::Read, 16384, 4096), 100);
        assert_eq!(offsets(&units), [0, 4096, 8192, 12288]);
        assert!(units.iter().all(|u| u.length == 4096 && u.file == 0));
        assert!(units.iter().all(|u| u.direction == DataDirection::Read));
    }

    #[test]
    fn offset_and_increment_shift_the_region() {
        let mut spec = job(Pattern::Write, 8192, 4096);
        spec.offset = Extent::Bytes(4096);
        spec.offset_increment = 65536;
        spec.filename = Some("/dev/sdz".into());
        let files = plan_files(&spec, 2, 1 << 20).expect("files");
        assert_eq!(
            files,
            [FilePlan {
                name: "/dev/sdz".into(),
                size: 1 << 20
            }]
        );
        let mut pattern = IoPattern::new(&spec, &files, 2).expect("pattern");
        let mut rng = StdRng::seed_from_u64(1);
        let got: Vec<u64> = std::iter::from_fn(|| pattern.next(&mut rng))
            .map(|u| u.offset)
            .collect();
        assert_eq!(got, [135168, 139264]);
    }

    #[test]
    fn percent_offset_and_size_apply_to_the_device() {
        let mut spec = job(Pattern::Read, 0, 4096);
        spec.filename = Some("/dev/sdz".into());
        spec.size = Some(Extent::Percent(25));
        spec.offset = Extent::Percent(50);
        let files = plan_files(&spec, 0, 65536).expect("files");
        let mut pattern = IoPattern::new(&spec, &files, 0).expect("pattern");
        let mut rng = StdRng::seed_from_u64(1);
        let got: Vec<u64> = std::iter::from_fn(|| pattern.next(&mut rng))
            .map(|u| u.offset)
            .collect();
        assert_eq!(got, [32768, 36864, 40960, 45056]);
    }

    #[test]
    fn backwards_reads_wrap_to_the_end() {
        let mut spec = job(Pattern::Read, 16384, 4096);
        spec.offset_modifier = -8192;
        let units = run(&spec, 100);
        assert_eq!(offsets(&units), [0, 12288, 8192, 4096]);
    }

    #[test]
    fn forward_modifier_skips_blocks() {
        let mut spec = job(Pattern::Write, 32768, 4096);
        spec.offset_modifier = 4096;
        spec.loops = 2;
        let units = run(&spec, 100);
        assert_eq!(offsets(&units)[..6], [0, 8192, 16384, 24576, 0, 8192]);
    }

    #[test]
    fn random_touches_every_block_once_per_pass() {
        let spec = job(Pattern::RandRead, 1000 * 4096, 4096);
        let mut spec2 = spec.clone();
        spec2.loops = 2;
        let units = run(&spec2, 10_000);
        assert_eq!(units.len(), 2000);
        for pass in units.chunks(1000) {
            let set: BTreeSet<u64> = pass.iter().map(|u| u.offset).collect();
            assert_eq!(set.len(), 1000);
            assert!(set.iter().all(|o| o % 4096 == 0 && *o < 1000 * 4096));
        }
        assert_ne!(offsets(&units[..1000]), offsets(&units[1000..]));
        let sorted: Vec<u64> = (0..1000).map(|i| i * 4096).collect();
        assert_ne!(
            offsets(&units[..1000]),
            sorted,
            "not a permutation in order"
        );
    }

    #[test]
    fn permutation_covers_awkward_and_huge_domains() {
        let mut rng = StdRng::seed_from_u64(3);
        for len in [1u64, 2, 3, 5, 17, 255, 256, 257] {
            let mut perm = Permutation::new(len);
            let set: BTreeSet<u64> = (0..len).map(|_| perm.next(&mut rng)).collect();
            assert_eq!(set.len() as u64, len);
        }
        let mut huge = Permutation::new(u64::MAX / 3);
        assert!((0..100).all(|_| huge.next(&mut rng) < u64::MAX / 3));
    }

    #[test]
    fn random_runs_take_sequential_ios() {
        let mut spec = job(Pattern::RandRead, 64 * 4096, 4096);
        spec.offset_modifier = 4;
        let units = run(&spec, 12);
        for run in units.chunks(4) {
            for pair in run.windows(2) {
                let expected = (pair[0].offset + 4096) % (64 * 4096);
                assert_eq!(pair[1].offset, expected);
            }
        }
    }

    #[test]
    fn mix_follows_rwmixread() {
        let mut spec = job(Pattern::RandReadWrite, 10_000 * 4096, 4096);
        spec.rwmixread = 70;
        let units = run(&spec, 20_000);
        let reads = units
            .iter()
            .filter(|u| u.direction == DataDirection::Read)
            .count();
        let share = reads as f64 / units.len() as f64;
        assert!((share - 0.7).abs() < 0.02, "read share {share}");
    }

    #[test]
    fn time_based_wraps_forever() {
        let mut spec = job(Pattern::Read, 8192, 4096);
        spec.time_based = true;
        let units = run(&spec, 5);
        assert_eq!(offsets(&units), [0, 4096, 0, 4096, 0]);
    }

    #[test]
    fn number_ios_and_io_size_stop_early_or_late() {
        let mut spec = job(Pattern::Read, 16384, 4096);
        spec.number_ios = Some(3);
        assert_eq!(run(&spec, 100).len(), 3);
        let mut spec = job(Pattern::Read, 16384, 4096);
        spec.io_size = Some(6 * 4096);
        assert_eq!(offsets(&run(&spec, 100)), [0, 4096, 8192, 12288, 0, 4096]);
    }

    #[test]
    fn files_round_robin_with_fio_names() {
        let mut spec = job(Pattern::Write, 4 * 8192, 4096);
        spec.nrfiles = 4;
        spec.directory = Some("/data/".into());
        let files = plan_files(&spec, 1, 0).expect("files");
        assert_eq!(files.len(), 4);
        assert_eq!(files[3].name, "/data/j.1.3");
        assert!(files.iter().all(|f| f.size == 8192));
        let units = run(&spec, 100);
        let order: Vec<usize> = units.iter().map(|u| u.file).collect();
        assert_eq!(order, [0, 1, 2, 3, 0, 1, 2, 3]);
    }

    #[test]
    fn filenames_split_on_unescaped_colons() {
        assert_eq!(split_filenames("a:b\\:c::d"), ["a", "b:c", "d"]);
        let mut spec = job(Pattern::Read, 4096, 4096);
        spec.size = None;
        spec.filename = Some("/dev/sda:/dev/sdb".into());
        let files = plan_files(&spec, 0, 1 << 20).expect("files");
        assert_eq!(files.len(), 2);
        assert!(files.iter().all(|f| f.size == 1 << 20));
    }

    #[test]
    fn no_size_no_filename_is_an_error() {
        let mut spec = job(Pattern::Read, 0, 4096);
        spec.size = None;
        spec.origin = Origin {
            file: "a.fio".into(),
            line: 3,
        };
        let err = plan_files(&spec, 0, 1 << 20).expect_err("no size");
        assert_eq!(
            err.to_string(),
            "a.fio:3: job j needs size= (or filename= of a device)"
        );
    }

    #[test]
    fn block_size_range_and_split() {
        let mut spec = job(Pattern::RandRead, 1 << 24, 4096);
        spec.block_size[0] = BlockSize::Range {
            min: 4096,
            max: 16384,
        };
        let units = run(&spec, 2000);
        let sizes: BTreeSet<u64> = units.iter().map(|u| u.length).collect();
        assert_eq!(sizes, BTreeSet::from([4096, 8192, 12288, 16384]));
        spec.block_size[0] = BlockSize::Split(vec![(4096, 90), (65536, 10)]);
        spec.time_based = true;
        let units = run(&spec, 5000);
        let big = units.iter().filter(|u| u.length == 65536).count();
        assert!((400..600).contains(&big), "{big} of 5000 are 64k");
    }

    #[test]
    fn trimwrite_trims_then_writes_each_block() {
        let units = run(&job(Pattern::TrimWrite, 8192, 4096), 100);
        let got: Vec<(DataDirection, u64)> =
            units.iter().map(|u| (u.direction, u.offset)).collect();
        use DataDirection::{Trim, Write};
        assert_eq!(got, [(Trim, 0), (Write, 0), (Trim, 4096), (Write, 4096)]);
    }

    #[test]
    fn same_seed_same_sequence() {
        let spec = job(Pattern::RandReadWrite, 1 << 20, 4096);
        assert_eq!(run(&spec, 300), run(&spec, 300));
    }
}
